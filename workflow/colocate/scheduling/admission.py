"""Stochastic admission controller of Unuvar et al. (§III, applied to the Google trace in §IV-F).

The controller ℙ(U*, ε, μ, σ) guards one machine. Utilisation U is usage over
the machine capacity C, a random variable on [0, 1] modelled as a Beta whose
shape parameters come from the estimated mean R̄ and standard deviation S̄
(eqs 7–8). A request is admitted iff, with it included,
F(U* | α, β) ≥ 1 − ε (eq 6); otherwise it is rejected.

As in §IV-F, each task carries its own mean μ_i and variance σ_i² of demand,
and μ, σ of the machine are *re-estimated at every arrival*. How is an
:class:`UtilisationEstimate` (one protocol, two readings of §III):

- :class:`MeasuredUtilisation` (the default): "μ_k and σ_k are the estimated
  mean and standard deviation of the *measured* utilization of resource k at
  the request arrival time" — σ² the variance of the machine's measured
  utilisation over the last ``history`` steps, μ the tasks running now,
  each plus the newcomer's μ_i, σ_i²;
- :class:`IndependentTasks`: the running tasks' own moments summed as
  independent demands (the heterogeneous system of §II-B: E[Z] = Σ μ_i,
  V[Z] = Σ σ_i²), which cannot see load the tasks share.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import polars as pl
from scipy import stats

from colocate.analysis.betafit import beta_parameters
from colocate.prep.realizations import row_moments
from colocate.measure import measurement

__all__ = ["BetaAdmissionController", "UtilisationEstimate", "IndependentTasks", "MeasuredUtilisation", "ESTIMATORS",
           "estimator", "Arrivals", "arrivals", "usage_draws", "admit", "utilisation", "AdmissionRun", "run",
           "run_replicates", "run_trace", "run_trace_replicates", "choose_source", "CLAIMED_EPS", "headline_measurements"]


class UtilisationEstimate(Protocol):
    """The machine's usage mean and variance at an arrival, the newcomer included: Unuvar §III's μ_k and σ_k².

    :func:`admit` asks :meth:`moments` at each arrival, in time order, and reports each admitted arrival
    (``k``, its index in the stream) and each departure of an admitted one.
    """

    name: str

    def moments(self, t: int, mean: float, var: float) -> tuple[float, float]: ...

    def admitted(self, k: int, mean: float, var: float) -> None: ...

    def departed(self, k: int, mean: float, var: float) -> None: ...


class IndependentTasks:
    """E = Σ μ_i, Var = Σ σ_i² over the admitted tasks running now and the newcomer — Unuvar §II-B's heterogeneous
    system of independent demands. It sees only the tasks' own variances, not load they share."""

    name = "independent"

    def __init__(self) -> None:
        self.n_running = 0
        self.mean = 0.0
        self.var = 0.0

    def moments(self, t: int, mean: float, var: float) -> tuple[float, float]:
        return self.mean + mean, self.var + var

    def admitted(self, k: int, mean: float, var: float) -> None:
        self.mean += mean
        self.var += var
        self.n_running += 1

    def departed(self, k: int, mean: float, var: float) -> None:
        if self.n_running < 1:
            raise ValueError("release: no task is running")
        self.n_running -= 1
        if self.n_running == 0:
            self.mean = self.var = 0.0  # no drift across idle periods
        else:
            self.mean -= mean
            self.var -= var


