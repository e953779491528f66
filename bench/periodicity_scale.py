"""Benchmark: Beaumont §5.2 and §8.2 (`periodicity_components`, `periodicity_packing`) with the full trace's D.

Both rules read the dominant jobs (one row per job of D) and D's job × window rows (``dominant_windows``), and
hold the whole-trace production jobs' series (jobs × 8,352 windows). On the real trace D has 25,839 jobs, 240.9
of them alive per window (Beaumont Table 1): about 2 M job × window rows. The default run has the real 8,352
windows but fewer jobs, so this copies its D ``--factor`` times under new job IDs (by default enough copies to
reach 240.9 alive per window), then runs both rules' code on it, each in its own process, against the same code
on the run's own tables:

* reference: the run's D as it is;
* ours: D × factor, at the real trace's size.

Prints time, peak RSS, the rows and jobs analysed, and the ratios (the growth from the run's size to the real one).

    python bench/periodicity_scale.py RUN [--factor F]      # RUN: a finished default run, results/<run>
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import polars as pl

import finished_run
from timing import parse_args, reference_and_ours

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from colocate.analysis import periodicity as pe  # noqa: E402

PAPER_ALIVE_D = 240.9  # jobs of D alive per window, Beaumont Table 1
WINDOWS = 8352

CHILD = r"""
import resource, sys, time
import polars as pl
from colocate.analysis import periodicity as pe
from colocate.scheduling import periodic_packing as pp
root, which = sys.argv[1], sys.argv[2]
t = time.perf_counter()
dominant = pl.read_parquet(f"{root}/{which}-dominant.parquet")
windows = pl.read_parquet(f"{root}/{which}-windows.parquet", columns=pe.WINDOW_COLUMNS)
res = pe.analyse(dominant, windows, 8352)  # periodicity_components, the schema's defaults
comps = res["components"]
series, _ = pe.job_series(windows, comps["job_id"].to_list(), 8352)  # periodicity_packing
pp.pack(comps, series, [0.25, 0.5, 1.0], 20_000)
print(windows.height, comps.height, file=sys.stderr)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path, help="a finished default run: results/<run>, or a working directory holding one run")
    ap.add_argument("--factor", type=int, help="copies of D (default: to 240.9 alive per window)")
    args = parse_args(ap)
    jobs_dir = finished_run.run_subdir(args.run, "jobs")
    dominant = pl.read_parquet(jobs_dir / "dominant_jobs.parquet")
    windows = pl.read_parquet(jobs_dir / "dominant_windows.parquet", columns=pe.WINDOW_COLUMNS)
    if pe.select_jobs(dominant, WINDOWS, ("production",), 1.0).height == 0:  # too little data: said, not a traceback
        print(f"too little data: no production job of the run's D ({jobs_dir}) runs the whole trace (task_usage covers "
              f"{windows['window'].n_unique() if windows.height else 0} window(s)), so §5.2 has nothing to decompose")
        return
    alive = windows.height / WINDOWS
    factor = args.factor or math.ceil(PAPER_ALIVE_D / alive)
    step = int(max(dominant["job_id"].max(), windows["job_id"].max())) + 1
    with tempfile.TemporaryDirectory() as tmp:
        dominant.write_parquet(f"{tmp}/reference-dominant.parquet")
        windows.write_parquet(f"{tmp}/reference-windows.parquet")
        copies = range(factor)
        pl.concat([dominant.with_columns(pl.col("job_id") + c * step) for c in copies]).write_parquet(f"{tmp}/ours-dominant.parquet")
        pl.concat([windows.with_columns(pl.col("job_id") + c * step) for c in copies]).write_parquet(f"{tmp}/ours-windows.parquet")
        _, _, line = reference_and_ours(CHILD, tmp, labels=("the run's D", f"D × {factor}"))
        print(f"D: {dominant.height:,} jobs, {windows.height:,} job × window rows ({alive:.1f} alive per window) "
              f"→ × {factor}: {dominant.height * factor:,} jobs, {windows.height * factor:,} rows "
              f"({alive * factor:.1f} alive per window; the real trace 240.9)")
        print(line)


if __name__ == "__main__":
    main()
