"""Benchmark: map of one task_usage shard of real size vs `gzip -dc` of the same file.

Builds a shard of ~2.4 M rows (~90 MB gz, the size of a real task_usage shard) by tiling the rows of the
real sample (workflow/data/google-2011-sample) over consecutive 5-minute windows with fresh job IDs, so the
values and their compressibility are the trace's own. Then, in the same run:

* reference: ``gzip -dc shard > /dev/null``;
* ours: ``read_table`` + ``map_task_usage`` + the three Parquet writes, as the rule does, in a child
  process so that its peak RSS is measured alone.

Prints both times, the ratio (target ≤ 0.6) and the peak RSS (target ≤ 600 MB).

    python bench/map_shard.py [--rows 2400000] [--repeat 3] [--buckets 256] [--keep /tmp/shard.csv.gz]
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
from pathlib import Path

import timing

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "workflow" / "data" / "google-2011-sample" / "task_usage" / "part-00000-of-00500.csv.gz"

CHILD = r"""
import resource, sys, time
import numpy as np
import polars as pl

from colocate import io, trace
from colocate.prep import mapreduce
src, out, BUCKETS = sys.argv[1], sys.argv[2], int(sys.argv[3])
t = time.perf_counter()
usage = trace.read_table(src, "task_usage", mapreduce.USAGE_COLUMNS, float_dtype=pl.Float32)
t_read = time.perf_counter()
windows = mapreduce.sampled_windows(trace.TRACE_WINDOWS, 20, 0)
records, job_windows, sampled = mapreduce.map_task_usage(usage, BUCKETS, windows, consume=True)
n = usage.height
del usage
t_map = time.perf_counter()
io.write_bucketed(records, out + "/records.parquet", BUCKETS)
t_write = time.perf_counter()
io.write_parquet(job_windows, out + "/job_windows.parquet")
io.write_parquet(sampled, out + "/sampled.parquet")
end = time.perf_counter()
print(end - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, n, t_read - t, t_map - t_read, t_write - t_map, end - t_write)
"""


STAGES = (
    "read",  # decompress + parse 9 of the 20 columns
    "aggregate+sort",  # job × window aggregates, sampled windows, bucket reorder
    "records write",  # zstd Parquet, one row group per bucket
    "small writes",  # job_windows and sampled records
)


def build_shard(path: Path, rows: int) -> None:
    """Tile the real sample over consecutive windows; each tile gets fresh job IDs."""
    lines = gzip.decompress(SAMPLE.read_bytes()).decode().splitlines()
    with gzip.open(path, "wt", compresslevel=6) as out:
        written, tile = 0, 0
        while written < rows:
            shift = tile * 300_000_000
            for line in lines[: rows - written]:
                start, end, job, rest = line.split(",", 3)
                out.write(f"{int(start) + shift},{int(end) + shift},{int(job) + tile * 7919},{rest}\n")
            written += min(len(lines), rows - written)
            tile += 1


def time_map(path: Path, out: Path, buckets: int) -> tuple[float, float, int, float, float, float, float]:
    """(total s, peak RSS MB, rows, read s, aggregate + bucket reorder s, records write s, small writes s)."""
    res = subprocess.run([sys.executable, "-c", CHILD, str(path), str(out), str(buckets)], capture_output=True, text=True, check=True)
    seconds, rss, n, *stages = res.stdout.split()
    return (float(seconds), float(rss), int(n), *map(float, stages))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_400_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--buckets", type=int, default=256, help="reduce buckets (256 at the paper scale)")
    ap.add_argument("--keep", type=Path, help="build the shard here (reused if it exists)")
    args = timing.parse_args(ap)
    if not SAMPLE.exists():
        sys.exit(f"{SAMPLE} not found: the benchmark tiles the real sample rows")
    with tempfile.TemporaryDirectory() as tmp:
        shard = args.keep or Path(tmp) / "part-00000-of-00500.csv.gz"
        timing.build_once(shard, lambda p: build_shard(p, args.rows))
        gz = min(timing.gzip_seconds(shard) for _ in range(args.repeat))
        runs = [time_map(shard, Path(tmp), args.buckets) for _ in range(args.repeat)]
        ours = min(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        print(f"rows               {runs[0][2]:,}")
        print(f"gzip -dc           {gz:.3f} s   (best of {args.repeat})")
        best = min(runs)
        print(f"map_task_usage     {ours:.3f} s   (best of {args.repeat}; read + map + 3 Parquet writes)")
        for label, sec in zip(STAGES, best[3:]):
            print(f"  {label:17s}{sec:.3f} s   (ratio {sec / gz:.2f})")
        print(f"ratio ours/gzip    {ours / gz:.2f}   (target ≤ 0.60)")
        print(f"peak RSS (map)     {rss:.0f} MB (target ≤ 600 MB)")


if __name__ == "__main__":
    main()