class MeasuredUtilisation:
    """The machine's measured state at the arrival — Unuvar §III: "μ_k and σ_k are the estimated mean and standard
    deviation of the measured utilization of resource k at the request arrival time", so that ℙ "is dynamically
    adjusted with the measured statistical properties of resource utilization".

    σ² is the variance of the machine's measured usage over the ``history`` steps before the arrival, plus the
    newcomer's σ_i²: it sees the load the running tasks share (a daily cycle), which the sum of their own
    variances (:class:`IndependentTasks`) does not. μ is the current level, the admitted tasks running now (each
    task's mean measured over its records) plus the newcomer, rather than the window's mean: a window lags the
    tasks admitted within it, and those arriving at the same step would not see each other. Before two steps of
    history σ² is the running tasks' Σσ_i² plus the newcomer's.

    ``step``, ``arrival``, ``usage``: every arrival's usage per step (:func:`usage_draws`); ``n_steps`` the steps.
    """

    name = "measured"

    def __init__(self, history: int, step: np.ndarray, arrival: np.ndarray, usage: np.ndarray, n_steps: int) -> None:
        if history < 2:
            raise ValueError(f"history must be ≥ 2 steps, got {history}")
        self.history = int(history)
        order = np.argsort(arrival, kind="stable")
        self._step, self._usage = step[order], usage[order]
        self._bounds = np.searchsorted(arrival[order], np.arange(int(arrival.max(initial=-1)) + 2))
        self.measured = np.zeros(n_steps)  # usage of the admitted tasks per step
        self.running = IndependentTasks()

    def moments(self, t: int, mean: float, var: float) -> tuple[float, float]:
        level, independent = self.running.moments(t, mean, var)
        past = self.measured[max(0, t - self.history) : t]  # final: later arrivals start at t or after
        if past.size < 2:
            return level, independent
        return level, float(past.var()) + var

    def admitted(self, k: int, mean: float, var: float) -> None:
        self.running.admitted(k, mean, var)
        lo, hi = self._bounds[k], self._bounds[k + 1]
        self.measured[self._step[lo:hi]] += self._usage[lo:hi]  # one record per step and task

    def departed(self, k: int, mean: float, var: float) -> None:
        self.running.departed(k, mean, var)  # its usage leaves the measurement by itself


ESTIMATORS = ("measured", "independent")


def estimator(name: str, history: int, step: np.ndarray, arrival: np.ndarray, usage: np.ndarray, n_steps: int) -> UtilisationEstimate:
    """A fresh :class:`UtilisationEstimate` by its config name (``packing.admission.estimator``)."""
    if name == "measured":
        return MeasuredUtilisation(history, step, arrival, usage, n_steps)
    if name == "independent":
        return IndependentTasks()
    raise ValueError(f"admission estimator must be one of {', '.join(ESTIMATORS)}, got {name!r}")


class BetaAdmissionController:
    """ℙ(U*, ε, μ, σ) — Unuvar §III eq 6 with the Beta model of eqs 7–9.

    ``threshold`` is U* (0.8 in the paper), ``eps`` the bound ε on
    P(U > U*), ``capacity`` the machine capacity C that usage is divided by.
    :meth:`offer` decides on an arrival with the running tasks' moments summed
    (:class:`IndependentTasks`) and, if admitted, adds it to them; :meth:`release`
    removes a departing admitted task. :func:`admit` drives :meth:`criterion`
    with any :class:`UtilisationEstimate`.
    """

    def __init__(self, threshold: float = 0.8, eps: float = 0.01, capacity: float = 1.0) -> None:
        if not 0 < threshold < 1:
            raise ValueError(f"threshold U* must be in (0, 1), got {threshold}")
        if not 0 < eps < 1:
            raise ValueError(f"eps must be in (0, 1), got {eps}")
        if not (math.isfinite(capacity) and capacity > 0):
            raise ValueError(f"capacity must be a finite number > 0, got {capacity}")
        self.threshold = float(threshold)
        self.eps = float(eps)
        self.capacity = float(capacity)
        self.running = IndependentTasks()

    @property
    def n_running(self) -> int:
        return self.running.n_running

    @property
    def utilisation_moments(self) -> tuple[float, float]:
        """Current estimate (R̄, S̄) of the utilisation's mean and standard deviation."""
        return self.running.mean / self.capacity, math.sqrt(max(self.running.var, 0.0)) / self.capacity

    def probability_within(self, mean: float, var: float) -> float:
        """F(U* | α, β) with the candidate (mean ``mean``, variance ``var`` of usage) included.

        Where the moments admit no Beta (R̄ ≥ 1 or S̄² ≥ R̄(1 − R̄)) the answer is 0
        (reject); with S̄ = 0 the utilisation is a point mass at R̄.
        """
        if not (math.isfinite(mean) and math.isfinite(var)) or var < 0:
            raise ValueError(f"task mean and variance must be finite with var ≥ 0, got {mean}, {var}")
        return self.criterion(*self.running.moments(0, mean, var))

    def criterion(self, mean: float, var: float) -> float:
        """F(U* | α, β) of eq 9 for a machine whose usage has mean ``mean`` and variance ``var`` (eqs 7–8)."""
        r = mean / self.capacity
        s2 = max(var, 0.0) / self.capacity**2
        if s2 == 0:
            return 1.0 if r <= self.threshold else 0.0
        a, b = beta_parameters(r, s2)
        if not (a > 0 and b > 0):
            return 0.0
        return float(stats.beta.cdf(self.threshold, a, b))

    def admits(self, mean: float, var: float) -> bool:
        """Eq 6: F(U*) ≥ 1 − ε for the machine's usage moments with the newcomer."""
        return self.criterion(mean, var) >= 1 - self.eps

    def offer(self, mean: float, var: float) -> bool:
        """Decide on an arriving task; admitted tasks join the running set."""
        ok = self.probability_within(mean, var) >= 1 - self.eps
        if ok:
            self.running.admitted(-1, mean, var)
        return ok

    def release(self, mean: float, var: float) -> None:
        """A previously admitted task (same mean and variance) departs."""
        self.running.departed(-1, mean, var)


