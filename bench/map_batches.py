"""Benchmark: mapping the small event shards one job each against in batches (``mapreduce.shards_per_map``).

The full trace has 500 task_events and 500 job_events shards of 0.1-4 MB (gz). Mapped one job each, a job's
start-up (interpreter, imports, Snakemake's own bookkeeping) is most of the work, and every one of the 256
reducers opens every task_events map output. This runs both ways with Snakemake on K real-size shards of each
table (the real sample's shards, tiled), in the same session:

* the map jobs' wall time at ``--cores 2`` (one thread each, as docs/performance.md's map + reduce figure runs them),
  shards_per_map 1 against the default batch, and the time saved per shard;
* one reducer's read of a bucket of task_events pieces from the full trace's 500 per-shard outputs against 50
  batch outputs holding the same rows (hard links of the two runs' outputs), the fan-in every reducer pays;
* the saving projected to the full trace's 1,000 event shards and 256 reducers on 2 cores.

    python bench/map_batches.py                # K = 20
    python bench/map_batches.py --shards 40
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from paper_scale import FULL_SHARDS, REPO, snakemake  # noqa: E402
from timing import best_of, parse_args  # noqa: E402

from colocate import io  # noqa: E402

SAMPLE = REPO / "workflow" / "data" / "google-2011-sample"
TABLES = ("task_events", "job_events")
BUCKETS = 256


def tiled_trace(root: Path, shards: int) -> None:
    """K shards of each event table, each a hard link of one of the real sample's shards in turn (0.1-4.1 MB)."""
    for table in (*TABLES, "task_usage", "machine_events"):
        src = sorted((SAMPLE / table).glob("part-*.csv.gz"))
        (root / table).mkdir(parents=True)
        count = shards if table in TABLES else len(src)
        for i in range(count):
            name = f"part-{i:05d}-of-{FULL_SHARDS:05d}.csv.gz" if table in TABLES else src[i].name
            os.link(src[i % len(src)], root / table / name)


def run(work: Path, trace: Path, per_map: int) -> tuple[float, list[Path]]:
    """Map every event shard with ``per_map`` shards a job; the wall time and the task_events outputs."""
    work.mkdir()
    run_name = f"batch-{per_map}"
    config = {"scale": "paper", "run": run_name, "trace": {"source": "local", "path": str(trace), "shards": "all"},
              "mapreduce": {"shards_per_map": {"task_events": per_map, "job_events": per_map}}}
    (work / "config.yaml").write_text(yaml.safe_dump(config))
    plan = snakemake(work, "-n", "--cores", "2", "--until", "map_task_events", "map_job_events")
    jobs = plan.count("rule map_task_events:") + plan.count("rule map_job_events:")
    t = time.perf_counter()
    snakemake(work, "--cores", "2", "--set-threads", "map_task_events=1", "--until", "map_task_events", "map_job_events",
              log=work / "snakemake.log")
    seconds = time.perf_counter() - t
    print(f"shards_per_map {per_map:>2}: {jobs} map jobs, {seconds:.1f} s")
    return seconds, sorted((work / "results" / run_name / "map" / "task_events").glob("*.parquet"))


def fan_in(outputs: list[Path], copies: int, tmp: Path) -> tuple[float, int]:
    """Best time of one reducer's read of bucket 0 from ``copies`` hard links of each of ``outputs``."""
    tmp.mkdir()
    paths = []
    for c in range(copies):
        for i, p in enumerate(outputs):
            link = tmp / f"{c:04d}-{i:04d}.parquet"
            os.link(p, link)
            paths.append(link)
    return best_of(lambda: io.read_bucket(paths, 0), repeat=3), len(paths)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shards", type=int, default=20, help="shards of each event table (a multiple of 10)")
    ap.add_argument("--workdir", type=Path, default=None, help="kept afterwards (default: a temporary one, removed)")
    args = parse_args(ap)
    wd = args.workdir or Path(tempfile.mkdtemp(prefix="map-batches-"))
    shutil.rmtree(wd, ignore_errors=True)
    wd.mkdir(parents=True)
    trace = wd / "trace"
    tiled_trace(trace, args.shards)
    default = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    per_map = default["properties"]["mapreduce"]["properties"]["shards_per_map"]["properties"]["task_events"]["default"]
    one, one_out = run(wd / "one", trace, 1)
    batched, batch_out = run(wd / "batched", trace, per_map)
    saved = (one - batched) / (2 * args.shards)
    print(f"map jobs: {one:.1f} s one shard a job, {batched:.1f} s {per_map} a job (×{batched / one:.2f}); "
          f"{saved * 1000:.0f} ms saved per shard on 2 cores")
    copies = FULL_SHARDS // args.shards
    t_one, n_one = fan_in(one_out, copies, wd / "fan-one")
    t_batch, n_batch = fan_in(batch_out, copies, wd / "fan-batched")
    print(f"a reducer's read of one bucket of task_events pieces: {n_one} files {t_one:.2f} s, {n_batch} files "
          f"{t_batch:.2f} s (the same rows); {1000 * (t_one - t_batch) / (n_one - n_batch):.2f} ms a file")
    maps = saved * 2 * FULL_SHARDS
    reduce = (t_one - t_batch) * BUCKETS  # a reducer's read already uses both cores (polars), as its 3.1 s does
    print(f"projected to the full trace on 2 cores: maps {maps / 60:.1f} min and reducers {reduce / 60:.1f} min "
          f"saved, {(maps + reduce) / 60:.1f} min in all ({math.ceil(FULL_SHARDS / per_map)} batch jobs a table "
          f"instead of {FULL_SHARDS})")
    if args.workdir is None:  # a directory of its own: nothing to keep
        shutil.rmtree(wd)


if __name__ == "__main__":
    main()
