"""The Google 2019 cluster trace (clusterdata-2019, "v3": eight Borg cells, May 2019): its readers and their map to
the source contract's tables, a writer of the 2019 format (the synthetic model's trace in it), and the sources: the
synthetic model in the 2019 format, a download of one cell, a local copy.

Every table is JSON lines as BigQuery exports it (``workflow/data/google-2019-reference/``: the schema and real
rows); a line that does not follow it is a :class:`~colocate.sources.contract.TraceFormatError` naming the file and
line. :func:`priority_class` maps the 2019 priorities to the papers' classes.

The format, the usage distributions and the priority tiers: docs/methods.md#google-2019-trace.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import re
import zlib
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl
from isal import igzip, igzip_lib

from colocate.prep.mapreduce import TASK_EVENT_COLUMNS, USAGE_COLUMNS
from colocate.registry import ConfigError
from colocate.sources import SOURCES, LocalCopy, SourceBase, register_local
from colocate.sources.contract import EventType, MachineEventType, TraceFormatError

__all__ = ["INSTANCE_USAGE_JSON", "INSTANCE_EVENTS_JSON", "COLLECTION_EVENTS_JSON", "MACHINE_EVENTS_JSON",
           "PRIORITY_TIERS", "DISTRIBUTION_LENGTHS", "TRACE_TABLES", "SPAN_WINDOWS", "INSTANCE_EVENT_TYPES",
           "MACHINE_EVENT_TYPES", "CHUNK_BYTES", "read_instance_usage", "iter_instance_usage", "read_instance_events", "read_collection_events",
           "read_machine_events", "priority_class", "task_usage", "window_moments", "task_events", "job_events",
           "machine_events", "PRIORITY_FROM_2011", "window_distributions", "from_2011", "scatter", "write_json_lines",
           "list_objects", "stem",
           "Google2019", "Synthetic2019", "Download", "Local"]

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

#: ``instance_events`` as it is written (the proto's InstanceEvent; its machine constraints are not read).
INSTANCE_EVENTS_JSON = {
    "time": _S, "type": _S, "collection_id": _S, "scheduling_class": _S, "missing_type": _S, "collection_type": _S,
    "priority": _S, "alloc_collection_id": _S, "instance_index": _S, "machine_id": _S, "alloc_instance_index": _S,
    "resource_request": _USAGE,
}
_INSTANCE_EVENT_INTS = ("time", "type", "collection_id", "scheduling_class", "missing_type", "collection_type",
                        "priority", "alloc_collection_id", "instance_index", "machine_id", "alloc_instance_index")

#: ``machine_events`` as it is written (the proto's MachineEvent).
MACHINE_EVENTS_JSON = {
    "time": _S, "machine_id": _S, "type": _S, "switch_id": _S, "capacity": _USAGE, "platform_id": _S,
    "missing_data_reason": _S,
}
_MACHINE_EVENT_INTS = ("time", "machine_id", "type", "missing_data_reason")

#: The tables colocate reads, as the trace names its files (``<table>-<12-digit shard>.json.gz``).
TRACE_TABLES = ("instance_usage", "instance_events", "collection_events", "machine_events")
#: May 2019: 31 days of 5-minute windows from 600 s (the clock of 2011's trace: times pass unchanged).
SPAN_WINDOWS = 31 * 288
#: The proto's CollectionType JOB (ALLOC_SET = 1: a reservation jobs run inside, not a job; its rows are left out).
JOB = 0
#: The proto's instance and collection event types → the contract's (:class:`EventType`). QUEUE (1) and ENABLE (2),
#: steps of a pending instance the 2011 schema did not have, map to none and are left out.
INSTANCE_EVENT_TYPES = {0: EventType.SUBMIT, 3: EventType.SCHEDULE, 4: EventType.EVICT, 5: EventType.FAIL,
                        6: EventType.FINISH, 7: EventType.KILL, 8: EventType.LOST, 9: EventType.UPDATE_PENDING,
                        10: EventType.UPDATE_RUNNING}
#: MachineEvent's types → the contract's (EVENT_TYPE_UNKNOWN, 0, "should never happen": refused, naming its line).
MACHINE_EVENT_TYPES = {1: MachineEventType.ADD, 2: MachineEventType.REMOVE, 3: MachineEventType.UPDATE}

#: The percentile levels of instance_usage's CPU distributions: 0th–100th by 10, and 91st–99th.
DISTRIBUTION_LEVELS = {"cpu_usage_distribution": tuple(i / 10 for i in range(11)),
                       "tail_cpu_usage_distribution": tuple((90 + i) / 100 for i in range(1, 10))}
DISTRIBUTION_LENGTHS = {k: len(v) for k, v in DISTRIBUTION_LEVELS.items()}
#: Both distributions as one, by level: 0, .1, …, .9, .91, …, .99, 1.
_LEVELS = sorted(DISTRIBUTION_LEVELS["cpu_usage_distribution"] + DISTRIBUTION_LEVELS["tail_cpu_usage_distribution"])

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
            return _first_bad_line(path, fh, schema, ints, what)
    except (EOFError, OSError, zlib.error) as exc:
        return TraceFormatError(path, f"truncated or corrupt gzip ({exc})")


def _first_bad_line(path: Path, lines: Iterable[bytes], schema: dict[str, pl.DataType], ints: tuple[str, ...],
                    what: str, first: int = 1) -> TraceFormatError | None:
    """The first malformed one of ``lines`` of ``path``, the first of them its line ``first``."""
    for lineno, raw in enumerate(lines, start=first):
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
    return None


#: Bytes of JSON :func:`iter_instance_usage` parses at a time (about 85,000 rows of the synthetic model's): the
#: reader holds a few such blocks and their frames (one being decompressed, one per parsing thread, the caller's).
CHUNK_BYTES = 64 << 20


def _blocks(path: Path, chunk_bytes: int) -> Iterator[tuple[int, bytes]]:
    """``path``'s lines (gzip decompressed by ISA-L) in blocks of about ``chunk_bytes``, each cut after a newline,
    with the file's line number of its first line; the next block is decompressed in a thread while the caller
    parses this one (ISA-L and polars both release the GIL)."""
    opener = igzip.open if path.suffix == ".gz" else open
    line, rest = 1, b""
    with opener(path, "rb") as fh, ThreadPoolExecutor(1) as pool:
        ahead = pool.submit(fh.read, chunk_bytes)
        while True:
            try:
                data = ahead.result()
            except (EOFError, OSError, zlib.error, igzip_lib.IsalError) as exc:
                raise TraceFormatError(path, f"truncated or corrupt gzip ({exc})") from exc
            if data:
                ahead = pool.submit(fh.read, chunk_bytes)
            block = rest + data
            cut = len(block) if not data else block.rfind(b"\n") + 1
            if cut:
                yield line, block[:cut]
                line += block.count(b"\n", 0, cut)
            rest = block[cut:]
            if not data:
                return


def _usage_block(path: Path, block: bytes, line: int) -> pl.DataFrame:
    """One block of ``instance_usage`` lines (:func:`_blocks`), the first of them line ``line`` of ``path``, as
    :func:`read_instance_usage` reads a file."""
    what = "instance_usage"
    try:
        df = pl.read_ndjson(block, schema=INSTANCE_USAGE_JSON).with_columns(
            pl.col(c).cast(pl.Int64, strict=True) for c in _USAGE_INTS)
    except Exception as exc:  # polars names neither file nor line
        bad = _first_bad_line(path, block.split(b"\n"), INSTANCE_USAGE_JSON, _USAGE_INTS, what, line)
        raise bad or TraceFormatError(path, f"unreadable {what}: {exc}") from exc
    for column, n in DISTRIBUTION_LENGTHS.items():
        bad = df.select(pl.col(column).list.len().alias("n")).with_row_index("line", offset=line).filter(
            pl.col("n").is_not_null() & (pl.col("n") != n))
        if bad.height:
            row = bad.row(0, named=True)
            raise TraceFormatError(path, f"{what}: {column} has {row['n']} values, not {n}", int(row["line"]))
    return df


def iter_instance_usage(path: str | Path, chunk_bytes: int = CHUNK_BYTES) -> Iterator[pl.DataFrame]:
    """One ``instance_usage`` file (``.json`` or ``.json.gz``) in frames of about ``chunk_bytes`` of its JSON each,
    in file order, each as :func:`read_instance_usage` reads a whole file (a bad line in any is named by its line in
    the file); at least one frame, empty for a file without lines. A real shard is ~3 GB of JSON: read whole, it
    does not fit a map's memory. The next blocks are parsed in threads, as many as polars' pool has (polars parses
    one block in one thread), while the caller works on this one's frame."""
    path = Path(path)
    workers = pl.thread_pool_size()
    with ThreadPoolExecutor(workers) as pool:
        ahead = deque()
        for line, block in _blocks(path, chunk_bytes):
            ahead.append(pool.submit(_usage_block, path, block, line))
            if len(ahead) > workers:
                yield ahead.popleft().result()
        if not ahead:
            yield _usage_block(path, b"", 1)
        while ahead:
            yield ahead.popleft().result()


