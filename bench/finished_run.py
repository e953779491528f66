"""A finished run's reduce outputs, as the benchmarks and the studies read them (run as `python bench/NAME.py`,
`python studies/NAME.py`; a study puts bench/ on its path to import this)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from colocate.analysis import aggregate  # noqa: E402
from colocate.trace import read_table  # noqa: E402


def run_subdir(root: Path, name: str, required: bool = True) -> Path | None:
    """``root``/``name`` where ``root`` is a run's directory (results/<run>), else ``root``/results/<run>/``name`` of
    the one run below a working directory; exits naming ``root`` where there is none (None if not ``required``), or
    more than one."""
    if (root / name).is_dir():
        return root / name
    found = sorted(root.glob(f"results/*/{name}"))
    if not found and not required:
        return None
    if not found:
        sys.exit(f"{root}: neither {name}/ nor results/*/{name}/: not a finished run")
    if len(found) > 1:
        sys.exit(f"{root}: results/*/{name} matches {len(found)} runs ({', '.join(str(f.parent) for f in found)}): name one")
    return found[0]


def task_series(root: Path, pattern: str, rename: dict[str, str] | None = None
                     ) -> tuple[list[pl.LazyFrame], pl.DataFrame, int, int]:
    """One scan per part of the tasks' series below ``root`` (``pattern``: the long tasks' "reduce/bucket-*/series.parquet",
    or every task's "map/task_usage/*/records.parquet"; one starting "results/*/" also finds them below a run's
    directory), their records per task and the windows lo..hi (:func:`colocate.analysis.aggregate.task_records`);
    ``rename`` renames columns (e.g. the map's ``cpu_rate`` to the reduce's ``avg``). Exits naming ``root`` where
    there are none, or where they belong to more than one run (their parts must not be mixed)."""
    files = sorted(root.glob(pattern))
    if not files and pattern.startswith("results/*/"):  # root may be the run's directory itself, results/<run>
        files = sorted(root.glob(pattern.removeprefix("results/*/")))
    if not files:
        sys.exit(f"{root}: no {pattern}")
    depth = len(Path(pattern.removeprefix("results/*/")).parts)  # e.g. <run>/reduce/bucket-N/series.parquet: 3
    runs = sorted({str(f.parents[depth - 1]) for f in files})
    if len(runs) > 1:
        sys.exit(f"{root}: {pattern} matches {len(runs)} runs ({', '.join(runs)}): name one")
    parts = [pl.scan_parquet(f).rename(rename or {}) for f in files]
    return (parts, *aggregate.task_records(parts))


def capacities(trace: Path) -> pl.DataFrame:
    """Each machine's last known CPU capacity (machine_events, every shard of ``trace``)."""
    shards = sorted((trace / "machine_events").glob("part-*.csv.gz"))
    if not shards:
        sys.exit(f"{trace}: no machine_events/part-*.csv.gz")
    events = pl.concat([read_table(s, "machine_events", ["time", "machine_id", "cpus"]) for s in shards])
    return events.drop_nulls("cpus").sort("time").group_by("machine_id").agg(pl.col("cpus").last().alias("capacity"))


def run_trace(run: Path, hint: str = "") -> Path:
    """The trace the run's map_task_usage jobs read, as their logs name it (relative to the run's working directory);
    where none does, exits naming ``run``, with the caller's ``hint``."""
    for log in sorted(run.glob("logs/map_task_usage/*.log")):
        m = re.search(r"records from (\S+)/task_usage/part-", log.read_text())
        if m:
            return run.parents[1] / m.group(1)  # results/<run> lies in the working directory
    sys.exit(f"{run}: no logs/map_task_usage/*.log names the trace the run read{hint}")
