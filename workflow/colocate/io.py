"""Parquet intermediates: zstd, atomic writes, one row group per bucket.

I/O helpers shared by the rule scripts; the science lives elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import polars as pl
import pyarrow.parquet as pq


def write_parquet(df: pl.DataFrame, path: str | Path) -> None:
    """Write ``df`` to ``path`` (zstd, with statistics) through a temporary file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    df.write_parquet(tmp, compression="zstd", statistics=True)
    os.replace(tmp, path)


def write_bucketed(df: pl.DataFrame, path: str | Path, column: str = "bucket") -> None:
    """Write ``df`` sorted by ``column`` with one row group per bucket value.

    A reducer that filters on its bucket then reads one row group of each file
    (row-group statistics prune the rest), so its memory is bounded by a bucket.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    table = df.sort(column, maintain_order=True).to_arrow()
    with pq.ParquetWriter(tmp, table.schema, compression="zstd") as writer:
        if table.num_rows == 0:
            writer.write_table(table)
        else:
            for part in df.sort(column, maintain_order=True).partition_by(column, maintain_order=True):
                writer.write_table(part.to_arrow(), row_group_size=max(part.height, 1))
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