def read_instance_usage(path: str | Path) -> pl.DataFrame:
    """One ``instance_usage`` file: its fields as written, INT64 ones as Int64, nested records as structs. Each CPU
    distribution, where present, has its length (:data:`DISTRIBUTION_LENGTHS`; a row of another names its line).
    The frames of :func:`iter_instance_usage`, one after the other."""
    return pl.concat(iter_instance_usage(path))


def read_collection_events(path: str | Path) -> pl.DataFrame:
    """One ``collection_events`` file: its fields as written, INT64 ones as Int64, ``start_after_collection_ids``
    as a list of strings, plus ``class``, the papers' class of its priority (:func:`priority_class`)."""
    df = _read(path, COLLECTION_EVENTS_JSON, _EVENT_INTS, "collection_events")
    return df.with_columns(priority_class(pl.col("priority")).alias("class"))


def read_instance_events(path: str | Path) -> pl.DataFrame:
    """One ``instance_events`` file: its fields as written (constraints not read), INT64 ones as Int64."""
    return _read(path, INSTANCE_EVENTS_JSON, _INSTANCE_EVENT_INTS, "instance_events")


def read_machine_events(path: str | Path) -> pl.DataFrame:
    """One ``machine_events`` file: its fields as written, INT64 ones as Int64. A type the proto does not name as a
    machine's event (:data:`MACHINE_EVENT_TYPES`) or a negative time names its line (Beaumont §6 reads them)."""
    df = _read(path, MACHINE_EVENTS_JSON, _MACHINE_EVENT_INTS, "machine_events")
    bad = df.with_row_index("line", offset=1).filter(~pl.col("type").is_in(list(MACHINE_EVENT_TYPES))
                                                      | (pl.col("time") < 0))
    if bad.height:
        row = bad.row(0, named=True)
        what = (f"time {row['time']} is negative" if row["time"] is not None and row["time"] < 0
                else f"type {row['type']} is not ADD (1), REMOVE (2) or UPDATE (3)")
        raise TraceFormatError(path, f"machine_events: {what}", int(row["line"]))
    return df


