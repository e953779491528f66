"""The Azure Public Dataset VM traces (V1 2017, V2 2019) as a source: their readers, their map to the source
contract's tables, and the sources (a download, the shipped sample, a local copy in the dataset's layout).

A VM is the contract's entity, its deployment its group; its usage and request are shares of a host of
``azure.placement.host_cores`` cores. The traces record no priorities, jobs, machines or memory usage, and only each
VM's 5-minute minimum, mean and maximum. A row that does not parse is a :class:`~colocate.trace.TraceFormatError`
naming the file and line.

The files, what differs between V1 and V2, the vmtable's statistics: docs/methods.md#azure-vm-traces.
"""
from __future__ import annotations

import functools
import gzip
import re
import zlib
from pathlib import Path

import numpy as np
import polars as pl

from colocate.registry import ConfigError
from colocate.sources import SOURCES, LocalCopy, SourceBase, register_local
from colocate.sources.contract import TraceFormatError

__all__ = ["READINGS_SCHEMA", "VMTABLE_SCHEMA", "SLOT_SECONDS", "read_readings", "read_vmtable", "vm_summary",
           "vm_series", "vm_tasks", "entity_pieces", "usage_records", "Azure", "Download", "Sample", "Local"]

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
    from the trace start, window k of the contract's clock (which starts 600 s later, as the 2011 trace).
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


# ----------------------------------------------------------------------------- VMs as the contract's entities


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


# ----------------------------------------------------------------------------- the contract's tables


def entity_pieces(vmtable: pl.DataFrame, host_cores: float, host_memory_gb: float, n_buckets: int) -> pl.DataFrame:
    """Each VM as the contract's entity, one row in the shape of the 2011 map's task pieces
    (:func:`colocate.prep.mapreduce.map_task_events`), so that the shared reduce reads it: its key from
    :func:`vm_tasks` (deployment, rank), ``first_time`` and ``first_schedule`` its creation and ``last_event`` its
    deletion on the canonical clock (µs, window 0 at :data:`~colocate.sources.contract.ORIGIN_US`), its cores and
    memory as shares of a host of ``host_cores`` cores and ``host_memory_gb`` GB (the source's normaliser), no
    priority, never failing (the traces record no failures), and no event counts."""
    from colocate.prep.mapreduce import _EVENT_COUNT_COLUMNS, bucket_expr
    from colocate.sources.contract import ORIGIN_US

    if host_cores <= 0 or host_memory_gb <= 0:
        raise ValueError(f"a host needs positive cores and memory, got {host_cores} cores, {host_memory_gb} GB")
    rows = vmtable.select("vmid", "vmcreated", "vmdeleted", memory_gb(vmtable["vmmemory"])).unique(
        "vmid", keep="first", maintain_order=True)
    created = ORIGIN_US + pl.col("vmcreated") * 1_000_000
    return (vm_tasks(vmtable).join(rows, on="vmid")
            .select("job_id", "task_index", created.alias("first_time"),
                    pl.lit(None, pl.Int64).alias("priority"), pl.lit(None, pl.Int64).alias("scheduling_class"),
                    (pl.col("cores").fill_null(1.0) / host_cores).cast(pl.Float32).alias("cpu_request"),
                    (pl.col("memory") / host_memory_gb).cast(pl.Float32).alias("memory_request"),
                    created.alias("first_schedule"),
                    (ORIGIN_US + pl.col("vmdeleted") * 1_000_000).alias("last_event"),
                    pl.lit(False).alias("failing"),
                    *(pl.lit(0, pl.Int32).alias(c) for c in _EVENT_COUNT_COLUMNS.values()))
            .with_columns(bucket_expr(n_buckets)).sort("bucket", "job_id", "task_index"))


