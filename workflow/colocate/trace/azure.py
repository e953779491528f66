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
import hashlib
import math
import zlib
from collections.abc import Sequence
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


# ----------------------------------------------------------------------------- the dataset's layout

#: Base URLs of the two versions (Azure Public Dataset, public HTTPS, no published checksums).
BASE_URLS = {
    "v1": "https://azurepublicdatasettraces.blob.core.windows.net/azurepublicdataset",
    "v2": "https://azurepublicdatasettraces.blob.core.windows.net/azurepublicdatasetv2",
}
#: Readings files of each version (vm_cpu_readings-file-N-of-M, N = 1..M).
READINGS_FILES = {"v1": 125, "v2": 195}
#: The tables colocate reads, as the dataset names its directories.
AZURE_TABLES = ("vm_cpu_readings", "vmtable")


def readings_stem(index: int, count: int) -> str:
    """The stem of readings file ``index`` (1-based) of ``count``: ``vm_cpu_readings-file-N-of-M``."""
    if not 1 <= index <= count:
        raise ValueError(f"readings file index {index} outside 1..{count}")
    return f"vm_cpu_readings-file-{index}-of-{count}"


def relpath(table: str, stem: str) -> str:
    """A file's path below ``trace_data/`` (the dataset's layout, kept by a download and by a local copy)."""
    if table not in AZURE_TABLES:
        raise ValueError(f"unknown Azure table {table!r}; known: {', '.join(AZURE_TABLES)}")
    return f"{table}/{stem}.csv.gz"


def select_readings(selection: str | int | list[int], count: int) -> list[str]:
    """Stems of the readings files ``selection`` names: "all", K (the first K: the readings are in time order,
    so the first K files are the trace's first K/M of its 30 days), or a list of 1-based indices."""
    if selection == "all":
        picked = range(1, count + 1)
    elif isinstance(selection, int) and not isinstance(selection, bool):
        if not 1 <= selection <= count:
            raise ValueError(f"config key trace.azure.files: {selection} is outside 1..{count}")
        picked = range(1, selection + 1)
    elif isinstance(selection, list) and selection:
        bad = [i for i in selection if not isinstance(i, int) or not 1 <= i <= count]
        if bad:
            raise ValueError(f"config key trace.azure.files: {bad} outside 1..{count}")
        picked = sorted(set(selection))
    else:
        raise ValueError(f"config key trace.azure.files: expected 'all', a count or a list of indices, got {selection!r}")
    return [readings_stem(i, count) for i in picked]


# ----------------------------------------------------------------------------- map and reduce per VM

#: Columns of one bucket's per-VM records (the map's output, and the reduce's series).
RECORD_COLUMNS = ("vmid", "slot", "min_cpu", "max_cpu", "avg_cpu")


def vm_buckets(vmids: pl.Series, n_buckets: int) -> pl.Series:
    """A stable bucket of each VM id: the first 8 bytes of its BLAKE2b digest, mod ``n_buckets``.

    Stable across runs, machines and library versions (polars' own hash is not), and uniform whatever the ids
    look like (the traces' ids are base64 hashes; tests use short names).
    """
    if n_buckets < 1:
        raise ValueError(f"n_buckets must be >= 1, got {n_buckets}")
    unique = vmids.unique()
    codes = [int.from_bytes(hashlib.blake2b(v.encode(), digest_size=8).digest(), "little") % n_buckets
             for v in unique.to_list()]
    table = pl.DataFrame({"vmid": unique, "bucket": pl.Series(codes, dtype=pl.Int32)})
    return pl.DataFrame({"vmid": vmids}).join(table, on="vmid", how="left", maintain_order="left")["bucket"]