# ----------------------------------------------------------------------------- the contract's tables
# Each trace table becomes the columns of its 2011 counterpart (colocate.trace.TABLES), with the contract's event
# codes, so that the shared maps (colocate.prep.mapreduce, colocate.analysis.jobs) read it as they read 2011's.


def _codes(mapping: dict[int, int]) -> dict[int, int]:
    return {k: int(v) for k, v in mapping.items()}


def task_usage(usage: pl.DataFrame) -> pl.DataFrame:
    """``instance_usage`` (:func:`read_instance_usage`) as 2011's task_usage columns the map keeps
    (:data:`~colocate.prep.mapreduce.USAGE_COLUMNS`): the jobs' instances only (an alloc set's rows are its
    reservation, not a task's usage), an instance (collection_id, instance_index) the entity; cpu_rate the window's
    mean CPU (``average_usage``), sampled_cpu_usage its random 1-s sample (``random_sample_usage``),
    maximum_cpu_rate its maximum, memory the mean (``average_usage.memory``), all in normalised machine shares as
    2011's, in float32."""
    f32 = pl.Float32()
    out = usage.select(  # the slim columns first, then the rows (see window_moments)
        (pl.col("collection_type") == JOB).alias("_keep"),
        pl.col("start_time"), pl.col("end_time"), pl.col("collection_id").alias("job_id"),
        pl.col("instance_index").alias("task_index"), pl.col("machine_id"),
        pl.col("average_usage").struct.field("cpus").cast(f32).alias("cpu_rate"),
        pl.col("average_usage").struct.field("memory").cast(f32).alias("canonical_memory_usage"),
        pl.col("maximum_usage").struct.field("cpus").cast(f32).alias("maximum_cpu_rate"),
        pl.col("random_sample_usage").struct.field("cpus").cast(f32).alias("sampled_cpu_usage"),
    )
    return (out if out["_keep"].all() else out.filter("_keep")).select(USAGE_COLUMNS)


