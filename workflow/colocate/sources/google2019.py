"""The Google 2019 cluster trace (clusterdata-2019, "v3": eight Borg cells, May 2019): its readers and their map to
the source contract's tables (issue 45; the source that downloads and runs it is not built yet).

Every table is JSON lines, one object per line (``<table>-<12-digit shard>.json.gz``), as BigQuery exports it
(``workflow/data/google-2019-reference/``: the schema, ``clusterdata_trace_format_v3.proto``, and real rows):

- INT64 fields are quoted strings (``"start_time":"1838400000000"``), floats bare numbers;
- records are nested objects (``average_usage: {cpus, memory}``), repeated fields arrays;
- NULL fields are absent (``random_sample_usage`` has only ``cpus``);
- times are µs since the trace start (600 s = 1 May 2019 00:00 PDT); shards are not time-ordered.

``instance_usage``'s ``cpu_usage_distribution`` holds 11 values (the 0th, 10th, …, 100th percentiles of the 1-s
samples of the window; the proto's comment says 10) and ``tail_cpu_usage_distribution`` 9 (91st–99th). A line that
does not parse, a quoted integer that is not one, a float that is not a number, or a distribution of another length
is a :class:`~colocate.sources.contract.TraceFormatError` naming the file and line; fields beyond the proto's are not
read.

Priorities run 0–450 in tiers (free ≤ 99, best-effort batch 110–115, mid-tier 116–119, production 120–359,
monitoring ≥ 360): :func:`priority_class` maps them to the papers' classes (:data:`PRIORITY_TIERS`).
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

import polars as pl

from colocate.prep.mapreduce import bucket_expr
from colocate.sources.contract import TABLES, TraceFormatError

__all__ = ["INSTANCE_USAGE_JSON", "COLLECTION_EVENTS_JSON", "PRIORITY_TIERS", "DISTRIBUTION_LENGTHS",
           "read_instance_usage", "read_collection_events", "priority_class", "usage_records"]

_S, _F = pl.String(), pl.Float64()
_USAGE = pl.Struct({"cpus": _F, "memory": _F})

#: ``instance_usage`` as it is written: INT64 fields as strings (cast by the reader), records as structs.
INSTANCE_USAGE_JSON = {
    "start_time": _S, "end_time": _S, "collection_id": _S, "instance_index": _S, "machine_id": _S,
    "alloc_collection_id": _S, "alloc_instance_index": _S, "collection_type": _S,
    "average_usage": _USAGE, "maximum_usage": _USAGE, "random_sample_usage": _USAGE,
    "assigned_memory": _F, "page_cache_memory": _F, "cycles_per_instruction": _F,
    "memory_accesses_per_instruction": _F, "sample_rate": _F,
    "cpu_usage_distribution": pl.List(_F), "tail_cpu_usage_distribution": pl.List(_F),
}
_USAGE_INTS = ("start_time", "end_time", "collection_id", "instance_index", "machine_id", "alloc_collection_id",
               "alloc_instance_index", "collection_type")

#: ``collection_events`` as it is written (the proto's CollectionEvent, ``user`` included).
COLLECTION_EVENTS_JSON = {
    "time": _S, "type": _S, "collection_id": _S, "scheduling_class": _S, "missing_type": _S, "collection_type": _S,
    "priority": _S, "alloc_collection_id": _S, "user": _S, "collection_name": _S, "collection_logical_name": _S,
    "parent_collection_id": _S, "start_after_collection_ids": pl.List(_S), "max_per_machine": _S,
    "max_per_switch": _S, "vertical_scaling": _S, "scheduler": _S,
}
_EVENT_INTS = ("time", "type", "collection_id", "scheduling_class", "missing_type", "collection_type", "priority",
               "alloc_collection_id", "parent_collection_id", "max_per_machine", "max_per_switch",
               "vertical_scaling", "scheduler")

#: The lengths of instance_usage's CPU distributions: 0th–100th percentile by 10, and 91st–99th.
DISTRIBUTION_LENGTHS = {"cpu_usage_distribution": 11, "tail_cpu_usage_distribution": 9}

#: The 2019 trace's priority tiers (ClusterData2019.md) as the papers' classes (colocate.sources.contract.CLASSES):
#: free → gratis, best-effort batch and mid-tier → other, production → production, monitoring → monitoring;
#: 100–109, between the free and the batch tiers, is named by no tier and counts as other. Bounds inclusive.
PRIORITY_TIERS = (("gratis", 0, 99), ("other", 100, 119), ("production", 120, 359), ("monitoring", 360, 450))


def priority_class(priority: pl.Expr) -> pl.Expr:
    """The papers' class of a 2019 priority (:data:`PRIORITY_TIERS`); null outside 0–450."""
    out = pl.lit(None, pl.String)
    for name, lo, hi in reversed(PRIORITY_TIERS):
        out = pl.when(priority.is_between(lo, hi)).then(pl.lit(name)).otherwise(out)
    return out


