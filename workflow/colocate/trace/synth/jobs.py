"""Jobs and tasks of the synthetic trace: the model sampled before any record is rendered.

Two populations of jobs (Beaumont et al. 2015): *large* jobs in the priority
classes of §1.1, with mean total CPU and memory from the log-normal mixtures
of Table 2 and durations from Table 3, and *small* jobs (1-few short tasks,
tiny CPU) derived from them so that per 5-minute window the large jobs are
about 6% of the alive jobs and carry about 95% of the CPU (Table 1), and 95%
of the tasks are shorter than 2 hours (Janus & Rzadca §3.1). Then per job:
IDs, priorities, requests and production patterns (Beaumont §5.2, Table 4);
per task: failures (Janus §3.1), std targets on Janus §3.3's lines and inst
shape families (Janus Fig 4), memory vs CPU (Beaumont §4.2) and machines.

Jobs and tasks are column tables, dicts of equal-length arrays whose keys
:data:`Jobs` and :class:`Tasks` list; :func:`sample_model` returns both in a
:class:`Model`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, TypedDict

import numpy as np
import polars as pl
from scipy.special import ndtr

from colocate.trace import TRACE_START_US, WINDOW_US
from colocate.trace.synth.draws import (
    _choice,
    _group_mean,
    _mean1_lognormal,
    _mixture_inverse,
    _rngs,
    _segments,
    inverse_cdf,
    stratified,
)
from colocate.trace.synth.machines import sample_machines
from colocate.trace.synth.params import _MIN_US, _S_US, CLASS_NAMES, FAILING, MEMORY_SHAPES, SHAPES, SynthParams

#: Per-job columns (index: job; in job-ID order once merged), by the step that sets them. (Functional
#: syntax: "class" is a keyword.)
Jobs = TypedDict(
    "Jobs",
    {
        # sample_large_jobs / small_jobs, merged by _merge_jobs
        "class": np.ndarray,  # priority class, index into CLASS_NAMES (Beaumont §1.1)
        "cpu_total": np.ndarray,  # the job's mean total CPU (large jobs: Beaumont Table 2 × job_size_scale)
        "memory_total": np.ndarray,  # the job's mean total memory (large jobs: Beaumont Table 2)
        "duration_us": np.ndarray,  # true duration (Beaumont Table 3; inf: runs the whole trace)
        "start_us": np.ndarray,  # true start, unclipped (before the trace start, or -inf, if alive at it)
        "end_us": np.ndarray,  # true end, unclipped (after the trace end, or inf)
        "n_tasks": np.ndarray,
        "large": np.ndarray,  # a large (dominant-like) job rather than a small one
        # _job_attributes
        "job_id": np.ndarray,
        "priority": np.ndarray,
        "scheduling_class": np.ndarray,
        "user": np.ndarray,  # index into the hashed user names
        "logical": np.ndarray,  # index into the hashed logical job names
        "request_ratio": np.ndarray,  # CPU request over the mean task usage
        "memory_request_ratio": np.ndarray,  # memory request over the mean task memory
        "disk_request": np.ndarray,
        "different_machines": np.ndarray,  # the different-machines restriction flag
        "sched_us": np.ndarray,  # the job's SCHEDULE time (0: alive at the trace start)
        "submit_us": np.ndarray,  # the job's SUBMIT time (0: alive at the trace start)
        # _production_patterns (Beaumont §5.2, Table 4): amplitudes over the mean, phases
        "daily_amp": np.ndarray,
        "weekly_amp": np.ndarray,
        "hourly_amp": np.ndarray,
        "long_term_amp": np.ndarray,
        "daily_phase_deg": np.ndarray,  # the daily peak, degrees
        "hourly_phase": np.ndarray,  # radians
        "long_term_phase": np.ndarray,  # radians
        "patterned": np.ndarray,  # a large production job: carries the patterns
        "noise_ratio": np.ndarray,  # residual noise over the mean (Table 4)
        # _task_memory (Beaumont §4.2)
        "memory_shape": np.ndarray,  # index into MEMORY_SHAPES; 3: badly fitted
    },
    total=False,
)


class Tasks(TypedDict, total=False):
    """Per-task columns (index: task; in job order, then task index), by the step that sets them."""

    # _merge
    job: np.ndarray  # index into the Jobs columns
    mu: np.ndarray  # the task's mean CPU μ_i
    a: np.ndarray  # observed start in µs, within the trace
    b: np.ndarray  # observed end in µs (the task covers [a, b))
    task_index: np.ndarray
    k0: np.ndarray  # first 5-minute window touched by [a, b)
    k1: np.ndarray  # last 5-minute window touched by [a, b)
    large: np.ndarray  # a task of a large job
    # _task_failures (Janus §3.1)
    failing: np.ndarray  # has an EVICT/FAIL/KILL/LOST event
    fail_kind: np.ndarray  # index into FAILING; -1: none
    fail_terminal: np.ndarray  # the failure ends the task (no re-submit)
    fail_k: np.ndarray  # window of the failure; -1: none
    fail_time: np.ndarray  # µs; -1: none
    resubmit_time: np.ndarray  # re-SUBMIT after a non-terminal failure, µs; -1: none
    resched_time: np.ndarray  # re-SCHEDULE on machine2 at the next window, µs; -1: none
    all_zero: np.ndarray  # zero inst usage for the whole duration
    # _task_variability (Janus §3.3, Fig 3-4, §3.4)
    eta_avg: np.ndarray  # mean-1 scatter of the avg std around Janus's line
    eta_inst: np.ndarray  # mean-1 scatter of the inst std around Janus's line
    shape: np.ndarray  # inst shape family, index into SHAPES
    bimodal_low_share: np.ndarray  # share of the low level of a bimodal inst noise
    patterned: np.ndarray  # a task of a production job (its job's patterns, Beaumont Table 4)
    nonstationary: np.ndarray  # has level shifts (Janus §3.4)
    avg_std_target: np.ndarray  # avg std target; usage_records replaces it with the realized one
    inst_std_target: np.ndarray  # inst std target (set by usage_records)
    # _task_memory (Beaumont §4.2): memory = intercept + slope · avg CPU, times 1 + noise · N(0, 1)
    mem_intercept: np.ndarray
    mem_slope: np.ndarray
    mem_noise: np.ndarray
    # _placement
    machine: np.ndarray  # index of the machine the task is scheduled on
    machine2: np.ndarray  # index of its machine after a re-schedule


class LargeSummary(NamedTuple):
    """What the small jobs are derived from (:func:`small_jobs`): counts and loads of the large population."""

    n_long: int  # large tasks touching at least 24 windows (long tasks, Janus §3.1)
    n_short: int  # large tasks touching fewer than 24 windows
    job_windows: float  # windows touched, summed over the large jobs (alive large jobs × windows)
    cpu_per_window: float  # mean CPU of the large tasks per window
    memory_per_window: float  # mean memory of the large jobs per window


class _Population(NamedTuple):
    """The jobs of one population (large or small) and their tasks, in sampling order."""

    jobs: Jobs
    owner: np.ndarray  # job of each task (index into ``jobs``)
    mu: np.ndarray  # each task's mean CPU
    a: np.ndarray  # each task's observed start, µs
    b: np.ndarray  # each task's observed end, µs


# ============================================================================ jobs


def sample_large_jobs(p: SynthParams, rng: np.random.Generator) -> Jobs:
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


def large_tasks(p: SynthParams, jobs: Jobs, rng: np.random.Generator) -> np.ndarray:
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


def task_means(p: SynthParams, cpu_total: np.ndarray, n_tasks: np.ndarray, rng: np.random.Generator,
               cls: np.ndarray) -> np.ndarray:
    """Task means μ_i: a job's total split over its tasks with mean-1 log-normal weights (Beaumont §4.3), of log-sd
    ``production_task_balance_sigma`` in production jobs (``cls``: the jobs' classes) and ``task_balance_sigma``
    in the rest."""
    owner, _ = _segments(n_tasks)
    production = cls[owner] == CLASS_NAMES.index("production")
    w = _mean1_lognormal(rng, np.where(production, p.production_task_balance_sigma, p.task_balance_sigma), owner.size)
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


def small_jobs(p: SynthParams, large: LargeSummary, rng: np.random.Generator) -> Jobs:
    """Small jobs (1-few short tasks, tiny CPU) derived from the large population's targets.

    Count: so that ``short_task_share`` of all tasks are short (Janus §3.1).
    Durations: so that large jobs are ``dominant_alive_share`` of the alive
    jobs per window (Beaumont Table 1). CPU: so that large jobs carry
    ``dominant_cpu_share`` of the CPU (Table 1); memory likewise.
    """
    W = p.windows
    n_long = large.n_long
    n_short = large.n_short
    alive_large = large.job_windows / W
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
    # in place, one buffer: the same values as clip(exp(mid + σz)) each step, in half the time on millions of jobs
    sz = sigma * z
    buf = np.empty_like(sz)
    for _ in range(60):
        mid = 0.5 * (a + b)
        np.add(sz, mid, out=buf)
        np.exp(buf, out=buf)
        np.clip(buf, lo, hi, out=buf)
        step = (mid, b) if buf.mean() < mean else (a, mid)
        if step == (a, b):
            break  # a fixed point: every further step would repeat this one
        a, b = step
    return np.clip(np.exp(0.5 * (a + b) + sigma * z), lo, hi)


# ============================================================================ the model, assembled


@dataclass
class Model:
    """Everything sampled before rendering: per-job and per-task columns, the machines, and scalars.

    ``info`` holds ``large_cpu_per_window``, ``small_cpu_per_window``, ``trace_span_us`` (the whole trace's
    length, also in a slice) and ``common_daily_phase_deg``;
    :func:`~colocate.trace.synth.events.generate` adds ``end_us`` and the hashed ``names``.
    """

    jobs: Jobs
    tasks: Tasks
    machines: pl.DataFrame
    info: dict


def sample_model(p: SynthParams, seed: int) -> Model:
    """Sample jobs and tasks (sizes, lifetimes, failures, usage parameters) without rendering records.

    Each step draws from its own generators of :func:`_rngs`, in a fixed order: the machines, the large
    jobs and their tasks, the small jobs derived from them, then the attributes of jobs and tasks.
    """
    r = _rngs(seed)
    machines = sample_machines(p, r["machines"])
    large, summary = _large_population(p, r["jobs"])
    small, small_cpu_total = _small_population(p, summary, r["small"])
    span_us = p.windows * WINDOW_US  # the whole trace's: the long-term pattern's period, also in a slice
    p = p.rendered  # a slice: the whole trace's populations, cut to what is alive in it
    large, small = _cut(large, p.end_us), _cut(small, p.end_us)
    jobs, tasks = _merge(large, small)
    info = {"large_cpu_per_window": summary.cpu_per_window, "small_cpu_per_window": small_cpu_total,
            "trace_span_us": span_us}
    model = Model(jobs=jobs, tasks=tasks, machines=machines, info=info)
    _job_attributes(p, model, r["jobs"])
    _production_patterns(p, model, r["jobs"])
    _task_failures(p, model, r["tasks"])
    _task_variability(p, model, r["tasks"])
    _task_memory(p, model, r["memory"])
    _placement(p, model, r["tasks"])
    return model


def _large_population(p: SynthParams, rng: np.random.Generator) -> tuple[_Population, LargeSummary]:
    """Large jobs (Beaumont Tables 2-3), their tasks' means and lifetimes, and what the small jobs derive from."""
    lj = sample_large_jobs(p, rng)
    lj["n_tasks"] = large_tasks(p, lj, rng)
    owner, _ = _segments(lj["n_tasks"])
    mu = task_means(p, lj["cpu_total"], lj["n_tasks"], rng, lj["class"])
    a, b = task_lifetimes(p, lj["start_us"], lj["end_us"], owner, rng)
    k0, k1 = window_span(a, b)
    nrec = k1 - k0 + 1
    ja = np.maximum(lj["start_us"], TRACE_START_US)
    jb = np.minimum(lj["end_us"], p.end_us)
    jk0, jk1 = window_span(ja.astype(np.int64), jb.astype(np.int64))
    summary = LargeSummary(
        n_long=int((nrec >= 24).sum()),
        n_short=int((nrec < 24).sum()),
        job_windows=float((jk1 - jk0 + 1).sum()),
        cpu_per_window=float((mu * nrec).sum()) / p.windows,
        memory_per_window=float(lj["memory_total"] @ (jk1 - jk0 + 1)) / p.windows,
    )
    return _Population(lj, owner, mu, a, b), summary


def _small_population(p: SynthParams, large: LargeSummary, rng: np.random.Generator) -> tuple[_Population, float]:
    """Small jobs and their tasks, whose CPU and memory leave large jobs the dominant shares (Beaumont Table 1).

    Returns the population and the small tasks' total CPU per window.
    """
    sj = small_jobs(p, large, rng)
    s_owner, _ = _segments(sj["n_tasks"])
    sa, sb = task_lifetimes(p, sj["start_us"], sj["end_us"], s_owner, rng)
    sk0, sk1 = window_span(sa, sb)
    s_nrec = sk1 - sk0 + 1
    # small-task CPU and memory so that large jobs carry the dominant shares (Beaumont Table 1)
    w = np.exp(p.small_task_cpu_sigma * rng.standard_normal(s_owner.size))
    small_cpu_total = large.cpu_per_window * (1 - p.dominant_cpu_share) / p.dominant_cpu_share
    s_mu = w * small_cpu_total * p.windows / max(float((w * s_nrec).sum()), 1e-300)
    s_mu = np.minimum(s_mu, p.task_cpu_max)
    wm = np.exp(rng.standard_normal(sj["class"].size))
    small_mem_total = large.memory_per_window * (1 - p.dominant_memory_share) / p.dominant_memory_share
    s_jk0, s_jk1 = window_span(np.maximum(sj["start_us"], TRACE_START_US).astype(np.int64),
                               np.minimum(sj["end_us"], p.end_us).astype(np.int64))
    sj["memory_total"] = wm * small_mem_total * p.windows / max(float((wm * (s_jk1 - s_jk0 + 1)).sum()), 1e-300)
    sj["cpu_total"] = np.bincount(s_owner, weights=s_mu, minlength=sj["class"].size)
    return _Population(sj, s_owner, s_mu, sa, sb), small_cpu_total


def _cut(pop: _Population, end_us: int) -> _Population:
    """The jobs and tasks of ``pop`` alive before ``end_us``, tasks' ends clipped to it (``synthetic.slice_days``).

    Sampled over the whole trace and then cut, a slice has the density of the whole trace at every
    window; a job keeps the tasks that start in the slice, and one left with none is dropped.
    """
    if pop.b.size == 0 or pop.b.max() <= end_us:
        return pop
    task_kept = pop.a < end_us
    n_tasks = np.bincount(pop.owner[task_kept], minlength=pop.jobs["n_tasks"].size)
    job_kept = n_tasks > 0
    jobs = {k: v[job_kept] for k, v in pop.jobs.items()}
    jobs["n_tasks"] = n_tasks[job_kept].astype(np.int64)
    owner = (np.cumsum(job_kept) - 1)[pop.owner[task_kept]]
    return _Population(jobs, owner, pop.mu[task_kept], pop.a[task_kept], np.minimum(pop.b[task_kept], end_us))


def _merge(large: _Population, small: _Population) -> tuple[Jobs, Tasks]:
    """Both populations' jobs ordered by start (:func:`_merge_jobs`) and their tasks in job order."""
    jobs, order = _merge_jobs(large.jobs, small.jobs)
    n_tasks = jobs["n_tasks"]
    t_owner_old = np.concatenate([large.owner, small.owner + large.jobs["class"].size])
    t_mu = np.concatenate([large.mu, small.mu])
    t_a = np.concatenate([large.a, small.a])
    t_b = np.concatenate([large.b, small.b])
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    new_owner = rank[t_owner_old]
    t_order = np.lexsort((np.arange(new_owner.size), new_owner))
    tasks: Tasks = {
        "job": new_owner[t_order],
        "mu": t_mu[t_order],
        "a": t_a[t_order],
        "b": t_b[t_order],
    }
    _, tasks["task_index"] = _segments(n_tasks)
    tasks["k0"], tasks["k1"] = window_span(tasks["a"], tasks["b"])
    tasks["large"] = jobs["large"][tasks["job"]]
    return jobs, tasks


def _merge_jobs(lj: Jobs, sj: Jobs) -> tuple[Jobs, np.ndarray]:
    """Concatenate large and small jobs and order them by start (job IDs increase with submission).

    Returns the jobs and the order (positions in the concatenation, large jobs first).
    """
    keys = ("class", "cpu_total", "memory_total", "duration_us", "start_us", "end_us", "n_tasks", "large")
    jobs = {k: np.concatenate([lj[k], sj[k]]) for k in keys}
    start = np.where(np.isfinite(jobs["start_us"]), jobs["start_us"], -1e30)
    order = np.lexsort((np.arange(start.size), start))
    jobs = {k: v[order] for k, v in jobs.items()}
    return jobs, order


def _job_attributes(p: SynthParams, m: Model, rng: np.random.Generator) -> None:
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


def _production_patterns(p: SynthParams, m: Model, rng: np.random.Generator) -> None:
    """Daily, weekly, hourly and long-term patterns of large production jobs (Beaumont §5.2, Table 4).

    Amplitude/mean ratios are drawn from Table 4's quantiles (so about half
    the jobs have a weekly component above the ~6% noise level); daily peaks
    deviate from a common phase by less than 60° for half of the jobs and
    less than 120° for 90% (§5.2). The jobs that run the whole trace, the ones
    Table 4 measures, take stratified draws (:func:`stratified`).
    """
    J = m.jobs
    n = J["class"].size
    prod = J["large"] & (J["class"] == CLASS_NAMES.index("production"))
    k = int(prod.sum())
    # Table 4 measures the jobs that run the whole trace: few at a small scale, so their draws are stratified
    whole = prod & (J["start_us"] < TRACE_START_US) & (J["end_us"] >= TRACE_START_US + m.info["trace_span_us"])
    for name in ("daily", "weekly", "hourly", "long_term"):
        amp = np.zeros(n)
        amp[prod] = inverse_cdf(stratified(rng.random(k), whole[prod]), getattr(p, f"{name}_amplitude_quantiles"))
        J[f"{name}_amp"] = amp
    common = rng.random() * 360.0
    qs = [0.0] + [r[0] for r in p.daily_phase_quantiles] + [1.0]
    degs = [0.0] + [r[1] for r in p.daily_phase_quantiles] + [180.0]
    dev = np.interp(rng.random(n), qs, degs) * np.where(rng.random(n) < 0.5, -1.0, 1.0)
    J["daily_phase_deg"] = np.where(prod, (common + dev) % 360.0, 0.0)
    J["hourly_phase"] = rng.random(n) * 2 * np.pi
    J["long_term_phase"] = rng.random(n) * 2 * np.pi
    J["patterned"] = prod
    J["noise_ratio"] = np.where(prod, inverse_cdf(stratified(rng.random(n), whole), p.noise_ratio_quantiles), 0.0)
    m.info["common_daily_phase_deg"] = common


def _task_failures(p: SynthParams, m: Model, rng: np.random.Generator) -> None:
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


def _task_variability(p: SynthParams, m: Model, rng: np.random.Generator) -> None:
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
    T["avg_std_target"] = bound_small_cv(p, T["large"], _std_target(p, mu, T["eta_avg"], fit, "avg"), mu)


def bound_small_cv(p: SynthParams, large: np.ndarray, std: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Per task, ``std`` with a small task's at most ``small_task_max_cv``·``mean``: Janus's lines are long tasks',
    and a small task following them down to its tiny mean would spike past D_i's cut (Beaumont §3)."""
    return np.where(large, std, np.minimum(std, p.small_task_max_cv * mean))


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


def _task_memory(p: SynthParams, m: Model, rng: np.random.Generator) -> None:
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


def _placement(p: SynthParams, m: Model, rng: np.random.Generator) -> None:
    """Machines for each task (and its re-schedule): a subset of machines at the real density, uniformly.

    The subset holds as many machines as the tasks running at the trace start
    over ``tasks_per_machine`` (the real trace's density there, measured by
    :mod:`colocate.analysis.colocation`), all machines at most. Within it a
    task's machine is uniform: the real per-machine counts (p10 7, median 10,
    p90 15 at a mean of 10.65) are those of a Poisson law, not of placement
    by capacity. Machine failures (machine_events) keep every machine.
    """
    T = m.tasks
    n = T["mu"].size
    n_machines = m.machines.height
    at_start = int(((T["a"] <= TRACE_START_US) & (T["b"] > TRACE_START_US)).sum())
    k = int(min(n_machines, max(1, round(at_start / p.tasks_per_machine))))
    subset = np.sort(rng.permutation(n_machines)[:k])
    T["machine"] = subset[rng.integers(0, k, n)]
    second = subset[rng.integers(0, k, n)]
    # a re-schedule goes to another machine of the subset (the same one if the subset has one machine)
    nxt = subset[(np.searchsorted(subset, second) + 1) % k]
    T["machine2"] = np.where(second == T["machine"], nxt, second)
