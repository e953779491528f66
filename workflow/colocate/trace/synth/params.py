"""Parameters of the synthetic trace model (:class:`SynthParams`): defaults from the papers, and their constraints.

Every number of the model is a field of :class:`SynthParams`, whose metadata
names its source (Beaumont et al. 2015, Janus & Rzadca 2017, Reiss et al.
SoCC'12) and declares its constraints: a JSON-schema fragment (types, bounds,
shapes) and, for what JSON schema cannot say (weights summing to 1, tables
starting at quantile 0, per-class mappings with every class), a named check;
rules between fields are :attr:`SynthParams.RULES`. :meth:`SynthParams.from_dict`
builds it from the ``synthetic`` config section and every invalid value raises
``ValueError`` naming its key. The config schema
``workflow/schemas/synthetic.schema.yaml`` is generated from the same metadata
(:mod:`colocate.trace.synth.schema`). This module also holds the model's
vocabularies (classes, shapes, failing events) and time units, shared by the
other modules of the package.
"""

# ruff: noqa: RUF009  (_f returns a dataclasses.field, evaluated once per class like field() itself)
from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import jsonschema

from colocate.trace import PRIORITY_CLASSES, TRACE_START_US, WINDOW_US, EventType

#: Names of the priority classes of Beaumont et al. §1.1 (colocate.trace.PRIORITY_CLASSES), lowest first.
CLASS_NAMES = tuple(PRIORITY_CLASSES)
#: Inst shape families (Janus & Rzadca Fig 4): gamma (exponential-like or peaked),
#: zero-inflated (mostly near zero), bimodal (mixed).
SHAPES = ("gamma", "zero_inflated", "bimodal")
#: Memory-vs-CPU categories of Beaumont et al. §4.2.
MEMORY_SHAPES = ("flat", "two_cluster", "slope")
#: Failing events (Janus & Rzadca §3.1).
FAILING = ("evict", "fail", "kill", "lost")
_FAIL_CODE = {"evict": EventType.EVICT, "fail": EventType.FAIL, "kill": EventType.KILL, "lost": EventType.LOST}

_MIN_US = 60_000_000
_S_US = 1_000_000
_DAY_US = 86_400 * _S_US
_HOUR_US = 3_600 * _S_US
_WINDOWS_PER_DAY = _DAY_US // WINDOW_US


# ============================================================================ constraints: JSON-schema fragments
# What JSON schema can say about a field (type, bounds, shape); the config schema and SynthParams both use it.


Bound = float | None


def number(lo: Bound = None, hi: Bound = None, *, gt: Bound = None, lt: Bound = None) -> dict:
    """A number in [lo, hi] (``gt``/``lt``: exclusive bounds); ``None`` leaves a side open."""
    bounds = {"minimum": lo, "exclusiveMinimum": gt, "maximum": hi, "exclusiveMaximum": lt}
    return {"type": "number", **{k: v for k, v in bounds.items() if v is not None}}


def integer(lo: Bound = None, hi: Bound = None, *, enum: tuple[int, ...] | None = None) -> dict:
    """An integer in [lo, hi], or one of ``enum``."""
    if enum is not None:
        return {"type": "integer", "enum": list(enum)}
    return {**number(lo, hi), "type": "integer"}


def array(item: dict, *, n: int | None = None, max_items: int | None = None, unique: bool = False) -> dict:
    """A list of ``item`` (exactly ``n`` of them, or at most ``max_items``; distinct if ``unique``)."""
    out = {"type": "array", "items": item}
    if n is not None:
        out.update(minItems=n, maxItems=n)
    if max_items is not None:
        out["maxItems"] = max_items
    if unique:
        out["uniqueItems"] = True
    return out


def pair(first: dict, second: dict | None = None) -> dict:
    """Two values: both ``first``, or ``first`` then ``second``."""
    if second is None:
        return array(first, n=2)
    return {"type": "array", "prefixItems": [first, second], "minItems": 2, "maxItems": 2}


def rows(*columns: dict, min_items: int = 1) -> dict:
    """A table: at least ``min_items`` rows, each a list with one value per column."""
    width = len(columns)
    row = {"type": "array", "prefixItems": list(columns), "minItems": width, "maxItems": width}
    return {"type": "array", "items": row, "minItems": min_items}


def mapping(names: tuple[str, ...], value: dict | Callable[[str], dict]) -> dict:
    """An object with some of the keys ``names`` (``value``: the schema of each, or a function of the key)."""
    props = {k: value(k) if callable(value) else value for k in names}
    return {"type": "object", "additionalProperties": False, "properties": props}


def by_class(value: dict | Callable[[str], dict]) -> dict:
    """A mapping over the priority classes (a config may name a subset: the others keep their defaults)."""
    return mapping(CLASS_NAMES, value)