def window_moments(usage: pl.DataFrame) -> pl.DataFrame:
    """``instance_usage``'s rows that carry both CPU distributions, of the jobs' instances, as the contract's window
    moments (:data:`colocate.analysis.sampling.MOMENT_COLUMNS`): the window, the inst sample and avg, and the mean
    and variance of the window's 1-s samples read off its 20 percentiles (:func:`~colocate.analysis.sampling.
    quantile_moments`)."""
    from colocate.analysis.sampling import MOMENT_COLUMNS, quantile_moments
    from colocate.sources.contract import window_of

    keep = (pl.col("collection_type") == JOB) & pl.col("cpu_usage_distribution").is_not_null() \
        & pl.col("tail_cpu_usage_distribution").is_not_null()
    # the slim columns first, then the rows: filtering the whole frame would copy its every list and record
    rows = usage.select(
        keep.alias("_keep"), pl.col("collection_id").alias("job_id"), pl.col("instance_index").alias("task_index"),
        window_of("start_time").cast(pl.Int32),
        pl.col("random_sample_usage").struct.field("cpus").cast(pl.Float32).alias("sampled_cpu_usage"),
        pl.col("average_usage").struct.field("cpus").cast(pl.Float32).alias("cpu_rate"),
        pl.col("cpu_usage_distribution").list.to_array(11).alias("_deciles"),
        pl.col("tail_cpu_usage_distribution").list.to_array(9).alias("_tail"),
    )
    if not rows["_keep"].all():
        rows = rows.filter("_keep")
    deciles, tail = rows["_deciles"].to_numpy(), rows["_tail"].to_numpy()
    mean, var = quantile_moments(_LEVELS, np.concatenate([deciles[:, :10], tail, deciles[:, 10:]], axis=1))
    return rows.with_columns(pl.Series("within_mean", mean, pl.Float32),
                             pl.Series("within_var", var, pl.Float32)).select(MOMENT_COLUMNS)


def task_events(events: pl.DataFrame) -> pl.DataFrame:
    """``instance_events`` (:func:`read_instance_events`) as 2011's task_events columns the map reads
    (:data:`~colocate.prep.mapreduce.TASK_EVENT_COLUMNS`): the jobs' instances only, their types as the contract's
    (:data:`INSTANCE_EVENT_TYPES`; QUEUE and ENABLE left out), no machine where the trace gives NO_MACHINE (0), the
    request's CPU and memory in float32."""
    f32 = pl.Float32()
    return (
        events.filter((pl.col("collection_type") == JOB) & pl.col("type").is_in(list(INSTANCE_EVENT_TYPES)))
        .select(
            "time", pl.col("collection_id").alias("job_id"), pl.col("instance_index").alias("task_index"),
            pl.when(pl.col("machine_id") != 0).then(pl.col("machine_id")).alias("machine_id"),
            pl.col("type").replace_strict(_codes(INSTANCE_EVENT_TYPES), return_dtype=pl.Int64).alias("event_type"),
            "scheduling_class", "priority",
            pl.col("resource_request").struct.field("cpus").cast(f32).alias("cpu_request"),
            pl.col("resource_request").struct.field("memory").cast(f32).alias("memory_request"),
        )
        .select(TASK_EVENT_COLUMNS)
    )


def job_events(events: pl.DataFrame) -> pl.DataFrame:
    """``collection_events`` (:func:`read_collection_events`) as 2011's job_events (time, job_id, event_type): the
    jobs only (alloc sets are kept apart: they are reservations, not jobs), their types as the contract's."""
    return events.filter((pl.col("collection_type") == JOB) & pl.col("type").is_in(list(INSTANCE_EVENT_TYPES))).select(
        "time", pl.col("collection_id").alias("job_id"),
        pl.col("type").replace_strict(_codes(INSTANCE_EVENT_TYPES), return_dtype=pl.Int64).alias("event_type"))


def machine_events(events: pl.DataFrame) -> pl.DataFrame:
    """``machine_events`` (:func:`read_machine_events`, any number of files) as 2011's machine_events columns in
    time order (the trace's files are not; a stable sort keeps each file's order among equal times): the contract's
    event types, the capacity's CPU and memory, the platform."""
    return events.select(
        "time", "machine_id",
        pl.col("type").replace_strict(_codes(MACHINE_EVENT_TYPES), return_dtype=pl.Int64).alias("event_type"),
        "platform_id", pl.col("capacity").struct.field("cpus").alias("cpus"),
        pl.col("capacity").struct.field("memory").alias("memory"),
    ).sort("time", maintain_order=True)


# ----------------------------------------------------------------------------- the 2019 format, written

#: The 2011 priorities (0-11) as 2019 ones in the tier of the same class (:data:`PRIORITY_TIERS`): gratis 0-1 → the
#: free tier, other 2-8 → 100-119, production 9 → 200. 2019 has no infrastructure tier: 2011's monitoring (10) and
#: infrastructure (11) both go to the monitoring tier (360, 450).
PRIORITY_FROM_2011 = {0: 0, 1: 25, 2: 100, 3: 103, 4: 106, 5: 109, 6: 112, 7: 115, 8: 118, 9: 200, 10: 360, 11: 450}
_TYPE_FROM_CONTRACT = {int(v): k for k, v in INSTANCE_EVENT_TYPES.items()}
_MACHINE_TYPE_FROM_CONTRACT = {int(v): k for k, v in MACHINE_EVENT_TYPES.items()}


