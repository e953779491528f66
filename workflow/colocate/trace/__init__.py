"""Tables of the Google cluster trace 2011 (clusterdata-2011-2, schema v2.1).

Column names, dtypes and event codes follow the bucket's ``schema.csv``
(Reiss, Wilkes & Hellerstein, "Google cluster-usage traces: format + schema").
Readers parse headerless csv.gz shards with polars; writers emit rows that are
byte-for-byte in the trace's own format (``%.4g``-style floats, empty fields
for missing values).
"""

from __future__ import annotations

import gzip
import io
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

# The 2011 schema's event codes and clock are the contract's own: the source maps them unchanged.
from colocate.sources.contract import FAILING_EVENTS as FAILING_EVENTS
from colocate.sources.contract import WINDOW_US as WINDOW_US
from colocate.sources.contract import WINDOWS_PER_DAY as WINDOWS_PER_DAY
from colocate.sources.contract import EventType as EventType
from colocate.sources.contract import MachineEventType as MachineEventType
from colocate.sources.contract import TraceFormatError as TraceFormatError
from colocate.sources.contract import ORIGIN_US

#: Start of the trace in µs, the contract's origin (window 0 starts here); times 0 < t < 600 s never occur, 0
#: means "before the trace".
TRACE_START_US = ORIGIN_US
#: Windows in the 29-day trace: (2 506 200 s − 600 s) / 300 s (Beaumont §6 counts 8351 full ones).
TRACE_WINDOWS = 8352
#: Time used by the trace for events after its end (2**63 - 1).
TIME_AFTER_END = 2**63 - 1

#: Priority classes (Beaumont et al. §1.1, after Reiss et al.): the contract's class -> the 2011 priorities in it.
PRIORITY_CLASSES: dict[str, tuple[int, ...]] = {
    "gratis": (0, 1),
    "other": (2, 3, 4, 5, 6, 7, 8),
    "production": (9,),
    "monitoring": (10,),
    "infrastructure": (11,),
}


@dataclass(frozen=True)
class Column:
    name: str  # snake_case name used throughout colocate
    content: str  # the name in schema.csv
    format: str  # INTEGER, FLOAT, BOOLEAN, STRING_HASH, STRING_HASH_OR_INTEGER
    mandatory: bool


def _cols(*spec: tuple[str, str, str, bool]) -> tuple[Column, ...]:
    return tuple(Column(*s) for s in spec)