# ----------------------------------------------------------------------------- §IV-F on the trace


@dataclass(frozen=True)
class Arrivals:
    """A stream of task arrivals on one machine, in time steps of one 5-minute window.

    Arrival process (documented choice; Unuvar §IV-F says only "30,000 task arrivals randomly selected
    … over 29 days" with 154 tasks running on average): Poisson arrivals of rate
    λ = mean_running / E[lifetime] (Little's law, so that without a controller ``mean_running``
    tasks run on average); each arrival is a long task drawn uniformly with replacement, and keeps
    it for its own lifetime in the trace (its number of 5-minute records).
    """

    task: np.ndarray  # row of the realization matrix, per arrival
    start: np.ndarray  # first step, per arrival (non-decreasing)
    end: np.ndarray  # first step after departure, per arrival

    @property
    def n_steps(self) -> int:
        return int(self.end.max())


def arrivals(lifetimes: np.ndarray, n_arrivals: int, mean_running: float, rng: np.random.Generator) -> Arrivals:
    """Draw the arrival stream (see :class:`Arrivals`) from per-task lifetimes in steps (≥ 1)."""
    lifetimes = np.asarray(lifetimes, dtype=np.int64)
    if lifetimes.ndim != 1 or lifetimes.size < 1 or (lifetimes < 1).any():
        raise ValueError("lifetimes: need at least one task, each with a lifetime ≥ 1 step")
    if n_arrivals < 1 or not mean_running > 0:
        raise ValueError(f"need n_arrivals ≥ 1 and mean_running > 0, got {n_arrivals}, {mean_running}")
    rate = mean_running / lifetimes.mean()
    start = np.floor(np.cumsum(rng.exponential(1 / rate, n_arrivals))).astype(np.int64)
    task = rng.integers(lifetimes.size, size=n_arrivals)
    return Arrivals(task, start, start + lifetimes[task])


