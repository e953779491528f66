"""Parquet intermediates: zstd, atomic writes, one row group per bucket.

I/O helpers shared by the rule scripts; the science lives elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Sequence

import polars as pl


@contextmanager
def _removed_on_failure(tmp: Path) -> Iterator[None]:
    """Delete ``tmp`` if the block fails: Snakemake removes a failed job's outputs, not our temporaries."""
    try:
        yield
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_parquet(df: pl.DataFrame, path: str | Path) -> None:
    """Write ``df`` to ``path`` (zstd, with statistics) through a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with _removed_on_failure(tmp):
        df.write_parquet(tmp, compression="zstd", statistics=True)
        os.replace(tmp, path)


def write_bucketed(df: pl.DataFrame, path: str | Path, n_buckets: int, column: str = "bucket") -> None:
    """Write ``df`` sorted by ``column`` in row groups of about one bucket each.

    With rows/B rows per row group, a bucket spans at most two or three row
    groups, and a reducer filtering on its bucket reads only those (row-group
    statistics prune the rest): its memory is bounded by a bucket, not by the trace.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    if not df[column].is_sorted():
        df = df.sort(column, maintain_order=True)
    row_group = max(1024, -(-df.height // max(n_buckets, 1)))
    with _removed_on_failure(tmp):
        # level 1: the map's records are read once, by the reducers; 20% faster to write for 4% more bytes
        df.write_parquet(tmp, compression="zstd", compression_level=1, statistics=True, row_group_size=row_group)
        os.replace(tmp, path)


def read_bucket(paths: Sequence[str | Path], bucket: int, column: str = "bucket") -> pl.DataFrame:
    """Rows of bucket ``bucket`` from every file in ``paths`` (without the bucket column)."""
    if not paths:
        raise ValueError("read_bucket needs at least one file")
    return (
        pl.scan_parquet([str(p) for p in paths])
        .filter(pl.col(column) == bucket)
        .drop(column)
        .collect()
    )