#: The six tables, in schema.csv order.
TABLES: dict[str, tuple[Column, ...]] = {
    "job_events": _cols(
        ("time", "time", "INTEGER", True),
        ("missing_info", "missing info", "INTEGER", False),
        ("job_id", "job ID", "INTEGER", True),
        ("event_type", "event type", "INTEGER", True),
        ("user", "user", "STRING_HASH", False),
        ("scheduling_class", "scheduling class", "INTEGER", False),
        ("job_name", "job name", "STRING_HASH", False),
        ("logical_job_name", "logical job name", "STRING_HASH", False),
    ),
    "task_events": _cols(
        ("time", "time", "INTEGER", True),
        ("missing_info", "missing info", "INTEGER", False),
        ("job_id", "job ID", "INTEGER", True),
        ("task_index", "task index", "INTEGER", True),
        ("machine_id", "machine ID", "INTEGER", False),
        ("event_type", "event type", "INTEGER", True),
        ("user", "user", "STRING_HASH", False),
        ("scheduling_class", "scheduling class", "INTEGER", False),
        ("priority", "priority", "INTEGER", True),
        ("cpu_request", "CPU request", "FLOAT", False),
        ("memory_request", "memory request", "FLOAT", False),
        ("disk_space_request", "disk space request", "FLOAT", False),
        ("different_machines_restriction", "different machines restriction", "BOOLEAN", False),
    ),
    "task_usage": _cols(
        ("start_time", "start time", "INTEGER", True),
        ("end_time", "end time", "INTEGER", True),
        ("job_id", "job ID", "INTEGER", True),
        ("task_index", "task index", "INTEGER", True),
        ("machine_id", "machine ID", "INTEGER", True),
        ("cpu_rate", "CPU rate", "FLOAT", False),
        ("canonical_memory_usage", "canonical memory usage", "FLOAT", False),
        ("assigned_memory_usage", "assigned memory usage", "FLOAT", False),
        ("unmapped_page_cache", "unmapped page cache", "FLOAT", False),
        ("total_page_cache", "total page cache", "FLOAT", False),
        ("maximum_memory_usage", "maximum memory usage", "FLOAT", False),
        ("disk_io_time", "disk I/O time", "FLOAT", False),
        ("local_disk_space_usage", "local disk space usage", "FLOAT", False),
        ("maximum_cpu_rate", "maximum CPU rate", "FLOAT", False),
        ("maximum_disk_io_time", "maximum disk IO time", "FLOAT", False),
        ("cycles_per_instruction", "cycles per instruction", "FLOAT", False),
        ("memory_accesses_per_instruction", "memory accesses per instruction", "FLOAT", False),
        ("sample_portion", "sample portion", "FLOAT", False),
        ("aggregation_type", "aggregation type", "BOOLEAN", False),
        ("sampled_cpu_usage", "sampled CPU usage", "FLOAT", False),
    ),
    "machine_events": _cols(
        ("time", "time", "INTEGER", True),
        ("machine_id", "machine ID", "INTEGER", True),
        ("event_type", "event type", "INTEGER", True),
        ("platform_id", "platform ID", "STRING_HASH", False),
        ("cpus", "CPUs", "FLOAT", False),
        ("memory", "Memory", "FLOAT", False),
    ),
    "machine_attributes": _cols(
        ("time", "time", "INTEGER", True),
        ("machine_id", "machine ID", "INTEGER", True),
        ("attribute_name", "attribute name", "STRING_HASH", True),
        ("attribute_value", "attribute value", "STRING_HASH_OR_INTEGER", False),
        ("attribute_deleted", "attribute deleted", "BOOLEAN", True),
    ),
    "task_constraints": _cols(
        ("time", "time", "INTEGER", True),
        ("job_id", "job ID", "INTEGER", True),
        ("task_index", "task index", "INTEGER", True),
        ("comparison_operator", "comparison operator", "INTEGER", True),
        ("attribute_name", "attribute name", "STRING_HASH", True),
        ("attribute_value", "attribute value", "STRING_HASH_OR_INTEGER", False),
    ),
}

#: Tables stored as a single file in the bucket (the others have 500 shards).
SINGLE_FILE_TABLES = ("machine_events", "machine_attributes")

_DTYPES = {
    "INTEGER": pl.Int64,
    "FLOAT": pl.Float64,
    "BOOLEAN": pl.Int8,
    "STRING_HASH": pl.String,
    "STRING_HASH_OR_INTEGER": pl.String,
}


def column_names(table: str) -> list[str]:
    """Column names of ``table`` in file order."""
    return [c.name for c in _table(table)]


def polars_schema(table: str) -> dict[str, pl.DataType]:
    """The polars dtypes of ``table``'s columns, in file order."""
    return {c.name: _DTYPES[c.format] for c in _table(table)}


def _table(table: str) -> tuple[Column, ...]:
    try:
        return TABLES[table]
    except KeyError:
        raise ValueError(f"unknown trace table {table!r}; known: {', '.join(TABLES)}") from None


def shard_name(index: int, count: int) -> str:
    """The bucket's shard file name, e.g. ``part-00007-of-00500.csv.gz``."""
    return f"part-{index:05d}-of-{count:05d}.csv.gz"


def schema_csv() -> str:
    """The bucket's ``schema.csv`` for the six tables."""
    lines = ["file pattern,field number,content,format,mandatory"]
    for table, cols in TABLES.items():
        pattern = f"{table}/part-?????-of-?????.csv.gz"
        for i, c in enumerate(cols, start=1):
            lines.append(f"{pattern},{i},{c.content},{c.format},{'YES' if c.mandatory else 'NO'}")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- reading