def usage_records(readings: pl.DataFrame, tasks: pl.DataFrame, host_cores: float, n_buckets: int) -> pl.DataFrame:
    """One readings file as the contract's usage records, in the shape of the 2011 map's
    (:data:`colocate.prep.mapreduce.USAGE_COLUMNS` and ``bucket``), grouped by bucket: each VM's key
    (:func:`vm_tasks`), its slot's window on the canonical clock, ``cpu_rate`` its mean and ``sampled_cpu_usage``
    (and ``maximum_cpu_rate``) its maximum over the slot, in shares of a host of ``host_cores`` cores (a reading's
    % / 100 × the VM's cores, 1 core where the vmtable gives none, / ``host_cores``); no machine, no memory usage.
    Azure records no instantaneous sample, so the maximum stands for inst: it bounds it. Readings of VMs the vmtable
    does not list are dropped."""
    from colocate.prep.mapreduce import bucket_expr
    from colocate.sources.contract import ORIGIN_US, WINDOW_US

    dup = readings.filter(pl.struct("vmid", "timestamp").is_duplicated())
    if dup.height:  # the traces have one reading per VM and slot
        row = dup.row(0, named=True)
        raise ValueError(f"VM {row['vmid']} has two readings at t = {row['timestamp']} s")
    scale = pl.col("cores").fill_null(1.0) / 100 / host_cores
    start = ORIGIN_US + (pl.col("timestamp") // SLOT_SECONDS) * WINDOW_US
    top = (pl.col("max_cpu") * scale).cast(pl.Float32)
    return (readings.join(tasks.select("vmid", "job_id", "task_index", "cores"), on="vmid", how="inner",
                          maintain_order="left")
            .select(start.alias("start_time"), (start + WINDOW_US).alias("end_time"), "job_id", "task_index",
                    pl.lit(None, pl.Int64).alias("machine_id"), (pl.col("avg_cpu") * scale).cast(pl.Float32).alias("cpu_rate"),
                    pl.lit(None, pl.Float32).alias("canonical_memory_usage"), top.alias("maximum_cpu_rate"),
                    top.alias("sampled_cpu_usage"))
            .with_columns(bucket_expr(n_buckets)).sort("bucket", maintain_order=True))


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

# ----------------------------------------------------------------------------- the sources


class Azure(SourceBase):
    """What the three Azure sources share."""

    family = "azure"
    tables = AZURE_TABLES
    gives = {"vm_cpu_readings": ("usage_series",), "vmtable": ("entities", "arrivals")}
    maps = {"vm_cpu_readings": ("usage_records",), "vmtable": ("entity_pieces",)}
    never_why = {
        "machine_events": "the Azure VM traces record VMs, not the hosts they run on: there are no machine events",
        "priorities": "a VM belongs to no job and has no priority (vmcategory, Interactive or Delay-insensitive, is "
                      "its only class)",
        "group_events": "a VM's deployment has no events of its own: the vmtable gives each VM's creation and deletion",
        "memory_usage": "the traces give each VM's CPU readings only; its memory is the size it was given, not what "
                        "it used",
        "placements": "the traces do not say which host a VM runs on",
        "inst_usage": "Azure records each VM's 5-minute minimum, mean and maximum, no instantaneous sample",
    }
    entity, group, usage = "VM", "deployment", "max"
    #: Unuvar §IV-F offers tasks that come and go: a VM lives for weeks, so the controller is offered the trace's own
    #: VMs at their creation (as Google's tasks are when enough run), never a stream of realizations of month-long
    #: VMs (30,000 arrivals of 8,640 windows each: 13 GB measured, for no more than the trace gives).
    #: The traces miss a few readings (the shipped 20 V2 VMs miss 0-18 of 8,639): Beaumont §5.2 takes VMs read in 99% of
    #: the month's windows, the gaps filled with the VM's mean at the same time of day.
    config_defaults = {"packing": {"admission": {"source": "trace"}}, "periodicity": {"min_coverage": 0.99}}
    units = ("CPU and memory requests as shares of a host of azure.placement.host_cores cores and host_memory_gb GB "
             "(a reading's % / 100 × the VM's cores / the host's)")
    #: the vmtable's VMs as requests, onto identical hosts (azure_placement_requests)
    placement_needs = ("arrivals",)

    @property
    def config(self) -> dict:
        return self.trace["azure"]

    @functools.cached_property
    def span_windows(self) -> int:
        """The trace's span in 5-minute windows: the vmtable's last deletion's slot + 1 (the vmtable covers the whole
        month whatever share of the readings a run reads), read from the vmtable where it is on disk (a 2.7 M-row V2
        vmtable takes a few seconds), else V2's 8,639 (a download not made yet)."""
        files = [self.file("vmtable", stem) for stem in self.stems("vmtable")]
        if not files or not all(Path(f).is_file() for f in files):
            return 8639
        return max(int(read_vmtable(f)["vmdeleted"].max()) for f in files) // SLOT_SECONDS + 1

    def readings_total(self) -> int | None:
        return READINGS_FILES[self.config["version"]]

    def total(self, table: str) -> int | None:
        return 1 if table == "vmtable" else self.readings_total()


@SOURCES.register
class Download(Azure):
    """The dataset over HTTPS, each file's SHA-256 pinned in a lock file on its first download."""

    name = "azure"

    @property
    def label(self) -> str:
        return f"Azure {self.config['version'].upper()}"

    @property
    def root(self) -> str:
        return f"resources/trace/azure-{self.config['version']}"

    @property
    def run(self) -> str:
        return f"azure-{self.config['version']}-{self.scale}"

    @property
    def url(self) -> str:
        return self.config["url"] or BASE_URLS[self.config["version"]]

    def _stems(self, table: str) -> list[str]:
        if table == "vmtable":
            return ["vmtable"]
        return select_readings(self.config["files"], self.readings_total())


@SOURCES.register
class Sample(Azure):
    """The real Azure files shipped with the project: 20 VMs of V2 (``workflow/data/azure-vm-sample``)."""

    name = "azure-sample"
    label = "the shipped Azure V2 sample (20 VMs)"
    #: Its layout is not the dataset's: one file per table, of 20 VMs.
    files = {"vm_cpu_readings": {"vm_cpu_readings-20vms": "v2/vm_cpu_readings-20vms.csv.gz"},
             "vmtable": {"vmtable-20vms": "v2/vmtable-20vms.csv.gz"}}

    @property
    def root(self) -> str:
        return str(self.setting.basedir / "workflow" / "data" / "azure-vm-sample")

    def _stems(self, table: str) -> list[str]:
        return list(self.files[table])

    def file(self, table: str, stem: str) -> str:
        return f"{self.root}/{self.files[table][stem]}"

    def total(self, table: str) -> int | None:
        return None  # 20 VMs drawn from V2's files, not whole files of it


@register_local
class Local(LocalCopy, Azure):
    """A local directory in the dataset's layout: ``vm_cpu_readings/vm_cpu_readings-file-N-of-M.csv.gz`` and
    ``vmtable/vmtable.csv.gz``; ``trace.azure.files`` selects readings files by their index N."""

    @property
    def label(self) -> str:
        return f"the Azure trace under {self.root}"

    @classmethod
    def recognises(cls, path: Path) -> bool:
        return (path / "vm_cpu_readings").is_dir()

    def total(self, table: str) -> int | None:
        if table == "vmtable":
            return 1
        found = self.found(table, f"{table}*.csv.gz")
        m = re.search(r"-of-(\d+)$", found[0]) if found else None
        return int(m.group(1)) if m else None

    def _stems(self, table: str) -> list[str]:
        found = self.found(table, f"{table}*.csv.gz")
        if table == "vmtable" or self.config["files"] == "all":
            return found
        index = {int(m.group(1)): s for s in found if (m := re.search(r"-file-(\d+)-of-", s))}
        sel = self.config["files"]
        wanted = sorted(range(1, sel + 1) if isinstance(sel, int) else sel)
        missing = [i for i in wanted if i not in index]
        if missing:
            raise ConfigError(f"config key trace.azure.files: readings file(s) {missing} not found under "
                              f"{self.root}/{table} (it holds {sorted(index) or 'none'})")
        return [index[i] for i in wanted]

    def check(self) -> None:
        if not (self.stems("vm_cpu_readings") and self.stems("vmtable")):
            raise ConfigError(
                f"config key trace.path: {self.root!r} is laid out like the Azure dataset but lacks "
                "vm_cpu_readings/vm_cpu_readings-file-N-of-M.csv.gz or vmtable/vmtable.csv.gz"
            )
