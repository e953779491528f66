"""Benchmark: Beaumont §4.2's classification (`cpumem_classify`) when the dominant jobs hold many points.

On the full trace D has 25,839 jobs and the 580 sampled windows hold tens of millions of their (CPU, memory)
records, of which each job keeps up to ``max_points_per_job`` (5,000; up to 1.5 × that + 50 while thinning).
This writes ``--files`` sampled-window files holding ``--jobs`` jobs of ``--points`` records each, then, each in
its own process so that each peak RSS is its own:

* reference: every job's points at once, then the classification (one group: the rule before);
* ours: ``cpumem.classify_sampled`` with groups of at most 4 M points (the rule now).

Both must give the same classes. Prints time, peak RSS and the ratios ours / reference.

    python bench/cpumem_classify.py [--jobs 2000] [--points 8000] [--files 50] [--group-points 4000000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile

from timing import parse_args, reference_and_ours

BUILD = r"""
import sys
import numpy as np
import polars as pl
jobs, points, files, root = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = np.random.default_rng(0)
n = jobs * points
job = np.repeat(np.arange(1, jobs + 1, dtype=np.int64), points)
cpu = rng.gamma(2.0, 0.01, n).astype(np.float32)
mem = (0.02 + 0.5 * cpu * (job % 3 == 0) + rng.normal(0, 0.002, n)).astype(np.float32)
frame = pl.DataFrame({"window": rng.integers(0, 580, n).astype(np.int32), "job_id": job,
                      "task_index": np.tile(np.arange(points, dtype=np.int64), jobs), "machine_id": rng.integers(0, 12583, n),
                      "cpu_rate": cpu, "canonical_memory_usage": mem})
part = rng.integers(0, files, n)
for f in range(files):
    frame.filter(pl.Series(part == f)).write_parquet(f"{root}/s{f:03d}.parquet")
pl.DataFrame({"job_id": np.arange(1, jobs + 1, dtype=np.int64)}).write_parquet(f"{root}/dominant.parquet")
"""

CHILD = r"""
import glob, resource, sys, time
import polars as pl
from colocate.analysis import cpumem
root, group_points, which = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sampled = {p: pl.scan_parquet(p) for p in sorted(glob.glob(root + "/s*.parquet"))}
ids = pl.read_parquet(root + "/dominant.parquet")["job_id"]
t = time.perf_counter()
out = cpumem.classify_sampled(sampled, ids, 5000, 1, cpumem.Settings(), 10**12 if which == "reference" else group_points)
out["classes"].write_parquet(f"{root}/{which}.parquet")
print(out["groups"], out["n_points"], file=sys.stderr)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--points", type=int, default=8000)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--group-points", type=int, default=4_000_000, help="points per group of jobs (the rule's 4 M)")
    args = parse_args(ap)
    import polars as pl

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-c", BUILD, str(args.jobs), str(args.points), str(args.files), tmp], check=True)
        _, _, line = reference_and_ours(CHILD, tmp, args.group_points)
        same = pl.read_parquet(f"{tmp}/reference.parquet").equals(pl.read_parquet(f"{tmp}/ours.parquet"))
        print(f"{args.jobs:,} dominant jobs × {args.points:,} sampled records in {args.files} files; cap 5,000 per job; "
              f"reference: one group, ours: ≤ {args.group_points:,} points per group")
        print(f"{line}; same classes: {same}")


if __name__ == "__main__":
    main()