def read_table(
    path: str | Path, table: str, columns: list[str] | None = None, float_dtype: type[pl.DataType] = pl.Float64
) -> pl.DataFrame:
    """Read one headerless csv.gz shard of ``table`` into a DataFrame.

    ``float_dtype=pl.Float32`` halves the memory of FLOAT columns without loss:
    the trace prints 4 significant digits and float32 keeps 7.

    Empty fields become nulls. A row with the wrong number of fields, a value
    that does not parse as its column's type, a missing mandatory value, or a
    truncated/corrupt gzip raises :class:`TraceFormatError` naming the file and,
    where possible, the line (1-based).
    """
    path = Path(path)
    schema = {k: (float_dtype if v == pl.Float64 else v) for k, v in polars_schema(table).items()}
    names = list(schema)
    wanted = names if columns is None else list(columns)
    unknown = [c for c in wanted if c not in schema]
    if unknown:
        raise ValueError(f"unknown column(s) {unknown} for table {table!r}")
    # The last column is always parsed: a short row leaves it null, which we check below.
    parse = sorted({names.index(c) for c in wanted} | {len(names) - 1} | _mandatory_idx(table))
    try:
        df = pl.read_csv(
            path,
            has_header=False,
            schema=schema,
            columns=parse,
            quote_char=None,
            raise_if_empty=False,
        )
    except FileNotFoundError:
        raise
    except Exception as exc:  # polars raises ComputeError / OSError with no line number
        raise diagnose(path, table) or TraceFormatError(path, f"unreadable: {exc}") from exc
    # A row with too few fields parses silently with trailing nulls; the last
    # column is only ever empty on such rows or in tables where it is optional.
    last = names[-1]
    if df[last].null_count():
        problem = diagnose(path, table)
        if problem is not None:
            raise problem
    mandatory = [names[i] for i in _mandatory_idx(table)]
    for name in mandatory:
        if df[name].null_count():
            line = int(df.with_row_index("_i").filter(pl.col(name).is_null())["_i"][0]) + 1
            raise TraceFormatError(path, f"mandatory column {name!r} is empty", line)
    return df.select(wanted)


def _mandatory_idx(table: str) -> set[int]:
    return {i for i, c in enumerate(_table(table)) if c.mandatory}


