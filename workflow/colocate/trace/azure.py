"""Readers of the Azure Public Dataset VM traces (V1 2017, V2 2019) and the per-VM summary their vmtable holds.

Both versions ship headerless, gzip-compressed CSV with CRLF line endings:

- ``vm_cpu_readings-file-N-of-M.csv.gz``: one row per VM and 5-minute slot: timestamp (seconds from the trace
  start, a multiple of 300), vmid (hashed), min, max and avg CPU % over the slot;
- ``vmtable.csv.gz``: one row per VM: vmid, subscriptionid, deploymentid, vmcreated, vmdeleted (seconds),
  maxcpu, avgcpu, p95maxcpu (CPU %), vmcategory, vmcorecount, vmmemory.

What differs between the versions is read as it is: V1 spells a category "Unkown" (kept in ``vmcategory``;
``category`` spells it "Unknown"), V1 gives cores as an integer and memory in GB (0.75, 1.75, 56, …), V2 gives
both as buckets ("2", ">24", ">64"), so ``vmcorecount`` and ``vmmemory`` stay strings. A row that does not
parse is a :class:`~colocate.trace.TraceFormatError` naming the file and line.

The vmtable's CPU columns are statistics of the readings: avgcpu is the mean of avg, maxcpu the maximum of
max, p95maxcpu the 95th percentile of max (the higher neighbour). :func:`vm_summary` recomputes them.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np
import polars as pl

from colocate.trace import TraceFormatError

__all__ = ["READINGS_SCHEMA", "VMTABLE_SCHEMA", "SLOT_SECONDS", "read_readings", "read_vmtable", "vm_summary",
           "vm_series"]

#: One reading covers 5 minutes.
SLOT_SECONDS = 300

READINGS_SCHEMA = {"timestamp": pl.Int64, "vmid": pl.String, "min_cpu": pl.Float64, "max_cpu": pl.Float64,
                   "avg_cpu": pl.Float64}
VMTABLE_SCHEMA = {"vmid": pl.String, "subscriptionid": pl.String, "deploymentid": pl.String, "vmcreated": pl.Int64,
                  "vmdeleted": pl.Int64, "maxcpu": pl.Float64, "avgcpu": pl.Float64, "p95maxcpu": pl.Float64,
                  "vmcategory": pl.String, "vmcorecount": pl.String, "vmmemory": pl.String}

#: vmcategory as the traces spell it (V1 writes "Unkown").
CATEGORIES = ("Delay-insensitive", "Interactive", "Unknown", "Unkown")


def _read(path: str | Path, schema: dict[str, pl.DataType], what: str) -> pl.DataFrame:
    """Read a headerless CRLF csv(.gz) with ``schema``; any defect becomes a TraceFormatError naming file:line."""
    path = Path(path)
    try:
        df = pl.read_csv(path, has_header=False, schema=schema, quote_char=None, raise_if_empty=False,
                         eol_char="\n", truncate_ragged_lines=False)
    except FileNotFoundError:
        raise
    except Exception as exc:  # polars names neither file nor line
        raise _diagnose(path, schema, what) or TraceFormatError(path, f"unreadable {what}: {exc}") from exc
    # CRLF: the last column carries the "\r" when it is a string; a missing field parses as null
    last = list(schema)[-1]
    if schema[last] == pl.String:
        df = df.with_columns(pl.col(last).str.strip_suffix("\r"))
    if df.select(pl.all().is_null().any()).row(0) != (False,) * len(schema):
        raise _diagnose(path, schema, what) or TraceFormatError(path, f"{what}: an empty field")
    return df


def _diagnose(path: Path, schema: dict[str, pl.DataType], what: str) -> TraceFormatError | None:
    """The first malformed line of ``path`` (error path only: a slow line-by-line pass)."""
    names, types = list(schema), list(schema.values())
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                fields = raw.rstrip(b"\r\n").split(b",")
                if len(fields) != len(names):
                    return TraceFormatError(path, f"expected {len(names)} fields for {what}, found {len(fields)}",
                                            lineno)
                for name, dtype, value in zip(names, types, fields):
                    if not value:
                        return TraceFormatError(path, f"column {name!r} is empty", lineno)
                    if dtype != pl.String and not _parses(value, dtype):
                        return TraceFormatError(
                            path, f"column {name!r} ({dtype}) cannot parse {value[:40].decode(errors='replace')!r}",
                            lineno)
    except (EOFError, OSError, zlib.error) as exc:
        return TraceFormatError(path, f"truncated or corrupt gzip ({exc})")
    return None


def _parses(value: bytes, dtype: pl.DataType) -> bool:
    try:
        int(value) if dtype == pl.Int64 else float(value)
    except ValueError:
        return False
    return True


def read_readings(path: str | Path) -> pl.DataFrame:
    """One ``vm_cpu_readings`` file (V1 or V2): timestamp, vmid, min_cpu, max_cpu, avg_cpu (CPU %).

    Checked beyond parsing: timestamps are multiples of :data:`SLOT_SECONDS`, and min ≤ avg ≤ max on every row
    (a violation names its line).
    """
    df = _read(path, READINGS_SCHEMA, "vm_cpu_readings")
    bad = df.with_row_index("line", offset=1).filter(
        (pl.col("timestamp") % SLOT_SECONDS != 0) | (pl.col("min_cpu") > pl.col("avg_cpu"))
        | (pl.col("avg_cpu") > pl.col("max_cpu")))
    if bad.height:
        row = bad.row(0, named=True)
        what = ("timestamp is not a multiple of 300 s" if row["timestamp"] % SLOT_SECONDS
                else f"min ≤ avg ≤ max does not hold ({row['min_cpu']}, {row['avg_cpu']}, {row['max_cpu']})")
        raise TraceFormatError(path, f"vm_cpu_readings: {what}", int(row["line"]))
    return df


def read_vmtable(path: str | Path) -> pl.DataFrame:
    """A ``vmtable`` file (V1 or V2), its columns as the trace writes them, plus ``category`` (vmcategory with V1's
    "Unkown" spelled "Unknown") and ``lifetime_s`` (vmdeleted − vmcreated). An unknown category names its line."""
    df = _read(path, VMTABLE_SCHEMA, "vmtable")
    bad = df.with_row_index("line", offset=1).filter(~pl.col("vmcategory").is_in(CATEGORIES))
    if bad.height:
        row = bad.row(0, named=True)
        raise TraceFormatError(path, f"vmtable: unknown vmcategory {row['vmcategory']!r} (expected one of "
                               f"{', '.join(CATEGORIES[:3])})", int(row["line"]))
    return df.with_columns(
        pl.col("vmcategory").replace("Unkown", "Unknown").alias("category"),
        (pl.col("vmdeleted") - pl.col("vmcreated")).alias("lifetime_s"),
    )


def vm_summary(readings: pl.DataFrame) -> pl.DataFrame:
    """Per VM, what its vmtable row records: ``avgcpu`` (mean of avg), ``maxcpu`` (maximum of max) and
    ``p95maxcpu`` (95th percentile of max, the higher neighbour), with ``readings``, the slots it has.
    Sorted by vmid."""
    return (
        readings.group_by("vmid")
        .agg(pl.len().alias("readings"), pl.col("avg_cpu").mean().alias("avgcpu"),
             pl.col("max_cpu").max().alias("maxcpu"),
             pl.col("max_cpu").quantile(0.95, interpolation="higher").alias("p95maxcpu"))
        .sort("vmid")
    )


def vm_series(readings: pl.DataFrame, column: str = "avg_cpu") -> tuple[list[str], np.ndarray]:
    """Each VM's ``column`` per 5-minute slot: the VM ids (sorted) and a (VMs × slots) array, slot k the reading at
    k · 300 s, NaN where a VM has none (before its first reading, after its last, or a missing slot).

    The rows are what Beaumont §5.2's decomposition takes for a job's CPU per window
    (:func:`colocate.analysis.periodicity.components`, after
    :func:`~colocate.analysis.periodicity.fill_by_time_of_day` for the gaps): slot k covers [300k, 300k + 300) s
    from the trace start, as window k does in the Google trace.
    """
    if readings.height == 0:
        return [], np.zeros((0, 0))
    ids = readings["vmid"].unique().sort()
    rows = pl.DataFrame({"vmid": ids, "row": np.arange(ids.len())})
    r = readings.select("vmid", (pl.col("timestamp") // SLOT_SECONDS).alias("slot"), column).join(rows, on="vmid")
    slot = r["slot"].to_numpy()
    x = np.full((ids.len(), int(slot.max()) + 1), np.nan)
    x[r["row"].to_numpy(), slot] = r[column].to_numpy()
    return ids.to_list(), x
