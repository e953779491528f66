"""Benchmark: read and map one Azure vm_cpu_readings file of real size vs `gzip -dc` of the same file (issue 16).

A readings file of the Azure VM traces holds about 10 million rows (V2: 195 files, 1.94 billion readings, in
time order: a file covers about 44 five-minute slots of ~225,000 VMs). This builds one from the real V2 sample
(workflow/data/azure-vm-sample: 20 VMs, full double precision, CRLF) over ``--slots`` slots, tiles of the 20 VMs
with fresh random ids each reading the sample's values at other times (:func:`build_file`), so the values, the number
of VMs and the compressibility are a real file's. Then, in the same run:

* reference: ``gzip -dc file > /dev/null``;
* ours, in a child process so that its peak RSS is measured alone: ``read_readings`` (decompress, parse, check
  min ≤ avg ≤ max and the 5-minute grid), then the rest of the ``azure_map_readings`` job: ``usage_records``
  (the contract's usage records: each VM keyed by its deployment through the vmtable, shares of a 48-core host,
  bucketed over B = 256) and the Parquet write.

Prints the times, the read's and the whole map job's ratio to gzip, and the peak RSS.

    python bench/azure_readings.py [--rows 10000000] [--slots 44] [--repeat 3] [--keep /tmp/readings.csv.gz]
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

import timing

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "workflow" / "data" / "azure-vm-sample" / "v2" / "vm_cpu_readings-20vms.csv.gz"

CHILD = r"""
import resource, sys, time
from colocate import io
from colocate.sources import azure
t = time.perf_counter()
df = azure.read_readings(sys.argv[1])
read = time.perf_counter() - t
import polars as pl
ids = df["vmid"].unique()  # a vmtable of the file's VMs, one per deployment, 2 cores each
tasks = azure.vm_tasks(pl.DataFrame({"vmid": ids, "deploymentid": ids, "vmcorecount": ["2"] * ids.len()}))
records = azure.usage_records(df, tasks, 48, 256)
mapped = time.perf_counter() - t - read
io.write_parquet(records, sys.argv[2])
written = time.perf_counter() - t - read - mapped
print(read, mapped, written, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, df.height, df["vmid"].n_unique())
"""


def build_file(path: Path, rows: int, slots: int) -> None:
    """``rows`` readings over ``slots`` slots, written slot by slot as the trace orders a file by time: tile t of the
    sample's 20 VMs (with new random ids) reads at output slot s what the sample read at slot t·slots + s (mod
    its 8,639), so values are the trace's own, a VM's id recurs once a slot as far apart as in the trace, and no
    nearby line repeats another (gzip gets a real file's ratio). CRLF as the trace."""
    rest: dict[str, dict[int, str]] = {}
    for ln in gzip.decompress(SAMPLE.read_bytes()).decode().splitlines():
        ts, vm, values = ln.split(",", 2)
        rest.setdefault(vm, {})[int(ts) // 300] = values
    vms, span = sorted(rest), 1 + max(max(r) for r in rest.values())
    tiles = -(-rows // (slots * len(vms)))
    # every tile's VMs get ids like the trace's: 64 base64 characters of a hash (random to gzip, as real ids are)
    ids = {(vm, t): base64.b64encode(hashlib.sha384(f"{vm}{t}".encode()).digest()).decode() for vm in vms for t in range(tiles)}
    with gzip.open(path, "wt", compresslevel=6, newline="") as out:
        written = 0
        for s in range(slots):
            chunk = []
            for tile in range(tiles):
                src = (tile * slots + s) % span
                chunk += [f"{300 * s},{ids[vm, tile]},{rest[vm][src]}\r\n" for vm in vms if src in rest[vm]]
            chunk = chunk[: max(0, rows - written)]
            out.write("".join(chunk))
            written += len(chunk)


def time_map(path: Path, out: Path) -> tuple[float, float, float, float, int, int]:
    """(read s, map s, write s, peak RSS MB, rows, VMs) of the map job's work in a fresh process."""
    res = subprocess.run([sys.executable, "-c", CHILD, str(path), str(out)], capture_output=True, text=True, check=True)
    read, mapped, written, rss, n, vms = res.stdout.split()
    return float(read), float(mapped), float(written), float(rss), int(n), int(vms)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--slots", type=int, default=44, help="slots of the sample tiled (a real file: ~44)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="build the file here (reused if it exists)")
    args = timing.parse_args(ap)
    if not SAMPLE.exists():
        sys.exit(f"{SAMPLE} not found: the benchmark tiles the real sample rows")
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "vm_cpu_readings-file-1-of-195.csv.gz"
        timing.build_once(path, lambda p: build_file(p, args.rows, args.slots))
        gz = min(timing.gzip_seconds(path) for _ in range(args.repeat))
        runs = [time_map(path, Path(tmp) / "records.parquet") for _ in range(args.repeat)]
        read = min(r[0] for r in runs)
        job = min(r[0] + r[1] + r[2] for r in runs)
        rss, n, vms = max(r[3] for r in runs), runs[0][4], runs[0][5]
        print(f"rows               {n:,} of {vms:,} VMs")
        print(f"gzip -dc           {gz:.3f} s   (best of {args.repeat})")
        print(f"read_readings      {read:.3f} s   (decompress, parse, check)   ratio {read / gz:.2f}")
        print(f"map job            {job:.3f} s   (read, bucket, sort, write)  ratio {job / gz:.2f}")
        print(f"peak RSS (map job) {rss:.0f} MB ({rss * 2**20 / n:.0f} bytes a row)")

if __name__ == "__main__":
    main()