def _read(path: str | Path, schema: dict[str, pl.DataType], ints: tuple[str, ...], what: str) -> pl.DataFrame:
    """One JSON-lines file (``.json`` or ``.json.gz``) read with ``schema``, its quoted INT64 fields as Int64; a
    defect is a TraceFormatError naming the file and the first bad line."""
    path = Path(path)
    try:
        raw = pl.read_ndjson(path, schema=schema)
        return raw.with_columns(pl.col(c).cast(pl.Int64, strict=True) for c in ints)
    except FileNotFoundError:
        raise
    except Exception as exc:  # polars names neither file nor line
        raise _diagnose(path, schema, ints, what) or TraceFormatError(path, f"unreadable {what}: {exc}") from exc


def _diagnose(path: Path, schema: dict[str, pl.DataType], ints: tuple[str, ...], what: str) -> TraceFormatError | None:
    """The first malformed line of ``path`` (error path only: a slow line-by-line pass)."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    row = json.loads(raw)
                except ValueError as exc:
                    return TraceFormatError(path, f"{what}: not a JSON object ({exc})", lineno)
                if not isinstance(row, dict):
                    return TraceFormatError(path, f"{what}: not a JSON object", lineno)
                for name, dtype in schema.items():
                    value = row.get(name)
                    if dtype == pl.Float64 and value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                        return TraceFormatError(path, f"{what}: {name} is not a number ({str(value)[:40]!r})", lineno)
                for name in ints:
                    value = row.get(name)
                    if value is not None and not (isinstance(value, (str, int)) and str(value).lstrip("-").isdigit()):
                        return TraceFormatError(path, f"{what}: {name} is not an INT64 ({str(value)[:40]!r})", lineno)
    except (EOFError, OSError, zlib.error) as exc:
        return TraceFormatError(path, f"truncated or corrupt gzip ({exc})")
    return None


def read_instance_usage(path: str | Path) -> pl.DataFrame:
    """One ``instance_usage`` file: its fields as written, INT64 ones as Int64, nested records as structs. Each CPU
    distribution, where present, has its length (:data:`DISTRIBUTION_LENGTHS`; a row of another names its line)."""
    df = _read(path, INSTANCE_USAGE_JSON, _USAGE_INTS, "instance_usage")
    for column, n in DISTRIBUTION_LENGTHS.items():
        bad = df.select(pl.col(column).list.len().alias("n")).with_row_index("line", offset=1).filter(
            pl.col("n").is_not_null() & (pl.col("n") != n))
        if bad.height:
            row = bad.row(0, named=True)
            raise TraceFormatError(path, f"instance_usage: {column} has {row['n']} values, not {n}", int(row["line"]))
    return df


def read_collection_events(path: str | Path) -> pl.DataFrame:
    """One ``collection_events`` file: its fields as written, INT64 ones as Int64, ``start_after_collection_ids``
    as a list of strings, plus ``class``, the papers' class of its priority (:func:`priority_class`)."""
    df = _read(path, COLLECTION_EVENTS_JSON, _EVENT_INTS, "collection_events")
    return df.with_columns(priority_class(pl.col("priority")).alias("class"))


def usage_records(usage: pl.DataFrame, n_buckets: int) -> pl.DataFrame:
    """``instance_usage`` (:func:`read_instance_usage`) as the contract's usage records: an instance is an entity
    (collection_id, instance_index), its collection the group; cpu_rate the window's mean CPU (``average_usage``),
    sampled_cpu_usage its random 1-s sample (``random_sample_usage``), maximum_cpu_rate its maximum, memory the
    mean (``average_usage.memory``), all in normalised machine shares, as 2011's."""
    columns = TABLES["usage_records"].columns
    return usage.select(
        pl.col("start_time"), pl.col("end_time"), pl.col("collection_id").alias("job_id"),
        pl.col("instance_index").alias("task_index"), pl.col("machine_id"),
        pl.col("average_usage").struct.field("cpus").alias("cpu_rate"),
        pl.col("average_usage").struct.field("memory").alias("canonical_memory_usage"),
        pl.col("maximum_usage").struct.field("cpus").alias("maximum_cpu_rate"),
        pl.col("random_sample_usage").struct.field("cpus").alias("sampled_cpu_usage"),
    ).with_columns(bucket_expr(n_buckets)).cast({k: v for k, v in columns.items()}).select(list(columns))
