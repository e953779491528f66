"""Benchmark: `sample_realizations` (Janus & Rzadca §3.1, N = 100,000 × R = 10,000) at a full bucket's size.

Reads a finished paper-scale slice's ``tasks/long_tasks.parquet`` and reduce buckets cut at the full trace's
size (``bench/paper_scale.py`` writes them to ``full-size-buckets-K``: each holds what one of the full trace's
256 buckets holds). Each pass runs in its own process:

* reference: the chosen tasks' whole series read at once, then drawn (the rule before: ~105 B per record,
  10-20 GB on the full trace);
* ours: the rule's code, one bucket's records of the chosen tasks at a time (``realizations.realize_buckets``).

Both draw each task from its own stream, so the two matrices must be the same bytes. Prints time and the
anonymous peak (heap and arrays: the matrices' mapped pages are page cache that the kernel drops under a
limit), the ratios ours / reference, and the records per bucket. Here every long task of the slice is chosen,
so a bucket holds 5-8× the full trace's chosen records: an upper bound.

    python bench/sample_realizations.py /tmp/slice-8/results/paper-slice-8/tasks/long_tasks.parquet \\
        /tmp/slice-8/full-size-buckets-4/results/paper-slice-8-b4/reduce
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile

from timing import parse_args, reference_and_ours

CHILD = r"""
import glob, sys, time
import numpy as np
import polars as pl
from colocate.prep import realizations as rz
from colocate.prep.tasks import TASK_KEY
from colocate.rulescript import AnonymousPeak
long, reduce, n_tasks, n_realizations, out, which = sys.argv[1:7]
anon, t = AnonymousPeak(), time.perf_counter()
chosen = rz.choose_tasks(pl.read_parquet(long), int(n_tasks), rz.choose_stream(7), allow_fewer=True).with_row_index("row")
files = sorted(glob.glob(reduce + "/bucket-*/series.parquet"))
scans = [pl.scan_parquet(p) for p in files] if which == "ours" else [pl.scan_parquet(files)]
buckets = (s.select(*TASK_KEY, "start_time", *rz.KINDS).join(chosen.lazy().select(TASK_KEY), on=TASK_KEY, how="semi")
           .collect() for s in scans)
shape = (chosen.height, int(n_realizations))
matrices = {k: np.lib.format.open_memmap(f"{out}.{which}.{k}.npy", mode="w+", dtype=np.float32, shape=shape)
            for k in rz.KINDS}
for block in rz.realize_buckets(buckets, chosen, int(n_realizations), 7, chunk_rows=1024):
    for k, m in matrices.items():
        m[block.rows] = block.draws[k]
for m in matrices.values():
    m.flush()
print(time.perf_counter() - t, anon.stop())
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("long_tasks")
    ap.add_argument("reduce", help="a directory of bucket-*/series.parquet")
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--realizations", type=int, default=10_000)
    args = parse_args(ap)
    import polars as pl

    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        out = f"{tmp}/matrix"
        _, _, line = reference_and_ours(CHILD, args.long_tasks, args.reduce, args.tasks, args.realizations, out)

        def digest(which: str) -> str:
            h = hashlib.sha256()
            for kind in ("inst", "avg"):
                with open(f"{out}.{which}.{kind}.npy", "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 24), b""):
                        h.update(chunk)
            return h.hexdigest()

        same = digest("reference") == digest("ours")
    scan = pl.scan_parquet(f"{args.reduce}/bucket-*/series.parquet")
    rows = scan.select(pl.len()).collect().item()
    buckets = len(list(__import__("glob").glob(f"{args.reduce}/bucket-*/series.parquet")))
    print(f"N ≤ {args.tasks:,} × R = {args.realizations:,}; {buckets} buckets of {rows / buckets:,.0f} series rows")
    print(f"{line} (anonymous peaks); same matrices: {same}")


if __name__ == "__main__":
    main()