def map_readings(readings: pl.DataFrame, n_buckets: int) -> pl.DataFrame:
    """One readings file → records with ``bucket``, ``vmid``, ``slot`` (timestamp // 300) and the CPU columns,
    grouped by bucket (a stable sort: within a bucket, the file's order), so that a reduce job reads one bucket
    of every file; the reduce sorts each VM's records."""
    return (
        readings.select(vm_buckets(readings["vmid"], n_buckets).alias("bucket"), "vmid",
                        (pl.col("timestamp") // SLOT_SECONDS).cast(pl.Int32).alias("slot"),
                        "min_cpu", "max_cpu", "avg_cpu")
        .sort("bucket", maintain_order=True)
    )


def reduce_vms(records: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Every record of one bucket's VMs (from every readings file) → per-VM series and statistics.

    * ``series``: one row per VM and slot (:data:`RECORD_COLUMNS`), sorted; a slot read twice (the same reading in
      two files) is an error, since the traces have one reading per VM and slot;
    * ``vms``: per VM, ``readings``, ``first_slot``, ``last_slot``, its vmtable statistics (:func:`vm_summary`),
      and Janus §3's per-task statistics with the 5-minute max for inst (Azure records no instantaneous sample:
      the max bounds it): ``avg_mean``, ``avg_std``, ``inst_mean``, ``inst_std`` (population std, as for tasks) in
      fractions of the VM's cores, and ``avg_hist``, the 100-bin histogram of avg on [0, 1] (Janus §3.5).
    """
    series = records.select(RECORD_COLUMNS).sort("vmid", "slot", maintain_order=True)
    dup = series.filter(pl.struct("vmid", "slot").is_duplicated())
    if dup.height:
        row = dup.row(0, named=True)
        raise ValueError(f"VM {row['vmid']} has two readings at t = {row['slot'] * SLOT_SECONDS} s")
    stats = vm_summary(series.with_columns(timestamp=pl.col("slot").cast(pl.Int64) * SLOT_SECONDS))
    avg, top = pl.col("avg_cpu") / 100, pl.col("max_cpu") / 100
    per = series.group_by("vmid").agg(
        pl.col("slot").min().alias("first_slot"), pl.col("slot").max().alias("last_slot"),
        avg.mean().alias("avg_mean"), avg.std(ddof=0).alias("avg_std"),
        top.mean().alias("inst_mean"), top.std(ddof=0).alias("inst_std"))
    vms = stats.join(per, on="vmid").sort("vmid")
    return {"series": series, "vms": vms.with_columns(pl.Series("avg_hist", avg_histograms(series), dtype=pl.Array(pl.Float32, HIST_BINS)))}


#: Bins of a VM's usage histogram (Janus §3.5's 100 bins of width 1 %).
HIST_BINS = 100


def avg_histograms(series: pl.DataFrame, bins: int = HIST_BINS) -> np.ndarray:
    """Each VM's histogram of avg CPU (a fraction of its cores) in ``bins`` bins on [0, 1], one row per VM of
    ``series`` (sorted by vmid, as :func:`reduce_vms` sorts it); 100 % falls in the last bin."""
    if series.height == 0:
        return np.zeros((0, bins), dtype=np.float32)
    ids = series["vmid"].to_numpy()
    first = np.r_[True, ids[1:] != ids[:-1]]
    row = np.cumsum(first) - 1
    k = np.clip(np.floor(series["avg_cpu"].to_numpy() / 100 * bins), 0, bins - 1).astype(np.int64)
    counts = np.bincount(row * bins + k, minlength=int(first.sum()) * bins).reshape(-1, bins)
    return (counts / counts.sum(axis=1, keepdims=True)).astype(np.float32)


def trace_slots(vmtable: pl.DataFrame) -> int:
    """The trace's span in 5-minute slots, from the vmtable (which covers the whole month whatever share of the
    readings files a run reads): the last deletion's slot + 1 (8,639 for V2's 30 days)."""
    return int(vmtable["vmdeleted"].max()) // SLOT_SECONDS + 1 if vmtable.height else 0


def long_running(vms: pl.DataFrame, n_slots: int, min_coverage: float, limit: int | None, seed: int) -> pl.DataFrame:
    """VMs read over the whole span (Beaumont §5.2's "run during the whole trace", for VMs): a reading in the first
    and the last of ``n_slots`` slots and in at least ``min_coverage`` of them. At most ``limit`` of them (None: all),
    drawn at random with ``seed`` (a month of 5-minute readings is 69 kB a VM), sorted by vmid."""
    if not 0 < min_coverage <= 1:
        raise ValueError(f"min_coverage must be in (0, 1], got {min_coverage}")
    need = math.ceil(min_coverage * n_slots - 1e-9)
    whole = vms.filter((pl.col("first_slot") == 0) & (pl.col("last_slot") == n_slots - 1)
                       & (pl.col("readings") >= need)).sort("vmid")
    if limit is not None and whole.height > limit:
        keep = np.sort(np.random.default_rng(seed).choice(whole.height, size=limit, replace=False))
        whole = whole[keep]
    return whole


def as_periodicity_input(vms: pl.DataFrame, series: pl.DataFrame, tasks: pl.DataFrame | None = None
                         ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """VMs and their readings in the shapes :func:`colocate.analysis.periodicity.analyse` reads for jobs.

    Each VM is a "job" of class ``"vm"`` with one task; its ``cpu_sum`` per window is its CPU in cores (avg % / 100 ×
    its cores from ``tasks`` (:func:`vm_tasks`), 1 core where unknown or without ``tasks``): Table 4's ratios are
    relative to the mean, so the size cancels there, and §8.2's packing needs it. ``job_id`` is the VM's rank in
    ``vms`` (sorted by vmid); returns ``(dominant, windows)``.
    """
    size = (tasks.select("vmid", "cores") if tasks is not None else pl.DataFrame(schema={"vmid": pl.String, "cores": pl.Float64}))
    series = series.join(size, on="vmid", how="left").with_columns(
        (pl.col("avg_cpu") / 100 * pl.col("cores").fill_null(1.0)).alias("avg_cpu"))
    ids = vms.select("vmid", pl.int_range(pl.len(), dtype=pl.Int64).alias("job_id"))
    dominant = vms.join(ids, on="vmid").select(
        "job_id", pl.lit("vm").alias("class"), pl.col("readings").cast(pl.Int64).alias("n_windows"),
        pl.col("first_slot").cast(pl.Int64).alias("first_window"), pl.col("last_slot").cast(pl.Int64).alias("last_window"),
        pl.lit(1.0).alias("tasks_mean"))
    windows = series.join(ids, on="vmid").select("job_id", pl.col("slot").cast(pl.Int64).alias("window"),
                                                 pl.col("avg_cpu").alias("cpu_sum"))
    return dominant.sort("job_id"), windows.sort("job_id", "window")


def series_of(parts: Sequence[pl.LazyFrame], vmids: pl.Series) -> pl.DataFrame:
    """The reduced series (:func:`reduce_vms`) of ``vmids`` from one LazyFrame per bucket, collected a bucket at a
    time."""
    keys = pl.DataFrame({"vmid": vmids.cast(pl.String)}).lazy()
    frames = [p.join(keys, on="vmid", how="semi").collect() for p in parts]
    return pl.concat(frames) if frames else pl.DataFrame(schema={c: READINGS_SCHEMA.get(c, pl.Int32) for c in RECORD_COLUMNS})


# ----------------------------------------------------------------------------- VMs seen as the Google trace's tasks


def cores(vmcorecount: pl.Series) -> pl.Series:
    """A VM's cores as a number: V1 gives an integer, V2 a bucket ("2", "4", ">24"); a bucket ">k" counts as k,
    its lower bound (the traces say no more). Null where the field does not parse."""
    return vmcorecount.str.strip_prefix(">").cast(pl.Float64, strict=False).alias("cores")


def vm_tasks(vmtable: pl.DataFrame) -> pl.DataFrame:
    """Each VM as a task of the Google trace: ``job_id`` the rank of its deployment (the VMs a customer deploys
    together, as a job's tasks are scheduled together), ``task_index`` its rank within it, and its ``cores``."""
    vms = vmtable.select("vmid", "deploymentid", cores(vmtable["vmcorecount"])).unique("vmid", keep="first").sort("vmid")
    deployments = vms.select(pl.col("deploymentid").unique().sort()).with_row_index("job_id")
    return (vms.join(deployments, on="deploymentid")
            .with_columns(pl.col("job_id").cast(pl.Int64),
                          pl.int_range(pl.len(), dtype=pl.Int64).over("job_id", order_by="vmid").alias("task_index"))
            .select("vmid", "job_id", "task_index", "cores").sort("vmid"))


def task_series(series: pl.LazyFrame, tasks: pl.DataFrame) -> pl.LazyFrame:
    """A bucket's VM series in the shape of the Google trace's task series (``job_id``, ``task_index``,
    ``start_time`` of the slot's window, ``avg``, ``inst``), so that the aggregates of Unuvar §IV and the
    realizations of Janus §3.1 are built by the same functions. ``avg`` is the VM's CPU in cores: avg CPU % / 100 ×
    its cores, so that a set's total weighs VMs by size (1 core where the vmtable gives none); ``inst`` is its
    5-minute max the same way (Azure has no instantaneous sample: the max bounds it)."""
    from colocate.trace import TRACE_START_US, WINDOW_US

    return series.join(tasks.lazy(), on="vmid", how="inner").select(
        "job_id", "task_index", (TRACE_START_US + pl.col("slot").cast(pl.Int64) * WINDOW_US).alias("start_time"),
        (pl.col("avg_cpu") / 100 * pl.col("cores").fill_null(1.0)).alias("avg"),
        (pl.col("max_cpu") / 100 * pl.col("cores").fill_null(1.0)).alias("inst"))


def chosen_series(series: pl.LazyFrame, tasks: pl.DataFrame, chosen: pl.DataFrame, inst_as: str = "inst") -> pl.DataFrame:
    """One bucket's :func:`task_series` of the ``chosen`` VMs only (their ``job_id``, ``task_index``), for drawing
    their realizations a bucket at a time; ``inst`` renamed ``inst_as`` (a draw's own stream, e.g. Janus Table 1's)."""
    keys = chosen.lazy().select("job_id", "task_index")
    return (task_series(series, tasks).join(keys, on=["job_id", "task_index"], how="semi")
            .rename({"inst": inst_as} if inst_as != "inst" else {}).collect())


def long_vm_tasks(vms: pl.DataFrame, tasks: pl.DataFrame, min_readings: int) -> pl.DataFrame:
    """The VMs with at least ``min_readings`` readings as Janus §3.1's long tasks: ``job_id``, ``task_index``,
    ``n_records``, ``cores`` (:func:`vm_tasks`) and the moments of :func:`task_series`'s ``inst`` and ``avg`` in
    cores (``inst_mean``, ``inst_std``, ``avg_mean``, ``avg_std``: the VM's own, scaled as its series are), sorted
    by key."""
    moments = ("inst_mean", "inst_std", "avg_mean", "avg_std")
    return (vms.filter(pl.col("readings") >= min_readings)
            .select("vmid", pl.col("readings").cast(pl.Int64).alias("n_records"), *moments)
            .join(tasks, on="vmid")
            .select("job_id", "task_index", "n_records", "cores",
                    *(pl.col(m) * pl.col("cores").fill_null(1.0) for m in moments))
            .sort("job_id", "task_index"))


# ----------------------------------------------------------------------------- VM requests for Tantawi & Steinder


def memory_gb(vmmemory: pl.Series) -> pl.Series:
    """A VM's memory in GB as a number: V1 gives GB (0.75, 1.75, 56), V2 a bucket ("4", ">64"); ">k" counts as k,
    its lower bound. Null where the field does not parse."""
    return vmmemory.str.strip_prefix(">").cast(pl.Float64, strict=False).alias("memory")


def vm_requests(vmtable: pl.DataFrame, span_end_s: int | None = None) -> pl.DataFrame:
    """Each VM of the vmtable as a placement request (Tantawi & Steinder's two-resource stream, from Azure):
    ``submit`` its creation (µs from the trace start), ``cpu_request`` its cores, ``memory_request`` its memory
    (GB), ``lifetime`` deleted − created in seconds (a VM still alive at ``span_end_s``, or whose deletion the
    trace does not record, runs until then), ``job_id`` / ``task_index`` its deployment and rank (:func:`vm_tasks`).
    Sorted by submit; VMs without a positive size or lifetime are left out."""
    tasks = vm_tasks(vmtable)
    end = pl.col("vmdeleted") if span_end_s is None else pl.min_horizontal("vmdeleted", pl.lit(span_end_s))
    out = vmtable.select(
        "vmid", (pl.col("vmcreated") * 1_000_000).alias("submit"),
        memory_gb(vmtable["vmmemory"]).alias("memory_request"),
        (end - pl.col("vmcreated")).cast(pl.Float64).alias("lifetime"),
    ).unique("vmid", keep="first").join(tasks, on="vmid").rename({"cores": "cpu_request"})
    return (out.drop_nulls(["cpu_request", "memory_request"])
            .filter((pl.col("cpu_request") > 0) & (pl.col("memory_request") > 0) & (pl.col("lifetime") > 0))
            .sort("submit", "job_id", "task_index")
            .select("submit", "cpu_request", "memory_request", "lifetime", "job_id", "task_index"))


def hosts(n: int, cores: float, memory: float) -> pl.DataFrame:
    """``n`` identical hosts of ``cores`` and ``memory`` GB (the traces do not publish Azure's hosts)."""
    if n < 1 or cores <= 0 or memory <= 0:
        raise ValueError(f"need n ≥ 1 hosts of positive size, got {n} × ({cores} cores, {memory} GB)")
    return pl.DataFrame({"machine_id": np.arange(n, dtype=np.int64), "cpus": np.full(n, float(cores)),
                         "memory": np.full(n, float(memory))})