#: [[quantile, value], ...]: the quantile in [0, 1], the value positive (see :func:`quantile_table`).
QUANTILES = rows(number(0, 1), number(1e-12, 1_000_000_000_000), min_items=2)
#: Log-normal mixture [[weight, mu, sigma], ...] (see :func:`mixture`).
MIXTURE = rows(number(0, 1), number(-50, 50), number(1e-6, 20))


# ============================================================================ constraints: checks
# What JSON schema cannot say. A check gets a value that already fits its field's schema, and its key
# (``days``, ``job_cpu_lognormal.gratis``); it raises ValueError naming ``synthetic.<key>``.

Check = Callable[[Any, str], None]


def _bad(key: str, msg: str) -> ValueError:
    return ValueError(f"synthetic.{key}: {msg}")


def increasing(v: list, key: str) -> None:
    """A pair [low, high]: the first value below the second."""
    if not v[0] < v[1]:
        raise _bad(key, "the first value must be below the second")


def sums_to_one(v: list | dict, key: str) -> None:
    """Shares (a list, or the values of a mapping) that sum to 1."""
    if abs(sum(v.values() if isinstance(v, dict) else v) - 1) > 1e-6:
        raise _bad(key, "shares must sum to 1")


def mixture(v: list, key: str) -> None:
    """A log-normal mixture whose component weights sum to 1."""
    if abs(sum(r[0] for r in v) - 1) > 1e-6:
        raise _bad(key, "component weights must sum to 1")


def weighted(what: str = "weights") -> Check:
    """Rows whose last column weighs them: the weights must not all be 0."""

    def check(v: list, key: str) -> None:
        if sum(r[-1] for r in v) <= 0:
            raise _bad(key, f"the {what} must not all be 0")

    return check


def rises(first: str, second: str | None = None) -> Check:
    """Rows whose first column increases strictly (and whose second, if named, never decreases)."""

    def check(v: list, key: str) -> None:
        a, b = [r[0] for r in v], [r[1] for r in v]
        if any(y <= x for x, y in itertools.pairwise(a)) or (second and any(y < x for x, y in itertools.pairwise(b))):
            also = f" and the {second} must not decrease" if second else ""
            raise _bad(key, f"the {first} must increase strictly{also}")

    return check


def quantile_table(full: bool = False) -> Check:
    """[[quantile, value], ...] from quantile 0 (to 1 if ``full``); quantiles increase strictly, values never fall."""
    monotone = rises("quantiles", "values")

    def check(v: list, key: str) -> None:
        if v[0][0] != 0:
            raise _bad(key, "the first quantile must be 0")
        if full and v[-1][0] != 1:
            raise _bad(key, "the last quantile must be 1")
        monotone(v, key)

    return check


def exactly(names: tuple[str, ...], each: Check | None = None) -> Check:
    """A mapping with exactly the keys ``names``; ``each`` checks every value (under ``<key>.<name>``)."""

    def check(v: dict, key: str) -> None:
        if set(v) != set(names):
            raise _bad(key, f"expected a mapping with the keys {', '.join(names)}")
        if each is not None:
            for k in names:
                each(v[k], f"{key}.{k}")

    return check


def shares(names: tuple[str, ...]) -> Check:
    """A mapping with exactly the keys ``names`` whose shares sum to 1."""
    keys = exactly(names)

    def check(v: dict, key: str) -> None:
        keys(v, key)
        sums_to_one(v, key)

    return check


class Rule(NamedTuple):
    """A constraint between fields: ``holds(params)`` must be true, else ``synthetic.<key>: <message>``."""

    key: str
    holds: Callable[[Any], bool]
    message: str


# ============================================================================ parameters


def _f(default: Any, doc: str, schema: dict, *, check: Check | None = None, scaled: bool = False) -> Any:
    """A dataclass field: its (deep-copied) default, its docstring, and its constraints.

    ``schema`` is the field's JSON-schema fragment, ``check`` what the fragment cannot say, ``scaled``
    marks a field that the scale preset sets (scales.yaml); all of it lives in the field's metadata.
    """
    meta = {"doc": doc, "schema": schema, "check": check, "scaled": scaled}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: _copy(d), metadata=meta)
    return field(default=default, metadata=meta)


def _copy(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_copy(v) for v in x]
    return x