def _q(name: str) -> pl.Expr:
    """An integer column as the trace writes an INT64: a quoted string."""
    return pl.col(name).cast(pl.Int64).cast(pl.String)


def _g4(df: pl.DataFrame, *names: str) -> pl.DataFrame:
    """Float columns at the 2011 trace's 4 significant digits, so that the model's values are the same in both
    formats (``colocate.trace.format_g4``)."""
    from colocate.trace import format_g4

    return df.with_columns(format_g4(df[n].cast(pl.Float64).fill_null(np.nan).to_numpy()).cast(pl.Float64).alias(n)
                           for n in names)


def _resources(cpus: str, memory: str | None) -> pl.Expr:
    fields = [pl.col(cpus).alias("cpus")] + ([pl.col(memory).alias("memory")] if memory else [])
    return pl.struct(fields)


def window_distributions(usage: pl.DataFrame) -> pl.DataFrame:
    """The two CPU distributions of each record of a 2011 task_usage table, as the synthetic model writes them: a
    window's 1-s samples are its average (cpu_rate) times draws from the task's own distribution of inst / avg over
    its records with avg > 0, scaled to mean 1, so that the window's mean is its average and inst is one draw from
    about the same spread; capped at 1. Columns ``cpu_usage_distribution`` (11 values) and
    ``tail_cpu_usage_distribution`` (9), float32; null for a task without such a record."""
    key = ["job_id", "task_index"]
    ratio = (pl.col("sampled_cpu_usage") / pl.col("cpu_rate")).filter(pl.col("cpu_rate") > 0)
    shape = usage.group_by(key).agg(
        *(ratio.quantile(level, "linear").alias(f"q{i}") for i, level in enumerate(_LEVELS)), ratio.mean().alias("m"))
    level = [((pl.col("cpu_rate") * pl.col(f"q{i}") / pl.col("m")).clip(0, 1)).cast(pl.Float32) for i in range(len(_LEVELS))]
    tail_at = [_LEVELS.index(v) for v in DISTRIBUTION_LEVELS["tail_cpu_usage_distribution"]]
    decile_at = [_LEVELS.index(v) for v in DISTRIBUTION_LEVELS["cpu_usage_distribution"]]
    scaled = pl.when(pl.col("m") > 0)
    return usage.select(key + ["cpu_rate"]).join(shape, on=key, how="left", maintain_order="left").select(
        scaled.then(pl.concat_list([level[i] for i in decile_at])).alias("cpu_usage_distribution"),
        scaled.then(pl.concat_list([level[i] for i in tail_at])).alias("tail_cpu_usage_distribution"))


def from_2011(table: str, df: pl.DataFrame, job_priority: pl.DataFrame | None = None) -> pl.DataFrame:
    """A table of the 2011 schema (``colocate.trace.TABLES``: task_usage, task_events, job_events, machine_events)
    as the 2019 table that records the same (instance_usage, instance_events, collection_events, machine_events),
    its fields as :func:`write_json_lines` writes them: INT64s as strings, requests and usage as records, every
    instance in a job (collection_type 0) and no alloc set, priorities by :data:`PRIORITY_FROM_2011`, no machine as
    NO_MACHINE (0). collection_events take each job's priority from ``job_priority`` (job_id, priority: 2011's job
    events carry none). Fields the 2011 trace does not record are absent, as NULL fields are in the trace."""
    if table == "task_usage":
        df = _g4(df, "cpu_rate", "canonical_memory_usage", "maximum_cpu_rate", "maximum_memory_usage",
                 "sampled_cpu_usage", "assigned_memory_usage", "total_page_cache", "cycles_per_instruction",
                 "memory_accesses_per_instruction")
        return df.select(
            _q("start_time"), _q("end_time"), _q("job_id").alias("collection_id"),
            _q("task_index").alias("instance_index"), _q("machine_id"), pl.lit("0").alias("alloc_collection_id"),
            pl.lit("0").alias("collection_type"),
            _resources("cpu_rate", "canonical_memory_usage").alias("average_usage"),
            _resources("maximum_cpu_rate", "maximum_memory_usage").alias("maximum_usage"),
            _resources("sampled_cpu_usage", None).alias("random_sample_usage"),
            pl.col("assigned_memory_usage").alias("assigned_memory"),
            pl.col("total_page_cache").alias("page_cache_memory"),
            "cycles_per_instruction", "memory_accesses_per_instruction",
        ).hstack(window_distributions(df))
    if table == "task_events":
        df = _g4(df, "cpu_request", "memory_request")
        return df.select(
            _q("time"), pl.col("event_type").replace_strict(_TYPE_FROM_CONTRACT).cast(pl.String).alias("type"),
            _q("job_id").alias("collection_id"), _q("scheduling_class"), pl.lit("0").alias("collection_type"),
            pl.col("priority").replace_strict(PRIORITY_FROM_2011).cast(pl.String).alias("priority"),
            pl.lit("0").alias("alloc_collection_id"), _q("task_index").alias("instance_index"),
            pl.col("machine_id").fill_null(0).cast(pl.String).alias("machine_id"),
            _resources("cpu_request", "memory_request").alias("resource_request"),
        )
    if table == "job_events":
        if job_priority is None:
            raise ValueError("collection_events need each job's priority (job_priority)")
        prio = job_priority.select("job_id", pl.col("priority").replace_strict(PRIORITY_FROM_2011).alias("prio"))
        return df.join(prio, on="job_id", how="left", maintain_order="left").select(
            _q("time"), pl.col("event_type").replace_strict(_TYPE_FROM_CONTRACT).cast(pl.String).alias("type"),
            _q("job_id").alias("collection_id"), _q("scheduling_class"), pl.lit("0").alias("collection_type"),
            pl.col("prio").cast(pl.String).alias("priority"), pl.lit("0").alias("alloc_collection_id"),
            "user", pl.col("job_name").alias("collection_name"),
            pl.col("logical_job_name").alias("collection_logical_name"),
        )
    if table == "machine_events":
        df = _g4(df, "cpus", "memory")
        return df.select(
            _q("time"), _q("machine_id"),
            pl.col("event_type").replace_strict(_MACHINE_TYPE_FROM_CONTRACT).cast(pl.String).alias("type"),
            _resources("cpus", "memory").alias("capacity"), "platform_id",
        )
    raise ValueError(f"no 2019 table records what 2011's {table!r} does")


