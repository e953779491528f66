"""A synthetic Google cluster trace 2011: a workload model calibrated to the papers.

Beaumont et al. (2015) §7 ask for "a complete generating model" of the trace;
this module is one, built from the numbers the four papers publish. It is a
pure library: :func:`generate` takes :class:`SynthParams` and a seed and
returns polars DataFrames with exactly the trace's columns
(:mod:`colocate.trace`); it never reads config files or paths.

The model, table by table (every number is a field of :class:`SynthParams`):

* **machines** (``machine_events``) — capacities in the proportions of Reiss
  et al. (SoCC'12, Table 1); independent Poisson removals (Beaumont §6),
  maintenance bursts shaped like Beaumont §6's removal histogram, the three
  outstanding mass-removal events of §6, and removal durations after Fig 7.
* **jobs** — two populations. *Large* jobs, in the priority classes of
  Beaumont §1.1, have a mean total CPU and memory drawn from the log-normal
  (mixtures) of Beaumont Table 2 and durations from Table 3; production jobs
  carry the daily/weekly/hourly/long-term patterns of Table 4 with the phase
  spread of §5.2. *Small* jobs (1–few short tasks, tiny CPU) fill the trace
  so that per 5-minute window the large jobs are about 6% of the alive jobs
  and carry about 95% of the CPU (Beaumont Table 1), and so that 95% of the
  tasks are shorter than 2 hours (Janus & Rzadca §3.1).
* **tasks** (``task_events``) — SUBMIT/SCHEDULE/FINISH with requests that
  are a multiple of usage; a share of *failing* tasks carry EVICT/FAIL/KILL/
  LOST events, some re-submitted on another machine (Janus §3.1).
* **usage** (``task_usage``) — per task a mean μ_i; the 5-minute average
  ("CPU rate", y) is μ_i·M(t)·Z(t) and the instantaneous sample ("sampled CPU
  usage", x) is y·S(t) with E[S] = 1 (Janus Fig 1: inst is unbiased), with
  per-task standard deviations on Janus §3.3's lines (Fig 3) and S drawn from
  shape families like Janus Fig 4's centroids; each task's skewness then
  follows its CV (busy tasks peaked with a tail towards idle, near-idle ones
  spiky), so that sums of N tasks turn Gaussian at Janus Table 1's rate.
  M(t) holds the production patterns and, for most tasks, short level shifts
  (Janus §3.4: the K-S test rejects time invariance for ~30% of long tasks,
  alike for windows of 12, 24 and 36 records). The tasks of a large job share
  their levels and noise draws (``job_common_fluctuation``: each task keeps its
  own law, the job's tasks move together, Beaumont §4.3). Production jobs are
  the exception: their workload (patterns times a noise of Table 4's ratio,
  ``noise_ratio_quantiles``) is spread over the tasks alive in each window,
  each task adding a small noise of its own (``patterned_task_noise_cv``), and
  their level shifts show in the 1-s samples only. 1.2% of tasks have zero
  inst usage and a handful of records have avg > 1 (Janus §3.1). Memory is
  flat, two-cluster flat or affine in CPU per job (Beaumont §4.2).

Each task's realized coefficients of variation are matched to targets on
Janus's lines by reshaping only its noise (a monotone power transform), and
the lines are solved over the long, non-failing tasks, so the statistics the
analyses compute land on the published values at any scale.

API::

    params = SynthParams.from_dict(config["synthetic"])   # ValueError names a bad key
    tables = generate(params, seed)                       # 4 trace tables (truth=True adds 2)
    shards = split_shards(tables["task_usage"], "task_usage", n, params.end_us)

Known simplifications: tasks keep running on a machine while it is removed;
job events have no EVICT; jobs' weekly lows fall on trace days 5-6 (mod 7).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy.special import gammaincinv, ndtr, ndtri

from colocate.trace import (
    PRIORITY_CLASSES,
    TRACE_START_US,
    WINDOW_US,
    EventType,
    MachineEventType,
    column_names,
    polars_schema,
)

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
_WEEK_US = 7 * _DAY_US
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
        """Raise ``ValueError`` naming the first invalid parameter."""
        _number(self, "days", lo=1 / 24, hi=3650)
        _number(self, "machines", lo=1, hi=10_000_000, integer=True)
        _rows(self, "machine_types", 4, check=_machine_type_row)
        _number(self, "machine_failure_rate", lo=0, hi=0.1)
        _number(self, "removal_dispersion", lo=1.0, hi=100.0)
        _number(self, "maintenance_windows_per_day", lo=0, hi=288)
        _rows(self, "maintenance_burst_sizes", 2, check=lambda r: r[0] >= 1 and r[1] >= 0 and float(r[0]).is_integer())
        if sum(r[1] for r in self.maintenance_burst_sizes) <= 0:
            raise ValueError("synthetic.maintenance_burst_sizes: the window counts must not all be 0")
        _quantile_table(self.removal_duration_quantiles, "removal_duration_quantiles")
        _number(self, "mass_removal_events", lo=0, hi=100, integer=True)
        _number(self, "mass_removal_share", lo=0, hi=1)
        _number(self, "mass_removal_batches", lo=1, hi=100_000, integer=True)
        _number(self, "mass_removal_interval_s", lo=0, hi=3600)
        _number(self, "mass_removal_down_s", lo=0, hi=86400)
        _number(self, "mass_removal_readd_spread_s", lo=0.001, hi=3600)
        _number(self, "flapping_events", lo=0, hi=100, integer=True)
        _number(self, "flapping_share", lo=0, hi=1)
        _number(self, "flapping_cycles", lo=1, hi=1000, integer=True)
        _pair(self.flapping_down_minutes, "flapping_down_minutes", lo=1 / 60, hi=1440, increasing=True)
        _pair(self.flapping_up_minutes, "flapping_up_minutes", lo=1 / 60, hi=1440, increasing=True)
        _number(self, "flapping_readd_spread_s", lo=0.001, hi=3600)
        _per_class(self, "large_jobs_per_day", lambda k, v: _num(v, f"large_jobs_per_day.{k}", 0, 1e7))
        _number(self, "job_size_scale", lo=1e-9, hi=1e6)
        _per_class(self, "job_cpu_lognormal", lambda k, v: _mixture(v, f"job_cpu_lognormal.{k}"))
        _per_class(self, "job_memory_lognormal", lambda k, v: _mixture(v, f"job_memory_lognormal.{k}"))
        _number(self, "job_cpu_memory_correlation", lo=-0.99, hi=0.99)
        _per_class(self, "job_duration_quantiles", lambda k, v: _quantile_table(v, f"job_duration_quantiles.{k}"))
        _per_class(self, "job_priorities", lambda k, v: _priorities(v, k))
        _shares(self.scheduling_class_shares, "scheduling_class_shares", 4)
        _number(self, "users", lo=1, hi=10_000_000, integer=True)
        _number(self, "task_cpu_mean", lo=1e-6, hi=1)
        _number(self, "task_cpu_mean_sigma", lo=0, hi=5)
        _number(self, "task_balance_sigma", lo=0, hi=5)
        _number(self, "job_common_fluctuation", lo=0, hi=1)
        _number(self, "avg_floor_share", lo=0, hi=1)
        _number(self, "task_cpu_max", lo=1e-4, hi=1)
        _number(self, "max_tasks_per_job", lo=1, hi=10_000_000, integer=True)
        _number(self, "short_task_share", lo=0, hi=0.999)
        _number(self, "dominant_alive_share", lo=1e-4, hi=1)
        _number(self, "dominant_cpu_share", lo=1e-3, hi=1)
        _number(self, "dominant_memory_share", lo=1e-3, hi=1)
        _number(self, "small_job_tasks_mean", lo=1, hi=1000)
        _number(self, "small_task_cpu_sigma", lo=0, hi=3)
        _pair(self.small_job_duration_minutes, "small_job_duration_minutes", lo=1 / 60, hi=1e6, increasing=True)
        if self.small_job_duration_minutes[1] >= 110:
            raise ValueError("synthetic.small_job_duration_minutes: small jobs must touch fewer than 24 windows (< 110 min)")
        _share_dict(self.small_job_class_shares, "small_job_class_shares", CLASS_NAMES)
        _pair(self.inst_std_line, "inst_std_line", lo=0, hi=10)
        _pair(self.avg_std_line, "avg_std_line", lo=0, hi=10)
        _number(self, "std_scatter_sigma", lo=0, hi=3)
        _number(self, "inst_scatter_sigma", lo=0, hi=3)
        _pair(self.max_cv, "max_cv", lo=0.01, hi=100)
        _share_dict(self.inst_shape_shares, "inst_shape_shares", SHAPES)
        for key in ("inst_skew_by_cv", "avg_skew_by_cv"):
            _rows(self, key, 2, check=lambda r: all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in r)
                  and r[0] >= 0 and -10 <= r[1] <= 100)
            cvs = [r[0] for r in getattr(self, key)]
            if any(b <= a for a, b in zip(cvs, cvs[1:])):
                raise ValueError(f"synthetic.{key}: the CVs must increase")
        _number(self, "skew_margin", lo=0, hi=10)
        _number(self, "nonstationary_share", lo=0, hi=1)
        _number(self, "level_shift_records", lo=1, hi=1e6)
        _number(self, "level_shift_budget", lo=0, hi=1)
        for name in ("daily", "weekly", "hourly", "long_term"):
            _quantile_table(getattr(self, f"{name}_amplitude_quantiles"), f"{name}_amplitude_quantiles", full=True)
        _quantile_table(self.noise_ratio_quantiles, "noise_ratio_quantiles", full=True)
        _number(self, "patterned_task_noise_cv", lo=0, hi=2)
        _rows(self, "daily_phase_quantiles", 2, check=lambda r: 0 < r[0] < 1 and 0 <= r[1] <= 180)
        ph = self.daily_phase_quantiles
        if any(b[0] <= a[0] or b[1] < a[1] for a, b in zip(ph, ph[1:])):
            raise ValueError("synthetic.daily_phase_quantiles: quantiles and degrees must increase")
        if not isinstance(self.weekend_days, list) or any(
            not isinstance(x, int) or isinstance(x, bool) or not 0 <= x <= 6 for x in self.weekend_days
        ) or len(set(self.weekend_days)) != len(self.weekend_days) or len(self.weekend_days) >= 7:
            raise ValueError("synthetic.weekend_days: a list of distinct integers 0-6 (fewer than 7)")
        _share_dict(self.memory_shape_shares, "memory_shape_shares", MEMORY_SHAPES)
        _number(self, "memory_badly_fitted_share", lo=0, hi=1)
        _number(self, "all_zero_task_share", lo=0, hi=0.5)
        if self.all_zero_task_share > 1 - self.failing_task_share:
            raise ValueError("synthetic.all_zero_task_share: must not exceed the share of non-failing tasks")
        _number(self, "avg_above_one_records", lo=0, hi=1_000_000, integer=True)
        _number(self, "failing_task_share", lo=0, hi=0.95)
        _share_dict(self.failing_event_shares, "failing_event_shares", FAILING)
        _number(self, "fail_terminal_share", lo=0, hi=1)
        _pair(self.request_over_usage, "request_over_usage", lo=0, hi=100)
        if self.request_over_usage[0] <= 0:
            raise ValueError("synthetic.request_over_usage: the median must be > 0")

    def __post_init__(self) -> None:
        self.validate()


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


# ============================================================================ helpers


def _rngs(seed: int) -> dict[str, np.random.Generator]:
    """One independent generator per mechanism, spawned from ``seed`` in a fixed order.

    Changing how one mechanism draws leaves the others' draws unchanged.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    names = ("machines", "failures", "jobs", "small", "tasks", "usage", "memory", "events", "aux", "names")
    children = np.random.SeedSequence(int(seed)).spawn(len(names))
    return {n: np.random.default_rng(s) for n, s in zip(names, children)}


def hash_strings(values: list[str]) -> list[str]:
    """Base64 SHA-256 of each string: 44 characters ending in '=', like the trace's hashed fields."""
    return [base64.b64encode(hashlib.sha256(v.encode()).digest()).decode() for v in values]