@dataclass(frozen=True)
class SynthParams:
    """Parameters of the workload model; defaults are the papers' values at full trace scale.

    Build it from the ``synthetic`` config section with :meth:`from_dict`.
    Scale-dependent keys (``days``, ``large_jobs_per_day``, ``job_size_scale``,
    ``max_tasks_per_job``, ``dominant_alive_share``, …) are set per scale in
    the config; the docstring of each field (``SynthParams.describe()``) names
    its source. Each field is declared by :func:`_f` with its default, its
    docstring and its constraints (a JSON-schema fragment and an optional
    check); :attr:`RULES` relate fields. Construction validates them all, and
    ``python -m colocate.trace.synth.schema`` writes the config schema from them.
    """

    # ---- extent
    days: float = _f(29.0, "Trace length in days (Beaumont et al. §1.1: 29 days).", number(1 / 24, 3650), scaled=True)
    slice_days: float | None = _f(
        None,
        "Render only the first slice_days of the trace: the jobs and tasks alive then, sampled from the whole "
        "days-long model, so that a short slice keeps the full trace's density (bench/paper_scale.py: 0.077 days per "
        "shard of the real 2.4 M task_usage rows). The long-term pattern keeps the whole trace's period; failures are drawn "
        "within each task's life in the slice (so a long task fails there more often than in a slice of the whole "
        "trace), and machine failures and mass removals fall within the slice. Unset: the whole trace.",
        {"anyOf": [{"type": "null"}, number(1 / 288, 3650)]},
    )
    machines: int = _f(12583, "Number of machines (Beaumont et al. §1.1: 12,583).", integer(1, 10_000_000), scaled=True)
    machine_types: list = _f(
        [
            [6732, "B", 0.5, 0.4995],
            [3863, "B", 0.5, 0.2493],
            [1001, "B", 0.5, 0.749],
            [795, "C", 1.0, 1.0],
            [126, "A", 0.25, 0.2498],
            [52, "B", 0.5, 0.1241],
            [5, "B", 0.5, 0.03085],
            [5, "B", 0.5, 0.9678],
            [3, "C", 1.0, 0.4995],
            [1, "B", 0.5, 0.06158],
        ],
        "Machine configurations [count, platform, CPUs, memory] (Reiss et al. SoCC'12, Table 1); "
        "counts are proportions, scaled to `machines`.",
        rows(integer(0), {"type": "string", "minLength": 1}, number(gt=0, hi=1), number(gt=0, hi=1)),
    )
    # ---- machine removals (Beaumont §6)
    machine_failure_rate: float = _f(
        0.747e-4,
        "Removals per machine per 5-minute window outside maintenance bursts and outstanding events (Beaumont et al. "
        "§6: 0.94 per window over the 8314 remaining windows of 12,583 machines; with the maintenance windows the "
        "mean is 1.005, the paper's 0.8e-4).",
        number(0, 0.1),
    )
    removal_dispersion: float = _f(
        1.41,
        "Variance/mean of those removals per window (Beaumont et al. §6 table: 1.41 over the 8314 remaining windows, "
        "so windows with > 5 removals are 'much more present than under Poisson'); 1 gives Poisson counts. Counts are "
        "negative binomial: a per-window rate drawn from a Gamma (correlated failures).",
        number(1, 100),
    )
    maintenance_windows_per_day: float = _f(
        38 / 29, "Maintenance bursts (windows with >= 10 removals) per day (Beaumont et al. §6: 38 in 29 days).",
        number(0, 288),
    )
    maintenance_burst_sizes: list = _f(
        [[10, 5], [11, 5], [13, 2], [14, 3], [15, 7], [16, 1], [17, 2], [18, 3], [19, 4], [20, 1], [23, 1], [25, 3], [30, 1]],
        "[removals in the window, number of windows] of the bursts (Beaumont et al. §6 table, tail >= 10); "
        "a burst removes that many machines minus the ~1 background removal (at least 10).",
        rows(integer(1), integer(0)), check=weighted("window counts"),
    )
    removal_duration_quantiles: list = _f(
        [[0.0, 0.5], [0.3, 6.0], [0.6, 17.0], [0.75, 60.0], [0.85, 360.0], [0.93, 2880.0], [0.97, 20000.0]],
        "Removal durations [quantile, minutes], log-linear between points (Beaumont et al. Fig 7: 60% back "
        "within 17 min, heavy tail); the mass above the last quantile never comes back.",
        QUANTILES, check=quantile_table(),
    )
    mass_removal_events: int = _f(
        2,
        "Outstanding events where many machines are removed at 30 s intervals and then all re-added together "
        "(Beaumont §6: 'all reinserted within a few seconds').",
        integer(0, 100),
    )
    mass_removal_share: float = _f(
        0.0116,
        "Share of machines removed in each mass-removal event (Beaumont §6: the three events lift the mean removals "
        "per window from 1.005 to 1.07; on the real machine_events the two mass events remove 84 and 208 "
        "machines, ~146 each).",
        number(0, 1),
    )
    mass_removal_batches: int = _f(
        60,
        "Batches of a mass-removal event, removed at mass_removal_interval_s intervals (real trace: the machines go "
        "over 15-45 minutes).",
        integer(1, 100_000),
    )
    mass_removal_interval_s: float = _f(
        30.0, "Seconds between batches of a mass removal (Beaumont §6: 30 s).",
        number(0, 3600),
    )
    mass_removal_down_s: float = _f(
        1200.0,
        "Seconds from a mass removal's last batch to the re-add of all its machines (real trace: 0 to 80 minutes).",
        number(0, 86400),
    )
    mass_removal_readd_spread_s: float = _f(
        60.0,
        "The machines of a mass removal are re-added within this many seconds of each other (Beaumont §6: 'all "
        "reinserted within a few seconds'; real trace: 47-84 machines within about a minute).",
        number(0.001, 3600),
    )
    flapping_events: int = _f(
        1, "Outstanding events where a subset is removed and re-added many times in a row (Beaumont §6).",
        integer(0, 100),
    )
    flapping_share: float = _f(
        0.0017, "Share of machines in a flapping event (real trace: 21 machines, 269 removals over 9.5 hours).",
        number(0, 1),
    )
    flapping_cycles: int = _f(
        13, "Remove/re-add cycles of a flapping machine (real trace: 12.8 on average).",
        integer(1, 1000),
    )
    flapping_down_minutes: list = _f(
        [1.0, 20.0],
        "Bounds [min, max] of a flapping machine's down time per cycle, minutes (uniform; real median 10).",
        pair(number(1 / 60, 1440)), check=increasing,
    )
    flapping_up_minutes: list = _f(
        [2.0, 20.0],
        "Bounds [min, max] of a flapping machine's up time between cycles, minutes (uniform; real: 1-29, median 6.6).",
        pair(number(1 / 60, 1440)), check=increasing,
    )
    flapping_readd_spread_s: float = _f(
        60.0,
        "The flapping machines' last re-adds fall within this many seconds of each other (Beaumont §6: 'until all "
        "of them are eventually reinserted within a few minutes'; real trace: 17 of 21 within a minute).",
        number(0.001, 3600),
    )
    # ---- jobs
    large_jobs_per_day: dict = _f(
        {"gratis": 328.0, "other": 534.0, "production": 32.0, "monitoring": 1.0, "infrastructure": 0.5},
        "Large (dominant-like) jobs per day and class. Full-trace values give Beaumont §3's 25,839 dominant jobs "
        "with production carrying most of the CPU (Fig 1); monitoring/infrastructure are rare.",
        by_class(number(0, 10_000_000)), check=exactly(CLASS_NAMES), scaled=True,
    )
    job_size_scale: float = _f(
        1.0,
        "Factor on every large job's total CPU and memory (1 = Beaumont Table 2); smaller scales shrink task counts.",
        number(1e-9, 1_000_000), scaled=True,
    )
    job_cpu_lognormal: dict = _f(
        {
            "gratis": [[0.68, 1.79, 1.68], [0.32, 1.23, 0.41]],
            "other": [[0.11, 1.02, 0.30], [0.89, 1.94, 1.12]],
            "production": [[1.0, 1.24, 1.33]],
            "monitoring": [[1.0, -1.0, 1.0]],
            "infrastructure": [[1.0, -1.0, 1.0]],
        },
        "Log of a large job's mean total CPU: mixture [[weight, mu, sigma], ...] per class (Beaumont Table 2; "
        "natural log; monitoring/infrastructure are not in the table).",
        by_class(MIXTURE), check=exactly(CLASS_NAMES, mixture),
    )
    job_memory_lognormal: dict = _f(
        {
            "gratis": [[0.69, -1.36, 1.28], [0.31, 1.98, 1.08]],
            "other": [[0.88, 0.51, 1.37], [0.12, 0.99, 0.31]],
            "production": [[0.60, -0.04, 1.08], [0.40, 2.54, 0.81]],
            "monitoring": [[1.0, -1.5, 1.0]],
            "infrastructure": [[1.0, -1.5, 1.0]],
        },
        "Log of a large job's mean total memory: mixture [[weight, mu, sigma], ...] per class (Beaumont Table 2).",
        by_class(MIXTURE), check=exactly(CLASS_NAMES, mixture),
    )
    job_cpu_memory_correlation: float = _f(
        0.7,
        "Gaussian-copula correlation of a job's CPU and memory sizes (keeps per-task memory plausible; marginals stay Table 2's).",
        number(-0.99, 0.99),
    )
    job_duration_quantiles: dict = _f(
        {
            "gratis": [[0.0, 1.0], [0.25, 10.0], [0.5, 25.0], [0.75, 65.0], [0.9, 185.0], [0.95, 365.0], [0.99, 1806.0], [1.0, 41760.0]],
            "other": [[0.0, 1.0], [0.25, 15.0], [0.5, 25.0], [0.75, 55.0], [0.9, 120.0], [0.95, 255.0], [0.99, 930.0], [1.0, 20000.0]],
            "production": [[0.0, 5.0], [0.25, 170.0], [0.5, 1902.0], [0.75, 10051.0], [0.844, 41760.0]],
            "monitoring": [[0.0, 60.0], [0.5, 41760.0]],
            "infrastructure": [[0.0, 60.0], [0.5, 41760.0]],
        },
        "Job durations [quantile, minutes] per class, log-linear between points (Beaumont Table 3); the mass above the "
        "last quantile runs the whole trace (production: 15.6%). End points (q=0, q=1) are extrapolations matching the means.",
        by_class(QUANTILES), check=exactly(CLASS_NAMES, quantile_table()),
    )
    job_priorities: dict = _f(
        {
            "gratis": [[0, 0.78], [1, 0.22]],
            "other": [[2, 0.98], [8, 0.02]],
            "production": [[9, 1.0]],
            "monitoring": [[10, 1.0]],
            "infrastructure": [[11, 1.0]],
        },
        "[priority, weight] per class (priority classes of Beaumont §1.1; weights from task_events part 1-2 of the trace).",
        by_class(lambda c: rows(integer(enum=PRIORITY_CLASSES[c]), number(0, 1_000_000_000))),
        check=exactly(CLASS_NAMES, weighted()),
    )
    scheduling_class_shares: list = _f(
        [0.68, 0.10, 0.21, 0.01], "Shares of scheduling classes 0-3 (task_events parts 1-2 of the real trace).",
        array(number(0, 1), n=4), check=sums_to_one,
    )
    users: int = _f(930, "Number of distinct users (the 2011 trace has about 930).", integer(1, 10_000_000))
    # ---- tasks of large jobs
    task_cpu_mean: float = _f(
        0.027, "Mean CPU of a long task (Janus Table 1: mean total 0.27 for N=10 long tasks).",
        number(1e-6, 1),
    )
    task_cpu_mean_sigma: float = _f(
        0.8, "Log-sd across jobs of a job's per-task mean CPU (spread of means in Janus Fig 3).",
        number(0, 5),
    )
    task_balance_sigma: float = _f(
        0.15,
        "Log-sd of task means within a job other than a large production job (Beaumont §4.3, Fig 5: for about half "
        "the jobs the interdecile ratio of task CPU stays below 2 in 80% of windows; 0.15 alone gives a ratio of 1.5).",
        number(0, 5),
    )
    production_task_balance_sigma: float = _f(
        0.27,
        "Log-sd of task means within a large production job. Production tasks follow their job's patterns and "
        "common noise, so unlike other classes' tasks their own noise barely spreads them: this alone sets how "
        "many production jobs keep an interdecile ratio of task CPU below 2 (Beaumont Fig 5: 52%; 0.15 gives 86% and "
        "0.35 gives 32% at the default scale).",
        number(0, 5),
    )
    avg_floor_share: float = _f(
        0.05,
        "Smallest 5-minute average (CPU rate) of a running large task, as a share of its mean: the per-task reshaping "
        "to Janus's CVs and skewness would clip a low tail at exactly 0 (12-23% of records; the real sample window "
        "of task_usage part 0 has 2.7% exact zeros), which makes a job's tasks look unbalanced (Beaumont Fig 5).",
        number(0, 1),
    )
    job_common_fluctuation: float = _f(
        1.0,
        "Share of a large task's load-level variance common to all tasks of its job (0: independent tasks). The "
        "real trace's tasks of a job move together (Beaumont §4.3: balanced load; in the sample window of "
        "task_usage part 0 the median within-job interdecile ratio of CPU is 1.34), while each task keeps Janus's "
        "per-task variability; 1 leaves each task's own law unchanged.",
        number(0, 1),
    )
    task_cpu_max: float = _f(0.5, "Upper bound of a task's mean CPU.", number(1e-4, 1))
    tasks_per_machine: float = _f(
        10.65,
        "Mean running tasks per busy machine at the trace start: tasks are placed uniformly on a subset of the "
        "machines that carries this density (the real trace's, task_events part 0: 10.65, median 10, p10 7, p90 15, measured by "
        "colocate.analysis.colocation). At most every machine is used; machine failures keep them all.",
        number(0.01, 1_000_000),
    )
    max_tasks_per_job: int = _f(
        49983, "Most tasks in a job (Beaumont §3: the largest dominant job has 49,983).",
        integer(1, 10_000_000), scaled=True,
    )
    # ---- small jobs and the targets they are derived from
    short_task_share: float = _f(
        0.95, "Share of tasks shorter than 2 hours (Janus §3.1: 95%); sets the small-job count.",
        number(0, 0.999),
    )
    dominant_alive_share: float = _f(
        0.058, "Large jobs / alive jobs per window (Beaumont Table 1: 0.058); sets the small jobs' durations.",
        number(1e-4, 1), scaled=True,
    )
    dominant_cpu_share: float = _f(
        0.947, "CPU share of large jobs per window (Beaumont Table 1: 0.947); sets small-task CPU.",
        number(1e-3, 1),
    )
    dominant_memory_share: float = _f(
        0.890, "Memory share of large jobs per window (Beaumont Table 1: 0.890).",
        number(1e-3, 1),
    )
    small_job_tasks_mean: float = _f(
        1.5, "Mean tasks per small job (1 + Poisson); 'many small jobs with 1-few tasks'. Fewer tasks a job make more "
        "small jobs for the same short tasks, and fewer of them join D with two unlike tasks.",
        number(1, 1000), scaled=True,
    )
    small_task_cpu_sigma: float = _f(
        0.5, "Log-sd of small tasks' mean CPU (no small task rivals a large job).",
        number(0, 3),
    )
    small_task_max_cv: float = _f(
        1.0, "Upper bound of a small task's avg coefficient of variation. Janus §3.3's std lines are fitted on long "
        "tasks; followed down to a small task's tiny mean they give CVs of 1.4-1.9 and spikes that, at reduced scales "
        "(few large jobs alive, D_i's cut near 0.05), put small jobs in D (default scale: 474) and distort Beaumont "
        "Table 3's medians. Bounded, no small task rivals a large job, as at the real trace's scale.",
        number(0.01, 100),
    )
    small_job_duration_minutes: list = _f(
        [1.0, 105.0],
        "Bounds [min, max] of small-job durations in minutes; the max stays below 110 so a small job touches "
        "fewer than 24 windows wherever it starts (short: fewer than 24 records, Janus §3.1).",
        pair(number(1 / 60, lt=110)), check=increasing,
    )
    small_job_class_shares: dict = _f(
        {"gratis": 0.45, "other": 0.5, "production": 0.04, "monitoring": 0.01, "infrastructure": 0.0},
        "Class mix of small jobs.",
        by_class(number(0, 1)), check=shares(CLASS_NAMES),
    )
    # ---- usage: variability (Janus §3.3) and shapes (Janus Fig 4)
    inst_std_line: list = _f(
        [0.015, 0.36], "[intercept, slope] of per-task inst std vs mean over long tasks (Janus §3.3, Fig 3).",
        pair(number(0, 10)),
    )
    avg_std_line: list = _f(
        [0.010, 0.31], "[intercept, slope] of per-task avg std vs mean over long tasks (Janus §3.3, Fig 3).",
        pair(number(0, 10)),
    )
    std_scatter_sigma: float = _f(
        0.25,
        "Log-sd of a task's std around the line (the spread of Janus Fig 3's heatmap). Wider scatter gives a few tasks "
        "most of a sample's variance, and sums of N tasks then stay non-Gaussian longer than Janus Table 1 shows.",
        number(0, 3),
    )
    inst_scatter_sigma: float = _f(
        0.15, "Extra log-sd of the inst std given the avg std (inst std > avg std for most tasks, Janus Fig 2).",
        number(0, 3),
    )
    max_cv: list = _f(
        [2.5, 6.0],
        "Upper bounds [avg, inst] of a task's coefficient of variation (the lines' intercepts need CV >> 1 for tiny means).",
        pair(number(0.01, 100)),
    )
    inst_shape_shares: dict = _f(
        {"gamma": 0.55, "zero_inflated": 0.25, "bimodal": 0.20},
        "Shape families of the inst noise S (Janus Fig 4: exponential-like/peaked, near-zero, mixed).",
        mapping(SHAPES, number(0, 1)), check=shares(SHAPES),
    )
    inst_skew_by_cv: list = _f(
        [[0.0, -0.6], [0.6, -0.6], [1.0, 1.0], [2.0, 3.0], [3.0, 8.0]],
        "Largest skewness of a task's inst distribution [[CV, skewness], ...], interpolated at its CV (constant "
        "beyond the ends): busy tasks (CV <= 0.6) are peaked with a tail towards idle (they run near their limit), "
        "tasks with CV ~1 exponential-like, near-idle ones (CV >= 3) spiky (Janus Fig 4). Busy tasks carry most of a sample's "
        "variance, so sums of N tasks become Gaussian at Janus Table 1's rate (A-D rejects 49% at N = 100, 9% at 500).",
        rows(number(0), number(-10, 100)), check=rises("CVs"),
    )
    avg_skew_by_cv: list = _f(
        [[0.0, -0.6], [0.6, -0.6], [1.0, 1.0], [2.0, 3.0], [3.0, 8.0]],
        "Largest skewness of a task's avg distribution [[CV, skewness], ...], as inst_skew_by_cv.",
        rows(number(0), number(-10, 100)), check=rises("CVs"),
    )
    skew_margin: float = _f(
        0.3, "Skewness a task keeps above CV − 1/CV, the least a non-negative variable with that CV can have (on/off).",
        number(0, 10),
    )
    nonstationary_share: float = _f(
        0.95,
        "Share of tasks with level shifts; chosen so the two-window K-S test rejects for ~30% of long tasks (Janus §3.4).",
        number(0, 1),
    )
    level_shift_records: float = _f(
        2.75,
        "Mean length of a load level (regime) of a non-stationary task, in 5-minute records. Regimes much shorter "
        "than the windows make a window's distribution a mixture of a few levels, whose K-S rejection rate "
        "hardly depends on the window length (Janus §3.4: 'results for Δ = 24 and Δ = 36 are similar'); "
        "regimes of ~10 records make it grow with Δ.",
        number(1, 1_000_000),
    )
    level_shift_budget: float = _f(
        1.0, "Share of a non-stationary task's avg variance carried by its level shifts.",
        number(0, 1),
    )
    level_shift_inst_share: float = _f(
        1.0, "Share of a non-stationary task's inst-only variance (inst beyond avg) that follows its levels.",
        number(0, 1),
    )
    # ---- usage: production patterns (Beaumont §5.2, Table 4)
    daily_amplitude_quantiles: list = _f(
        [[0.0, 0.006], [0.25, 0.052], [0.5, 0.268], [0.75, 0.376], [1.0, 1.075]],
        "Daily amplitude/mean of production jobs [quantile, ratio] (Beaumont Table 4).",
        QUANTILES, check=quantile_table(full=True),
    )
    weekly_amplitude_quantiles: list = _f(
        [[0.0, 0.011], [0.25, 0.076], [0.5, 0.106], [0.75, 0.196], [1.0, 0.669]],
        "Weekly amplitude/mean (5 high days, 2 low) of production jobs (Beaumont Table 4, §5.2).",
        QUANTILES, check=quantile_table(full=True),
    )
    hourly_amplitude_quantiles: list = _f(
        [[0.0, 0.001], [0.25, 0.004], [0.5, 0.007], [0.75, 0.009], [1.0, 1.612]],
        "Hourly amplitude/mean of production jobs (Beaumont Table 4).",
        QUANTILES, check=quantile_table(full=True),
    )
    long_term_amplitude_quantiles: list = _f(
        [[0.0, 0.001], [0.25, 0.051], [0.5, 0.102], [0.75, 0.196], [1.0, 1.149]],
        "Long-term (period = trace length) amplitude/mean of production jobs (Beaumont Table 4).",
        QUANTILES, check=quantile_table(full=True),
    )
    noise_ratio_quantiles: list = _f(
        [[0.0, 0.012], [0.25, 0.036], [0.5, 0.058], [0.75, 0.072], [1.0, 0.836]],
        "Residual noise of production jobs: std of the job's 5-minute CPU after its patterns, over its mean "
        "[quantile, ratio] (Beaumont Table 4: 'about 6% of the average CPU demand for a large part of the jobs').",
        QUANTILES, check=quantile_table(full=True),
    )
    patterned_task_noise_cv: float = _f(
        0.15,
        "Largest coefficient of variation of a production task's own 5-minute noise around its job's common level; "
        "the rest of the job's noise is common to its tasks. Production tasks then follow their job's patterns "
        "(Beaumont §4.3: balanced tasks, §5.2: the job's noise is Table 4's) rather than Janus's per-task lines.",
        number(0, 2),
    )
    daily_phase_quantiles: list = _f(
        [[0.5, 60.0], [0.9, 120.0]],
        "[quantile, degrees] of |daily phase - common phase| (Beaumont §5.2: half within 60°, 90% within 120°).",
        rows(number(gt=0, lt=1), number(0, 180)), check=rises("quantiles", "degrees"),
    )
    weekend_days: list = _f(
        [5, 6], "Low days of the weekly pattern, as days since the trace start modulo 7 (Beaumont §5.2).",
        array(integer(0, 6), max_items=6, unique=True),
    )
    # ---- memory (Beaumont §4.2)
    memory_shape_shares: dict = _f(
        {"flat": 0.67, "two_cluster": 0.065, "slope": 0.265},
        "Memory vs CPU per job among well-fitted jobs (Beaumont §4.2: 67% flat, 6.5% two-cluster flat, 26.5% affine).",
        mapping(MEMORY_SHAPES, number(0, 1)), check=shares(MEMORY_SHAPES),
    )
    memory_badly_fitted_share: float = _f(
        0.5,
        "Share of large jobs whose memory follows no CPU pattern (Beaumont §4.2: about half rejected as BadlyFitted).",
        number(0, 1),
    )
    # ---- anomalies and failures (Janus §3.1)
    all_zero_task_share: float = _f(
        0.012,
        "Non-failing tasks with zero inst usage for their whole duration, as a share of all tasks (Janus §3.1: 1.2%).",
        number(0, 0.5),
    )
    avg_above_one_records: int = _f(
        13, "Records with avg (CPU rate) > 1 while inst <= 1 (Janus §3.1: 13 in the trace).",
        integer(0, 1_000_000), scaled=True,
    )
    failing_task_share: float = _f(
        0.2, "Share of tasks with an EVICT/FAIL/KILL/LOST event (Janus §3.1 discards them).",
        number(0, 0.95),
    )
    failing_event_shares: dict = _f(
        {"evict": 0.22, "fail": 0.045, "kill": 0.73, "lost": 0.005},
        "Which failing event a failing task gets (task_events part 1 of the real trace: 2500/501/8171/~0).",
        mapping(FAILING, number(0, 1)), check=shares(FAILING),
    )
    fail_terminal_share: float = _f(
        0.5,
        "Share of FAIL events after which the task is not re-submitted (KILL always ends a task; EVICT/LOST re-submit).",
        number(0, 1),
    )
    request_over_usage: list = _f(
        [2.0, 0.5],
        "CPU/memory request over mean usage: log-normal [median, log-sd] per job (Borg requests exceed usage).",
        pair(number(gt=0, hi=100), number(0, 100)),
    )

    # ------------------------------------------------------------------ rules between fields

    RULES: ClassVar[tuple[Rule, ...]] = (
        Rule(
            "all_zero_task_share",
            lambda p: p.all_zero_task_share <= 1 - p.failing_task_share,
            "must not exceed the share of non-failing tasks (1 - failing_task_share)",
        ),
        Rule("slice_days", lambda p: p.slice_days is None or p.slice_days <= p.days, "must not exceed days"),
    )

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_dict(cls, d: dict | None) -> SynthParams:
        """Parameters from the ``synthetic`` config section (a plain dict).

        Unknown keys, wrong types and out-of-range values raise ``ValueError``
        naming the key (``synthetic.<key>``). Per-class dicts may name a subset
        of the classes; the others keep their defaults. A ``shards`` key
        (writing layout, not the model) is ignored.
        """
        d = dict(d or {})
        d.pop("shards", None)
        names = {f.name for f in dataclasses.fields(cls)}
        for key in d:
            if key not in names:
                raise ValueError(f"synthetic.{key}: unknown parameter of the synthetic trace model")
        defaults = cls()
        kwargs = {}
        for key, value in d.items():
            base = getattr(defaults, key)
            if isinstance(base, dict) and isinstance(value, dict):
                merged = _copy(base)
                for k, v in value.items():
                    if k not in base:
                        raise ValueError(f"synthetic.{key}.{k}: unknown key (known: {', '.join(base)})")
                    merged[k] = _copy(v)
                value = merged
            kwargs[key] = _copy(value)
        return cls(**kwargs)  # __post_init__ validates

    def to_dict(self) -> dict:
        """The parameters as a plain dict (JSON/YAML-ready)."""
        return {f.name: _copy(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def describe(cls) -> dict[str, str]:
        """Docstring of each parameter (its source in the papers)."""
        return {f.name: f.metadata["doc"] for f in dataclasses.fields(cls)}

    @property
    def windows(self) -> int:
        """Number of 5-minute windows in the trace."""
        return max(1, round(self.days * _WINDOWS_PER_DAY))

    @property
    def end_us(self) -> int:
        """End of the trace in µs (the last window's end)."""
        return TRACE_START_US + self.windows * WINDOW_US

    @property
    def rendered(self) -> SynthParams:
        """The parameters of what is written: ``days`` cut to ``slice_days`` (itself when there is no slice)."""
        if self.slice_days is None:
            return self
        return dataclasses.replace(self, days=self.slice_days, slice_days=None)

    # ------------------------------------------------------------------ validation

    def __post_init__(self) -> None:
        """Raise ``ValueError`` naming the first invalid parameter: each field in order, then :attr:`RULES`."""
        for f in dataclasses.fields(self):
            _check_field(f, getattr(self, f.name))
        for rule in self.RULES:
            if not rule.holds(self):
                raise _bad(rule.key, rule.message)


# ---------------------------------------------------------------------------- generic validation

_VALIDATORS: dict[str, jsonschema.Draft202012Validator] = {}


def _check_field(f: dataclasses.Field, value: Any) -> None:
    """``value`` of field ``f`` against the field's schema fragment, then finite numbers, then its check."""
    validator = _VALIDATORS.get(f.name)
    if validator is None:
        validator = _VALIDATORS[f.name] = jsonschema.Draft202012Validator(f.metadata["schema"])
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise _bad(f.name + where, error.message)
    _finite(value, f.name)
    if f.metadata["check"] is not None:
        f.metadata["check"](value, f.name)


def _finite(v: Any, key: str) -> None:
    """No NaN or infinity anywhere in ``v`` (JSON schema bounds let NaN through)."""
    if isinstance(v, float) and not math.isfinite(v):
        raise _bad(key, f"{v!r} is not a finite number")
    if isinstance(v, dict):
        v = list(v.values())
    if isinstance(v, list):
        for x in v:
            _finite(x, key)