def usage_draws(stream: Arrivals, realizations: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-step usage of every arrival while it runs: ``(step, arrival, usage)``, one entry per task-step.

    Each step's usage is an independent draw from the task's realizations (its empirical distribution,
    Janus §3.1), gathered in ascending row order from a possibly memory-mapped matrix.
    """
    lengths = stream.end - stream.start
    arrival = np.repeat(np.arange(lengths.size), lengths)
    offset = np.arange(arrival.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    step = stream.start[arrival] + offset
    rows = stream.task[arrival]
    cols = rng.integers(realizations.shape[1], size=arrival.size)
    order = np.lexsort((cols, rows))
    usage = np.empty(arrival.size, dtype=np.float64)
    usage[order] = realizations[rows[order], cols[order]]
    return step, arrival, usage


def admit(stream: Arrivals, means: np.ndarray, variances: np.ndarray, controller: BetaAdmissionController,
          estimate: UtilisationEstimate | None = None) -> np.ndarray:
    """Offer every arrival, in time order, to ``controller``; admitted tasks depart at their end step.

    Returns the admitted mask. The machine's μ and σ are re-estimated at each arrival by ``estimate``
    (default :class:`IndependentTasks`: the admitted tasks still running then), after the departures up to
    the arrival step.
    """
    estimate = IndependentTasks() if estimate is None else estimate
    admitted = np.zeros(stream.task.size, dtype=bool)
    running: list[tuple[int, int]] = []  # (end step, arrival)
    m, v = np.asarray(means, np.float64)[stream.task], np.asarray(variances, np.float64)[stream.task]
    if not (np.isfinite(m).all() and np.isfinite(v).all() and (v >= 0).all()):
        raise ValueError("task means and variances must be finite with variances ≥ 0")
    for k, (t, end) in enumerate(zip(stream.start.tolist(), stream.end.tolist())):
        while running and running[0][0] <= t:
            _, j = heapq.heappop(running)
            estimate.departed(j, m[j], v[j])
        if controller.admits(*estimate.moments(t, m[k], v[k])):
            admitted[k] = True
            estimate.admitted(k, m[k], v[k])
            heapq.heappush(running, (end, k))
    return admitted


def utilisation(step: np.ndarray, arrival: np.ndarray, usage: np.ndarray, n_steps: int, capacity: float,
                admitted: np.ndarray | None = None) -> np.ndarray:
    """Utilisation U(t) = Σ usage of the (admitted) running tasks / C at every step (one bincount)."""
    weights = usage if admitted is None else usage * admitted[arrival]
    return np.bincount(step, weights=weights, minlength=n_steps) / capacity


@dataclass(frozen=True)
class AdmissionRun:
    """Unuvar Table VIII for one machine: P(U > U*) without and with the controller for each ε."""

    table: pl.DataFrame  # eps, p_over_with, p_over_without, rejection
    utilisation: pl.DataFrame  # step, without, and one column per ε ("eps=0.01")
    capacity: float


def run(
    realizations: np.ndarray,
    lifetimes: np.ndarray,
    eps: Sequence[float],
    *,
    n_arrivals: int = 30_000,
    mean_running: float = 154.0,
    threshold: float = 0.8,
    peak_utilisation: float = 0.9,
    peak_quantile: float = 0.998,
    estimator: str = "measured",
    history: int = 288,
    seed: int | np.random.SeedSequence = 0,
) -> AdmissionRun:
    """The controller of Unuvar §IV-F on a stream of long tasks (one row of ``realizations`` per task).

    Capacity: as Unuvar §IV-C, the peak total usage without a controller is set to
    ``peak_utilisation`` (90%) of the machine. Their peak is the maximum of 500 snapshots, i.e. about
    the 1 − 1/500 = 0.998 quantile of the total usage; over our many more steps we take that
    quantile (``peak_quantile``; 1.0 is the plain maximum): C = Q_0.998(Z) / 0.9. Tasks' μ_i, σ_i² are the mean
    and variance of their realizations. P(U > U*) is the fraction of steps, after a warm-up of one
    mean lifetime and up to the last arrival, with utilisation above U*. ``estimator`` names the controller's
    :class:`UtilisationEstimate` ("measured" over ``history`` steps, or "independent").
    """
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    # its first two children, without spawning from ``seq`` (which would change what a second call draws)
    rng_arrivals, rng_usage = (np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, i)))
                               for i in range(2))
    lifetimes = np.asarray(lifetimes, dtype=np.int64)
    if realizations.shape[0] != lifetimes.size:
        raise ValueError(f"{lifetimes.size} lifetimes for {realizations.shape[0]} tasks with realizations")
    stream = arrivals(lifetimes, n_arrivals, mean_running, rng_arrivals)
    step, arrival, usage = usage_draws(stream, realizations, rng_usage)
    if not np.isfinite(usage).all():
        raise ValueError("realizations contain NaN or inf")
    means, variances = row_moments(realizations)
    warmup = int(np.ceil(lifetimes.mean()))
    if warmup >= int(stream.start[-1]) + 1:
        raise ValueError("too few arrivals: the stream ends before one mean lifetime (warm-up)")
    return _table_viii(stream, step, arrival, usage, means, variances, eps, threshold, peak_utilisation, peak_quantile,
                       stream.n_steps, slice(warmup, int(stream.start[-1]) + 1), estimator, history)


def _table_viii(stream: Arrivals, step: np.ndarray, arrival: np.ndarray, usage: np.ndarray, means: np.ndarray,
                variances: np.ndarray, eps: Sequence[float], threshold: float, peak_utilisation: float,
                peak_quantile: float, n: int, window: slice, estimator_name: str, history: int) -> AdmissionRun:
    """The capacity from the uncontrolled peak from ``window``'s start on (§IV-C's 90%), then per ε the controller's
    run over ``n`` steps, estimating the machine by ``estimator_name`` (:func:`estimator`). ``means`` and
    ``variances`` are indexed by ``stream.task``. P(U > U*) is the share of the steps in ``window``.
    """
    without = utilisation(step, arrival, usage, n, 1.0)
    if not (0 < peak_quantile <= 1 and 0 < peak_utilisation <= 1):
        raise ValueError(f"peak_quantile and peak_utilisation must be in (0, 1], got {peak_quantile}, {peak_utilisation}")
    capacity = float(np.quantile(without[window.start :], peak_quantile) / peak_utilisation)
    if not capacity > 0:
        raise ValueError("the tasks' usage is zero: no capacity can be derived")
    without /= capacity
    rows, columns = [], {"step": np.arange(n), "without": without}
    for e in eps:
        ctl = BetaAdmissionController(threshold, e, capacity)
        ok = admit(stream, means, variances, ctl, estimator(estimator_name, history, step, arrival, usage, n))
        with_ = utilisation(step, arrival, usage, n, capacity, ok)
        columns[f"eps={e:g}"] = with_
        rows.append(
            {
                "eps": float(e),
                "p_over_with": float((with_[window] > threshold).mean()),
                "p_over_without": float((without[window] > threshold).mean()),
                "rejection": float(1 - ok.mean()),
            }
        )
    return AdmissionRun(pl.DataFrame(rows), pl.DataFrame(columns)[window], capacity)


def run_trace(
    series: pl.DataFrame,
    lo: int,
    hi: int,
    eps: Sequence[float],
    *,
    threshold: float = 0.8,
    peak_utilisation: float = 0.9,
    peak_quantile: float = 0.998,
    estimator: str = "measured",
    history: int = 288,
) -> AdmissionRun:
    """The controller of Unuvar §IV-F on tasks of the trace, each at its own time with its own usage.

    §IV-F offers "30,000 task arrivals randomly selected from Google data set over 29 days", the set of
    Fig 8 (154 running on average; :func:`colocate.analysis.aggregate.draw_trace_set`). ``series`` holds the
    set's records (``job_id``, ``task_index``, ``window``, ``usage``): a task arrives at its first window
    and leaves after its last, in the order of arrival (ties by job and task); its usage at a step is its
    record there (0 without one); μ_i and σ_i² are the mean and variance of its records. Steps are the
    windows lo..hi; the capacity and P(U > U*) are taken over all of them (the set runs from the trace
    start: no warm-up).
    """
    if series.height == 0:
        raise ValueError("the set has no records")
    if not (series["window"].min() >= lo and series["window"].max() <= hi):
        raise ValueError(f"records outside windows {lo}..{hi}")
    if not np.isfinite(series["usage"].to_numpy()).all():
        raise ValueError("usage contains NaN or inf")
    tasks = (series.group_by("job_id", "task_index")
             .agg(pl.col("window").min().alias("first"), pl.col("window").max().alias("last"))
             .sort("first", "job_id", "task_index").with_row_index("arrival"))
    rec = (series.join(tasks.select("job_id", "task_index", "arrival"), on=["job_id", "task_index"])
           .sort("arrival", "window"))
    start = tasks["first"].to_numpy().astype(np.int64) - lo
    stream = Arrivals(np.arange(tasks.height), start, tasks["last"].to_numpy().astype(np.int64) - lo + 1)
    n = hi - lo + 1
    step = rec["window"].to_numpy().astype(np.int64) - lo
    arrival = rec["arrival"].to_numpy().astype(np.int64)
    usage = rec["usage"].to_numpy()
    # μ_i and σ_i² by numpy in record order (a polars group-by mean's last bit varies between calls)
    count = np.bincount(arrival, minlength=tasks.height)
    means = np.bincount(arrival, weights=usage, minlength=tasks.height) / count
    variances = np.bincount(arrival, weights=(usage - means[arrival]) ** 2, minlength=tasks.height) / count
    return _table_viii(stream, step, arrival, usage, means, variances, eps, threshold, peak_utilisation, peak_quantile,
                       n, slice(0, n), estimator, history)


MEASURES = ("p_over_with", "p_over_without", "rejection")


def run_replicates(realizations: np.ndarray, lifetimes: np.ndarray, eps: Sequence[float], *, replicates: int,
                   seed: int = 0, **kwargs) -> tuple[AdmissionRun, pl.DataFrame]:
    """:func:`run` on ``replicates`` independent arrival and usage streams (the r-th seeded by ``seed``'s r-th child).

    Unuvar §IV-F reports one stream; one of ours varies by seed (P(U > 0.8) without the controller: 0.021–0.036 over 7 streams at the default scale),
    so Table VIII is the mean over the replicates, with their min and max. Returns that run (its utilisation and
    capacity those of replicate 0) and the per-replicate table.
    """
    if replicates < 1:
        raise ValueError(f"replicates must be ≥ 1, got {replicates}")
    return _combine([run(realizations, lifetimes, eps, seed=s, **kwargs) for s in np.random.SeedSequence(seed).spawn(replicates)])


def run_trace_replicates(series, records: pl.DataFrame, lo: int, hi: int, eps: Sequence[float], *, replicates: int,
                         seed: int = 0, mean_running: float = 154.0, job_cap: int | None = None, column: str = "avg",
                         **kwargs) -> tuple[AdmissionRun, pl.DataFrame]:
    """:func:`run_trace` on ``replicates`` sets of the trace's long tasks, the r-th drawn with ``seed``'s r-th child.

    Each set runs ``mean_running`` tasks on average over windows lo..hi (at most ``job_cap`` per job:
    :func:`colocate.analysis.aggregate.draw_trace_set` on ``records``), its records read from ``series``
    (a LazyFrame or one per bucket) with usage ``column``. Returns, as :func:`run_replicates`, the mean, min
    and max over the sets, and the per-set table (with the set's tasks and distinct jobs).
    """
    from colocate.analysis import aggregate

    if replicates < 1:
        raise ValueError(f"replicates must be ≥ 1, got {replicates}")
    runs, sizes = [], []
    for s in np.random.SeedSequence(seed).spawn(replicates):
        drawn, cap = aggregate.draw_trace_set(records, mean_running, hi - lo + 1, np.random.default_rng(s), job_cap)
        runs.append(run_trace(aggregate.set_series(series, drawn, column), lo, hi, eps, **kwargs))
        sizes.append({"tasks": drawn.height, "jobs": drawn["job_id"].n_unique(), "job_cap": cap})
    res, each = _combine(runs)
    return res, each.join(pl.DataFrame(sizes).with_row_index("replicate").cast({"replicate": pl.Int64}), on="replicate")


SOURCES = ("auto", "trace", "realizations")


def choose_source(source: str, records: pl.DataFrame | None, lo: int, hi: int, mean_running: float) -> tuple[str, str]:
    """``(source, note)``: "trace" where the long tasks of ``records`` (:func:`colocate.analysis.aggregate.task_records`)
    run ``mean_running`` at a time on average over windows lo..hi, else "realizations" with the reason; with
    ``source`` "trace" a trace that cannot is a ValueError, with "realizations" the realizations."""
    if source not in SOURCES:
        raise ValueError(f"admission source must be one of {', '.join(SOURCES)}, got {source!r}")
    if source == "realizations":
        return "realizations", ""
    windows = hi - lo + 1
    running = float(records["records"].sum()) / windows if records is not None and records.height and windows > 1 else 0.0
    if running >= mean_running:
        return "trace", ""
    reason = f"the trace's long tasks run {running:.1f} at a time on average, fewer than mean_running = {mean_running:g}"
    if source == "trace":  # too little data, not bad input: the run says so and completes
        from colocate.insufficient import InsufficientData

        raise InsufficientData(f"admission source trace: {reason}",
                               f"tasks running {mean_running:g} at a time on average (or a smaller packing.admission.mean_running)")
    return "realizations", f"{reason}: realizations instead"


def _combine(runs: list[AdmissionRun]) -> tuple[AdmissionRun, pl.DataFrame]:
    """Table VIII as the mean, min and max of the runs' tables; the utilisation and capacity of the first run."""
    each = pl.concat([r.table.with_columns(replicate=pl.lit(i, pl.Int64)) for i, r in enumerate(runs)])
    # numpy over the replicates in order: a polars group-by mean's last bit varies between calls
    stack = {m: np.stack([r.table[m].to_numpy() for r in runs]) for m in MEASURES}  # replicates × ε
    table = pl.DataFrame({"eps": runs[0].table["eps"], **{m: stack[m].mean(axis=0) for m in MEASURES},
                          **{f"{m}_min": stack[m].min(axis=0) for m in MEASURES},
                          **{f"{m}_max": stack[m].max(axis=0) for m in MEASURES},
                          "replicates": np.full(runs[0].table.height, len(runs), dtype=np.int64)})
    return AdmissionRun(table, runs[0].utilisation, runs[0].capacity), each


#: The ε whose claims ``workflow/papers/unuvar.tsv`` holds one by one (Table VIII's rows): a measurement at one names
#: it in its claim's id; another ε is measured under the ε-free claims (no paper value).
CLAIMED_EPS = (0.005, 0.01, 0.02)

#: How each source reads Table VIII's arrivals, as the claims' note names it.
_READINGS = {"trace": "sets of the trace", "realizations": "independent realizations"}


def headline_measurements(table: pl.DataFrame, source: str = "trace", estimator: str = "measured") -> list[dict]:
    """Table VIII as measured here, by the claims it answers (``workflow/papers/unuvar.tsv``): P(U > 0.8) without the
    controller (one measurement: the paper repeats the one uncontrolled run in each ε's row), then per ε P(U > 0.8)
    with it and the rejected share (in %, as the paper prints it).

    The claims are those of ``source`` ("trace" or "realizations") and ``estimator`` (:data:`ESTIMATORS`), each with
    its measured cause. Where ``table`` has replicates (:func:`run_replicates`), each measurement gives their number
    ``n`` and their ``mean``, ``min`` and ``max`` in its own unit, for the claims' ``replicates`` tolerance."""
    if source not in _READINGS:
        raise ValueError(f"admission source must be one of {', '.join(_READINGS)}, got {source!r}")
    if estimator not in ESTIMATORS:
        raise ValueError(f"admission estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    if table["p_over_without"].n_unique() > 1:
        raise ValueError("P(U > 0.8) without the controller differs between the ε: it must come from one uncontrolled run")
    run = {"reading": _READINGS[source], "estimator": estimator}

    def spread(r: dict, measure: str, scale: float = 1.0) -> dict:
        """The replicates' number, mean, min and max of ``measure`` (× ``scale``: the unit ours is measured in)."""
        if "replicates" not in r:
            return {}
        return {"n": r["replicates"], "mean": scale * r[measure], "min": scale * r[f"{measure}_min"],
                "max": scale * r[f"{measure}_max"]}

    rows = []
    for i, r in enumerate(table.iter_rows(named=True)):
        if i == 0:  # one quantity, whatever ε (the paper's table repeats it in each row): one measurement
            rows.append(measurement(f"unuvar.t8.without.{source}", r["p_over_without"], **spread(r, "p_over_without"), **run))
        eps = float(r["eps"])
        claimed = f".eps{eps:g}.{source}.{estimator}" if round(eps, 6) in CLAIMED_EPS else ""
        rows += [
            measurement(f"unuvar.t8.with{claimed}", r["p_over_with"], eps=eps, **spread(r, "p_over_with"), **run),
            measurement(f"unuvar.t8.rejected{claimed}", 100 * r["rejection"], eps=eps, **spread(r, "rejection", 100), **run),
        ]
    return rows