#: The 2011 table each 2019 table is written from (:func:`from_2011`).
FROM_2011 = {"instance_usage": "task_usage", "instance_events": "task_events", "collection_events": "job_events",
             "machine_events": "machine_events"}

def _drop_fields(data: bytes, value: bytes) -> bytes:
    """``data`` (JSON lines) without its fields whose value is ``value`` (``null``, or ``{}`` for a record left
    empty), each with the comma before it, or after it where it is its record's first field. The trace's strings
    (hashes, names) never hold ``":null"``; found by a literal search, as such fields are rare."""
    token, parts, at = b":" + value, [], 0
    pos = data.find(token)
    while pos != -1:
        start, end = data.rfind(b'"', 0, pos - 1), pos + len(token)  # the key's opening quote; past the value
        if data[start - 1 : start] == b",":
            start -= 1
        elif data[end : end + 1] == b",":
            end += 1
        parts.append(data[at:start])
        at = end
        pos = data.find(token, end)
    return b"".join(parts) + data[at:] if parts else data


def write_json_lines(df: pl.DataFrame, path: str | Path, compresslevel: int = 2) -> None:
    """``df`` as the trace's JSON lines, gzip-compressed by ISA-L (``compresslevel`` 0–3; ten times zlib's speed at
    level 6, for files a tenth larger) with deterministic bytes (mtime 0): one object per row, its NULL fields absent
    (the first field of a row is never null); written to a temporary name and renamed, so a file is never
    half-present."""
    from isal import igzip

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data, before = _drop_fields(df.write_ndjson().encode(), b"null"), b""
    while data != before:  # a record left empty is dropped, and so on up
        before, data = data, _drop_fields(data, b"{}")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(igzip.compress(data, compresslevel, mtime=0))
    tmp.replace(path)


#: The share of rows :func:`scatter` deals one by one, apart from the blocks of time: it splits windows across shards.
LOOSE_ROWS = 0.25


