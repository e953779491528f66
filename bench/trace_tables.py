"""Benchmark: the whole-trace tables of the pipeline, built at the real trace's size.

`collect_tasks` writes one row per task (the real trace has about 25 M tasks, in B = 256 bucket files) sorted
by (job_id, task_index); `job_table` aggregates every task_events shard's (job, task) pieces (about 35 M rows
over 500 shards, 672,074 jobs) by job. This builds inputs of that size with the rules' own schemas, then in the
same run, in child processes so that each peak RSS is its own:

* collect_tasks, reference: read every bucket, concatenate, sort, write (what the rule did before);
* collect_tasks, ours: ``io.write_sorted``, a range of jobs sorted and appended per pass (the rule now);
* job_table, reference: read every shard's pieces, concatenate, aggregate;
* job_table, ours: the same aggregation on a lazy scan of the pieces (the rule now);
* unuvar_aggregates' machine concurrency (Unuvar §IV-B), reference: one lazy scan of every bucket's long-task
  series, grouped by machine with the distinct windows counted (the rule before);
* ours: the same counts a bucket at a time into a machines × windows table (the rule now). The series are
  ``--records`` records of 12,583 machines over 8,352 windows.

Prints each time and peak RSS, and the ratios ours / reference.

    python bench/trace_tables.py [--tasks 25000000] [--jobs 672074] [--pieces-per-task 1.4] [--buckets 256]
                                 [--shards 500] [--records 100000000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile

from timing import child, parse_args

BUILD = r"""
import sys
from pathlib import Path
import numpy as np
import polars as pl
n_tasks, n_jobs, per_task, buckets, shards, root = (int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]),
                                                     int(sys.argv[4]), int(sys.argv[5]), Path(sys.argv[6]))
rng = np.random.default_rng(0)
# tasks per job: log-normal sizes, at least one, summing to n_tasks; (job_id, task_index) unique
size = np.maximum(1, np.round(rng.lognormal(0, 1.6, n_jobs) * n_tasks / n_jobs / np.exp(1.28))).astype(np.int64)
size[-1] += max(n_tasks - size.sum(), 0)
size = size[np.cumsum(size) - size < n_tasks]
size[-1] -= max(size.sum() - n_tasks, 0)
job_ids = 3_400_000 + np.sort(rng.choice(6_000_000_000, size.size, replace=False))
job = np.repeat(job_ids, size)
task = np.arange(job.size) - np.repeat(np.cumsum(size) - size, size)
n = job.size
stats = pl.DataFrame({
    "job_id": job, "task_index": task, "n_records": rng.integers(1, 8352, n).astype(np.uint32),
    "inst_mean": rng.random(n), "inst_std": rng.random(n), "avg_mean": rng.random(n), "avg_std": rng.random(n),
    "inst_max": rng.random(n), "is_long": rng.random(n) < 0.05, "priority": rng.integers(0, 12, n),
    "scheduling_class": rng.integers(0, 4, n), "cpu_request": rng.random(n).astype(np.float32),
    "memory_request": rng.random(n).astype(np.float32)})
bucket = (stats["job_id"].hash(seed=0) % buckets).to_numpy()
(root / "buckets").mkdir()
for b in range(buckets):
    stats.filter(pl.Series(bucket == b)).sort("job_id", "task_index").write_parquet(root / "buckets" / f"{b:03d}.parquet")
# task_events pieces: every task in one shard, some in a second one too
extra = rng.random(n) < per_task - 1
rows = np.concatenate([np.arange(n), np.flatnonzero(extra)])
shard = np.sort(rng.integers(0, shards, rows.size))  # the trace is in time order: shards are time slices
pieces = pl.DataFrame({"job_id": job[rows], "task_index": task[rows], "priority": rng.integers(0, 12, rows.size),
                       "first_time": rng.integers(0, 2_506_200_000_000, rows.size),
                       "last_event": rng.integers(0, 2_506_200_000_000, rows.size)})
