"""Parameters of the synthetic trace model (:class:`SynthParams`): defaults from the papers, and validation.

Every number of the model is a field of :class:`SynthParams`, whose metadata
names its source (Beaumont et al. 2015, Janus & Rzadca 2017, Reiss et al.
SoCC'12); :meth:`SynthParams.from_dict` builds it from the ``synthetic``
config section and every invalid value raises ``ValueError`` naming its key.
This module also holds the model's vocabularies (classes, shapes, failing
events) and time units, shared by the other modules of the package.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

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


# ============================================================================ parameters


def _f(default: Any, doc: str) -> Any:
    """A dataclass field with a (deep-copied) default and a docstring in its metadata."""
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda d=default: _copy(d), metadata={"doc": doc})
    return field(default=default, metadata={"doc": doc})


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
    its source.
    """

    # ---- extent
    days: float = _f(29.0, "Trace length in days (Beaumont et al. §1.1: 29 days).")
    machines: int = _f(12583, "Number of machines (Beaumont et al. §1.1: 12,583).")
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
    )
    # ---- machine removals (Beaumont §6)
    machine_failure_rate: float = _f(
        0.747e-4,
        "Removals per machine per 5-minute window outside maintenance bursts and outstanding events (Beaumont et al. "
        "§6: 0.94 per window over the 8314 remaining windows of 12,583 machines; with the maintenance windows the "
        "mean is 1.005, the paper's 0.8e-4).",
    )
    removal_dispersion: float = _f(
        1.41,
        "Variance/mean of those removals per window (Beaumont et al. §6 table: 1.41 over the 8314 remaining windows, "
        "so windows with > 5 removals are 'much more present than under Poisson'); 1 gives Poisson counts. Counts are "
        "negative binomial: a per-window rate drawn from a Gamma (correlated failures).",
    )
    maintenance_windows_per_day: float = _f(
        38 / 29, "Maintenance bursts (windows with >= 10 removals) per day (Beaumont et al. §6: 38 in 29 days)."
    )
    maintenance_burst_sizes: list = _f(
        [[10, 5], [11, 5], [13, 2], [14, 3], [15, 7], [16, 1], [17, 2], [18, 3], [19, 4], [20, 1], [23, 1], [25, 3], [30, 1]],
        "[removals in the window, number of windows] of the bursts (Beaumont et al. §6 table, tail >= 10); "
        "a burst removes that many machines minus the ~1 background removal (at least 10).",
    )
    removal_duration_quantiles: list = _f(
        [[0.0, 0.5], [0.3, 6.0], [0.6, 17.0], [0.75, 60.0], [0.85, 360.0], [0.93, 2880.0], [0.97, 20000.0]],
        "Removal durations [quantile, minutes], log-linear between points (Beaumont et al. Fig 7: 60% back "
        "within 17 min, heavy tail); the mass above the last quantile never comes back.",
    )
    mass_removal_events: int = _f(
        2,
        "Outstanding events where many machines are removed at 30 s intervals and then all re-added together "
        "(Beaumont §6: 'all reinserted within a few seconds').",
    )
    mass_removal_share: float = _f(
        0.0116,
        "Share of machines removed in each mass-removal event (Beaumont §6: the three events lift the mean removals "
        "per window from 1.005 to 1.07; on the real machine_events the two mass events remove 84 and 208 "
        "machines, ~146 each).",
    )
    mass_removal_batches: int = _f(
        60,
        "Batches of a mass-removal event, removed at mass_removal_interval_s intervals (real trace: the machines go "
        "over 15-45 minutes).",
    )
    mass_removal_interval_s: float = _f(30.0, "Seconds between batches of a mass removal (Beaumont §6: 30 s).")
    mass_removal_down_s: float = _f(
        1200.0,
        "Seconds from a mass removal's last batch to the re-add of all its machines (real trace: 0 to 80 minutes).",
    )
    mass_removal_readd_spread_s: float = _f(
        60.0,
        "The machines of a mass removal are re-added within this many seconds of each other (Beaumont §6: 'all "
        "reinserted within a few seconds'; real trace: 47-84 machines within about a minute).",
    )
    flapping_events: int = _f(1, "Outstanding events where a subset is removed and re-added many times in a row (Beaumont §6).")
    flapping_share: float = _f(
        0.0017, "Share of machines in a flapping event (real trace: 21 machines, 269 removals over 9.5 hours)."
    )
    flapping_cycles: int = _f(13, "Remove/re-add cycles of a flapping machine (real trace: 12.8 on average).")
    flapping_down_minutes: list = _f(
        [1.0, 20.0], "Bounds [min, max] of a flapping machine's down time per cycle, minutes (uniform; real median 10)."
    )
    flapping_up_minutes: list = _f(
        [2.0, 20.0],
        "Bounds [min, max] of a flapping machine's up time between cycles, minutes (uniform; real: 1-29, median 6.6).",
    )
    flapping_readd_spread_s: float = _f(
        60.0,
        "The flapping machines' last re-adds fall within this many seconds of each other (Beaumont §6: 'until all "
        "of them are eventually reinserted within a few minutes'; real trace: 17 of 21 within a minute).",
    )
    # ---- jobs
    large_jobs_per_day: dict = _f(
        {"gratis": 328.0, "other": 534.0, "production": 32.0, "monitoring": 1.0, "infrastructure": 0.5},
        "Large (dominant-like) jobs per day and class. Full-trace values give Beaumont §3's 25,839 dominant jobs "
        "with production carrying most of the CPU (Fig 1); monitoring/infrastructure are rare.",
    )
    job_size_scale: float = _f(
        1.0, "Factor on every large job's total CPU and memory (1 = Beaumont Table 2); smaller scales shrink task counts."
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
    )
    job_cpu_memory_correlation: float = _f(
        0.7, "Gaussian-copula correlation of a job's CPU and memory sizes (keeps per-task memory plausible; marginals stay Table 2's)."
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
    )
    scheduling_class_shares: list = _f(
        [0.68, 0.10, 0.21, 0.01], "Shares of scheduling classes 0-3 (task_events parts 1-2 of the real trace)."
    )
    users: int = _f(930, "Number of distinct users (the 2011 trace has about 930).")
    # ---- tasks of large jobs
    task_cpu_mean: float = _f(0.027, "Mean CPU of a long task (Janus Table 1: mean total 0.27 for N=10 long tasks).")
    task_cpu_mean_sigma: float = _f(0.8, "Log-sd across jobs of a job's per-task mean CPU (spread of means in Janus Fig 3).")
    task_balance_sigma: float = _f(
        0.15,
        "Log-sd of task means within a job (Beaumont §4.3, Fig 5: for about half the jobs the interdecile ratio of "
        "task CPU stays below 2 in 80% of windows; 0.15 alone gives a ratio of 1.5).",
    )
    avg_floor_share: float = _f(
        0.05,
        "Smallest 5-minute average (CPU rate) of a running large task, as a share of its mean: the per-task reshaping "
        "to Janus's CVs and skewness would clip a low tail at exactly 0 (12-23% of records; the real sample window "
        "of task_usage part 0 has 2.7% exact zeros), which makes a job's tasks look unbalanced (Beaumont Fig 5).",
    )
    job_common_fluctuation: float = _f(
        1.0,
        "Share of a large task's load-level variance common to all tasks of its job (0: independent tasks). The "
        "real trace's tasks of a job move together (Beaumont §4.3: balanced load; in the sample window of "
        "task_usage part 0 the median within-job interdecile ratio of CPU is 1.34), while each task keeps Janus's "
        "per-task variability; 1 leaves each task's own law unchanged.",
    )
    task_cpu_max: float = _f(0.5, "Upper bound of a task's mean CPU.")
    max_tasks_per_job: int = _f(49983, "Most tasks in a job (Beaumont §3: the largest dominant job has 49,983).")
    # ---- small jobs and the targets they are derived from
    short_task_share: float = _f(0.95, "Share of tasks shorter than 2 hours (Janus §3.1: 95%); sets the small-job count.")
    dominant_alive_share: float = _f(
        0.058, "Large jobs / alive jobs per window (Beaumont Table 1: 0.058); sets the small jobs' durations."
    )
    dominant_cpu_share: float = _f(0.947, "CPU share of large jobs per window (Beaumont Table 1: 0.947); sets small-task CPU.")
    dominant_memory_share: float = _f(0.890, "Memory share of large jobs per window (Beaumont Table 1: 0.890).")
    small_job_tasks_mean: float = _f(1.5, "Mean tasks per small job (1 + Poisson); 'many small jobs with 1-few tasks'.")
    small_task_cpu_sigma: float = _f(0.5, "Log-sd of small tasks' mean CPU (no small task rivals a large job).")
    small_job_duration_minutes: list = _f(
        [1.0, 105.0], "Bounds [min, max] of small-job durations in minutes (short: fewer than 24 records, Janus §3.1)."
    )
    small_job_class_shares: dict = _f(
        {"gratis": 0.45, "other": 0.5, "production": 0.04, "monitoring": 0.01, "infrastructure": 0.0},
        "Class mix of small jobs.",
    )
    # ---- usage: variability (Janus §3.3) and shapes (Janus Fig 4)
    inst_std_line: list = _f(
        [0.015, 0.36], "[intercept, slope] of per-task inst std vs mean over long tasks (Janus §3.3, Fig 3)."
    )
    avg_std_line: list = _f(
        [0.010, 0.31], "[intercept, slope] of per-task avg std vs mean over long tasks (Janus §3.3, Fig 3)."
    )
    std_scatter_sigma: float = _f(
        0.25,
        "Log-sd of a task's std around the line (the spread of Janus Fig 3's heatmap). Wider scatter gives a few tasks "
        "most of a sample's variance, and sums of N tasks then stay non-Gaussian longer than Janus Table 1 shows.",
    )
    inst_scatter_sigma: float = _f(0.15, "Extra log-sd of the inst std given the avg std (inst std > avg std for most tasks, Janus Fig 2).")
    max_cv: list = _f([2.5, 6.0], "Upper bounds [avg, inst] of a task's coefficient of variation (the lines' intercepts need CV >> 1 for tiny means).")
    inst_shape_shares: dict = _f(
        {"gamma": 0.55, "zero_inflated": 0.25, "bimodal": 0.20},
        "Shape families of the inst noise S (Janus Fig 4: exponential-like/peaked, near-zero, mixed).",
    )
    inst_skew_by_cv: list = _f(
        [[0.0, -0.6], [0.6, -0.6], [1.0, 1.0], [2.0, 3.0], [3.0, 8.0]],
        "Largest skewness of a task's inst distribution [[CV, skewness], ...], interpolated at its CV (constant "
        "beyond the ends): busy tasks (CV <= 0.6) are peaked with a tail towards idle (they run near their limit), "
        "tasks with CV ~1 exponential-like, near-idle ones (CV >= 3) spiky (Janus Fig 4). Busy tasks carry most of a sample's "
        "variance, so sums of N tasks become Gaussian at Janus Table 1's rate (A-D rejects 49% at N = 100, 9% at 500).",
    )
    avg_skew_by_cv: list = _f(
        [[0.0, -0.6], [0.6, -0.6], [1.0, 1.0], [2.0, 3.0], [3.0, 8.0]],
        "Largest skewness of a task's avg distribution [[CV, skewness], ...], as inst_skew_by_cv.",
    )
    skew_margin: float = _f(
        0.3, "Skewness a task keeps above CV − 1/CV, the least a non-negative variable with that CV can have (on/off)."
    )
    nonstationary_share: float = _f(
        0.95, "Share of tasks with level shifts; chosen so the two-window K-S test rejects for ~30% of long tasks (Janus §3.4)."
    )
    level_shift_records: float = _f(
        2.75,
        "Mean length of a load level (regime) of a non-stationary task, in 5-minute records. Regimes much shorter "
        "than the windows make a window's distribution a mixture of a few levels, whose K-S rejection rate "
        "hardly depends on the window length (Janus §3.4: 'results for Δ = 24 and Δ = 36 are similar'); "
        "regimes of ~10 records make it grow with Δ.",
    )
    level_shift_budget: float = _f(1.0, "Share of a non-stationary task's avg variance carried by its level shifts.")
    level_shift_inst_share: float = _f(
        1.0, "Share of a non-stationary task's inst-only variance (inst beyond avg) that follows its levels."
    )
    # ---- usage: production patterns (Beaumont §5.2, Table 4)
    daily_amplitude_quantiles: list = _f(
        [[0.0, 0.006], [0.25, 0.052], [0.5, 0.268], [0.75, 0.376], [1.0, 1.075]],
        "Daily amplitude/mean of production jobs [quantile, ratio] (Beaumont Table 4).",
    )
    weekly_amplitude_quantiles: list = _f(
        [[0.0, 0.011], [0.25, 0.076], [0.5, 0.106], [0.75, 0.196], [1.0, 0.669]],
        "Weekly amplitude/mean (5 high days, 2 low) of production jobs (Beaumont Table 4, §5.2).",
    )
    hourly_amplitude_quantiles: list = _f(
        [[0.0, 0.001], [0.25, 0.004], [0.5, 0.007], [0.75, 0.009], [1.0, 1.612]],
        "Hourly amplitude/mean of production jobs (Beaumont Table 4).",
    )
    long_term_amplitude_quantiles: list = _f(
        [[0.0, 0.001], [0.25, 0.051], [0.5, 0.102], [0.75, 0.196], [1.0, 1.149]],
        "Long-term (period = trace length) amplitude/mean of production jobs (Beaumont Table 4).",
    )
    noise_ratio_quantiles: list = _f(
        [[0.0, 0.012], [0.25, 0.036], [0.5, 0.058], [0.75, 0.072], [1.0, 0.836]],
        "Residual noise of production jobs: std of the job's 5-minute CPU after its patterns, over its mean "
        "[quantile, ratio] (Beaumont Table 4: 'about 6% of the average CPU demand for a large part of the jobs').",
    )
    patterned_task_noise_cv: float = _f(
        0.15,
        "Largest coefficient of variation of a production task's own 5-minute noise around its job's common level; "
        "the rest of the job's noise is common to its tasks. Production tasks then follow their job's patterns "
        "(Beaumont §4.3: balanced tasks, §5.2: the job's noise is Table 4's) rather than Janus's per-task lines.",
    )
    daily_phase_quantiles: list = _f(
        [[0.5, 60.0], [0.9, 120.0]],
        "[quantile, degrees] of |daily phase - common phase| (Beaumont §5.2: half within 60°, 90% within 120°).",
    )
    weekend_days: list = _f([5, 6], "Low days of the weekly pattern, as days since the trace start modulo 7 (Beaumont §5.2).")
    # ---- memory (Beaumont §4.2)
    memory_shape_shares: dict = _f(
        {"flat": 0.67, "two_cluster": 0.065, "slope": 0.265},
        "Memory vs CPU per job among well-fitted jobs (Beaumont §4.2: 67% flat, 6.5% two-cluster flat, 26.5% affine).",
    )
    memory_badly_fitted_share: float = _f(
        0.5, "Share of large jobs whose memory follows no CPU pattern (Beaumont §4.2: about half rejected as BadlyFitted)."
    )
    # ---- anomalies and failures (Janus §3.1)
    all_zero_task_share: float = _f(
        0.012, "Non-failing tasks with zero inst usage for their whole duration, as a share of all tasks (Janus §3.1: 1.2%)."
    )
    avg_above_one_records: int = _f(13, "Records with avg (CPU rate) > 1 while inst <= 1 (Janus §3.1: 13 in the trace).")
    failing_task_share: float = _f(0.2, "Share of tasks with an EVICT/FAIL/KILL/LOST event (Janus §3.1 discards them).")
    failing_event_shares: dict = _f(
        {"evict": 0.22, "fail": 0.045, "kill": 0.73, "lost": 0.005},
        "Which failing event a failing task gets (task_events part 1 of the real trace: 2500/501/8171/~0).",
    )
    fail_terminal_share: float = _f(
        0.5, "Share of FAIL events after which the task is not re-submitted (KILL always ends a task; EVICT/LOST re-submit)."
    )
    request_over_usage: list = _f(
        [2.0, 0.5], "CPU/memory request over mean usage: log-normal [median, log-sd] per job (Borg requests exceed usage)."
    )

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_dict(cls, d: dict | None) -> "SynthParams":
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
        return max(1, int(round(self.days * _WINDOWS_PER_DAY)))

    @property
    def end_us(self) -> int:
        """End of the trace in µs (the last window's end)."""
        return TRACE_START_US + self.windows * WINDOW_US

    # ------------------------------------------------------------------ validation

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first invalid parameter (in field order, one group of fields at a time)."""
        for check in (_check_machines, _check_jobs, _check_usage, _check_memory_and_failures):
            check(self)

    def __post_init__(self) -> None:
        self.validate()


# ---------------------------------------------------------------------------- validation by group


def _check_machines(p: SynthParams) -> None:
    """Extent, machines and removals (Reiss Table 1, Beaumont §6 and Fig 7)."""
    _number(p, "days", lo=1 / 24, hi=3650)
    _number(p, "machines", lo=1, hi=10_000_000, integer=True)
    _rows(p, "machine_types", 4, check=_machine_type_row)
    _number(p, "machine_failure_rate", lo=0, hi=0.1)
    _number(p, "removal_dispersion", lo=1.0, hi=100.0)
    _number(p, "maintenance_windows_per_day", lo=0, hi=288)
    _rows(p, "maintenance_burst_sizes", 2, check=lambda r: r[0] >= 1 and r[1] >= 0 and float(r[0]).is_integer())
    if sum(r[1] for r in p.maintenance_burst_sizes) <= 0:
        raise ValueError("synthetic.maintenance_burst_sizes: the window counts must not all be 0")
    _quantile_table(p.removal_duration_quantiles, "removal_duration_quantiles")
    _number(p, "mass_removal_events", lo=0, hi=100, integer=True)
    _number(p, "mass_removal_share", lo=0, hi=1)
    _number(p, "mass_removal_batches", lo=1, hi=100_000, integer=True)
    _number(p, "mass_removal_interval_s", lo=0, hi=3600)
    _number(p, "mass_removal_down_s", lo=0, hi=86400)
    _number(p, "mass_removal_readd_spread_s", lo=0.001, hi=3600)
    _number(p, "flapping_events", lo=0, hi=100, integer=True)
    _number(p, "flapping_share", lo=0, hi=1)
    _number(p, "flapping_cycles", lo=1, hi=1000, integer=True)
    _pair(p.flapping_down_minutes, "flapping_down_minutes", lo=1 / 60, hi=1440, increasing=True)
    _pair(p.flapping_up_minutes, "flapping_up_minutes", lo=1 / 60, hi=1440, increasing=True)
    _number(p, "flapping_readd_spread_s", lo=0.001, hi=3600)


def _check_jobs(p: SynthParams) -> None:
    """Large jobs (Beaumont Tables 2-3), their tasks, and the small jobs (Beaumont Table 1, Janus §3.1)."""
    _per_class(p, "large_jobs_per_day", lambda k, v: _num(v, f"large_jobs_per_day.{k}", 0, 1e7))
    _number(p, "job_size_scale", lo=1e-9, hi=1e6)
    _per_class(p, "job_cpu_lognormal", lambda k, v: _mixture(v, f"job_cpu_lognormal.{k}"))
    _per_class(p, "job_memory_lognormal", lambda k, v: _mixture(v, f"job_memory_lognormal.{k}"))
    _number(p, "job_cpu_memory_correlation", lo=-0.99, hi=0.99)
    _per_class(p, "job_duration_quantiles", lambda k, v: _quantile_table(v, f"job_duration_quantiles.{k}"))
    _per_class(p, "job_priorities", lambda k, v: _priorities(v, k))
    _shares(p.scheduling_class_shares, "scheduling_class_shares", 4)
    _number(p, "users", lo=1, hi=10_000_000, integer=True)
    _number(p, "task_cpu_mean", lo=1e-6, hi=1)
    _number(p, "task_cpu_mean_sigma", lo=0, hi=5)
    _number(p, "task_balance_sigma", lo=0, hi=5)
    _number(p, "job_common_fluctuation", lo=0, hi=1)
    _number(p, "avg_floor_share", lo=0, hi=1)
    _number(p, "task_cpu_max", lo=1e-4, hi=1)
    _number(p, "max_tasks_per_job", lo=1, hi=10_000_000, integer=True)
    _number(p, "short_task_share", lo=0, hi=0.999)
    _number(p, "dominant_alive_share", lo=1e-4, hi=1)
    _number(p, "dominant_cpu_share", lo=1e-3, hi=1)
    _number(p, "dominant_memory_share", lo=1e-3, hi=1)
    _number(p, "small_job_tasks_mean", lo=1, hi=1000)
    _number(p, "small_task_cpu_sigma", lo=0, hi=3)
    _pair(p.small_job_duration_minutes, "small_job_duration_minutes", lo=1 / 60, hi=1e6, increasing=True)
    if p.small_job_duration_minutes[1] >= 110:
        raise ValueError("synthetic.small_job_duration_minutes: small jobs must touch fewer than 24 windows (< 110 min)")
    _share_dict(p.small_job_class_shares, "small_job_class_shares", CLASS_NAMES)


def _check_usage(p: SynthParams) -> None:
    """Usage variability (Janus §3.3, Fig 3-4), level shifts (Janus §3.4) and production patterns (Beaumont Table 4)."""
    _pair(p.inst_std_line, "inst_std_line", lo=0, hi=10)
    _pair(p.avg_std_line, "avg_std_line", lo=0, hi=10)
    _number(p, "std_scatter_sigma", lo=0, hi=3)
    _number(p, "inst_scatter_sigma", lo=0, hi=3)
    _pair(p.max_cv, "max_cv", lo=0.01, hi=100)
    _share_dict(p.inst_shape_shares, "inst_shape_shares", SHAPES)
    for key in ("inst_skew_by_cv", "avg_skew_by_cv"):
        _rows(p, key, 2, check=lambda r: all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in r)
              and r[0] >= 0 and -10 <= r[1] <= 100)
        cvs = [r[0] for r in getattr(p, key)]
        if any(b <= a for a, b in zip(cvs, cvs[1:])):
            raise ValueError(f"synthetic.{key}: the CVs must increase")
    _number(p, "skew_margin", lo=0, hi=10)
    _number(p, "nonstationary_share", lo=0, hi=1)
    _number(p, "level_shift_records", lo=1, hi=1e6)
    _number(p, "level_shift_budget", lo=0, hi=1)
    for name in ("daily", "weekly", "hourly", "long_term"):
        _quantile_table(getattr(p, f"{name}_amplitude_quantiles"), f"{name}_amplitude_quantiles", full=True)
    _quantile_table(p.noise_ratio_quantiles, "noise_ratio_quantiles", full=True)
    _number(p, "patterned_task_noise_cv", lo=0, hi=2)
    _rows(p, "daily_phase_quantiles", 2, check=lambda r: 0 < r[0] < 1 and 0 <= r[1] <= 180)
    ph = p.daily_phase_quantiles
    if any(b[0] <= a[0] or b[1] < a[1] for a, b in zip(ph, ph[1:])):
        raise ValueError("synthetic.daily_phase_quantiles: quantiles and degrees must increase")
    if not isinstance(p.weekend_days, list) or any(
        not isinstance(x, int) or isinstance(x, bool) or not 0 <= x <= 6 for x in p.weekend_days
    ) or len(set(p.weekend_days)) != len(p.weekend_days) or len(p.weekend_days) >= 7:
        raise ValueError("synthetic.weekend_days: a list of distinct integers 0-6 (fewer than 7)")


def _check_memory_and_failures(p: SynthParams) -> None:
    """Memory (Beaumont §4.2), anomalies and failures (Janus §3.1), requests."""
    _share_dict(p.memory_shape_shares, "memory_shape_shares", MEMORY_SHAPES)
    _number(p, "memory_badly_fitted_share", lo=0, hi=1)
    _number(p, "all_zero_task_share", lo=0, hi=0.5)
    if p.all_zero_task_share > 1 - p.failing_task_share:
        raise ValueError("synthetic.all_zero_task_share: must not exceed the share of non-failing tasks")
    _number(p, "avg_above_one_records", lo=0, hi=1_000_000, integer=True)
    _number(p, "failing_task_share", lo=0, hi=0.95)
    _share_dict(p.failing_event_shares, "failing_event_shares", FAILING)
    _number(p, "fail_terminal_share", lo=0, hi=1)
    _pair(p.request_over_usage, "request_over_usage", lo=0, hi=100)
    if p.request_over_usage[0] <= 0:
        raise ValueError("synthetic.request_over_usage: the median must be > 0")


# ---------------------------------------------------------------------------- validators


def _bad(key: str, msg: str) -> ValueError:
    return ValueError(f"synthetic.{key}: {msg}")


def _num(v: Any, key: str, lo: float, hi: float, integer: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not float(v).is_integer()):
        raise _bad(key, f"expected {'an integer' if integer else 'a number'}, got {v!r}")
    if not math.isfinite(v) or not lo <= v <= hi:
        raise _bad(key, f"{v!r} is out of range [{lo}, {hi}]")
    return float(v)


def _number(p: SynthParams, key: str, lo: float, hi: float, integer: bool = False) -> None:
    _num(getattr(p, key), key, lo, hi, integer)


def _pair(v: Any, key: str, lo: float, hi: float, increasing: bool = False) -> None:
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        raise _bad(key, f"expected a list of 2 numbers, got {v!r}")
    a, b = (_num(x, key, lo, hi) for x in v)
    if increasing and not a < b:
        raise _bad(key, "the first value must be below the second")


def _rows(p: SynthParams, key: str, width: int, check) -> None:
    v = getattr(p, key)
    if not isinstance(v, (list, tuple)) or not v:
        raise _bad(key, "expected a non-empty list of rows")
    for row in v:
        if not isinstance(row, (list, tuple)) or len(row) != width:
            raise _bad(key, f"every row needs {width} values, got {row!r}")
        try:
            ok = check(row)
        except TypeError:
            ok = False
        if not ok:
            raise _bad(key, f"invalid row {row!r}")


def _machine_type_row(r: list) -> bool:
    return (
        isinstance(r[1], str)
        and r[1] != ""
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (r[0], r[2], r[3]))
        and r[0] >= 0
        and 0 < r[2] <= 1
        and 0 < r[3] <= 1
    )


def _quantile_table(v: Any, key: str, full: bool = False) -> None:
    """[[quantile, value], ...] starting at quantile 0, both increasing, values > 0."""
    if not isinstance(v, (list, tuple)) or len(v) < 2:
        raise _bad(key, "expected a list of at least 2 [quantile, value] rows")
    qs, xs = [], []
    for row in v:
        if not isinstance(row, (list, tuple)) or len(row) != 2:
            raise _bad(key, f"every row is [quantile, value], got {row!r}")
        qs.append(_num(row[0], key, 0, 1))
        xs.append(_num(row[1], key, 1e-12, 1e12))
    if qs[0] != 0:
        raise _bad(key, "the first quantile must be 0")
    if full and qs[-1] != 1:
        raise _bad(key, "the last quantile must be 1")
    if any(b <= a for a, b in zip(qs, qs[1:])) or any(b < a for a, b in zip(xs, xs[1:])):
        raise _bad(key, "quantiles must increase strictly and values must not decrease")


def _mixture(v: Any, key: str) -> None:
    if not isinstance(v, (list, tuple)) or not v:
        raise _bad(key, "expected a list of [weight, mu, sigma] components")
    for row in v:
        if not isinstance(row, (list, tuple)) or len(row) != 3:
            raise _bad(key, f"every component is [weight, mu, sigma], got {row!r}")
        _num(row[0], key, 0, 1)
        _num(row[1], key, -50, 50)
        _num(row[2], key, 1e-6, 20)
    if abs(sum(r[0] for r in v) - 1) > 1e-6:
        raise _bad(key, "component weights must sum to 1")


def _priorities(v: Any, cls: str) -> None:
    key = f"job_priorities.{cls}"
    if not isinstance(v, (list, tuple)) or not v:
        raise _bad(key, "expected a list of [priority, weight] rows")
    for row in v:
        if not isinstance(row, (list, tuple)) or len(row) != 2 or row[0] not in PRIORITY_CLASSES[cls] or isinstance(row[0], bool):
            raise _bad(key, f"priority of class {cls} must be one of {PRIORITY_CLASSES[cls]}, got {row!r}")
        _num(row[1], key, 0, 1e9)
    if sum(r[1] for r in v) <= 0:
        raise _bad(key, "weights must not all be 0")


def _per_class(p: SynthParams, key: str, check) -> None:
    v = getattr(p, key)
    if not isinstance(v, dict) or set(v) != set(CLASS_NAMES):
        raise _bad(key, f"expected a mapping with the classes {', '.join(CLASS_NAMES)}")
    for k in CLASS_NAMES:
        check(k, v[k])


def _shares(v: Any, key: str, n: int) -> None:
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise _bad(key, f"expected {n} shares")
    xs = [_num(x, key, 0, 1) for x in v]
    if abs(sum(xs) - 1) > 1e-6:
        raise _bad(key, "shares must sum to 1")


def _share_dict(v: Any, key: str, names: tuple[str, ...]) -> None:
    if not isinstance(v, dict) or set(v) != set(names):
        raise _bad(key, f"expected a mapping with the keys {', '.join(names)}")
    xs = [_num(v[k], f"{key}.{k}", 0, 1) for k in names]
    if abs(sum(xs) - 1) > 1e-6:
        raise _bad(key, "shares must sum to 1")