def inverse_cdf(u: np.ndarray, table: list) -> np.ndarray:
    """Sample by inverse CDF with log-linear interpolation between [quantile, value] points.

    ``u`` above the last quantile gives ``inf`` (e.g. "runs the whole trace").
    """
    q = np.array([r[0] for r in table], dtype=float)
    logv = np.log(np.array([r[1] for r in table], dtype=float))
    out = np.exp(np.interp(u, q, logv))
    return np.where(u > q[-1], np.inf, out)


def _mixture_inverse(u: np.ndarray, mix: list) -> np.ndarray:
    """Inverse CDF of a Gaussian mixture [[w, mu, sigma], ...], by interpolation on a fine grid."""
    w = np.array([c[0] for c in mix])
    mu = np.array([c[1] for c in mix])
    sd = np.array([c[2] for c in mix])
    grid = np.linspace((mu - 9 * sd).min(), (mu + 9 * sd).max(), 20001)
    cdf = (w[None, :] * ndtr((grid[:, None] - mu[None, :]) / sd[None, :])).sum(axis=1)
    cdf, idx = np.unique(cdf, return_index=True)
    return np.interp(u, cdf, grid[idx])


def _choice(rng: np.random.Generator, n: int, weights: list | np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    return rng.choice(len(w), size=n, p=w / w.sum())


def _allocate(total: int, weights: np.ndarray) -> np.ndarray:
    """Split ``total`` in proportion to ``weights`` (largest remainder; deterministic)."""
    w = np.asarray(weights, dtype=float)
    exact = total * w / w.sum()
    base = np.floor(exact).astype(np.int64)
    rest = total - base.sum()
    order = np.argsort(-(exact - base), kind="stable")
    base[order[:rest]] += 1
    return base


def _segments(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row -> owner index and row -> position within owner, for owners with ``counts`` rows each."""
    counts = np.asarray(counts, dtype=np.int64)
    owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    pos = np.arange(owner.size, dtype=np.int64) - starts[owner]
    return owner, pos


def _group_mean(owner: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    cnt = np.bincount(owner, minlength=n)
    s = np.bincount(owner, weights=values, minlength=n)
    return np.divide(s, cnt, out=np.zeros(n), where=cnt > 0)


def _group_var(owner: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    m = _group_mean(owner, values, n)
    return np.maximum(_group_mean(owner, values * values, n) - m * m, 0.0)


def _mean1_lognormal(rng: np.random.Generator, sigma, size: int) -> np.ndarray:
    """Log-normal draws with mean 1 and log-sd ``sigma`` (scalar or per draw)."""
    sigma = np.asarray(sigma, dtype=float)
    return np.exp(rng.standard_normal(size) * sigma - 0.5 * sigma**2)


# ============================================================================ machines


def sample_machines(p: SynthParams, rng: np.random.Generator) -> pl.DataFrame:
    """Machines with capacities in Reiss et al.'s (SoCC'12 Table 1) proportions.

    Columns: ``machine_id`` (distinct random integers like the trace's),
    ``platform_id`` (hashed platform name: 3 platforms), ``cpus``, ``memory``.
    """
    types = p.machine_types
    counts = _allocate(p.machines, np.array([t[0] for t in types], dtype=float))
    kind = rng.permutation(np.repeat(np.arange(len(types)), counts))
    ids = _distinct_ids(rng, p.machines, 1, 6_500_000_000)
    platforms = sorted({t[1] for t in types})
    hashed = dict(zip(platforms, hash_strings([f"platform:{name}" for name in platforms])))
    return pl.DataFrame(
        {
            "machine_id": ids,
            "platform_id": [hashed[types[k][1]] for k in kind],
            "cpus": np.array([types[k][2] for k in kind], dtype=float),
            "memory": np.array([types[k][3] for k in kind], dtype=float),
        }
    )


def _distinct_ids(rng: np.random.Generator, n: int, lo: int, hi: int) -> np.ndarray:
    ids = np.empty(0, dtype=np.int64)
    while ids.size < n:
        draw = rng.integers(lo, hi, size=2 * n + 16, dtype=np.int64)
        allv = np.concatenate([ids, draw])
        _, first = np.unique(allv, return_index=True)
        ids = allv[np.sort(first)]
    return ids[:n]


def machine_events(p: SynthParams, machines: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    """The machine_events table: an ADD at time 0 per machine, then removals and re-adds.

    Removals: independent Poisson failures and maintenance bursts (Beaumont §6),
    the three outstanding events of §6, durations after Fig 7. A machine that
    is already removed is not removed again. REMOVE rows have empty platform,
    CPU and memory fields, as in the trace.
    """
    n = machines.height
    others = [_maintenance_removals(p, n, rng), _mass_removals(p, n, rng), _flapping_removals(p, n, rng)]
    other = _cat3(*(list(x) for x in zip(*others)))
    # Beaumont's rate counts removals per window over all machines, removed or not: draws that hit a
    # machine already down are dropped, so the independent failures are topped up to the expected count
    expected = p.machine_failure_rate * n * p.windows
    independent = _independent_removals(p, n, rng, _window_counts(p, n, rng))
    for attempt in range(4):
        src = np.repeat([0, 1], [independent[0].size, other[0].size])
        mi, t_rem, t_add, src = _non_overlapping(*_cat3(*([a, b] for a, b in zip(independent, other))), src)
        deficit = expected - float((src == 0).sum())
        if deficit < 1 or attempt == 3:
            break
        extra = _independent_removals(p, n, rng, rng.poisson(deficit))
        independent = _cat3(*([a, b] for a, b in zip(independent, extra)))
    end = p.end_us
    readd = t_add < end
    ids = machines["machine_id"].to_numpy()
    plat = machines["platform_id"].to_numpy()
    cpus = machines["cpus"].to_numpy()
    mem = machines["memory"].to_numpy()
    add0 = pl.DataFrame(
        {"time": np.zeros(n, dtype=np.int64), "machine_id": ids, "event_type": np.full(n, int(MachineEventType.ADD)),
         "platform_id": plat, "cpus": cpus, "memory": mem}
    )
    rem = pl.DataFrame(
        {"time": t_rem, "machine_id": ids[mi], "event_type": np.full(mi.size, int(MachineEventType.REMOVE)),
         "platform_id": pl.Series([None] * mi.size, dtype=pl.String), "cpus": np.full(mi.size, np.nan),
         "memory": np.full(mi.size, np.nan)}
    )
    m2 = mi[readd]
    add = pl.DataFrame(
        {"time": t_add[readd], "machine_id": ids[m2], "event_type": np.full(m2.size, int(MachineEventType.ADD)),
         "platform_id": plat[m2], "cpus": cpus[m2], "memory": mem[m2]}
    )
    out = pl.concat([add0, rem, add]).with_columns(pl.col("cpus").fill_nan(None), pl.col("memory").fill_nan(None))
    return _cast(out.sort(["time", "event_type", "machine_id"], descending=[False, True, False]), "machine_events")


def removal_durations(p: SynthParams, rng: np.random.Generator, n: int) -> np.ndarray:
    """Removal durations in µs after Beaumont Fig 7 (``inf``: never re-added)."""
    minutes = inverse_cdf(rng.random(n), p.removal_duration_quantiles)
    return np.where(np.isinf(minutes), np.inf, minutes * _MIN_US)


_NEVER = np.iinfo(np.int64).max


def _with_durations(p, rng, mi, t_rem):
    """Re-add times after removal durations (Fig 7); ``_NEVER`` for machines that do not come back."""
    d = removal_durations(p, rng, mi.size)
    never = np.isinf(d)
    t_add = t_rem.astype(np.int64) + np.maximum(np.where(never, 0.0, d), 1e6).astype(np.int64)
    t_add[never] = _NEVER
    return mi.astype(np.int64), t_rem.astype(np.int64), t_add


def _window_counts(p: SynthParams, n: int, rng: np.random.Generator) -> np.ndarray:
    """Removals per window outside bursts: negative binomial with mean rate·n and variance/mean ``removal_dispersion``."""
    m = p.machine_failure_rate * n
    if p.removal_dispersion <= 1.0 or m <= 0:
        return rng.poisson(m, p.windows)
    r = m / (p.removal_dispersion - 1.0)
    return rng.negative_binomial(r, r / (r + m), p.windows)


def _independent_removals(p: SynthParams, n: int, rng: np.random.Generator, k):
    """Failures on uniform machines: ``k`` at uniform times, or ``k[w]`` uniform within each window w (Beaumont §6)."""
    if np.ndim(k) == 0:
        mi = rng.integers(0, n, k)
        t = rng.integers(TRACE_START_US, p.end_us, k)
    else:
        w = np.repeat(np.arange(k.size), k)
        mi = rng.integers(0, n, w.size)
        t = TRACE_START_US + w.astype(np.int64) * WINDOW_US + rng.integers(0, WINDOW_US, w.size)
    return _with_durations(p, rng, mi, t)


def _maintenance_removals(p: SynthParams, n: int, rng: np.random.Generator):
    """Maintenance bursts: windows with 10-30 removals (Beaumont §6's histogram tail)."""
    k = rng.poisson(p.maintenance_windows_per_day * p.days)
    sizes = np.array([r[0] for r in p.maintenance_burst_sizes], dtype=np.int64)
    # the ~1 background removal of the window tops the burst up; a burst has at least the table's smallest
    # size (10, Beaumont's definition of a maintenance window) even without one
    size = np.maximum(sizes[_choice(rng, k, [r[1] for r in p.maintenance_burst_sizes])] - 1, sizes.min())
    wins = rng.integers(0, p.windows, k)
    mi, t = [], []
    for s, w in zip(np.minimum(size, n), wins):
        mi.append(rng.choice(n, size=s, replace=False))
        t.append(TRACE_START_US + w * WINDOW_US + rng.integers(0, WINDOW_US, s))
    mi = np.concatenate(mi) if mi else np.empty(0, np.int64)
    t = np.concatenate(t) if t else np.empty(0, np.int64)
    return _with_durations(p, rng, mi, t)


def _event_start(p: SynthParams, rng: np.random.Generator, span_us: float) -> int:
    hi = max(TRACE_START_US + 1, p.end_us - int(span_us) - WINDOW_US)
    return int(rng.integers(TRACE_START_US, hi))


def _mass_removals(p: SynthParams, n: int, rng: np.random.Generator):
    """Outstanding events: many machines removed at 30 s intervals, then all re-added together (Beaumont §6).

    Like the real trace's: the machines go in ``mass_removal_batches`` batches over tens of minutes, stay down
    ``mass_removal_down_s`` after the last batch, and come back within ``mass_removal_readd_spread_s`` of
    each other.
    """
    mi, tr, ta = [], [], []
    k = int(round(p.mass_removal_share * n))
    removing = p.mass_removal_batches * p.mass_removal_interval_s * _S_US
    for _ in range(p.mass_removal_events):
        if k == 0:
            break
        t0 = _event_start(p, rng, removing + (p.mass_removal_down_s + p.mass_removal_readd_spread_s) * _S_US)
        m = rng.choice(n, size=k, replace=False)
        batch = np.arange(k) % p.mass_removal_batches
        t = t0 + (batch * p.mass_removal_interval_s * _S_US).astype(np.int64) + rng.integers(0, _S_US, k)
        back = t.max() + int(p.mass_removal_down_s * _S_US) + _S_US
        mi.append(m)
        tr.append(t)
        ta.append(back + rng.integers(0, int(p.mass_removal_readd_spread_s * _S_US) + 1, k))
    return _cat3(mi, tr, ta)


def _flapping_removals(p: SynthParams, n: int, rng: np.random.Generator):
    """Outstanding event: a subset removed and re-added many times in a row, until all are re-added together
    (Beaumont §6).

    Each machine runs ``flapping_cycles`` cycles of down and up times (uniform within
    ``flapping_down_minutes`` and ``flapping_up_minutes``), laid out backwards from its last re-add; the last
    re-adds fall within ``flapping_readd_spread_s`` of each other.
    """
    mi, tr, ta = [], [], []
    k = int(round(p.flapping_share * n))
    c = p.flapping_cycles
    for _ in range(p.flapping_events):
        if k == 0:
            break
        m = rng.choice(n, size=k, replace=False)
        down = (rng.uniform(*p.flapping_down_minutes, (k, c)) * _MIN_US).astype(np.int64)
        up = (rng.uniform(*p.flapping_up_minutes, (k, c)) * _MIN_US).astype(np.int64)
        up[:, 0] = 0  # up[:, j]: up time before cycle j's removal (none counted before the first)
        span = int((down + up).sum(axis=1).max())
        end = _event_start(p, rng, span + p.flapping_readd_spread_s * _S_US) + span
        last = end + rng.integers(0, int(p.flapping_readd_spread_s * _S_US) + 1, k)
        # re-add of cycle j: the last re-add less the later cycles' up and down times
        readd = last[:, None] - np.cumsum((down + up)[:, ::-1], axis=1)[:, ::-1] + down + up
        mi.append(np.repeat(m, c))
        tr.append((readd - down).ravel())
        ta.append(readd.ravel())
    return _cat3(mi, tr, ta)


def _cat3(a, b, c):
    if not a:
        e = np.empty(0, np.int64)
        return e, e.copy(), e.copy()
    return (np.concatenate(a).astype(np.int64), np.concatenate(b).astype(np.int64), np.concatenate(c).astype(np.int64))


def _non_overlapping(mi, t_rem, t_add, src):
    """Drop removals of a machine that is already removed (greedy in time order, per machine)."""
    df = pl.DataFrame({"m": mi, "r": t_rem, "a": t_add, "s": src}).sort(["m", "r", "a", "s"])
    while True:
        df = df.with_columns(
            pl.col("a").shift(1).cum_max().over("m").fill_null(-1).alias("_prev")
        ).with_columns((pl.col("r") <= pl.col("_prev")).alias("_bad"))
        if not df["_bad"].any():
            break
        first = pl.col("_bad") & (pl.col("_bad").cast(pl.Int64).cum_sum().over("m") == 1)
        df = df.filter(~first)
    df = df.sort(["r", "m"])
    return df["m"].to_numpy(), df["r"].to_numpy(), df["a"].to_numpy(), df["s"].to_numpy()


# ============================================================================ jobs


def sample_large_jobs(p: SynthParams, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Large (dominant-like) jobs: class, priority, sizes (Beaumont Table 2), lifetimes (Table 3).

    Sizes: log of the mean total CPU and memory follow each class's (mixture)
    normal of Table 2, joined by a Gaussian copula; both are multiplied by
    ``job_size_scale``. Lifetimes: a true duration D from Table 3 and a start
    uniform on [-D, T], so that alive jobs are uniform over the trace; the
    mass above the table's last quantile runs the whole trace.
    """
    cls, cpu, mem, dur = [], [], [], []
    for c_idx, name in enumerate(CLASS_NAMES):
        n = int(rng.poisson(p.large_jobs_per_day[name] * p.days))
        if n == 0:
            continue
        z1 = rng.standard_normal(n)
        z2 = p.job_cpu_memory_correlation * z1 + math.sqrt(1 - p.job_cpu_memory_correlation**2) * rng.standard_normal(n)
        cpu.append(np.exp(_mixture_inverse(ndtr(z1), p.job_cpu_lognormal[name])) * p.job_size_scale)
        mem.append(np.exp(_mixture_inverse(ndtr(z2), p.job_memory_lognormal[name])) * p.job_size_scale)
        dur.append(inverse_cdf(rng.random(n), p.job_duration_quantiles[name]) * _MIN_US)
        cls.append(np.full(n, c_idx))
    if not cls:
        raise ValueError("synthetic.large_jobs_per_day: the model has no large jobs at this scale; raise the rates or days")
    jobs = {
        "class": np.concatenate(cls),
        "cpu_total": np.concatenate(cpu),
        "memory_total": np.concatenate(mem),
        "duration_us": np.concatenate(dur),
    }
    jobs["start_us"], jobs["end_us"] = _place_in_time(p, rng, jobs["duration_us"])
    jobs["large"] = np.ones(jobs["class"].size, dtype=bool)
    return jobs


def _place_in_time(p: SynthParams, rng: np.random.Generator, dur: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start uniform on [TS - D, END] (stationary: a job is alive with the same probability at any time).

    Infinite durations run the whole trace. Returns true (unclipped) start
    and end in µs; pre-trace starts are < TRACE_START_US.
    """
    T = p.end_us - TRACE_START_US
    finite = np.isfinite(dur)
    d = np.where(finite, dur, 0.0)
    start = TRACE_START_US - d + rng.random(dur.size) * (T + d)
    start = np.where(finite, start, -np.inf)
    end = np.where(finite, start + d, np.inf)
    return start, end


def large_tasks(p: SynthParams, jobs: dict, rng: np.random.Generator) -> np.ndarray:
    """Tasks per large job: n_j = C_j / m_j, clipped to 1..max_tasks_per_job.

    A job's per-task mean m_j is log-normal with log-sd ``task_cpu_mean_sigma``;
    its median is solved (bisection) so that the mean μ over the tasks of jobs
    lasting at least 2 hours — the *long* tasks — is ``task_cpu_mean``
    (Janus Table 1: 0.27 for 10 long tasks).
    """
    z = rng.standard_normal(jobs["class"].size)
    C = jobs["cpu_total"]
    start = np.maximum(jobs["start_us"], TRACE_START_US)
    end = np.minimum(jobs["end_us"], p.end_us)
    k0, k1 = window_span(start.astype(np.int64), end.astype(np.int64))
    long_job = (k1 - k0 + 1) >= 24
    if not long_job.any():
        long_job = np.ones_like(long_job)

    def n_for(log_median):
        m = np.exp(log_median + p.task_cpu_mean_sigma * z)
        return np.clip(np.rint(C / m), 1, p.max_tasks_per_job).astype(np.int64)

    def long_mean(log_median):
        n = n_for(log_median)
        mu_sum = np.minimum(C / n, p.task_cpu_max) * n
        return mu_sum[long_job].sum() / n[long_job].sum()

    lo, hi = math.log(p.task_cpu_mean) - 10, math.log(p.task_cpu_mean) + 10
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if long_mean(mid) < p.task_cpu_mean:
            lo = mid
        else:
            hi = mid
    return n_for(0.5 * (lo + hi))


def task_means(p: SynthParams, cpu_total: np.ndarray, n_tasks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Task means μ_i: a job's total split over its tasks with mean-1 log-normal weights (Beaumont §4.3)."""
    owner, _ = _segments(n_tasks)
    w = _mean1_lognormal(rng, p.task_balance_sigma, owner.size)
    w = w / _group_mean(owner, w, n_tasks.size)[owner]
    return np.minimum(cpu_total[owner] / n_tasks[owner] * w, p.task_cpu_max)


def task_lifetimes(p: SynthParams, start: np.ndarray, end: np.ndarray, owner: np.ndarray, rng: np.random.Generator):
    """Observed task [a, b) in µs within the trace; tasks start within 30 s of the job's start."""
    n = owner.size
    js, je = start[owner], end[owner]
    a = np.where(js < TRACE_START_US, TRACE_START_US, js + rng.random(n) * 30 * _S_US)
    b = np.where(je >= p.end_us, p.end_us, je - rng.random(n) * 10 * _S_US)
    b = np.minimum(np.maximum(b, a + _S_US), p.end_us)
    a = np.minimum(a, b - 1)
    return np.floor(a).astype(np.int64), np.floor(b).astype(np.int64)


def window_span(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and last 5-minute window index touched by [a, b)."""
    k0 = (a - TRACE_START_US) // WINDOW_US
    k1 = (b - 1 - TRACE_START_US) // WINDOW_US
    return k0, k1


def small_jobs(p: SynthParams, large: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Small jobs (1-few short tasks, tiny CPU) derived from the large population's targets.

    Count: so that ``short_task_share`` of all tasks are short (Janus §3.1).
    Durations: so that large jobs are ``dominant_alive_share`` of the alive
    jobs per window (Beaumont Table 1). CPU: so that large jobs carry
    ``dominant_cpu_share`` of the CPU (Table 1); memory likewise.
    """
    W = p.windows
    n_long = int(large["_n_long"])
    n_short = int(large["_n_short"])
    alive_large = float(large["_job_windows"]) / W
    want_short = max(0.0, n_long * p.short_task_share / (1 - p.short_task_share) - n_short)
    alive_small = alive_large * (1 - p.dominant_alive_share) / p.dominant_alive_share
    lo, hi = p.small_job_duration_minutes
    n_jobs = int(round(want_short / p.small_job_tasks_mean))
    if n_jobs == 0:
        n_jobs = int(round(alive_small * W / (1 + 25 / 5)))
    n_jobs = max(n_jobs, 1)
    # records per job needed: alive_small * W / n_jobs; a job of d minutes touches about 1 + d/5 windows
    want_minutes = max(lo, min(hi, (alive_small * W / n_jobs - 1) * 5))
    minutes = _clipped_lognormal_with_mean(rng.standard_normal(n_jobs), want_minutes, lo, hi)
    dur = minutes * _MIN_US
    start, end = _place_in_time(p, rng, dur)
    cls = _choice(rng, n_jobs, [p.small_job_class_shares[c] for c in CLASS_NAMES])
    n_tasks = 1 + rng.poisson(p.small_job_tasks_mean - 1, n_jobs)
    return {
        "class": cls,
        "duration_us": dur,
        "start_us": start,
        "end_us": end,
        "n_tasks": n_tasks.astype(np.int64),
        "large": np.zeros(n_jobs, dtype=bool),
    }


def _clipped_lognormal_with_mean(z: np.ndarray, mean: float, lo: float, hi: float, sigma: float = 1.0) -> np.ndarray:
    """clip(M·exp(σ z), lo, hi) with M solved (bisection) so that the draws' mean is ``mean``."""
    a, b = math.log(lo) - 5 * sigma, math.log(hi) + 5 * sigma
    for _ in range(60):
        mid = 0.5 * (a + b)
        if np.clip(np.exp(mid + sigma * z), lo, hi).mean() < mean:
            a = mid
        else:
            b = mid
    return np.clip(np.exp(0.5 * (a + b) + sigma * z), lo, hi)


# ============================================================================ the model, assembled


@dataclass
class _Model:
    """Everything sampled before rendering: per-job and per-task arrays."""

    jobs: dict
    tasks: dict
    machines: pl.DataFrame
    info: dict


def sample_model(p: SynthParams, seed: int) -> _Model:
    """Sample jobs and tasks (sizes, lifetimes, failures, usage parameters) without rendering records."""
    r = _rngs(seed)
    machines = sample_machines(p, r["machines"])
    lj = sample_large_jobs(p, r["jobs"])
    lj["n_tasks"] = large_tasks(p, lj, r["jobs"])
    owner, _ = _segments(lj["n_tasks"])
    mu = task_means(p, lj["cpu_total"], lj["n_tasks"], r["jobs"])
    a, b = task_lifetimes(p, lj["start_us"], lj["end_us"], owner, r["jobs"])
    k0, k1 = window_span(a, b)
    nrec = k1 - k0 + 1
    lj["_n_long"] = int((nrec >= 24).sum())
    lj["_n_short"] = int((nrec < 24).sum())
    ja = np.maximum(lj["start_us"], TRACE_START_US)
    jb = np.minimum(lj["end_us"], p.end_us)
    jk0, jk1 = window_span(ja.astype(np.int64), jb.astype(np.int64))
    lj["_job_windows"] = float((jk1 - jk0 + 1).sum())
    large_cpu = float((mu * nrec).sum()) / p.windows
    large_mem = float(lj["memory_total"] @ (jk1 - jk0 + 1)) / p.windows

    sj = small_jobs(p, lj, r["small"])
    s_owner, _ = _segments(sj["n_tasks"])
    sa, sb = task_lifetimes(p, sj["start_us"], sj["end_us"], s_owner, r["small"])
    sk0, sk1 = window_span(sa, sb)
    s_nrec = sk1 - sk0 + 1
    # small-task CPU and memory so that large jobs carry the dominant shares (Beaumont Table 1)
    w = np.exp(p.small_task_cpu_sigma * r["small"].standard_normal(s_owner.size))
    small_cpu_total = large_cpu * (1 - p.dominant_cpu_share) / p.dominant_cpu_share
    s_mu = w * small_cpu_total * p.windows / max(float((w * s_nrec).sum()), 1e-300)
    s_mu = np.minimum(s_mu, p.task_cpu_max)
    wm = np.exp(r["small"].standard_normal(sj["class"].size))
    small_mem_total = large_mem * (1 - p.dominant_memory_share) / p.dominant_memory_share
    s_jk0, s_jk1 = window_span(np.maximum(sj["start_us"], TRACE_START_US).astype(np.int64),
                               np.minimum(sj["end_us"], p.end_us).astype(np.int64))
    sj["memory_total"] = wm * small_mem_total * p.windows / max(float((wm * (s_jk1 - s_jk0 + 1)).sum()), 1e-300)
    sj["cpu_total"] = np.bincount(s_owner, weights=s_mu, minlength=sj["class"].size)

    jobs = _merge_jobs(lj, sj)
    # tasks in job order (job ids increase with start time)
    order = jobs["_order"]
    n_tasks = jobs["n_tasks"]
    t_owner_old = np.concatenate([owner, s_owner + lj["class"].size])
    t_mu = np.concatenate([mu, s_mu])
    t_a = np.concatenate([a, sa])
    t_b = np.concatenate([b, sb])
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    new_owner = rank[t_owner_old]
    t_order = np.lexsort((np.arange(new_owner.size), new_owner))
    tasks = {
        "job": new_owner[t_order],
        "mu": t_mu[t_order],
        "a": t_a[t_order],
        "b": t_b[t_order],
    }
    _, tasks["task_index"] = _segments(n_tasks)
    tasks["k0"], tasks["k1"] = window_span(tasks["a"], tasks["b"])
    tasks["large"] = jobs["large"][tasks["job"]]
    info = {"large_cpu_per_window": large_cpu, "small_cpu_per_window": small_cpu_total}
    model = _Model(jobs=jobs, tasks=tasks, machines=machines, info=info)
    _job_attributes(p, model, r["jobs"])
    _production_patterns(p, model, r["jobs"])
    _task_failures(p, model, r["tasks"])
    _task_variability(p, model, r["tasks"])
    _task_memory(p, model, r["memory"])
    _placement(p, model, r["tasks"])
    return model


def _merge_jobs(lj: dict, sj: dict) -> dict:
    """Concatenate large and small jobs and order them by start (job IDs increase with submission)."""
    keys = ("class", "cpu_total", "memory_total", "duration_us", "start_us", "end_us", "n_tasks", "large")
    jobs = {k: np.concatenate([lj[k], sj[k]]) for k in keys}
    start = np.where(np.isfinite(jobs["start_us"]), jobs["start_us"], -1e30)
    order = np.lexsort((np.arange(start.size), start))
    jobs = {k: v[order] for k, v in jobs.items()}
    jobs["_order"] = order
    return jobs


def _job_attributes(p: SynthParams, m: _Model, rng: np.random.Generator) -> None:
    """Job IDs, priorities, scheduling classes, users, names, requests."""
    J = m.jobs
    n = J["class"].size
    gaps = rng.integers(1, max(2, int(2 * 6.2e9 / max(n, 1))), n)
    J["job_id"] = 3_400_000 + np.cumsum(gaps).astype(np.int64)
    prio = np.empty(n, dtype=np.int64)
    for c_idx, name in enumerate(CLASS_NAMES):
        sel = np.flatnonzero(J["class"] == c_idx)
        table = p.job_priorities[name]
        prio[sel] = np.array([t[0] for t in table])[_choice(rng, sel.size, [t[1] for t in table])]
    J["priority"] = prio
    J["scheduling_class"] = _choice(rng, n, p.scheduling_class_shares).astype(np.int64)
    popularity = np.exp(1.5 * rng.standard_normal(p.users))
    J["user"] = _choice(rng, n, popularity)
    J["logical"] = rng.integers(0, max(1, (2 * n) // 3), n)
    med, sd = p.request_over_usage
    J["request_ratio"] = med * np.exp(sd * rng.standard_normal(n))
    J["memory_request_ratio"] = med * np.exp(sd * rng.standard_normal(n))
    J["disk_request"] = 1.9e-4 * np.exp(1.0 * rng.standard_normal(n))
    J["different_machines"] = (rng.random(n) < 0.12).astype(np.int8)
    # job SUBMIT and SCHEDULE times; jobs alive at the trace start have both at time 0
    pre = J["start_us"] < TRACE_START_US
    sched = np.where(pre, 0, np.floor(np.maximum(np.nan_to_num(J["start_us"], neginf=0), TRACE_START_US)))
    J["sched_us"] = sched.astype(np.int64)
    J["submit_us"] = np.where(pre, 0, np.maximum(J["sched_us"] - rng.integers(0, 10 * _S_US, n), TRACE_START_US))


def _production_patterns(p: SynthParams, m: _Model, rng: np.random.Generator) -> None:
    """Daily, weekly, hourly and long-term patterns of large production jobs (Beaumont §5.2, Table 4).

    Amplitude/mean ratios are drawn from Table 4's quantiles (so about half
    the jobs have a weekly component above the ~6% noise level); daily peaks
    deviate from a common phase by less than 60° for half of the jobs and
    less than 120° for 90% (§5.2).
    """
    J = m.jobs
    n = J["class"].size
    prod = J["large"] & (J["class"] == CLASS_NAMES.index("production"))
    k = int(prod.sum())
    for name in ("daily", "weekly", "hourly", "long_term"):
        amp = np.zeros(n)
        amp[prod] = inverse_cdf(rng.random(k), getattr(p, f"{name}_amplitude_quantiles"))
        J[f"{name}_amp"] = amp
    common = rng.random() * 360.0
    qs = [0.0] + [r[0] for r in p.daily_phase_quantiles] + [1.0]
    degs = [0.0] + [r[1] for r in p.daily_phase_quantiles] + [180.0]
    dev = np.interp(rng.random(n), qs, degs) * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    J["daily_phase_deg"] = np.where(prod, (common + dev) % 360.0, 0.0)
    J["hourly_phase"] = rng.random(n) * 2 * np.pi
    J["long_term_phase"] = rng.random(n) * 2 * np.pi
    J["patterned"] = prod
    J["noise_ratio"] = np.where(prod, inverse_cdf(rng.random(n), p.noise_ratio_quantiles), 0.0)
    m.info["common_daily_phase_deg"] = common


def _task_failures(p: SynthParams, m: _Model, rng: np.random.Generator) -> None:
    """Failing tasks (Janus §3.1): one EVICT/FAIL/KILL/LOST event each.

    KILL (and a share of FAIL) ends the task; EVICT, LOST and the other FAILs
    are followed by a re-SUBMIT and a SCHEDULE on another machine at the next
    window boundary. A one-record task cannot be re-scheduled: its failure ends it.
    """
    T = m.tasks
    n = T["mu"].size
    failing = rng.random(n) < p.failing_task_share
    kind = _choice(rng, n, [p.failing_event_shares[k] for k in FAILING])
    terminal = (kind == FAILING.index("kill")) | ((kind == FAILING.index("fail")) & (rng.random(n) < p.fail_terminal_share))
    nrec = T["k1"] - T["k0"] + 1
    terminal |= nrec < 2
    # failure window: any record (terminal) or any but the last (re-scheduled)
    span = np.where(terminal, nrec, nrec - 1)
    kf = T["k0"] + np.floor(rng.random(n) * span).astype(np.int64)
    ws = TRACE_START_US + kf * WINDOW_US
    rs = np.maximum(T["a"], ws)
    re = np.minimum(T["b"], ws + WINDOW_US)
    tf = rs + 1 + np.floor(rng.random(n) * np.maximum(re - rs - 2, 0)).astype(np.int64)
    t_resched_base = ws + WINDOW_US
    jitter = np.minimum(rng.integers(_S_US, 30 * _S_US, n), np.maximum((T["b"] - t_resched_base) // 2, 0))
    T["failing"] = failing
    T["fail_kind"] = np.where(failing, kind, -1)
    T["fail_terminal"] = failing & terminal
    T["fail_k"] = np.where(failing, kf, -1)
    T["fail_time"] = np.where(failing, tf, -1)
    resched = t_resched_base + jitter
    delay = np.minimum(rng.integers(1000, 2 * _S_US, n), (resched - tf) // 2)
    T["resubmit_time"] = np.where(failing & ~terminal, tf + delay, -1)
    T["resched_time"] = np.where(failing & ~terminal, resched, -1)
    # Janus §3.1 counts the all-zero tasks left after dropping failing ones: 1.2% of all tasks
    T["all_zero"] = ~failing & (rng.random(n) < p.all_zero_task_share / max(1 - p.failing_task_share, 1e-9))


def _task_variability(p: SynthParams, m: _Model, rng: np.random.Generator) -> None:
    """Per-task std targets on Janus §3.3's lines and the inst shape family (Janus Fig 4).

    A task's avg std is (a_y + b_y μ)·η and its inst std (a_x + b_x μ)·η·η',
    with mean-1 log-normal scatter η, η'. Because coefficients of variation are
    bounded (``max_cv``), the line used internally is solved so that the OLS
    over the long, non-failing tasks hits the published intercept and slope.
    The avg target sets the noise and level budget; :func:`usage_records`
    re-solves both lines on each task's realized means.
    """
    T = m.tasks
    n = T["mu"].size
    mu = np.maximum(T["mu"], 1e-6)
    T["eta_avg"] = _mean1_lognormal(rng, p.std_scatter_sigma, n)
    T["eta_inst"] = T["eta_avg"] * _mean1_lognormal(rng, p.inst_scatter_sigma, n)
    T["shape"] = _choice(rng, n, [p.inst_shape_shares[s] for s in SHAPES]).astype(np.int64)
    T["bimodal_low_share"] = rng.uniform(0.3, 0.7, n)
    T["patterned"] = m.jobs["patterned"][T["job"]]
    T["nonstationary"] = rng.random(n) < p.nonstationary_share
    if p.job_common_fluctuation > 0:
        # tasks of a large job that move together also share their scatter around Janus's lines (each task's own
        # law is unchanged), so that their spikes match in size (Beaumont Fig 5)
        nj = int(T["job"].max()) + 1
        share = T["large"]
        job = T["job"][share]
        T["eta_avg"][share] = _mean1_lognormal(rng, p.std_scatter_sigma, nj)[job]
        T["eta_inst"][share] = T["eta_avg"][share] * _mean1_lognormal(rng, p.inst_scatter_sigma, nj)[job]
    nrec = T["k1"] - T["k0"] + 1
    fit = (nrec >= 24) & ~T["failing"] & ~T["all_zero"]
    T["avg_std_target"] = _std_target(p, mu, T["eta_avg"], fit, "avg")


def _std_target(p: SynthParams, mean, eta, fit, kind: str, floor=None, n_records=None, fixed=None) -> np.ndarray:
    """Std target of each task on Janus §3.3's ``kind`` ("avg" or "inst") line, solved over ``fit``.

    Tasks with a finite ``fixed`` std keep it and the line is solved around them.

    The std is capped by ``max_cv``·mean, by what ``n_records`` records can
    show without a single spike (CV ≤ 0.4·√(n−1) for avg, 0.6·√(n−1) for inst;
    one spike among n records has CV √(n−1)), and by what values in [0, 1]
    allow (0.45·√(m(1−m)), so that few values reach 1).
    """
    if fit.sum() < 10:
        fit = np.ones(mean.size, dtype=bool)
    line = p.avg_std_line if kind == "avg" else p.inst_std_line
    max_cv = p.max_cv[0] if kind == "avg" else p.max_cv[1]
    if n_records is not None:
        max_cv = np.minimum(max_cv, (0.4 if kind == "avg" else 0.6) * np.sqrt(np.maximum(n_records - 1, 1)))
    m = np.clip(mean, 0.0, 1.0)
    cap = np.minimum(max_cv * m, 0.45 * np.sqrt(m * (1 - m)))
    return _solve_line(mean, eta, line, cap, fit, floor=floor, fixed=fixed)


def _solve_line(mu, eta, target: list, cap, fit, floor=None, fixed=None) -> np.ndarray:
    """σ_i = clip((a + b μ_i) η_i, floor_i, cap_i), with (a, b) solved so OLS of σ on μ over ``fit`` is ``target``.

    Where ``fixed`` is finite, σ_i is that value (it still counts in the OLS)."""
    a0, b0 = target
    lo = np.zeros_like(mu) if floor is None else np.minimum(floor, cap)
    free = np.ones(mu.size, dtype=bool) if fixed is None else np.isnan(fixed)

    def sigma(a, b):
        return np.where(free, np.minimum(np.maximum((a + b * mu) * eta, lo), cap), fixed if fixed is not None else 0.0)

    a, b = a0, b0
    x = mu[fit]
    for _ in range(50):
        bb, aa = np.polyfit(x, sigma(a, b)[fit], 1)
        if abs(aa - a0) < 1e-6 and abs(bb - b0) < 1e-5:
            break
        a = max(a + (a0 - aa), 0.0)
        b = max(b + (b0 - bb), 0.0)
    return sigma(a, b)


def _task_memory(p: SynthParams, m: _Model, rng: np.random.Generator) -> None:
    """Memory vs CPU per job (Beaumont §4.2): flat, two-cluster flat, affine (slope) or badly fitted.

    A job's mean total memory (Table 2) is split evenly over its tasks; an
    affine job puts a share f of it on a slope in CPU usage.
    """
    J, T = m.jobs, m.tasks
    nj = J["class"].size
    kind = _choice(rng, nj, [p.memory_shape_shares[s] for s in MEMORY_SHAPES]).astype(np.int64)
    kind = np.where(J["large"] & (rng.random(nj) < p.memory_badly_fitted_share), 3, kind)
    kind = np.where(J["large"], kind, 0)
    J["memory_shape"] = kind
    base = J["memory_total"] / J["n_tasks"]
    jmu = np.maximum(_group_mean(T["job"], T["mu"], nj), 1e-6)
    f = rng.uniform(0.3, 0.7, nj)
    n = T["mu"].size
    job = T["job"]
    k = kind[job]
    level = base[job].copy()
    # two clusters: half the tasks at (1 - d), half at (1 + d) of the base
    d = rng.uniform(0.35, 0.6, nj)[job]
    side = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    level = np.where(k == 1, level * (1 + side * d), level)
    level = np.where(k == 3, level * _mean1_lognormal(rng, 0.7, n), level)
    slope = np.where(k == 2, f[job] * base[job] / jmu[job], 0.0)
    intercept = np.where(k == 2, (1 - f[job]) * level, level)
    cap = 0.9
    T["mem_intercept"] = np.minimum(intercept, cap)
    T["mem_slope"] = slope
    T["mem_noise"] = np.where(k == 3, 0.15, 0.02)


def _placement(p: SynthParams, m: _Model, rng: np.random.Generator) -> None:
    """Machines for each task (and its re-schedule), chosen in proportion to CPU capacity."""
    T = m.tasks
    n = T["mu"].size
    cap = m.machines["cpus"].to_numpy()
    pick = lambda k: rng.choice(cap.size, size=k, p=cap / cap.sum())  # noqa: E731
    T["machine"] = pick(n)
    second = pick(n)
    second = np.where(second == T["machine"], (second + 1) % cap.size, second)
    T["machine2"] = second


# ============================================================================ usage records


def usage_records(p: SynthParams, m: _Model, rng: np.random.Generator) -> pl.DataFrame:
    """The task_usage table: one record per task and 5-minute window it runs in.

    avg y(t) = μ_i·M_i(t)·Z(t) and inst x(t) = min(y(t)·L2(t)·S'(t), 1) with
    E[Z] = E[S'] = 1 and L2 normalised so that E[x] = E[y] per task (Janus
    Fig 1: inst samples are unbiased). M_i holds the
    production patterns and level shifts; Z's and S's variances put the task's
    stds on its targets (Janus §3.3); S's shape family follows Janus Fig 4.
    Each task's realized coefficients of variation are then matched to its
    targets by a monotone power transform (ranks and zeros are kept), so that
    the per-task sample statistics the analyses compute fall on the lines, and
    its skewness is brought down to a target set by its CV (``inst_skew_by_cv``,
    ``avg_skew_by_cv``) by a monotone reshaping that keeps mean and std.
    Failing tasks' records stop at a terminal failure or move to another
    machine after a re-schedule.
    """
    T, J = m.tasks, m.jobs
    n = T["mu"].size
    nrec = (T["k1"] - T["k0"] + 1).astype(np.int64)
    owner, pos = _segments(nrec)
    k = T["k0"][owner] + pos
    mu = T["mu"]
    keep = _kept_rows(T, owner, k)
    cv_y2 = (T["avg_std_target"] / np.maximum(mu, 1e-9)) ** 2
    # modulation M: production patterns x level shifts, normalised to mean 1 per task
    u = _regime_draws(p, T, owner, pos, rng)
    patterned = T["patterned"] & ~T["all_zero"]
    prow = patterned[owner]
    M = _job_pattern(p, J, T["job"][owner], k)
    # a production task's levels show in its 1-s samples only (inst, via L2): its 5-minute average is its job's
    M *= np.exp(np.sqrt(np.log1p(np.minimum(p.level_shift_budget * cv_y2, 8.0)))[owner] * np.where(prow, 0.0, u))
    M /= np.where(prow, 1.0, np.maximum(_group_mean(owner, M, n), 1e-12)[owner])
    M[prow] *= _job_workload_split(T, owner[prow], k[prow], keep[prow])
    M *= _small_load_factor(p, T, owner, k, keep, M)
    vm = _group_var(owner, M, n)
    cz2 = np.maximum((1 + cv_y2) / (1 + vm) - 1, 0.0)
    base_y = mu[owner] * M
    z = _mean1_noise(rng, cz2[owner], _job_uniforms(p, T, owner, k, rng))
    # production tasks: their job's patterns times its Table 4 noise, kept as drawn (off Janus's lines)
    z[prow] = _patterned_noise(p, m.jobs, T, owner[prow], k[prow], M[prow], rng)
    # final std targets on the lines, against each task's realized means (what the analyses regress on);
    # only the noises Z and S' are reshaped, so patterns and levels keep their amplitudes
    n_kept = np.bincount(owner[keep], minlength=n)
    fit = (n_kept >= 24) & ~T["failing"] & ~T["all_zero"]
    match = (n_kept >= 12) & ~T["all_zero"]
    ok = owner[keep]
    my = np.maximum(_group_mean(ok, (base_y * z)[keep], n), 1e-9)
    floor_y = np.sqrt(_group_var(ok, base_y[keep], n))  # patterns and levels alone
    fixed = np.where(patterned, np.sqrt(_group_var(ok, (base_y * z)[keep], n)), np.nan)
    sy = _std_target(p, my, T["eta_avg"], fit, "avg", floor=floor_y, n_records=n_kept, fixed=fixed)
    y = np.minimum(base_y * _match_cv(base_y, z, owner, n, sy / my, match & ~patterned, keep), 1.0)
    # each task's skewness after its CV (busy: peaked, near-idle: spiky), by a monotone per-task reshaping
    y_skew = _skew_target(p.avg_skew_by_cv, sy / my, p.skew_margin)
    y = np.minimum(_reshape_skew(y, owner, n, match & ~patterned, keep, y_skew), 1.0)
    # a running large task's 5-minute average is rarely exactly 0 (2.7% of records in the real sample window): the
    # reshaping's clipped low tail goes to a floor of avg_floor_share of the task's mean instead
    my = np.maximum(_group_mean(ok, y[keep], n), 1e-9)
    y = np.where(T["large"][owner] & ~T["all_zero"][owner], np.maximum(y, p.avg_floor_share * my[owner]), y)
    # inst = y·L2·S': L2 follows the task's levels with a share of the inst-only variance, S' is per record
    my = np.maximum(_group_mean(ok, y[keep], n), 1e-9)
    cvy2 = _group_var(ok, y[keep], n) / my**2
    sx0 = _std_target(p, my, T["eta_inst"], fit, "inst", floor=1.02 * np.sqrt(cvy2) * my, n_records=n_kept)
    cvx2 = (sx0 / my) ** 2
    L2 = _inst_levels(p, y, u, owner, n, keep, cvy2 + p.level_shift_inst_share * np.maximum(cvx2 - cvy2, 0))
    base_x = y * L2
    cvb2 = _group_var(ok, base_x[keep], n) / np.maximum(_group_mean(ok, base_x[keep], n), 1e-9) ** 2
    v_rest = np.maximum((1 + cvx2) / (1 + cvb2) - 1, 0.005)
    s_noise = _inst_noise(rng, v_rest[owner], T["shape"][owner], T["bimodal_low_share"][owner])
    mx = np.maximum(_group_mean(ok, (base_x * s_noise)[keep], n), 1e-9)
    # inst at least as variable as avg: CV_x >= 1.02 CV_y (Janus Fig 2)
    floor_x = np.maximum(1.02 * np.sqrt(cvy2) * mx, np.sqrt(_group_var(ok, base_x[keep], n)))
    sx = _std_target(p, mx, T["eta_inst"], fit, "inst", floor=floor_x, n_records=n_kept)
    x = np.minimum(base_x * _match_cv(base_x, s_noise, owner, n, sx / mx, match, keep), 1.0)
    x = np.minimum(_reshape_skew(x, owner, n, match, keep, _skew_target(p.inst_skew_by_cv, sx / mx, p.skew_margin)), 1.0)
    T["avg_std_target"], T["inst_std_target"] = sy, sx
    x = np.where(T["all_zero"][owner], 0.0, _quantize(x))
    y = _quantize(y)
    x = _ensure_nonzero(x, y, owner, ~T["all_zero"], n, keep)
    y = _avg_above_one(p, y, owner, T, rng, keep)
    return _records_frame(p, m, owner, k, x, y, keep, rng)


def _small_load_factor(p: SynthParams, T: dict, owner, k, keep, M) -> np.ndarray:
    """Per-record factor on small tasks' usage: the large jobs' load in that window over its mean, 1 on large tasks.

    With few large jobs alive per window (reduced scales), their total CPU
    swings widely; small jobs that follow it keep the large jobs' CPU share
    near ``dominant_cpu_share`` in every window, as Beaumont Table 1 reports
    (min 0.905, std 0.009).
    """
    large = T["large"][owner]
    sel = large & keep
    load = np.bincount(k[sel], weights=(T["mu"][owner] * M)[sel], minlength=p.windows).astype(float)
    mean = load.mean()
    if mean <= 0:
        return np.ones(owner.size)
    r = load / mean
    return np.where(large, 1.0, np.maximum(r[np.minimum(k, p.windows - 1)], 0.05))


def _inst_levels(p: SynthParams, y, u, owner, n, keep, target_cv2) -> np.ndarray:
    """Inst-only level factor L2 = exp(σ₂·u) of non-stationary tasks, normalised so that E[y·L2] = E[y].

    σ₂ starts from ``level_shift_inst_share`` of the inst-only variance and is
    shrunk (three fixed-point steps) so that CV(y·L2)² stays near
    ``target_cv2``: u also drives y's levels, so the two add up more than
    independent factors would.
    """
    ok = owner[keep]
    cvy2 = _group_var(ok, y[keep], n) / np.maximum(_group_mean(ok, y[keep], n), 1e-12) ** 2
    sig = np.sqrt(np.log1p(np.maximum(target_cv2 - cvy2, 0)))
    for _ in range(3):
        L2 = np.exp(sig[owner] * u)
        b = y * L2
        cvb2 = _group_var(ok, b[keep], n) / np.maximum(_group_mean(ok, b[keep], n), 1e-12) ** 2
        excess = cvb2 - cvy2
        want = np.maximum(target_cv2 - cvy2, 0)
        sig = sig * np.sqrt(np.divide(want, excess, out=np.ones(n), where=excess > 1e-12).clip(0, 4))
    L2 = np.exp(sig[owner] * u)
    return L2 * np.divide(_group_mean(ok, y[keep], n), _group_mean(ok, (y * L2)[keep], n), out=np.ones(n),
                          where=_group_mean(ok, (y * L2)[keep], n) > 0)[owner]


def _kept_rows(T: dict, owner: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Records that exist: a terminal failure ends the task in its failure window."""
    f = T["failing"][owner] & T["fail_terminal"][owner]
    return ~(f & (k > T["fail_k"][owner]))


def _match_cv(base, v, owner, n, target, select, keep, iters: int = 24) -> np.ndarray:
    """Reshape a noise v (c·v^p per task) so that base·v has coefficient of variation ``target`` over the kept records.

    Only tasks in ``select`` change; c keeps the mean of base·v. p is found by
    bisection on log p in [-4, 3] (p from 0.02 to 20), vectorised over tasks.
    Ranks and zeros of v are kept; targets below what ``base`` alone gives
    end at p ≈ 0.02 (v ≈ constant).
    """
    rows = np.flatnonzero(select[owner] & keep)
    if rows.size == 0:
        return v
    o = owner[rows]
    b = base[rows]
    x = v[rows]
    pos = x > 0
    logx = np.where(pos, np.log(np.where(pos, x, 1.0)), 0.0)
    # normalise by the task's largest value for numerical safety
    mx = np.full(n, -np.inf)
    np.maximum.at(mx, o[pos], logx[pos])
    mx = np.where(np.isfinite(mx), mx, 0.0)
    logx = logx - mx[o]
    cnt = np.maximum(np.bincount(o, minlength=n).astype(float), 1)

    def moments(logp):
        w = np.where(pos, np.exp(np.exp(logp)[o] * logx), 0.0)
        y = b * w
        m1 = np.bincount(o, weights=y, minlength=n) / cnt
        m2 = np.bincount(o, weights=y * y, minlength=n) / cnt
        return np.sqrt(np.maximum(m2 - m1 * m1, 0)) / np.maximum(m1, 1e-300), m1, w

    lo = np.full(n, -4.0)
    hi = np.full(n, 3.0)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        c, _, _ = moments(mid)
        up = c < target
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    _, m1, w = moments(0.5 * (lo + hi))
    old_mean = np.bincount(o, weights=b * x, minlength=n) / cnt
    scale = np.divide(old_mean, m1, out=np.ones(n), where=m1 > 0)
    out = v.copy()
    out[rows] = w * scale[o]
    return out


def _skew_target(table: list, cv: np.ndarray, margin: float) -> np.ndarray:
    """Skewness target of each task: ``table`` [[CV, skewness], ...] interpolated at its CV, at least CV − 1/CV + ``margin``.

    CV − 1/CV is the least skewness a non-negative variable with that CV can
    have (an on/off, two-point distribution).
    """
    c = np.array([r[0] for r in table], dtype=float)
    s = np.array([r[1] for r in table], dtype=float)
    return np.maximum(np.interp(cv, c, s), cv - 1.0 / np.maximum(cv, 1e-9) + margin)


def _reshape_skew(v, owner, n, select, keep, target, iters: int = 14) -> np.ndarray:
    """Lower each selected task's skewness to ``target`` by a monotone (Box-Cox) transform of its positive values.

    The positive values u = v / max_i v go to ((u + 10⁻³)^λ − 1)/λ, with λ in
    [−4, 1] found by bisection (vectorised over tasks; λ ≤ 0 makes a
    left-skewed, peaked shape), then affinely back to the positive part's
    mean and variance and clipped at 0; zeros stay zero. A few affine steps
    then restore the task's mean and std after the clipping. Ranks, time
    order and zeros are kept, so window K-S tests are unchanged. Tasks
    already at or below their target are left alone.
    """
    rows = np.flatnonzero(select[owner] & keep)
    if rows.size == 0:
        return v
    o = owner[rows]
    x = v[rows]
    pos = x > 0
    cnt = np.maximum(np.bincount(o, minlength=n).astype(float), 1.0)
    npos = np.bincount(o, weights=pos, minlength=n)
    mx = np.zeros(n)
    np.maximum.at(mx, o, x)
    logu = np.log(np.where(pos, x / np.maximum(mx[o], 1e-300), 1.0) + 1e-3)
    kp = np.maximum(npos, 1.0)
    mean_p = np.bincount(o, weights=x, minlength=n) / kp
    var_p = np.maximum(np.bincount(o, weights=np.where(pos, x * x, 0.0), minlength=n) / kp - mean_p**2, 0.0)

    def reshaped(lam):
        lt = lam[o]
        safe = np.where(np.abs(lt) < 1e-9, 1e-9, lt)
        g = np.where(pos, np.expm1(safe * logu) / safe, 0.0)  # Box-Cox: increasing in u for every λ
        gm = np.bincount(o, weights=g, minlength=n) / kp
        gv = np.maximum(np.bincount(o, weights=g * g, minlength=n) / kp - gm**2, 1e-300)
        b = np.sqrt(var_p / gv)
        h = np.where(pos, np.maximum(mean_p[o] + b[o] * (g - gm[o]), 0.0), 0.0)
        m1 = np.bincount(o, weights=h, minlength=n) / cnt
        d = h - m1[o]
        m2 = np.bincount(o, weights=d * d, minlength=n) / cnt
        m3 = np.bincount(o, weights=d * d * d, minlength=n) / cnt
        return h, np.divide(m3, m2**1.5, out=np.zeros(n), where=m2 > 1e-30)

    _, skew1 = reshaped(np.ones(n))
    act = (skew1 > target) & (npos >= 3) & (var_p > 0)
    # only the tasks that change take part in the bisection
    sub = act[o]
    rows, x, o, pos, logu = rows[sub], x[sub], o[sub], pos[sub], logu[sub]
    lo = np.full(n, -4.0)
    hi = np.ones(n)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        _, sk = reshaped(mid)
        high = sk > target
        hi = np.where(high, mid, hi)
        lo = np.where(high, lo, mid)
    h, _ = reshaped(np.where(act, 0.5 * (lo + hi), 1.0))
    # clipping at 0 raised the mean and lowered the std: restore both (a few affine fixed-point steps)
    m0 = np.bincount(o, weights=x, minlength=n) / cnt
    s0 = np.sqrt(np.maximum(np.bincount(o, weights=x * x, minlength=n) / cnt - m0**2, 0.0))
    for _ in range(4):
        m1 = np.bincount(o, weights=h, minlength=n) / cnt
        s1 = np.sqrt(np.maximum(np.bincount(o, weights=h * h, minlength=n) / cnt - m1**2, 1e-300))
        b = s0 / s1
        h = np.where(pos, np.maximum(m0[o] + b[o] * (h - m1[o]), 0.0), 0.0)
    out = v.copy()
    out[rows] = h
    return out


def _job_pattern(p: SynthParams, J: dict, job: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Production patterns at the middle of window k (Beaumont §5.2): daily, weekly (5 high, 2 low days), hourly, long term."""
    t = (k.astype(np.float64) + 0.5) * WINDOW_US  # since trace start
    pat = J["patterned"][job]
    if not pat.any():
        return np.ones(k.size)
    out = np.ones(k.size)
    idx = np.flatnonzero(pat)
    jj = job[idx]
    tt = t[idx]
    day = 2 * np.pi * tt / _DAY_US
    val = 1.0 + J["daily_amp"][jj] * np.cos(day - np.radians(J["daily_phase_deg"][jj]))
    # weekly: square wave, 5 high days and 2 low, scaled so its weekly Fourier amplitude is the ratio
    frac_low = len(p.weekend_days) / 7.0
    fundamental = 2 * math.sin(math.pi * frac_low) / math.pi
    weekday = np.floor(tt / _DAY_US).astype(np.int64) % 7
    low = np.isin(weekday, p.weekend_days)
    val += -(J["weekly_amp"][jj] / fundamental) * (low.astype(float) - frac_low)
    val += J["hourly_amp"][jj] * np.cos(2 * np.pi * tt / _HOUR_US + J["hourly_phase"][jj])
    span = p.windows * WINDOW_US
    val += J["long_term_amp"][jj] * np.cos(2 * np.pi * tt / span + J["long_term_phase"][jj])
    out[idx] = np.maximum(val, 0.02)
    return out


def _regime_draws(p: SynthParams, T: dict, owner, pos, rng) -> np.ndarray:
    """Load regimes of non-stationary tasks (Janus §3.4): a standardised level per record, 0 elsewhere.

    A non-stationary task's load level is piecewise constant, with a new
    level after a geometric number of records (mean ``level_shift_records``).
    Each level is a draw u, uniform with mean 0 and variance 1; the avg is
    multiplied by exp(σ_L u) with σ_L taking ``level_shift_budget`` of the
    task's avg variance (so the shifts stay within its std target, Janus
    §3.3), and the inst by a further exp(σ_S u) taking
    ``level_shift_inst_share`` of its inst-only variance.
    """
    ns = T["nonstationary"] & ~T["all_zero"]
    out = np.zeros(owner.size)
    rows = np.flatnonzero(ns[owner])
    if rows.size == 0:
        return out
    first = pos[rows] == 0
    change = (rng.random(rows.size) < 1.0 / p.level_shift_records) | first
    regime = np.cumsum(change) - 1
    out[rows] = rng.uniform(-math.sqrt(3), math.sqrt(3), int(change.sum()))[regime]
    rho = p.job_common_fluctuation
    if rho > 0:
        # the same regime process for every task of a large job, indexed by absolute window: a task's own
        # law is unchanged (geometric regimes, uniform levels), its job's tasks move together (Beaumont §4.3)
        shared = _job_regimes(p, T, owner[rows], (T["k0"][owner] + pos)[rows], rng)
        large = (T["large"] & ~T["patterned"])[owner[rows]]
        out[rows] = np.where(large, math.sqrt(rho) * shared + math.sqrt(1 - rho) * out[rows], out[rows])
    return out


def _job_workload_split(T: dict, task: np.ndarray, k: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Per-record factor W̄/W(t) that spreads a job's workload over its tasks alive in window t (Beaumont §4.3, §8).

    W(t) is the sum of the means μ of the job's tasks alive (and kept) in window t and W̄ its mean over
    the job's windows, so the job's total stays μ-weighted at W̄ while tasks end, fail and are replaced.
    """
    out = np.ones(task.size)
    rows = np.flatnonzero(keep)
    if rows.size == 0:
        return out
    slot, _, total = _job_windows(T, task[rows], k[rows])
    W = np.bincount(slot, weights=T["mu"][task[rows]], minlength=total)
    slot_job = np.zeros(total, dtype=np.int64)
    slot_job[slot] = T["job"][task[rows]]
    busy = W > 0
    nj = int(T["job"].max()) + 1
    wbar = np.bincount(slot_job[busy], weights=W[busy], minlength=nj) / np.maximum(
        np.bincount(slot_job[busy], minlength=nj), 1
    )
    out[rows] = wbar[T["job"][task[rows]]] / W[slot]
    return out


def _patterned_noise(p: SynthParams, J: dict, T: dict, task: np.ndarray, k: np.ndarray, pattern: np.ndarray, rng) -> np.ndarray:
    """Mean-1 noise of production tasks' records: a factor common to the job in each window times the task's own.

    A job with noise ratio ν (Beaumont Table 4, ``noise_ratio_quantiles``) and
    n tasks alive on average gets an own-noise CV d = min(``patterned_task_noise_cv``,
    ν'·√(n/2)) per task and a common CV c = √(ν'² − d²/n), so that its 5-minute
    CPU is its ``pattern`` times a noise of CV ν' (c² + d²/n = ν'²) whatever n,
    while its tasks stay balanced (Beaumont §4.3). ν' = ν / RMS(pattern): the
    residual of pattern × noise has sd ν'·RMS·mean, so Table 4's ratio is ν.
    """
    if task.size == 0:
        return np.ones(0)
    job = T["job"][task]
    slot, _, total = _job_windows(T, task, k)
    _, span = _job_spans(T, task, k)
    nj = span.size
    alive = np.bincount(job, minlength=nj) / np.maximum(span, 1)
    rms = np.sqrt(np.bincount(job, weights=pattern**2, minlength=nj) / np.maximum(np.bincount(job, minlength=nj), 1))
    nu = J["noise_ratio"] / np.maximum(rms, 1e-9)
    d = np.minimum(p.patterned_task_noise_cv, nu * np.sqrt(np.maximum(alive, 1.0) / 2))
    c2 = np.maximum(nu**2 - d**2 / np.maximum(alive, 1.0), 0.0)
    common = _mean1_noise(rng, c2[job], ndtr(rng.standard_normal(total))[slot])
    return common * _mean1_noise(rng, (d**2)[job])


def _job_spans(T: dict, task: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per job (indexed by job), the first window of its given records and the number of windows they span (0: none)."""
    job = T["job"][task]
    nj = int(T["job"].max()) + 1 if T["job"].size else 0
    lo = np.full(nj, np.iinfo(np.int64).max)
    hi = np.full(nj, -1)
    np.minimum.at(lo, job, k)
    np.maximum.at(hi, job, k)
    return lo, np.where(hi >= lo, hi - lo + 1, 0)


def _job_windows(T: dict, task: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """A flat index of (job, window) over the windows each job's given records span, and each job's first slot."""
    job = T["job"][task]
    lo, span = _job_spans(T, task, k)
    offset = np.concatenate([[0], np.cumsum(span)[:-1]]).astype(np.int64)
    return offset[job] + (k - lo[job]), offset[span > 0], int(span.sum())


def _job_regimes(p: SynthParams, T: dict, task: np.ndarray, k: np.ndarray, rng) -> np.ndarray:
    """One regime process per job over the windows its tasks span: levels uniform (mean 0, variance 1), new after
    a geometric number of windows (mean ``level_shift_records``). Returns the level at (task's job, window k)."""
    slot, starts, total = _job_windows(T, task, k)
    start = np.zeros(total, dtype=bool)
    start[starts] = True
    change = (rng.random(total) < 1.0 / p.level_shift_records) | start
    levels = rng.uniform(-math.sqrt(3), math.sqrt(3), int(change.sum()))
    return levels[(np.cumsum(change) - 1)[slot]]


def _job_uniforms(p: SynthParams, T: dict, owner: np.ndarray, k: np.ndarray, rng) -> np.ndarray | None:
    """Per-record uniforms for the noise Z: a Gaussian copula with a factor common to the job's tasks in each window
    (weight ``job_common_fluctuation``) on large tasks, independent elsewhere. None when nothing is shared."""
    rho = p.job_common_fluctuation
    if rho <= 0:
        return None
    g = rng.standard_normal(owner.size)
    rows = np.flatnonzero(T["large"][owner])
    slot, _, total = _job_windows(T, owner[rows], k[rows])
    common = rng.standard_normal(total)[slot]
    g[rows] = math.sqrt(rho) * common + math.sqrt(1 - rho) * g[rows]
    return ndtr(g)


def _mean1_noise(rng: np.random.Generator, v: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
    """Positive noise with mean 1 and variance v per draw: gamma (v ≤ 1) or log-normal (v > 1); 1 where v = 0.

    With ``u`` (uniforms, one per draw) the draws are the inverse CDFs at u, so that draws sharing a u move together.
    """
    out = np.ones(v.size)
    g = (v > 1e-8) & (v <= 1.0)
    ln = v > 1.0
    s = np.sqrt(np.log1p(v[ln]))
    if u is None:
        out[g] = rng.gamma(1.0 / v[g], v[g])
        out[ln] = np.exp(s * rng.standard_normal(int(ln.sum())) - 0.5 * s * s)
    else:
        uu = np.clip(u, 1e-12, 1 - 1e-12)
        out[g] = gammaincinv(1.0 / v[g], uu[g]) * v[g]
        out[ln] = np.exp(s * ndtri(uu[ln]) - 0.5 * s * s)
    return out


def _inst_noise(rng: np.random.Generator, v: np.ndarray, shape: np.ndarray, low_share: np.ndarray) -> np.ndarray:
    """Within-window noise S of the inst sample: E[S] = 1, Var[S] = v, in the shape families of Janus Fig 4.

    gamma: exponential-like (v ≈ 1) or peaked (v < 1); zero_inflated: zero with
    probability 1 - π, else gamma — "almost always zero"; bimodal: two levels
    with jitter — "mixed". Infeasible combinations fall back to the nearest family.
    """
    n = v.size
    G, ZI, BI = (SHAPES.index(s) for s in SHAPES)
    shape = shape.copy()
    jitter_v = 1.0 / 16
    two_point_v = (1 + v) / (1 + jitter_v) - 1
    max_two_point = low_share / (1 - low_share)
    shape = np.where((shape == BI) & ((two_point_v <= 0.01) | (two_point_v > max_two_point)), ZI, shape)
    shape = np.where((shape == G) & (v > 2.0), ZI, shape)
    shape = np.where((shape == ZI) & (v <= 0.5), G, shape)
    out = np.empty(n)
    g = shape == G
    out[g] = rng.gamma(1.0 / v[g], v[g])
    zi = shape == ZI
    pi = np.minimum(1.0, 1.5 / (1 + v[zi]))
    inv_k = np.maximum((1 + v[zi]) * pi - 1, 1e-6)
    on = rng.random(int(zi.sum())) < pi
    out[zi] = np.where(on, rng.gamma(1.0 / inv_k, inv_k) / pi, 0.0)
    bi = shape == BI
    pl_ = low_share[bi]
    tp = two_point_v[bi]
    lo = 1 - np.sqrt(tp * (1 - pl_) / pl_)
    hi = 1 + np.sqrt(tp * pl_ / (1 - pl_))
    level = np.where(rng.random(int(bi.sum())) < pl_, lo, hi)
    out[bi] = level * rng.gamma(16.0, 1.0 / 16, int(bi.sum()))
    return out


#: Resolution of the trace's usage values: they are multiples of 2**-20 (9.537e-07).
RESOLUTION = 2.0**-20


def _quantize(v: np.ndarray) -> np.ndarray:
    """Round to the trace's resolution (multiples of 2**-20); NaN stays NaN."""
    return np.rint(v / RESOLUTION) * RESOLUTION


def _ensure_nonzero(x, y, owner, should, n, keep):
    """A task that is not an all-zero task gets at least one non-zero inst sample among its records."""
    mx = np.zeros(n)
    np.maximum.at(mx, owner[keep], x[keep])
    fix = should & (mx <= 0)
    if not fix.any():
        return x
    first = np.cumsum(np.bincount(owner, minlength=n)) - np.bincount(owner, minlength=n)
    rows = first[fix]
    x = x.copy()
    x[rows] = np.where(y[rows] > 0, np.minimum(y[rows], 1.0), RESOLUTION)
    return x


def _avg_above_one(p: SynthParams, y: np.ndarray, owner: np.ndarray, T: dict, rng, keep) -> np.ndarray:
    """A few records with avg > 1 (Janus §3.1: measurement errors), on non-failing, non-zero tasks."""
    k = p.avg_above_one_records
    if k == 0:
        return y
    ok = np.flatnonzero((~T["failing"] & ~T["all_zero"])[owner] & keep)
    if ok.size == 0:
        ok = np.arange(y.size)
    rows = rng.choice(ok, size=min(k, ok.size), replace=False)
    y = y.copy()
    y[rows] = rng.uniform(1.0005, 1.25, rows.size)
    return y


def _records_frame(p: SynthParams, m: _Model, owner, k, x, y, keep, rng) -> pl.DataFrame:
    """Assemble task_usage rows in window order: times, machines (switching after a re-schedule), memory, other columns."""
    T, J = m.tasks, m.jobs
    n = T["mu"].size
    sel = np.flatnonzero(keep)
    order = sel[np.argsort(k[sel] * n + owner[sel], kind="stable")]
    owner, k, x, y = owner[order], k[order], x[order], y[order]
    ws = TRACE_START_US + k * WINDOW_US
    f = T["failing"][owner]
    fk = T["fail_k"][owner]
    resched = f & ~T["fail_terminal"][owner]
    start = np.where(resched & (k == fk + 1), T["resched_time"][owner], np.maximum(T["a"][owner], ws))
    end = np.where(f & (k == fk), T["fail_time"][owner], np.minimum(T["b"][owner], ws + WINDOW_US))
    mid = np.where(resched & (k > fk), T["machine2"][owner], T["machine"][owner])
    # memory (Beaumont §4.2): intercept + slope * avg CPU, with small noise
    mem = T["mem_intercept"][owner] + T["mem_slope"][owner] * np.minimum(y, 1.0)
    mem = _quantize(np.clip(mem * (1 + T["mem_noise"][owner] * rng.standard_normal(owner.size)), 0.0, 1.0))
    df = pl.DataFrame(
        {
            "start_time": start,
            "end_time": end,
            "job_id": J["job_id"][T["job"]][owner],
            "task_index": T["task_index"][owner],
            "machine_id": m.machines["machine_id"].to_numpy()[mid],
            "cpu_rate": y,
            "canonical_memory_usage": mem,
            **_aux_columns(rng, owner, n, x, y, mem),
            "sampled_cpu_usage": x,
        }
    )
    nullable = ("cycles_per_instruction", "memory_accesses_per_instruction", "maximum_disk_io_time")
    return _cast(df.with_columns([pl.col(c).fill_nan(None) for c in nullable]), "task_usage")


def _aux_columns(rng, owner, n, x, y, mem) -> dict[str, np.ndarray]:
    """The other task_usage columns, with magnitudes of the real trace's first window (task_usage part 0).

    assigned memory ≥ canonical, page caches, disk I/O, maximum CPU rate ≥
    both CPU values, CPI ~1-5 (median 2.6), MAI, sample portion 0, aggregation
    type 0/1 (73% 1), and a few missing CPI/MAI/max disk I/O values. Per-task
    levels are log-normal; per-record noise shares two normal draws.
    """
    R = owner.size
    e1 = rng.standard_normal(R)
    e2 = rng.standard_normal(R)
    u = rng.random(R)

    def per_task(median, sigma):
        return (median * np.exp(sigma * rng.standard_normal(n)))[owner]

    assigned = mem * rng.uniform(1.05, 1.6, n)[owner]
    unmapped = mem * per_task(0.2, 1.0) * np.exp(0.3 * e1)
    total_pc = unmapped + mem * per_task(0.25, 1.0) * np.exp(0.3 * e2)
    max_mem = mem * (1 + 0.03 * np.abs(e2))
    disk_io = per_task(8e-4, 1.5) * np.exp(0.5 * e2)
    local_disk = per_task(4e-5, 1.0) * np.exp(0.05 * e1)
    max_cpu = np.maximum(np.maximum(x, y), np.minimum(y * (1 + per_task(4.0, 0.4) * np.exp(0.4 * e1)), 1.0))
    max_disk = np.where(u < 0.026, np.nan, disk_io * (1 + per_task(20.0, 1.0) * np.exp(0.5 * e1)))
    no_counters = (rng.random(n) < 0.05)[owner]
    cpi = np.where(no_counters, np.nan, per_task(2.6, 0.35) * np.exp(0.12 * e1))
    mai = np.where(no_counters, np.nan, per_task(0.0064, 0.8) * np.exp(0.2 * e2))
    q = _quantize
    return {
        "assigned_memory_usage": q(assigned),
        "unmapped_page_cache": q(unmapped),
        "total_page_cache": q(total_pc),
        "maximum_memory_usage": q(max_mem),
        "disk_io_time": q(disk_io),
        "local_disk_space_usage": q(local_disk),
        "maximum_cpu_rate": q(max_cpu),
        "maximum_disk_io_time": q(max_disk),
        "cycles_per_instruction": cpi,
        "memory_accesses_per_instruction": mai,
        "sample_portion": np.zeros(R),
        "aggregation_type": (rng.random(n) < 0.73).astype(np.int8)[owner],
    }


# ============================================================================ events


def job_events(p: SynthParams, m: _Model) -> pl.DataFrame:
    """The job_events table: SUBMIT, SCHEDULE and, for jobs ending in the trace, FINISH/KILL/FAIL.

    A job whose tasks all ended by KILL (or all by FAIL) ends with that event;
    others FINISH. Jobs alive at the trace start have their events at time 0.
    """
    J, T = m.jobs, m.tasks
    nj = J["class"].size
    sched, submit = J["sched_us"], J["submit_us"]
    # task end times: terminal failures end early
    t_end = np.where(T["fail_terminal"], T["fail_time"], T["b"])
    last = np.zeros(nj, dtype=np.int64)
    np.maximum.at(last, T["job"], t_end)
    ended_in_trace = (J["end_us"] < m.info["end_us"]) | (last < m.info["end_us"])
    kill = FAILING.index("kill")
    fail = FAILING.index("fail")
    tk = T["fail_terminal"] & (T["fail_kind"] == kill)
    tf = T["fail_terminal"] & (T["fail_kind"] == fail)
    cnt = np.bincount(T["job"], minlength=nj)
    all_kill = np.bincount(T["job"], weights=tk, minlength=nj) == cnt
    all_fail = np.bincount(T["job"], weights=tf, minlength=nj) == cnt
    end_type = np.where(all_kill, int(EventType.KILL), np.where(all_fail, int(EventType.FAIL), int(EventType.FINISH)))
    end_time = np.maximum(last, sched)
    names = m.info["names"]
    ev = [
        (submit, np.full(nj, int(EventType.SUBMIT)), np.ones(nj, dtype=bool)),
        (sched, np.full(nj, int(EventType.SCHEDULE)), np.ones(nj, dtype=bool)),
        (end_time, end_type, ended_in_trace),
    ]
    frames = []
    for t, e, sel in ev:
        idx = np.flatnonzero(sel)
        frames.append(
            pl.DataFrame(
                {
                    "time": t[idx].astype(np.int64),
                    "missing_info": pl.Series([None] * idx.size, dtype=pl.Int64),
                    "job_id": J["job_id"][idx],
                    "event_type": e[idx].astype(np.int64),
                    "_job": idx,
                }
            )
        )
    df = pl.concat(frames).sort(["time", "_job", "event_type"])
    j = df["_job"].to_numpy()
    df = df.with_columns(
        pl.Series("user", names["user"][J["user"][j]]),
        pl.Series("scheduling_class", J["scheduling_class"][j]),
        pl.Series("job_name", names["job"][j]),
        pl.Series("logical_job_name", names["logical"][J["logical"][j]]),
    ).drop("_job")
    return _cast(df, "job_events")


def task_events(p: SynthParams, m: _Model, rng: np.random.Generator) -> pl.DataFrame:
    """The task_events table: SUBMIT, SCHEDULE (with the machine), failing events, re-SUBMIT/SCHEDULE, FINISH.

    Requests are per job: the mean task usage times a log-normal ratio (CPU
    rounded up to 1/3200 like the trace's values), memory likewise.
    """
    J, T = m.jobs, m.tasks
    n = T["mu"].size
    job = T["job"]
    pre = T["a"] <= TRACE_START_US
    pre &= J["start_us"][job] < TRACE_START_US
    submit = np.where(pre, 0, np.maximum(T["a"] - rng.integers(0, 20 * _S_US, n), J["submit_us"][job]))
    sched = np.where(pre, 0, T["a"])
    f = T["failing"]
    term = T["fail_terminal"]
    finish = ~term & (T["b"] < p.end_us)
    mid = T["machine"]
    mid2 = np.where(f & ~term, T["machine2"], mid)
    fail_code = np.array([int(_FAIL_CODE[k]) for k in FAILING])
    rows = [
        (submit, np.full(n, int(EventType.SUBMIT)), np.full(n, -1), np.ones(n, bool), 0),
        (sched, np.full(n, int(EventType.SCHEDULE)), mid, np.ones(n, bool), 1),
        (T["fail_time"], fail_code[np.maximum(T["fail_kind"], 0)], mid, f, 2),
        (T["resubmit_time"], np.full(n, int(EventType.SUBMIT)), np.full(n, -1), f & ~term, 3),
        (T["resched_time"], np.full(n, int(EventType.SCHEDULE)), mid2, f & ~term, 4),
        (T["b"], np.full(n, int(EventType.FINISH)), mid2, finish, 5),
    ]
    machine_ids = m.machines["machine_id"].to_numpy()
    frames = []
    for t, e, mach, sel, seq in rows:
        idx = np.flatnonzero(sel)
        mm = mach[idx]
        frames.append(
            pl.DataFrame(
                {
                    "time": t[idx].astype(np.int64),
                    "_task": idx,
                    "_seq": np.full(idx.size, seq),
                    "event_type": e[idx].astype(np.int64),
                    "machine_id": np.where(mm >= 0, machine_ids[np.maximum(mm, 0)], -1),
                }
            )
        )
    df = pl.concat(frames).sort(["time", "_task", "_seq"])
    df = df.with_columns(pl.when(pl.col("machine_id") >= 0).then(pl.col("machine_id")).alias("machine_id"))
    t = df["_task"].to_numpy()
    j = job[t]
    cpu_req = np.ceil(J["request_ratio"] * np.maximum(_group_mean(job, T["mu"], J["class"].size), 1e-5) * 3200) / 3200
    mem_mean = T["mem_intercept"] + T["mem_slope"] * T["mu"]
    mem_req = J["memory_request_ratio"] * np.maximum(_group_mean(job, mem_mean, J["class"].size), 1e-6)
    names = m.info["names"]
    df = df.with_columns(
        pl.lit(None, dtype=pl.Int64).alias("missing_info"),
        pl.Series("job_id", J["job_id"][j]),
        pl.Series("task_index", T["task_index"][t]),
        pl.Series("user", names["user"][J["user"][j]]),
        pl.Series("scheduling_class", J["scheduling_class"][j]),
        pl.Series("priority", J["priority"][j]),
        pl.Series("cpu_request", np.minimum(cpu_req[j], 1.0)),
        pl.Series("memory_request", np.minimum(mem_req[j], 1.0)),
        pl.Series("disk_space_request", J["disk_request"][j]),
        pl.Series("different_machines_restriction", J["different_machines"][j]),
    ).drop("_task", "_seq")
    return _cast(df, "task_events")


def _names(p: SynthParams, m: _Model, seed: int) -> dict[str, np.ndarray]:
    """Hashed user, job and logical job names (base64 SHA-256, 44 characters, like the trace's)."""
    nj = m.jobs["class"].size
    nl = int(m.jobs["logical"].max()) + 1 if nj else 0
    return {
        "user": np.array(hash_strings([f"{seed}:user:{i}" for i in range(p.users)]), dtype=object),
        "job": np.array(hash_strings([f"{seed}:job:{i}" for i in range(nj)]), dtype=object),
        "logical": np.array(hash_strings([f"{seed}:logical:{i}" for i in range(nl)]), dtype=object),
    }


def _cast(df: pl.DataFrame, table: str) -> pl.DataFrame:
    """Exactly the table's columns, in file order, with the reader's dtypes."""
    schema = polars_schema(table)
    return df.select([pl.col(c).cast(t) for c, t in schema.items()])


# ============================================================================ public API


def generate(params: SynthParams, seed: int, *, truth: bool = False) -> dict[str, pl.DataFrame]:
    """Generate the four trace tables from the model.

    Returns ``machine_events``, ``job_events``, ``task_events`` and
    ``task_usage`` DataFrames with the trace's column names and dtypes, rows in
    time order. The same params and seed give identical frames. With
    ``truth=True`` also ``truth_jobs`` and ``truth_tasks``: the model's
    per-job and per-task parameters (for tests and calibration checks).
    """
    if not isinstance(params, SynthParams):
        raise TypeError("params must be a SynthParams (use SynthParams.from_dict)")
    r = _rngs(seed)
    model = sample_model(params, seed)
    model.info["end_us"] = params.end_us
    model.info["names"] = _names(params, model, int(seed))
    out = {
        "machine_events": machine_events(params, model.machines, r["failures"]),
        "job_events": job_events(params, model),
        "task_events": task_events(params, model, r["events"]),
        "task_usage": usage_records(params, model, r["usage"]),
    }
    if truth:
        out["truth_jobs"], out["truth_tasks"] = truth_frames(model)
    return out


def truth_frames(m: _Model) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-job and per-task model parameters (not part of the trace)."""
    J, T = m.jobs, m.tasks
    jobs = pl.DataFrame(
        {
            "job_id": J["job_id"],
            "class": np.array(CLASS_NAMES)[J["class"]],
            "large": J["large"],
            "priority": J["priority"],
            "n_tasks": J["n_tasks"],
            "cpu_total": J["cpu_total"],
            "memory_total": J["memory_total"],
            "duration_us": J["duration_us"],
            "start_us": J["start_us"],
            "end_us": J["end_us"],
            "memory_shape": np.array(MEMORY_SHAPES + ("badly_fitted",))[J["memory_shape"]],
            "daily_amp": J["daily_amp"],
            "daily_phase_deg": J["daily_phase_deg"],
            "weekly_amp": J["weekly_amp"],
            "hourly_amp": J["hourly_amp"],
            "long_term_amp": J["long_term_amp"],
            "noise_ratio": J["noise_ratio"],
        }
    )
    fk = T["fail_kind"]
    tasks = pl.DataFrame(
        {
            "job_id": J["job_id"][T["job"]],
            "task_index": T["task_index"],
            "large": T["large"],
            "mu": T["mu"],
            "start_us": T["a"],
            "end_us": T["b"],
            "n_windows": T["k1"] - T["k0"] + 1,
            "avg_std_target": T["avg_std_target"],
            "inst_std_target": T["inst_std_target"],
            "shape": np.array(SHAPES)[T["shape"]],
            "nonstationary": T["nonstationary"],
            "all_zero": T["all_zero"],
            "failing": T["failing"],
            "fail_event": pl.Series([FAILING[k] if k >= 0 else None for k in fk.tolist()], dtype=pl.String),
            "fail_terminal": T["fail_terminal"],
        }
    )
    return jobs, tasks


def split_shards(df: pl.DataFrame, table: str, n: int, end_us: int | None = None) -> list[pl.DataFrame]:
    """Cut a table into ``n`` shards covering contiguous, equal-length time ranges (as the trace's shards).

    task_usage is cut by ``start_time``, event tables by ``time``; the ranges
    split [TRACE_START_US, end_us) on 5-minute window boundaries (events
    before the trace start, at time 0, go to the first shard). ``end_us``
    defaults to the end of the last window in ``df``. Each shard keeps the
    input's row order.
    """
    if n < 1:
        raise ValueError(f"shard count must be >= 1, got {n}")
    if list(df.columns) != column_names(table):
        raise ValueError(f"{table}: columns must be {column_names(table)}")
    tcol = "start_time" if table == "task_usage" else "time"
    if end_us is None:
        last = df[tcol].max() if df.height else TRACE_START_US
        end_us = TRACE_START_US + (max(int(last) - TRACE_START_US, 0) // WINDOW_US + 1) * WINDOW_US
    windows = max(1, -(-(int(end_us) - TRACE_START_US) // WINDOW_US))
    bounds = [TRACE_START_US + (i * windows // n) * WINDOW_US for i in range(1, n)]
    shard = np.searchsorted(np.array(bounds, dtype=np.int64), df[tcol].to_numpy(), side="right")
    tagged = df.with_columns(pl.Series("_shard", shard))
    return [tagged.filter(pl.col("_shard") == i).drop("_shard") for i in range(n)]