def diagnose(path: str | Path, table: str) -> TraceFormatError | None:
    """Find the first defect of a shard by a slow line-by-line pass (error path only)."""
    cols = _table(table)
    n = len(cols)
    checks = [_FIELD_CHECKS[c.format] for c in cols]
    try:
        with gzip.open(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                fields = raw.rstrip(b"\r\n").split(b",")
                if len(fields) != n:
                    return TraceFormatError(
                        path, f"expected {n} fields for {table}, found {len(fields)}", lineno
                    )
                for col, check, value in zip(cols, checks, fields):
                    if value and not check(value):
                        return TraceFormatError(
                            path,
                            f"column {col.name!r} ({col.format}) cannot parse {value[:40].decode(errors='replace')!r}",
                            lineno,
                        )
    except (EOFError, OSError, zlib.error) as exc:
        return TraceFormatError(path, f"truncated or corrupt gzip ({exc})")
    return None


def _is_int(v: bytes) -> bool:
    try:
        int(v)
        return True
    except ValueError:
        return False


def _is_float(v: bytes) -> bool:
    try:
        float(v)
        return True
    except ValueError:
        return False


_FIELD_CHECKS = {
    "INTEGER": _is_int,
    "FLOAT": _is_float,
    "BOOLEAN": _is_int,
    "STRING_HASH": lambda v: True,
    "STRING_HASH_OR_INTEGER": lambda v: True,
}


# ----------------------------------------------------------------------------- writing


def format_g4(values: np.ndarray) -> pl.Series:
    """Format floats as the trace does: 4 significant digits, C ``%.4g`` style.

    ``0.001562``, ``0.06787``, ``2.861e-06``, ``0.125``, ``0``; NaN gives null
    (an empty field). Vectorised: digits and exponent come from numpy, the
    string is assembled by polars, so millions of values format in well under
    a second.
    """
    x = np.asarray(values, dtype=np.float64)
    nan = np.isnan(x)
    neg = x < 0
    a = np.where(nan, 0.0, np.abs(x))
    zero = a == 0
    safe = np.where(zero, 1.0, a)
    e = np.floor(np.log10(safe)).astype(np.int64)
    m = np.rint(safe / np.power(10.0, (e - 3).astype(np.float64))).astype(np.int64)
    # log10 may land one off near powers of ten; normalise the mantissa to 1000..9999
    lo = m < 1000
    e = np.where(lo, e - 1, e)
    m = np.where(lo, np.rint(safe / np.power(10.0, (e - 3).astype(np.float64))).astype(np.int64), m)
    hi = m >= 10000
    e = np.where(hi, e + 1, e)
    m = np.where(hi, np.rint(m / 10.0).astype(np.int64), m)
    frame = pl.DataFrame({"m": m, "e": e, "zero": zero, "nan": nan, "neg": neg})
    digits = pl.col("m").cast(pl.String)
    e_ = pl.col("e")

    def strip(s: pl.Expr) -> pl.Expr:
        return s.str.strip_chars_end("0").str.strip_chars_end(".")

    fixed_pos = strip(
        pl.concat_str([digits.str.slice(0, e_ + 1), pl.lit("."), digits.str.slice(e_ + 1)])
    )
    zeros = pl.when(e_ == -1).then(pl.lit("0.")).when(e_ == -2).then(pl.lit("0.0"))
    zeros = zeros.when(e_ == -3).then(pl.lit("0.00")).otherwise(pl.lit("0.000"))
    fixed_neg = strip(pl.concat_str([zeros, digits]))
    mant = strip(pl.concat_str([digits.str.slice(0, 1), pl.lit("."), digits.str.slice(1)]))
    exp = pl.concat_str(
        [
            pl.when(e_ < 0).then(pl.lit("e-")).otherwise(pl.lit("e+")),
            e_.abs().cast(pl.String).str.zfill(2),
        ]
    )
    body = (
        pl.when(pl.col("zero"))
        .then(pl.lit("0"))
        .when((e_ >= 0) & (e_ < 4))
        .then(fixed_pos)
        .when((e_ < 0) & (e_ >= -4))
        .then(fixed_neg)
        .otherwise(pl.concat_str([mant, exp]))
    )
    out = pl.when(pl.col("nan")).then(None).when(pl.col("neg")).then(pl.lit("-") + body).otherwise(body)
    return frame.select(out.alias("v")).to_series()


def to_trace_csv(df: pl.DataFrame, table: str) -> bytes:
    """Render ``df`` (columns of ``table``, in any order) as headerless trace CSV bytes."""
    cols = _table(table)
    missing = [c.name for c in cols if c.name not in df.columns]
    if missing:
        raise ValueError(f"{table}: missing column(s) {missing}")
    out = {}
    for c in cols:
        s = df[c.name]
        if c.format == "FLOAT":
            out[c.name] = format_g4(s.cast(pl.Float64).fill_null(np.nan).to_numpy())
        else:
            out[c.name] = s
    buf = io.BytesIO()
    pl.DataFrame(out).write_csv(buf, include_header=False, quote_style="never", null_value="")
    return buf.getvalue()


def write_table(df: pl.DataFrame, path: str | Path, table: str, compresslevel: int = 6) -> None:
    """Write ``df`` as a trace shard: headerless csv.gz, deterministic bytes (gzip mtime 0).

    Written to a temporary name and renamed, so a shard is never half-present.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = to_trace_csv(df, table)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(
        filename="", mode="wb", fileobj=raw, compresslevel=compresslevel, mtime=0
    ) as gz:
        gz.write(data)
    tmp.replace(path)
