"""The source contract: what every trace source gives the analyses, whatever the trace.

A *source* (one module of :mod:`colocate.sources` and one rules file) reads a trace and writes the canonical tables;
the analyses know only what this module defines: the clock (:data:`ORIGIN_US`, :data:`WINDOW_US`), event types
(:class:`EventType`, :class:`MachineEventType`), the papers' priority classes (:data:`CLASSES`, after Reiss et al.
and Beaumont et al. §1.1), capabilities (:data:`CAPABILITIES`, :class:`Capabilities`), the canonical tables
(:data:`TABLES`, :func:`check_table`) and :class:`TraceFormatError`.

Each in full: docs/methods.md#source-contract.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from enum import IntEnum
from pathlib import Path

import polars as pl

__all__ = ["ORIGIN_US", "WINDOW_US", "WINDOWS_PER_DAY", "EventType", "FAILING_EVENTS", "MachineEventType",
           "CLASSES", "class_expr", "CAPABILITIES", "Capabilities", "TableCoverage", "TraceFormatError",
           "window_of", "not_applicable_reason", "ContractTable", "TABLES", "check_table"]

#: Start of window 0 on the canonical clock, in µs (times before it happened before the trace).
ORIGIN_US = 600_000_000
#: Length of a usage window (5 minutes, the 2011 trace's task_usage period and the VM traces' reading period) in µs.
WINDOW_US = 300_000_000
#: 5-minute windows in a day.
WINDOWS_PER_DAY = 86_400_000_000 // WINDOW_US


def window_of(time: str = "start_time") -> pl.Expr:
    """The window (0-based) of column ``time`` on the canonical clock, as an expression named ``window``."""
    return ((pl.col(time) - ORIGIN_US) // WINDOW_US).alias("window")


class EventType(IntEnum):
    """Life-cycle events of an entity (task, VM, container) or a group (job), as the contract codes them.

    The codes are the 2011 trace's (schema v2.1, "Job and task life cycles"); another trace maps its own
    (the 2019 trace's QUEUE, ENABLE, …; a VM's creation and deletion) to them.
    """

    SUBMIT = 0
    SCHEDULE = 1
    EVICT = 2
    FAIL = 3
    FINISH = 4
    KILL = 5
    LOST = 6
    UPDATE_PENDING = 7
    UPDATE_RUNNING = 8


#: Events that make an entity *failing* (Janus & Rzadca §3.1).
FAILING_EVENTS = (EventType.EVICT, EventType.FAIL, EventType.KILL, EventType.LOST)


class MachineEventType(IntEnum):
    """Machine events (Beaumont et al. §6): a machine added, removed, or its capacity updated."""

    ADD = 0
    REMOVE = 1
    UPDATE = 2


#: The papers' priority classes, lowest first (Beaumont et al. §1.1, after Reiss et al.).
CLASSES = ("gratis", "other", "production", "monitoring", "infrastructure")


def class_expr(priority_classes: Mapping[str, Iterable[int]], priority: str = "priority") -> pl.Expr:
    """The class (:data:`CLASSES`) of column ``priority`` by a source's ``priority_classes`` (class → its
    priorities), as a String column ``class``; a priority the mapping does not name gives null."""
    unknown = set(priority_classes) - set(CLASSES)
    if unknown:
        raise ValueError(f"unknown class(es) {sorted(unknown)}; the contract's are {', '.join(CLASSES)}")
    mapping = {int(p): name for name, ps in priority_classes.items() for p in ps}
    return pl.col(priority).replace_strict(mapping, default=None, return_dtype=pl.String).alias("class")


#: What a trace may record, by the name an analysis states its needs with: name → what it is.
CAPABILITIES: dict[str, str] = {
    "entities": "entities (tasks, VMs, containers) with their group, requests and submission",
    "usage_series": "per-entity CPU usage series in 5-minute windows",
    "inst_usage": "an instantaneous (sampled) CPU usage per window, not only the window's mean or maximum",
    "priorities": "entity priorities mapped to the papers' classes (production, gratis, …)",
    "group_events": "the life-cycle events of groups (jobs): submission, scheduling, ends",
    "machine_events": "machine additions, removals and updates",
    "placements": "the machine each entity runs on",
    "memory_usage": "per-entity memory usage over time",
    "arrivals": "request arrivals: when each entity was submitted or created, with its size",
    "window_distributions": "the distribution of an entity's 1-s CPU samples within each window (their percentiles)",
}


@dataclass(frozen=True)
class TableCoverage:
    """What a run reads of one of its trace's tables: ``read`` files (shards) of ``of`` (None: not known)."""

    table: str
    read: int
    of: int | None
    files: tuple[str, ...] = ()
    #: The contract's tables (:data:`TABLES`) the source maps it to.
    maps_to: tuple[str, ...] = ()

    @property
    def whole(self) -> bool:
        return self.of is not None and self.read == self.of