def scatter(df: pl.DataFrame, time: str, n: int, rng: np.random.Generator, blocks_per_shard: int = 3,
            loose: float = LOOSE_ROWS) -> list[pl.DataFrame]:
    """Rows in time order cut into ``n`` shards that are not time-ordered, as the trace's: ``n ·
    blocks_per_shard`` consecutive blocks of equal span in ``time``, dealt to the shards in a random order, so that
    each shard holds a few stretches from across the span (its first row may be late in it); and a share ``loose``
    of the rows, drawn at random, each dealt to a shard drawn for it, so that a shard also holds rows from anywhere
    in the span and the rows of one window (a job's tasks in it) are in several shards, as in the trace."""
    if n < 1:
        raise ValueError(f"shard count must be ≥ 1, got {n}")
    if not 0 <= loose <= 1:
        raise ValueError(f"loose must be in [0, 1], got {loose}")
    k = n * blocks_per_shard
    t = df[time].to_numpy()
    lo, hi = (int(t.min()), int(t.max()) + 1) if t.size else (0, 1)
    block = np.minimum((t - lo) * k // max(hi - lo, 1), k - 1)
    owner = rng.permutation(k) % n  # block b goes to shard owner[b]
    shard = np.where(rng.random(t.size) < loose, rng.integers(0, n, t.size), owner[block])
    tagged = df.with_columns(pl.Series("_block", block), pl.Series("_shard", shard))
    order = {b: i for i, b in enumerate(rng.permutation(k))}  # the blocks' order within a shard
    return [tagged.filter(pl.col("_shard") == s).sort(pl.col("_block").replace_strict(order), maintain_order=True)
            .drop("_block", "_shard") for s in range(n)]


def list_objects(url: str, bucket: str, prefix: str, timeout: float = 60) -> list[dict]:
    """The objects of ``bucket`` whose names start with ``prefix``, by Google Cloud Storage's JSON API
    (``<url>/storage/v1/b/<bucket>/o``, every page): each one's name, size, md5Hash and crc32c."""
    import urllib.parse
    import urllib.request

    from colocate.trace.download import check_url

    check_url(url, what="config key trace.google2019.url")
    items, token = [], None
    while True:
        query = {"prefix": prefix, "fields": "items(name,size,md5Hash,crc32c),nextPageToken"}
        if token:
            query["pageToken"] = token
        address = f"{url.rstrip('/')}/storage/v1/b/{bucket}/o?{urllib.parse.urlencode(query)}"
        with urllib.request.urlopen(address, timeout=timeout) as response:
            page = json.load(response)
        items += page.get("items", [])
        token = page.get("nextPageToken")
        if not token:
            return items


def stem(table: str, index: int) -> str:
    """A file's stem: ``<table>-<12-digit shard>``."""
    return f"{table}-{index:012d}"


# ----------------------------------------------------------------------------- the sources


class Google2019(SourceBase):
    """What the 2019 sources share: the tables and what each gives, the classes by tier, the span."""

    family = "google2019"
    tables = TRACE_TABLES
    priority_classes = {name: tuple(range(lo, hi + 1)) for name, lo, hi in PRIORITY_TIERS}
    gives = {
        "instance_events": ("entities", "priorities", "placements", "arrivals"),
        "instance_usage": ("usage_series", "inst_usage", "memory_usage", "window_distributions"),
        "collection_events": ("group_events",),
        "machine_events": ("machine_events",),
    }
    maps = {
        "instance_events": ("entity_pieces", "placement_events"),
        "instance_usage": ("usage_records", "group_windows", "sampled_windows", "window_moments"),
        "collection_events": ("group_events",),
        "machine_events": ("machine_events",),
    }
    entity, group = "instance", "job"
    units = "CPU in normalised compute units and memory normalised, shares of the largest machine (the trace's)"
    suffix = ".json.gz"
    file_word = "shards"
    #: the first line of cell a's first instance_usage shard is at day 21.3: a subset of shards samples every window
    files_in_time_order = False
    #: requests drawn among the instances submitted, onto the machines of machine_events, as for 2011
    placement_needs = ("arrivals", "usage_series", "machine_events")

    @property
    def span_windows(self) -> int:
        return SPAN_WINDOWS

    def selection(self, table: str):
        return self.trace["google2019"]["shards"][table]

    def _stems(self, table: str) -> list[str]:
        found = self.found(table, f"{table}-*{self.suffix}")
        sel = self.selection(table)
        if sel == "all":
            return found
        index = {int(s.rsplit("-", 1)[1]): s for s in found}
        wanted = range(sel) if isinstance(sel, int) else sorted(sel)
        missing = [i for i in wanted if i not in index]
        if missing:
            raise ConfigError(f"config key trace.google2019.shards.{table}: shard(s) {missing} not found under "
                              f"{self.root_label()}/{table} (it holds {len(index)})")
        return [index[i] for i in wanted]


@SOURCES.register
class Synthetic2019(Google2019):
    """The calibrated synthetic model (``colocate.trace.synth``, the 2011 trace's) written in the 2019 format: it
    tests the 2019 path, it is not a model of 2019's workload."""

    name = "synthetic2019"
    label = "the synthetic trace in the 2019 format (the 2011-calibrated model)"
    is_model = True

    @functools.cached_property
    def _model(self):
        from colocate.sources.google2011 import Synthetic

        return Synthetic(self.setting)

    @property
    def model(self) -> dict:
        return self._model.model

    @property
    def root(self) -> str:
        digest = hashlib.sha256(self._model.root.encode()).hexdigest()[:12]
        return f"resources/trace/synthetic2019-{digest}"

    def shard_counts(self) -> dict[str, int]:
        counts = self._model.shard_counts()
        return {t: counts[FROM_2011[t]] for t in TRACE_TABLES}

    def _stems(self, table: str) -> list[str]:
        return [stem(table, i) for i in range(self.shard_counts()[table])]

    def total(self, table: str) -> int | None:
        return self.shard_counts()[table]

    @property
    def span_windows(self) -> int:
        return self._model.span_windows

    @property
    def rendered_windows(self) -> int:
        return self._model.rendered_windows

    def synthesis_mem_mb(self, scale: str) -> int:
        return self._model.synthesis_mem_mb(scale)

    def check(self) -> None:
        self._model.check()


@SOURCES.register
class Download(Google2019):
    """One cell of the trace over HTTPS from Google Cloud Storage (``trace.source: google2019``), each object checked
    against the CRC32C and MD5 the server sends."""

    name = "google2019"
    #: Shard 0 of each table unless told otherwise: a cell's shard counts are not published ("all" lists the bucket).
    config_defaults = {"trace": {"google2019": {"shards": {t: 1 for t in TRACE_TABLES}}}}

    @property
    def config(self) -> dict:
        return self.trace["google2019"]

    @property
    def label(self) -> str:
        return f"Google 2019 cell {self.config['cell']}"

    @property
    def root(self) -> str:
        return f"resources/trace/google2019-{self.config['cell']}"

    @property
    def run(self) -> str:
        return f"google2019-{self.config['cell']}-{self.scale}"

    def url(self, table: str, stem: str) -> str:
        """An object's URL: ``<url>/clusterdata_2019_<cell>/<stem>.json.gz``."""
        return f"{self.bucket_url}/{stem}{self.suffix}"

    def _stems(self, table: str) -> list[str]:
        sel = self.selection(table)
        if sel == "all":
            listed = [item["name"].removesuffix(self.suffix) for item in self.listing(table)]
            if not listed:
                raise ConfigError(f"config key trace.google2019.shards.{table}: 'all', but the bucket "
                                  f"clusterdata_2019_{self.config['cell']} lists no {table}-NNNNNNNNNNNN.json.gz")
            return listed
        return [stem(table, i) for i in (range(sel) if isinstance(sel, int) else sorted(sel))]

    def listing_path(self, table: str) -> Path:
        return Path(self.root) / "listing" / f"{table}.json"

    def listing(self, table: str) -> list[dict]:
        """The bucket's objects of ``table`` (name, size, md5Hash, crc32c), listed once and kept beside the copy
        (``<root>/listing/<table>.json``, with the bucket's URL: listed again when ``trace.google2019.url`` names
        another): the shard counts are not published."""
        path, bucket = self.listing_path(table), self.bucket_url
        if (kept := self._kept_listing(path)) is not None:
            return kept
        items = list_objects(self.config["url"], f"clusterdata_2019_{self.config['cell']}", f"{table}-")
        items = [i for i in items if re.fullmatch(rf"{table}-\d{{12}}\.json\.gz", i["name"])]
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"bucket": bucket, "objects": sorted(items, key=lambda i: i["name"])}, indent=1) + "\n")
        tmp.replace(path)
        return self._kept_listing(path)

    @property
    def bucket_url(self) -> str:
        return f"{self.config['url'].rstrip('/')}/clusterdata_2019_{self.config['cell']}"

    def _kept_listing(self, path: Path) -> list[dict] | None:
        """The objects of a listing kept at ``path`` of this bucket; None if there is none, or it lists another."""
        if not path.is_file():
            return None
        kept = json.loads(path.read_text())
        return kept["objects"] if isinstance(kept, dict) and kept.get("bucket") == self.bucket_url else None

    def total(self, table: str) -> int | None:
        """The table's shards as the bucket lists them, where it has been listed (else not known)."""
        return len(kept) if (kept := self._kept_listing(self.listing_path(table))) is not None else None

    def check(self) -> None:
        from colocate.trace.download import check_url

        check_url(self.config["url"], what="config key trace.google2019.url")


@register_local
class Local(LocalCopy, Google2019):
    """A local directory laid out as a download: ``{table}/{table}-NNNNNNNNNNNN.json.gz``."""

    @property
    def label(self) -> str:
        return f"the Google 2019 trace under {Path(self.root).resolve().name}"

    @classmethod
    def recognises(cls, path: Path) -> bool:
        return any(path.glob("instance_*/instance_*-*.json.gz"))

    def check(self) -> None:
        if not (self.stems("instance_usage") and self.stems("instance_events")):
            raise ConfigError(f"config key trace.path: {self.root!r} is laid out like the Google 2019 trace but lacks "
                              "instance_usage/instance_usage-NNNNNNNNNNNN.json.gz or instance_events/…")
