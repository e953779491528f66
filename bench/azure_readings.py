"""Benchmark: read one Azure vm_cpu_readings file of real size vs `gzip -dc` of the same file (issue 16).

A readings file of the Azure VM traces holds about 10 million rows (V2: 195 files, 1.94 billion readings). This
builds one by tiling the real V2 sample (workflow/data/azure-vm-sample: 20 VMs over 30 days, full double
precision, CRLF) with fresh VM ids per tile, so the values and their compressibility are the trace's own. Then,
in the same run:

* reference: ``gzip -dc file > /dev/null``;
* ours: ``colocate.trace.azure.read_readings`` (decompress, parse, check min ≤ avg ≤ max and the 5-minute grid),
  in a child process so that its peak RSS is measured alone.

Prints both times, the ratio and the peak RSS: what a per-file map of the Azure readings starts from.

    python bench/azure_readings.py [--rows 10000000] [--repeat 3] [--keep /tmp/readings.csv.gz]
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import timing

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "workflow" / "data" / "azure-vm-sample" / "v2" / "vm_cpu_readings-20vms.csv.gz"

CHILD = r"""
import resource, sys, time
from colocate.trace import azure
t = time.perf_counter()
df = azure.read_readings(sys.argv[1])
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, df.height)
"""


def build_file(path: Path, rows: int) -> None:
    """Tile the real sample's rows; each tile renames its VMs (a suffix on the hashed id), CRLF as the trace."""
    lines = gzip.decompress(SAMPLE.read_bytes()).decode().splitlines()
    with gzip.open(path, "wt", compresslevel=6, newline="") as out:
        written, tile = 0, 0
        while written < rows:
            take = lines[: rows - written]
            out.write("".join(f"{ts},{vm}{tile:x},{rest}\r\n" for ts, vm, rest in (ln.split(",", 2) for ln in take)))
            written += len(take)
            tile += 1


def time_read(path: Path) -> tuple[float, float, int]:
    """(seconds, peak RSS MB, rows) of read_readings in a fresh process."""
    res = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, check=True)
    seconds, rss, n = res.stdout.split()
    return float(seconds), float(rss), int(n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="build the file here (reused if it exists)")
    args = ap.parse_args()
    if not SAMPLE.exists():
        sys.exit(f"{SAMPLE} not found: the benchmark tiles the real sample rows")
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "vm_cpu_readings-file-1-of-195.csv.gz"
        if not path.exists():
            t = time.perf_counter()
            build_file(path, args.rows)
            print(f"built {path} ({path.stat().st_size / 2**20:.1f} MB gz) in {time.perf_counter() - t:.1f} s")
        gz = min(timing.gzip_seconds(path) for _ in range(args.repeat))
        runs = [time_read(path) for _ in range(args.repeat)]
        ours, rss, n = min(r[0] for r in runs), max(r[1] for r in runs), runs[0][2]
        print(f"rows               {n:,}")
        print(f"gzip -dc           {gz:.3f} s   (best of {args.repeat})")
        print(f"read_readings      {ours:.3f} s   (best of {args.repeat}; decompress, parse, check)")
        print(f"ratio ours/gzip    {ours / gz:.2f}")
        print(f"peak RSS (read)    {rss:.0f} MB ({rss * 2**20 / n:.0f} bytes a row)")


if __name__ == "__main__":
    main()
