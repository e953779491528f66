"""Trace sources behind one contract (:mod:`colocate.sources.contract`), and their registry.

A source is the one place that knows a trace: where its files are, which of them a run reads, what the trace
records (its :class:`~colocate.sources.contract.Capabilities`), how its priorities map to the papers' classes, and
which rules file (its ``family``: ``workflow/rules/<family>.smk``) maps its files to the contract's tables. The
workflow builds the run's source once, from ``trace.source``, by :func:`resolve`; every rule asks it rather than
branching on the source's name.

The built-in sources are the modules of this package (each registers its classes on import; :func:`builtins`);
a ``module:Class`` in ``trace.source`` names a plug-in source, checked against :class:`Source`.

This package is plumbing, not science: it names and lists a trace's files and maps them to the contract's tables;
the analyses read only those tables.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from colocate.registry import ConfigError, Registry, is_plugin, protocol_problems
from colocate.sources.contract import CAPABILITIES, Capabilities, TableCoverage

__all__ = ["Source", "SourceBase", "SOURCES", "LOCAL_LAYOUTS", "register_local", "LocalCopy", "resolve", "families", "builtins", "Setting"]


@runtime_checkable
class Source(Protocol):
    """What the workflow asks of a trace source (see the module docstring)."""

    name: str  # its trace.source value
    family: str  # the rules file that maps its files: workflow/rules/<family>.smk
    paper_trace: bool  # the papers' own trace (Google 2011): its rows are judged against the papers
    tables: tuple[str, ...]  # the raw tables it may read

    verify: bool  # its files are checked against a SHA256SUM before they are mapped
    is_model: bool  # a model of a trace (the synthetic one), not a trace
    priority_classes: Mapping[str, tuple[int, ...]]  # the contract's class -> the trace's priorities in it
    placement_needs: tuple[str, ...] | None  # what the trace-driven placement needs of it (None: it maps none)
    config_defaults: Mapping[str, Any]  # its defaults for other config sections

    @property
    def root(self) -> str: ...

    @property
    def run(self) -> str: ...

    @property
    def rules(self) -> str: ...

    @property
    def span_windows(self) -> int | None: ...

    def stems(self, table: str) -> list[str]: ...

    def file(self, table: str, stem: str) -> str: ...

    def whole(self, table: str) -> bool: ...

    def capabilities(self) -> Capabilities: ...

    def check(self) -> None: ...


class Setting:
    """What a source is built from: the config's ``trace`` section, the scale, the workflow's directory and the
    synthetic model's section (the synthetic source's only)."""

    def __init__(self, trace: Mapping[str, Any], scale: str, basedir: str | os.PathLike,
                 synthetic: Mapping[str, Any] | None = None) -> None:
        self.trace, self.scale, self.basedir, self.synthetic = trace, scale, Path(basedir), synthetic or {}


class SourceBase:
    """Shared behaviour of the built-in sources; a subclass sets the class attributes and :meth:`_stems`."""

    name = ""
    family = ""
    paper_trace = False
    tables: tuple[str, ...] = ()
    #: The trace as summary rows name it ("not applicable to <label>").
    label = ""
    #: Whether its files are checked against a SHA256SUM before they are mapped (a copy nobody checked yet).
    verify = False
    #: Whether it is a model of a trace rather than a trace (the synthetic model's causes explain its rows).
    is_model = False
    #: What the trace-driven placement needs of the source, whose rules file maps its requests and machines
    #: (placement/trace/requests.parquet, nodes.parquet, tables/placement_trace_workload.csv); None: it maps none.
    placement_needs: tuple[str, ...] | None = None
    #: The source's defaults for other config sections, over the scale's preset and under the user's config: where
    #: an analysis's own default does not suit the trace (each says why).
    config_defaults: Mapping[str, Any] = {}
    #: Priorities → the contract's classes (class → priorities); empty where the trace has no priorities.
    priority_classes: Mapping[str, tuple[int, ...]] = {}
    #: Where a table's readings lie relative to the root: {table}/{stem}.csv.gz unless a source says otherwise.
    suffix = ".csv.gz"
    #: What the trace calls its files (the 2011 trace's are shards).
    file_word = "files"
    #: Whether each file covers a stretch of time (False: each holds rows from across the span, as 2019's shards).
    files_in_time_order = True

    def __init__(self, setting: Setting) -> None:
        self.setting = setting
        self.trace = setting.trace
        self.scale = setting.scale

    # ------------------------------------------------------------------ files
    @property
    def rules(self) -> str:
        """The rules file that reads and maps this source's trace (a plug-in names its own, by absolute path)."""
        return str(self.setting.basedir / "workflow" / "rules" / f"{self.family}.smk")

    @property
    def root(self) -> str:
        raise NotImplementedError

    @property
    def run(self) -> str:
        """The run's default name (results/<run>/): <source>-<scale>."""
        return f"{self.name}-{self.scale}"

    def stems(self, table: str) -> list[str]:
        """Stems of ``table``'s files this run reads (none for a table the source does not have)."""
        return self._stems(table) if table in self.tables else []

    def _stems(self, table: str) -> list[str]:
        raise NotImplementedError

    def file(self, table: str, stem: str) -> str:
        return f"{self.root}/{table}/{stem}{self.suffix}"

    def found(self, table: str, pattern: str) -> list[str]:
        """Stems of the files of ``table`` under the root matching ``pattern`` (a glob), sorted."""
        return sorted(Path(p).name.removesuffix(self.suffix) for p in glob.glob(f"{self.root}/{table}/{pattern}"))

    def total(self, table: str) -> int | None:
        """How many files ``table`` has in the whole trace (None: not known)."""
        return None

    def coverage(self, table: str) -> TableCoverage:
        stems = self.stems(table)
        return TableCoverage(table, len(stems), self.total(table), tuple(stems), tuple(self.maps.get(table, ())))

    def whole(self, table: str) -> bool:
        """Whether this run reads every file of ``table``."""
        return bool(self.stems(table)) and self.coverage(table).whole

    # ------------------------------------------------------------------ what the trace records
    #: Capabilities by the table that gives them.
    gives: Mapping[str, tuple[str, ...]] = {}
    #: The contract's tables (colocate.sources.contract.TABLES) each of its tables is mapped to, by its rules file.
    maps: Mapping[str, tuple[str, ...]] = {}
    #: Why the trace lacks a capability it never has (beyond a table not read).
    never_why: Mapping[str, str] = {}
    entity, group, usage, units = "task", "job", "inst", ""

    @property
    def span_windows(self) -> int | None:
        return None

    @property
    def rendered_windows(self) -> int | None:
        """The windows that hold records (a synthetic slice renders only its first days): the span by default."""
        return self.span_windows

    def capabilities(self) -> Capabilities:
        has, why = set(), dict(self.never_why)
        for table, caps in self.gives.items():
            if self.stems(table):
                has.update(caps)
        for table, caps in self.gives.items():
            for cap in caps:
                if cap not in has and cap not in why:
                    why[cap] = self.missing_why(table)
        for cap, what in CAPABILITIES.items():  # what no table of the trace gives and the source does not explain
            if cap not in has and cap not in why:
                why[cap] = f"{self.label or 'the trace'} does not record {what}"
        return Capabilities(trace=self.label, has=frozenset(has), entity=self.entity, group=self.group,
                            usage=self.usage, units=self.units, span_windows=self.span_windows,
                            coverage=tuple(self.coverage(t) for t in self.tables),
                            lacks_why={k: v for k, v in why.items() if k not in has},
                            files_in_time_order=self.files_in_time_order)

    def missing_why(self, table: str) -> str:
        """Why this run reads no file of ``table`` (the trace may have it: this copy or selection does not)."""
        return f"no {self.file_word} of {table} under {self.root_label()}"

    def root_label(self) -> str:
        """The root as a message may show it: relative to the workflow's directory where it lies inside it."""
        try:
            return str(Path(self.root).resolve().relative_to(self.setting.basedir.resolve()))
        except ValueError:
            return str(self.root)

    def check(self) -> None:
        """Raise a ValueError naming the config key if the source cannot work as configured."""

    #: The source of a local directory that no other source recognises.
    local_default = False

    @classmethod
    def recognises(cls, path: Path) -> bool:
        """Whether a local directory is laid out as this source's trace (for ``trace.source: local``)."""
        return False