@dataclass(frozen=True)
class Capabilities:
    """A source's record: which :data:`CAPABILITIES` it has, how it calls an entity and a group, its units,
    its span in windows (None where only the data tells) and its coverage per table."""

    trace: str
    has: frozenset[str]
    entity: str = "task"
    group: str = "job"
    usage: str = "inst"  # "inst": a sampled instantaneous usage; "max": only the window's maximum
    units: str = "CPU as a share of the largest machine"
    span_windows: int | None = None
    coverage: tuple[TableCoverage, ...] = ()
    lacks_why: Mapping[str, str] = field(default_factory=dict)
    #: Whether a table's files each cover a stretch of time (a subset of them is a part of the span), or each holds
    #: rows from across it (the 2019 trace's shards: a subset is a sample of every window's rows).
    files_in_time_order: bool = True

    def __post_init__(self) -> None:
        unknown = set(self.has) - set(CAPABILITIES)
        if unknown:
            raise ValueError(f"unknown capabilities {sorted(unknown)}; known: {', '.join(CAPABILITIES)}")
        if self.usage not in ("inst", "max"):
            raise ValueError(f"usage must be 'inst' or 'max', got {self.usage!r}")

    def missing(self, needs: Iterable[str]) -> list[str]:
        """Those of ``needs`` the source lacks, in the order given (an unknown name is an error)."""
        needs = list(needs)
        unknown = [n for n in needs if n not in CAPABILITIES]
        if unknown:
            raise ValueError(f"unknown capabilities {unknown}; known: {', '.join(CAPABILITIES)}")
        return [n for n in needs if n not in self.has]

    def supports(self, needs: Iterable[str]) -> bool:
        return not self.missing(needs)

    def to_json(self) -> str:
        record = asdict(self)
        record["has"] = sorted(self.has)
        record["lacks"] = sorted(set(CAPABILITIES) - set(self.has))
        record["lacks_why"] = dict(sorted(self.lacks_why.items()))
        record["coverage"] = [{**asdict(c), "files": list(c.files), "maps_to": list(c.maps_to), "whole": c.whole}
                              for c in self.coverage]
        return json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def not_applicable_reason(capabilities: Capabilities, needs: Iterable[str]) -> tuple[str, str]:
    """``(reason, needs)`` of an analysis that needs ``needs`` on a source lacking some of them: "not applicable
    to <trace>: needs <capability>", with the source's own account of why it lacks it where it gives one."""
    missing = capabilities.missing(needs)
    if not missing:
        raise ValueError(f"{capabilities.trace} has every capability of {list(needs)}")
    why = "; ".join(capabilities.lacks_why[m] for m in missing if m in capabilities.lacks_why)
    reason = f"not applicable to {capabilities.trace}: needs {', '.join(missing)}" + (f" ({why})" if why else "")
    return reason, "; ".join(CAPABILITIES[m] for m in missing)


@dataclass(frozen=True)
class ContractTable:
    """One of the contract's tables: the variable a source's rules file assigns its files to (a list, empty where the
    source lacks it), the capabilities it serves, and its columns (name → Polars type; a source may add others)."""

    variable: str
    serves: tuple[str, ...]
    columns: Mapping[str, pl.DataType]
    about: str
    #: The column whose least and greatest values give the span read: a time in µs, or a ``window``.
    time: str | None = None


_I64, _I32, _F32, _F64 = pl.Int64(), pl.Int32(), pl.Float32(), pl.Float64()
_KEY = {"job_id": _I64, "task_index": _I64}  # an entity: its group and its index in the group

