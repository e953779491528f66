"""A finished run's reduce outputs, as the measurement benchmarks read them (run as `python bench/NAME.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from colocate.analysis import aggregate  # noqa: E402


def long_task_series(root: Path, pattern: str) -> tuple[list[pl.LazyFrame], pl.DataFrame, int, int]:
    """One scan per bucket of the long tasks' series below ``root`` (``pattern``, e.g. "reduce/bucket-*/series.parquet"),
    their records per task and the windows lo..hi (:func:`colocate.analysis.aggregate.task_records`); exits naming
    ``root`` where there are none, or where they belong to more than one run (their buckets must not be mixed)."""
    files = sorted(root.glob(pattern))
    if not files:
        sys.exit(f"{root}: no {pattern}")
    runs = sorted({str(f.parents[2]) for f in files})  # <run>/reduce/bucket-N/series.parquet
    if len(runs) > 1:
        sys.exit(f"{root}: {pattern} matches {len(runs)} runs ({', '.join(runs)}): name one")
    parts = [pl.scan_parquet(f) for f in files]
    return (parts, *aggregate.task_records(parts))
