"""Benchmark: map of one real-size Google 2019 instance_usage shard vs `gzip -dc` of the same file (issue 45, item 5).

Real instance_usage shards are reported at about 500 MB gzip (about 3 GB of JSON). The shard built here tiles the
tiny synthetic model's instance_usage (``synth.generate`` at the tiny preset, written by ``from_2011`` with its two
CPU distributions, as ``write_json_lines`` writes it: 197,395 rows, 27.7 MB gz, 144 MB of JSON a tile) 18 times,
each tile with fresh collection ids and its windows moved on by the model's span (two days, so 15 tiles fill the
month and the 16th starts over): by default 3.55 M rows, ~498 MB gz, ~2.6 GB of JSON, gzip level 6 (the values and
their compressibility are the model's: 5.2:1, a little below the real shards' ~6:1). It is built once (cached with
``--keep PATH``, about a minute). Then, in the same run, for each POLARS_MAX_THREADS (1 and 2):

* reference: ``gzip -dc shard > /dev/null``;
* ours: the rule script (workflow/scripts/google2019_map_instance_usage.py, its ``main`` as Snakemake calls it): the
  shard read in blocks (``iter_instance_usage``), ``task_usage`` + ``window_moments`` per block,
  ``usage_window_rows`` and ``bucket_records`` once, the four Parquet writes; in a child process, so that its peak RSS is its own;
* the read alone (the blocks decompressed and parsed, nothing kept), in a child process too.

Prints both walls, the ratio against the target (≤ 1.5) and the peak RSS against 1.5 GB (1,536 MB).

    python bench/google2019_map.py [--tiles 18] [--repeat 3] [--threads 1 2] [--buckets 256] [--keep /tmp/iu.json.gz]
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl
from isal import igzip

import timing

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "workflow"), str(HERE.parent / "tests")]
SCRIPT = HERE.parent / "workflow" / "scripts" / "google2019_map_instance_usage.py"
TARGET_RATIO, TARGET_MB = 1.5, 1536
DAY_US = 86_400 * 10**6

CHILD = r"""
import resource, sys, time
from colocate import rulescript
from colocate.sources import google2019 as g19
script, shard, out, buckets, n_windows, what = sys.argv[1:7]
t = time.perf_counter()
if what == "read":
    for raw in g19.iter_instance_usage(shard):
        del raw
else:
    outputs = {n: f"{out}/{n}.parquet" for n in ("records", "window_records", "sampled", "moments")}
    params = {"buckets": int(buckets), "n_windows": int(n_windows), "windows_per_day": 20, "seed": 42}
    rulescript.call(rulescript.load(script), {"shard": shard}, outputs, params, log=f"{out}/map.log")
