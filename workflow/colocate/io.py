"""Parquet intermediates: zstd, atomic writes, one row group per bucket.

I/O helpers shared by the rule scripts; the science lives elsewhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Sequence

import polars as pl
import pyarrow.parquet as pq


@contextmanager
def _removed_on_failure(tmp: Path) -> Iterator[None]:
    """Delete ``tmp`` if the block fails: Snakemake removes a failed job's outputs, not our temporaries."""
    try:
        yield
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_parquet(df: pl.DataFrame, path: str | Path, row_group_size: int | None = None) -> None:
    """Write ``df`` to ``path`` (zstd, with statistics) through a temporary file and a rename; ``row_group_size``
    rows a row group (polars' default without it)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with _removed_on_failure(tmp):
        df.write_parquet(tmp, compression="zstd", statistics=True, row_group_size=row_group_size)
        os.replace(tmp, path)


#: Rows per row group of a file sorted by window for reads of a range of windows (the Google 2019 map's window
#: records): 65,536 rows (~1.8 MB in memory) is about half a day of a real-size shard's 3.55 M rows over 31 days, so
#: a day's reduce reads 2-3 groups of each shard, of which only the edges hold other windows.
WINDOW_ROW_GROUP_ROWS = 1 << 16


#: Rows sorted in memory at a time by :func:`write_sorted` (13 numeric columns: about 0.3 GB per pass).
ROWS_PER_PASS = 4_000_000
#: Rows per row group of a file written by :func:`write_sorted`: fixed, so that the bytes are too.
ROW_GROUP_ROWS = 1 << 20


def write_sorted(paths: Sequence[str | Path], path: str | Path, by: Sequence[str],
                 rows_per_pass: int = ROWS_PER_PASS) -> int:
    """The rows of every Parquet file in ``paths`` sorted by ``by`` into ``path`` (zstd), without holding them all.

    The rows are cut into ranges of the first sort column at its quantiles, about ``rows_per_pass`` rows each;
    each pass reads the files' rows of one range, sorts them and appends them to ``path``. A value of the first
    column never spans two ranges, so the ranges in order are the whole sort. Memory is bounded by a pass and
    the first column; time grows with the passes, as every file is scanned once per pass. Returns the rows written.
    """
    import numpy as np
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    scan = pl.scan_parquet([str(p) for p in paths])
    first = scan.select(by[0]).collect()[by[0]].drop_nulls().to_numpy()
    passes = max(1, -(-first.size // max(rows_per_pass, 1)))
    cuts = np.unique(np.quantile(first, np.arange(1, passes) / passes, method="lower")).tolist() if passes > 1 else []
    del first
    edges, rows = [None, *cuts, None], 0
    with _removed_on_failure(tmp):
        writer = pq.ParquetWriter(tmp, scan.limit(0).collect().to_arrow().schema, compression="zstd")
        try:
            for lo, hi in zip(edges[:-1], edges[1:]):
                key = pl.col(by[0])
                if lo is None and hi is None:  # one pass: every row
                    part = scan
                elif lo is None:  # the first range holds the nulls, which sort first
                    part = scan.filter((key < hi) | key.is_null())
                elif hi is None:
                    part = scan.filter(key >= lo)
                else:
                    part = scan.filter((key >= lo) & (key < hi))
                table = part.collect().sort(by, nulls_last=False, maintain_order=True)
                rows += table.height
                writer.write_table(table.to_arrow(), row_group_size=ROW_GROUP_ROWS)
        finally:
            writer.close()
        os.replace(tmp, path)
    return rows


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


def bucket_frames(paths: Sequence[str | Path], buckets: Sequence[int], columns: Sequence[str] | None = None
                  ) -> Iterator[tuple[int, pl.DataFrame]]:
    """``(bucket, frame)`` for each of a job's bucket files, read one at a time, in order.

    ``paths`` holds the files of the reduce buckets numbered ``buckets`` (a part of ``characterise.buckets_per_job``
    buckets), so that each bucket's analysis can draw from a stream named by its number, whatever the part.
    """
    if len(paths) != len(buckets):
        raise ValueError(f"{len(paths)} bucket files for {len(buckets)} bucket numbers")
    for bucket, path in zip(buckets, paths):
        # a reducer's file sits in bucket-N/ (or is named bucket-N): its number must be the one asked for
        named = re.fullmatch(r"bucket-(\d+)", Path(path).parent.name) or re.fullmatch(r"bucket-(\d+)", Path(path).stem)
        if named is not None and int(named.group(1)) != int(bucket):
            raise ValueError(f"{path}: the file of bucket {named.group(1)}, given as bucket {bucket}")
        yield int(bucket), pl.read_parquet(path, columns=None if columns is None else list(columns))


def footer_rows(paths: Sequence[str | Path], column: str | None = None) -> tuple[int, Any, Any]:
    """``(rows, min, max)`` of Parquet files from their footers alone (no data read): the rows, and the least and
    greatest value of ``column`` by the row groups' statistics (None without rows, statistics or ``column``)."""
    rows, lo, hi = 0, None, None
    for path in paths:
        meta = pq.read_metadata(path)
        rows += meta.num_rows
        names = [meta.schema.column(i).name for i in range(meta.num_columns)]
        if column is None or column not in names:
            continue
        k = names.index(column)
        for g in range(meta.num_row_groups):
            stats = meta.row_group(g).column(k).statistics
            if stats is not None and stats.has_min_max:
                lo = stats.min if lo is None else min(lo, stats.min)
                hi = stats.max if hi is None else max(hi, stats.max)
    return rows, lo, hi


def rows_in_range(paths: Sequence[str | Path], column: str, lo: Any, hi: Any) -> int:
    """Rows of the row groups of Parquet files that may hold a value ``lo ≤ v < hi`` of ``column``, from their
    footers alone: what a filter on that range reads (a group without statistics counts whole). A missing file is a
    FileNotFoundError (for a rule's resource: decided once it exists)."""
    rows = 0
    for path in paths:
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", str(path))
        meta = pq.read_metadata(path)
        names = [meta.schema.column(i).name for i in range(meta.num_columns)]
        k = names.index(column)
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            stats = group.column(k).statistics
            if stats is None or not stats.has_min_max or (stats.min < hi and stats.max >= lo):
                rows += group.num_rows
    return rows


def read_contract(paths: Sequence[str | Path], table: str, columns: Sequence[str] | None = None) -> pl.DataFrame:
    """The files of one of the source contract's tables (:data:`colocate.sources.contract.TABLES`), each checked
    against the table's columns first (a file that is not the table is refused, naming it), concatenated in order."""
    from colocate.sources.contract import TABLES, check_table

    for path in paths:
        check_table(table, pl.read_parquet_schema(path), path)
    keep = list(columns or TABLES[table].columns)
    frames = [pl.read_parquet(path, columns=keep) for path in paths]
    return pl.concat(frames) if frames else pl.DataFrame(schema={c: TABLES[table].columns[c] for c in keep})