(root / "pieces").mkdir()
cut = np.searchsorted(shard, np.arange(shards + 1))
for s in range(shards):
    pieces.slice(int(cut[s]), int(cut[s + 1] - cut[s])).write_parquet(root / "pieces" / f"{s:03d}.parquet")
# long-task series: machine and start time of each record, bucketed as the reducers write them
records = int(sys.argv[7])
(root / "series").mkdir()
per = records // buckets
for b in range(buckets):
    w = rng.integers(0, 8352, per)
    pl.DataFrame({"machine_id": 5_000_000 + rng.integers(0, 12_583, per) * 977,
                  "start_time": 600_000_000 + w * 300_000_000 + rng.integers(0, 300_000_000, per)}).write_parquet(
        root / "series" / f"{b:03d}.parquet")
print(n, size.size, rows.size, per * buckets)
"""

CHILD = r"""
import resource, sys, time
from pathlib import Path
import polars as pl
from colocate import io
from colocate.analysis import aggregate, jobs
from colocate.trace import PRIORITY_CLASSES
root, which = Path(sys.argv[1]), sys.argv[2]
buckets = sorted(str(p) for p in (root / "buckets").glob("*.parquet"))
pieces = sorted(str(p) for p in (root / "pieces").glob("*.parquet"))
key = ["job_id", "task_index"]
t = time.perf_counter()
if which == "collect-reference":
    io.write_parquet(pl.concat([pl.read_parquet(p) for p in buckets]).sort(key), root / "ref.parquet")
elif which == "collect-ours":
    io.write_sorted(buckets, root / "ours.parquet", key)
elif which == "machines-reference":
    aggregate.machine_concurrency(pl.scan_parquet(sorted(str(p) for p in (root / "series").glob("*.parquet"))))
elif which == "machines-ours":
    aggregate.machine_concurrency([pl.scan_parquet(str(p)) for p in sorted((root / "series").glob("*.parquet"))])
elif which == "jobs-reference":
    jobs.job_table(pl.concat([pl.read_parquet(p) for p in pieces]), PRIORITY_CLASSES)
else:
    jobs.job_table(pl.scan_parquet(pieces), PRIORITY_CLASSES)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def run(root: str, which: str) -> tuple[float, float]:
    return child(CHILD, root, which)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=25_000_000)
    ap.add_argument("--jobs", type=int, default=672_074)
    ap.add_argument("--pieces-per-task", type=float, default=1.4)
    ap.add_argument("--buckets", type=int, default=256)
    ap.add_argument("--shards", type=int, default=500)
    ap.add_argument("--records", type=int, default=100_000_000)
    ap.add_argument("--repeat", type=int, default=1)
    args = parse_args(ap)
    with tempfile.TemporaryDirectory() as tmp:
        built = subprocess.run([sys.executable, "-c", BUILD, str(args.tasks), str(args.jobs), str(args.pieces_per_task),
                                str(args.buckets), str(args.shards), tmp, str(args.records)],
                               capture_output=True, text=True, check=True)
        tasks, n_jobs, n_pieces, n_records = (int(x) for x in built.stdout.split())
        print(f"{tasks:,} tasks of {n_jobs:,} jobs in {args.buckets} buckets; {n_pieces:,} task_events pieces in "
              f"{args.shards} shards; {n_records:,} long-task records in {args.buckets} buckets")
        for name, what in (("collect_tasks", "collect"), ("job_table", "jobs"), ("machine counts", "machines")):
            ref = [run(tmp, f"{what}-reference") for _ in range(args.repeat)]
            ours = [run(tmp, f"{what}-ours") for _ in range(args.repeat)]
            r, o = min(x[0] for x in ref), min(x[0] for x in ours)
            rm, om = max(x[1] for x in ref), max(x[1] for x in ours)
            print(f"{name:14s} reference {r:6.1f} s {rm:6.0f} MB | ours {o:6.1f} s {om:6.0f} MB | "
                  f"time ×{o / r:.2f}, peak ×{om / rm:.2f}")


if __name__ == "__main__":
    main()