#: The canonical tables, by name. Times are µs on the canonical clock, usage and requests shares of a machine.
TABLES: dict[str, ContractTable] = {
    "usage_records": ContractTable(
        "USAGE_RECORDS", ("entities", "usage_series"),
        {"start_time": _I64, "end_time": _I64, **_KEY, "machine_id": _I64, "cpu_rate": _F32,
         "canonical_memory_usage": _F32, "maximum_cpu_rate": _F32, "sampled_cpu_usage": _F32, "bucket": _I32},
        "usage records: an entity's mean CPU (cpu_rate), its sampled or maximum usage (sampled_cpu_usage; which one "
        "the capabilities' usage says) and memory over [start_time, end_time), in the entity's bucket", "start_time"),
    "entity_pieces": ContractTable(
        "ENTITY_PIECES", ("entities",),
        {**_KEY, "first_time": _I64, "priority": _I64, "scheduling_class": _I64, "cpu_request": _F32,
         "memory_request": _F32, "first_schedule": _I64, "last_event": _I64, "failing": pl.Boolean(),
         **{f"n_{e.name.lower()}": _I32 for e in EventType}, "bucket": _I32},
        "entity pieces: per entity and file read, its first and last event, requests, priority, failing flag and "
        "event counts (pieces of one entity are combined by the reduce)", "first_time"),
    "group_windows": ContractTable(
        "GROUP_WINDOWS", ("entities", "usage_series", "priorities"),
        {"job_id": _I64, "window": _I32, "n_tasks": _I32, "n_records": _I32, "cpu_sum": _F64, "mem_sum": _F64,
         "cpu_p10": _F64, "cpu_p90": _F64},
        "group × window aggregates: entities and records of a group in a window, their CPU and memory sums and "
        "the 10th and 90th percentiles of entity CPU (Beaumont §3, §4.3, §5)", "window"),
    "sampled_windows": ContractTable(
        "SAMPLED_WINDOWS", ("usage_series", "memory_usage"),
        {"window": _I32, **_KEY, "machine_id": _I64, "cpu_rate": _F32, "canonical_memory_usage": _F32},
        "the usage records of a few windows drawn per day, CPU beside memory (Beaumont §4.2)", "window"),
    "group_events": ContractTable(
        "GROUP_EVENTS", ("group_events",),
        {"job_id": _I64, "submit_us": _I64, "schedule_us": _I64, "end_us": _I64, "end_event": _I64},
        "group pieces: per group and file read, its first submission and scheduling, its last end and the "
        "end's EventType (Beaumont §5.1)", "submit_us"),
    "machine_events": ContractTable(
        "MACHINE_EVENTS", ("machine_events",),
        {"time": _I64, "machine_id": _I64, "event_type": _I64},
        "machine events in the trace's order: MachineEventType ADD, REMOVE, UPDATE (Beaumont §6)", "time"),
    "window_moments": ContractTable(
        "WINDOW_MOMENTS", ("window_distributions",),
        {**_KEY, "window": _I32, "sampled_cpu_usage": _F32, "cpu_rate": _F32, "within_mean": _F32, "within_var": _F32},
        "per entity and window: its sampled usage and mean, and the mean and variance of all its 1-s samples in the "
        "window, from their distribution", "window"),
    "placement_events": ContractTable(
        "PLACEMENT_EVENTS", ("placements",),
        {"time": _I64, **_KEY, "machine_id": _I64, "event_type": _I64},
        "entity events in the trace's order with the machine they concern (EventType), up to the last instant the "
        "co-location analysis asks for", "time"),
}


def check_table(table: str, schema: Mapping[str, pl.DataType], path: str | Path) -> None:
    """Refuse a file of the contract's ``table`` whose ``schema`` lacks one of its columns or types one otherwise."""
    expected = TABLES[table].columns
    missing = [c for c in expected if c not in schema]
    wrong = [f"{c} is {schema[c]}, not {t}" for c, t in expected.items() if c in schema and schema[c] != t]
    if missing or wrong:
        problems = ([f"lacks column(s) {missing}"] if missing else []) + wrong
        raise TraceFormatError(path, f"not the contract's {table} table: {'; '.join(problems)}")


class TraceFormatError(ValueError):
    """A trace file that does not follow the schema: names the file and, where known, the line."""

    def __init__(self, path: str | Path, message: str, line: int | None = None):
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")