class LocalCopy:
    """A trace already on disk, in the directory ``trace.path`` (``trace.source: local``): its run is
    local-<directory name>. Mixed into a source ahead of its trace's class."""

    name = "local"

    @property
    def root(self) -> str:
        return self.trace["path"]

    @property
    def run(self) -> str:
        return f"local-{Path(self.root).resolve().name}"


#: The built-in sources by their trace.source value.
SOURCES: Registry[SourceBase] = Registry("trace source", Source, key="name")
#: The sources a local directory may hold (``trace.source: local``), by layout: the first that recognises the
#: directory reads it, else the one marked ``local_default``.
LOCAL_LAYOUTS: list[type[SourceBase]] = []


def register_local(cls: type[SourceBase]) -> type[SourceBase]:
    """Class decorator: a source of a local directory, chosen by :meth:`SourceBase.recognises`."""
    problems = protocol_problems(cls, Source)
    if problems:
        raise TypeError(f"{cls.__name__} is not a trace source: {'; '.join(problems)}")
    LOCAL_LAYOUTS.append(cls)
    return cls


def builtins() -> list[str]:
    """Import every module of this package but the contract (each registers its sources): their names."""
    import importlib
    import pkgutil

    names = [m.name for m in pkgutil.iter_modules(__path__) if m.name != "contract"]
    for name in names:
        importlib.import_module(f"{__name__}.{name}")
    return names


