"""Benchmark: dominant jobs (Beaumont §3) on a paper-sized job × window table vs a plain group-by of it.

The real trace has ~4,150 alive jobs per 5-minute window over 8352 windows: ~35 M job × window rows, which
the `dominant_jobs` rule reads at once. This builds such a table (log-normal job CPU, a few thousand jobs per
window; ``--jobs-per-window`` and ``--windows`` scale it), then in the same run times, in child processes so
that each peak RSS is its own:

* reference: ``group_by("window").agg(cpu_sum.sum())`` of the table (the cheapest pass that sees every row);
* ours: ``dominant_by_chunks`` (a day of windows at a time) + ``dominant_jobs``, as the rule does.

Prints both times, the ratio and both peak RSS.

    python bench/dominant_jobs.py [--jobs-per-window 4150] [--windows 8352] [--repeat 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import child, parse_args

BUILD = r"""
import sys
import numpy as np
import polars as pl
jpw, windows, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
# jobs live for a geometric number of windows, so ~jpw are alive per window
life = 200
n_jobs = jpw * windows // life + jpw
start = rng.integers(-life, windows, n_jobs)
dur = rng.geometric(1 / life, n_jobs)
rows = []
for lo in range(0, n_jobs, 200_000):
    s, d = start[lo:lo + 200_000], dur[lo:lo + 200_000]
    a, b = np.maximum(s, 0), np.minimum(s + d, windows)
    keep = b > a
    ids = np.arange(lo, lo + s.size)[keep]
    a, b = a[keep], b[keep]
    n = b - a
    job = np.repeat(ids, n)
    w = np.repeat(a, n) + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))
    size = np.exp(rng.normal(-3, 1.8, ids.size))
    cpu = np.repeat(size, n) * rng.gamma(4, 0.25, job.size)
    rows.append(pl.DataFrame({"job_id": job.astype(np.int64), "window": w.astype(np.int32),
                              "n_tasks": np.ones(job.size, np.int32), "n_records": np.ones(job.size, np.int32),
                              "cpu_sum": cpu, "mem_sum": cpu * 0.8, "cpu_p10": cpu, "cpu_p90": cpu}))
df = pl.concat(rows)
df.sort("window").write_parquet(path, row_group_size=100_000)  # sorted by window, as the map writes them
jobs = pl.DataFrame({"job_id": np.arange(n_jobs, dtype=np.int64), "priority": rng.integers(0, 12, n_jobs)})
jobs.with_columns(pl.lit("gratis").alias("class")).write_parquet(path + ".jobs")
print(df.height)
"""

CHILD = r"""
import resource, sys, time
import polars as pl
from colocate.analysis import jobs
path, which, n_windows = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = time.perf_counter()
if which == "reference":
    pl.read_parquet(path).group_by("window").agg(pl.col("cpu_sum").sum())
else:  # as the dominant_jobs rule: a day of windows at a time
    scan = pl.scan_parquet(path)
    load = lambda lo, hi: scan.filter(pl.col("window").is_between(lo, hi - 1)).collect()
    windows, totals = jobs.dominant_by_chunks(load, n_windows, 0.9, 288)
    jobs.dominant_jobs(windows, pl.read_parquet(path + ".jobs"), n_windows)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def run(path: str, which: str, n_windows: int) -> tuple[float, float]:
    return child(CHILD, path, which, n_windows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs-per-window", type=int, default=4150)
    ap.add_argument("--windows", type=int, default=8352)
    ap.add_argument("--repeat", type=int, default=3)
    args = parse_args(ap)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "job_windows.parquet")
        rows = subprocess.run([sys.executable, "-c", BUILD, str(args.jobs_per_window), str(args.windows), path],
                              capture_output=True, text=True, check=True).stdout.strip()
        ref = [run(path, "reference", args.windows) for _ in range(args.repeat)]
        ours = [run(path, "dominant", args.windows) for _ in range(args.repeat)]
        r, o = min(x[0] for x in ref), min(x[0] for x in ours)
        print(f"job x window rows  {int(rows):,} ({args.jobs_per_window} alive jobs per window, {args.windows} windows)")
        print(f"reference          {r:.2f} s   read + group_by(window).sum (best of {args.repeat}), peak RSS {max(x[1] for x in ref):.0f} MB")
        print(f"dominant jobs      {o:.2f} s   D_i and D by day-chunks + totals + per-job rows, peak RSS {max(x[1] for x in ours):.0f} MB")
        print(f"ratio ours/ref     {o / r:.2f}")


if __name__ == "__main__":
    main()