r = resource.getrusage(resource.RUSAGE_SELF)
print(time.perf_counter() - t, r.ru_utime + r.ru_stime, r.ru_maxrss / 1024)
"""


def model_lines(seed: int, rows: int | None = None) -> tuple[pl.DataFrame, int]:
    """The tiny model's instance_usage lines as ``write_json_lines`` writes them, split into the three leading fields
    a tile changes (start_time, end_time, collection_id, as Int64) and the rest of the line; and the model's span
    in µs (whole days)."""
    from colocate.sources import google2019 as g
    from colocate.trace import synth
    from wfutil import TINY

    params = synth.SynthParams.from_dict(TINY)
    rows_2019 = g.from_2011("task_usage", synth.generate(params, seed)["task_usage"])
    with tempfile.TemporaryDirectory() as tmp:
        g.write_json_lines(rows_2019 if rows is None else rows_2019.head(rows), Path(tmp) / "tile.json.gz")
        text = gzip.decompress((Path(tmp) / "tile.json.gz").read_bytes()).decode()
    head = r'^\{"start_time":"(?<start>\d+)","end_time":"(?<end>\d+)","collection_id":"(?<cid>\d+)"(?<rest>.*)$'
    parts = pl.DataFrame({"line": text.splitlines()}).select(pl.col("line").str.extract_groups(head)).unnest("line")
    if parts["rest"].null_count():
        raise SystemExit("a model line does not start with start_time, end_time, collection_id")
    return parts.with_columns(pl.col("start", "end", "cid").cast(pl.Int64)), TINY["days"] * DAY_US


def build_shard(path: Path, tiles: int, seed: int = 11, rows: int | None = None) -> None:
    """``tiles`` copies of the model's lines (:func:`model_lines`), copy k with collection ids moved past all of the
    model's (k times) and times moved on by k model spans, modulo the month's whole spans; gzip level 6, mtime 0."""
    from colocate.sources.google2019 import SPAN_WINDOWS

    parts, span = model_lines(seed, rows)
    per_month = max(SPAN_WINDOWS * 300 * 10**6 // span, 1)
    cid_step = int(parts["cid"].max()) + 1
    with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as gz:
        for k in range(tiles):
            shift = (k % per_month) * span
            text = parts.select(pl.concat_str(
                pl.lit('{"start_time":"'), (pl.col("start") + shift).cast(pl.String),
                pl.lit('","end_time":"'), (pl.col("end") + shift).cast(pl.String),
                pl.lit('","collection_id":"'), (pl.col("cid") + k * cid_step).cast(pl.String),
                pl.lit('"'), pl.col("rest"))).to_series().str.join("\n").item()
            gz.write(text.encode() + b"\n")


def shard_size(path: Path) -> tuple[int, int, int]:
    """(gz bytes, JSON bytes, lines) of ``path``."""
    size = lines = 0
    with igzip.open(path, "rb") as fh:
        while block := fh.read(16 << 20):
            size, lines = size + len(block), lines + block.count(b"\n")
    return path.stat().st_size, size, lines


def gzip_dc(shard: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``gzip -dc shard > /dev/null``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timing.gzip_seconds(shard)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def measure(shard: Path, out: Path, what: str, buckets: int, repeat: int) -> tuple[float, float, float]:
    """Best wall (s), its CPU (s, the process's, imports included) and the largest peak RSS (MB) of ``repeat``
    children doing ``what`` (map or read)."""
    from colocate.sources.google2019 import SPAN_WINDOWS

    runs = []
    for _ in range(repeat):
        res = subprocess.run([sys.executable, "-c", CHILD, SCRIPT, shard, out, str(buckets), str(SPAN_WINDOWS), what],
                             capture_output=True, text=True, check=True)
        runs.append(tuple(map(float, res.stdout.split()[-3:])))
    wall, cpu, _ = min(runs)
    return wall, cpu, max(r[2] for r in runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tiles", type=int, default=18, help="copies of the tiny model's 197,395 rows (18: ~498 MB gz)")
    ap.add_argument("--rows", type=int, help="a tile of the model's first ROWS rows only (a quick check)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="POLARS_MAX_THREADS values to run at")
    ap.add_argument("--buckets", type=int, default=256, help="reduce buckets (256 at the paper scale)")
    ap.add_argument("--keep", type=Path, help="build the shard here (reused if it exists)")
    args = timing.parse_args(ap)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [sys.path[0], os.environ.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as tmp:
        shard = args.keep or Path(tmp) / "instance_usage-000000000000.json.gz"
        timing.build_once(shard, lambda p: build_shard(p, args.tiles, rows=args.rows))
        gz, js, rows = shard_size(shard)
        print(f"shard              {shard.name}: {gz / 1e6:,.1f} MB gz, {js / 1e6:,.1f} MB of JSON, {rows:,} rows "
              f"(target size: ~500 MB gz, ~3 GB of JSON)")
        for threads in args.threads:
            os.environ["POLARS_MAX_THREADS"] = str(threads)
            ref, ref_cpu = min(gzip_dc(shard) for _ in range(args.repeat))
            ours, cpu, rss = measure(shard, Path(tmp), "map", args.buckets, args.repeat)
            read, read_cpu, read_rss = measure(shard, Path(tmp), "read", args.buckets, args.repeat)
            print(f"POLARS_MAX_THREADS={threads} (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
            print(f"  gzip -dc         {ref:7.2f} s   (best of {args.repeat}; CPU {ref_cpu:.2f} s)")
            print(f"  map (rule)       {ours:7.2f} s   (best of {args.repeat}; CPU {cpu:.2f} s; blocks read, task_usage + "
                  "window_moments, usage_window_rows + bucket_records, 4 Parquet writes)")
            print(f"    read alone     {read:7.2f} s   (ratio {read / ref:.2f}, CPU {read_cpu:.2f} s, peak {read_rss:.0f} MB)")
            print(f"  ratio ours/gzip  {ours / ref:7.2f}     (target ≤ {TARGET_RATIO}: {'met' if ours / ref <= TARGET_RATIO else 'NOT met'})")
            print(f"  peak RSS (map)   {rss:7.0f} MB  (target ≤ {TARGET_MB} MB: {'met' if rss <= TARGET_MB else 'NOT met'})")


if __name__ == "__main__":
    main()