def config_defaults(trace: Mapping[str, Any]) -> Mapping[str, Any]:
    """The config defaults of the source ``trace`` (the config's trace section) names; none for ``local`` (its layout
    is known only once its directory is read) and for an unknown name (refused later, naming the key)."""
    builtins()

    name = trace.get("source", "synthetic")
    if name == "local" and trace.get("path") and Path(trace["path"]).is_dir():
        return next((c.config_defaults for c in LOCAL_LAYOUTS if c.recognises(Path(trace["path"]))), {})
    if name in SOURCES or is_plugin(name):
        return SOURCES.resolve(name, "config key trace.source").config_defaults
    return {}


def families() -> list[str]:
    """The built-in sources' families, each with its rules file (workflow/rules/<family>.smk)."""
    builtins()

    return sorted({cls.family for cls in (*SOURCES.classes(), *LOCAL_LAYOUTS)})


def resolve(setting: Setting) -> SourceBase:
    """The run's source for ``setting.trace['source']``: a built-in name, ``local`` (the source whose layout the
    directory ``trace.path`` has), or a ``module:Class`` plug-in. Errors name the config key."""
    # the built-in sources register themselves on import
    builtins()

    name = setting.trace.get("source", "synthetic")
    if name == "local":
        path = setting.trace.get("path")
        if not path:
            raise ConfigError("config key trace.path: required when trace.source is 'local'")
        if not Path(path).is_dir():
            raise ConfigError(f"config key trace.path: {path!r} is not a directory")
        cls = next((c for c in LOCAL_LAYOUTS if c.recognises(Path(path))),
                   next(c for c in LOCAL_LAYOUTS if c.local_default))
    elif is_plugin(name) or name in SOURCES:
        cls = SOURCES.resolve(name, "config key trace.source")
    else:
        raise ConfigError(f"config key trace.source: unknown source {name!r}; known: {', '.join(SOURCES.names())}, "
                          "local, or a plug-in module:Class")
    source = cls(setting)
    source.check()
    return source
