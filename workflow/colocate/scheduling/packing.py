"""Stochastic bin packing of tasks' CPU usage (Janus & Rzadca §4–5; Unuvar et al. §III).

An instance is a realization matrix (N tasks × R realizations, Janus §5.1) whose columns are split into an
observation set, which drives the packing, and an evaluation set, on which the frequency q of capacity violations
is measured. A fit test (:mod:`colocate.scheduling.fit_tests`) says whether a task fits a bin, an
:class:`Algorithm` (:class:`FirstFit`, :class:`BestFit`) which bin; :func:`run` is one experiment cell.

Method (the three concepts, the evaluation, a task too large for any bin): docs/methods.md#stochastic-bin-packing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from colocate.registry import Registry
from colocate.scheduling.fit_tests import FitTest, TaskStats, _check_matrix

__all__ = [
    "Algorithm",
    "FirstFit",
    "BestFit",
    "ALGORITHMS",
    "Packing",
    "pack",
    "rebalance",
    "split_realizations",
    "machine_totals",
    "lower_bound",
    "Evaluation",
    "evaluate",
    "observe",
    "run",
]


# ----------------------------------------------------------------------------- validation


def _check_capacity(capacity: float) -> float:
    capacity = float(capacity)
    if not math.isfinite(capacity) or capacity <= 0:
        raise ValueError(f"capacity must be a finite number > 0, got {capacity}")
    return capacity


# ----------------------------------------------------------------------------- algorithms


@runtime_checkable
class Algorithm(Protocol):
    """Chooses a bin among the open ones from their slack (NaN = does not fit); -1 opens a new bin."""

    name: ClassVar[str]

    def choose(self, slack: np.ndarray) -> int: ...


#: Packing algorithms by their config name (``packing.sections.*.algorithm``).
ALGORITHMS: Registry[Algorithm] = Registry("packing algorithm", Algorithm)


@ALGORITHMS.register
@dataclass(frozen=True)
class FirstFit:
    """First Fit — Janus Algorithm 1 ``FindBin``: the lowest-index bin with slack ≥ 0."""

    name: ClassVar[str] = "FF"

    def choose(self, slack: np.ndarray) -> int:
        ok = slack >= 0
        j = int(ok.argmax()) if ok.size else 0
        return j if ok.size and ok[j] else -1


@ALGORITHMS.register
@dataclass(frozen=True)
class BestFit:
    """Best Fit — Janus §4: the bin with the smallest non-negative slack (ties: lowest index)."""

    name: ClassVar[str] = "BF"

    def choose(self, slack: np.ndarray) -> int:
        if not slack.size:
            return -1
        s = np.where(slack >= 0, slack, np.inf)
        j = int(s.argmin())
        return j if s[j] < np.inf else -1


@dataclass
class Packing:
    """The tasks of each bin, in placement order; ``oversized``: tasks that fit no empty bin."""

    bins: list[list[int]]
    n_tasks: int
    oversized: list[int] = field(default_factory=list)
    migrations: int = 0

    @property
    def n_bins(self) -> int:
        return len(self.bins)

    @property
    def assignment(self) -> np.ndarray:
        """Bin index of each task (int64, length N)."""
        out = np.full(self.n_tasks, -1, dtype=np.int64)
        for j, members in enumerate(self.bins):
            out[members] = j
        return out


def _columns(fit: FitTest, stats: TaskStats) -> np.ndarray:
    cols = np.ascontiguousarray(fit.columns(stats), dtype=np.float64)
    if cols.ndim != 2 or cols.shape[0] != len(stats):
        raise ValueError(f"{fit.label}: columns must be (N, K), got {cols.shape}")
    bad = np.flatnonzero(~np.isfinite(cols).all(axis=1))
    if bad.size:
        raise ValueError(f"{fit.label}: per-task quantities are not finite for task(s) {bad[:5].tolist()}")
    return cols


def pack(
    fit: FitTest,
    stats: TaskStats,
    capacity: float,
    algorithm: Algorithm | str = "BF",
    *,
    rebalancing: bool = True,
    max_failures: int = 5,
    order: np.ndarray | None = None,
) -> Packing:
    """Pack every task (in ``order``, default 0..N−1: on-line, as Janus §5) with ``algorithm`` and ``fit``.

    Per bin, the fit test's per-task columns are kept summed (running
    statistics), so checking a task against bin j costs O(1); all open bins
    are checked in one vectorised call. Rebalancing (Janus §4) follows unless
    ``rebalancing`` is False.
    """
    capacity = _check_capacity(capacity)
    if isinstance(algorithm, str) and algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {sorted(ALGORITHMS)}, got {algorithm!r}")
    algo = ALGORITHMS.build(algorithm, key="algorithm") if isinstance(algorithm, str) else algorithm
    cols = _columns(fit, stats)
    n, k = cols.shape
    order = np.arange(n) if order is None else np.asarray(order, dtype=np.int64)
    if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError("order must be a permutation of the task indices")
    sums = np.zeros((n + 1, k), dtype=np.float64)
    bins: list[list[int]] = []
    oversized: list[int] = []
    open_ = np.zeros(n + 1, dtype=bool)  # bins that accept more tasks (not an oversized task's own bin)
    m = 0
    slack_of, choose = fit.slack, algo.choose
    for i in order.tolist():
        t = cols[i]
        j = -1
        if m:
            slack = slack_of(sums[:m] + t, capacity)
            if oversized:
                slack = np.where(open_[:m], slack, np.nan)
            j = choose(slack)
        if j < 0:
            j = m
            m += 1
            bins.append([])
            alone = fit.slack(t[None, :], capacity)[0]
            if alone >= 0:
                open_[j] = True
            else:
                oversized.append(i)
        sums[j] += t
        bins[j].append(i)
    packing = Packing(bins, n, oversized)
    if rebalancing:
        packing = rebalance(packing, fit, stats, capacity, max_failures=max_failures, _cols=cols)
    return packing


def rebalance(
    packing: Packing,
    fit: FitTest,
    stats: TaskStats,
    capacity: float,
    *,
    max_failures: int = 5,
    _cols: np.ndarray | None = None,
) -> Packing:
    """Rebalancing of Janus §4: round robin over machines 1..m−1, migrate each one's first task to machine m.

    A migration fails if the task does not fit the last machine (Janus), or —
    possible only for a non-monotone test such as Beta — if the machine it
    leaves would no longer pass its own test. The pass stops after
    ``max_failures`` failed attempts in total (Janus use 5), or when machines
    1..m−1 are empty. Machines emptied by migration are dropped. Returns a new
    :class:`Packing`; the input is not modified.
    """
    capacity = _check_capacity(capacity)
    if int(max_failures) != max_failures or max_failures < 1:
        raise ValueError(f"max_failures must be an integer ≥ 1, got {max_failures}")
    cols = _columns(fit, stats) if _cols is None else _cols
    bins = [list(b) for b in packing.bins]
    m = len(bins)
    if m < 2:
        return Packing(bins, packing.n_tasks, list(packing.oversized), packing.migrations)
    last = m - 1
    big = set(packing.oversized)
    last_sum = cols[bins[last]].sum(axis=0)
    failures = moved = 0
    i = 0
    sources = [j for j in range(last) if bins[j] and bins[j][0] not in big]
    alive = set(sources)
    while failures < max_failures and alive and bins[last][0] not in big:
        j = sources[i % len(sources)]
        i += 1
        if j not in alive:
            continue
        task = bins[j][0]
        rest = bins[j][1:]
        new_last = last_sum + cols[task]
        ok = fit.slack(new_last[None, :], capacity)[0] >= 0
        if ok and rest:
            ok = fit.slack(cols[rest].sum(axis=0)[None, :], capacity)[0] >= 0
        if ok:
            bins[j] = rest
            bins[last].append(task)
            last_sum = new_last
            moved += 1
            if not rest:
                alive.discard(j)
        else:
            failures += 1
    kept = [b for b in bins if b]
    return Packing(kept, packing.n_tasks, list(packing.oversized), packing.migrations + moved)


# ----------------------------------------------------------------------------- evaluation


def split_realizations(n_realizations: int, clairvoyance: float) -> tuple[slice, slice]:
    """Observation set O and evaluation set E as column slices (Janus §5.1, §5.5).

    At clairvoyance 1.0, O = E = all R realizations. Below, O is the first
    ``round(clairvoyance · R)`` columns (at least 1) and E the rest, disjoint.
    """
    clairvoyance = float(clairvoyance)
    if not (0 < clairvoyance <= 1):
        raise ValueError(f"clairvoyance must be in (0, 1], got {clairvoyance}")
    if n_realizations < 1:
        raise ValueError(f"n_realizations must be ≥ 1, got {n_realizations}")
    if clairvoyance == 1.0:
        return slice(0, n_realizations), slice(0, n_realizations)
    k = max(1, int(round(clairvoyance * n_realizations)))
    if k >= n_realizations:
        raise ValueError(
            f"clairvoyance {clairvoyance} leaves no evaluation realizations out of R = {n_realizations}"
        )
    return slice(0, k), slice(k, n_realizations)


#: Blocks are used when the runs of consecutive same-machine tasks hold at least this many
#: realizations each on average (a call costs a few µs; scipy's sparse kernel ~0.1 ns per element more).
_ELEMENTS_PER_RUN = 20_000


def machine_totals(
    assignment: np.ndarray, x: np.ndarray, n_bins: int | None = None, method: str = "auto"
) -> np.ndarray:
    """Total usage of each machine in each realization, ``A @ x`` with A the m × N 0/1 assignment matrix.

    Two vectorised ways, the same sums up to float rounding (float32 ``x`` stays float32):

    * ``"sparse"``: one sparse (CSC) product over the instance matrix ``x`` (N × R);
    * ``"blocks"``: First and Best Fit place consecutive tasks mostly on the same machine, so the
      tasks form few maximal runs ``[s, e)`` on one machine; each run is summed as a zero-copy row
      block, ``1ᵀ x[s:e]`` (one BLAS gemv, memory-bound), one call per run and no loop over
      machines × realizations. About twice as fast as scipy's sparse kernel on long runs.

    ``"auto"`` picks blocks when the runs hold on average at least ``_ELEMENTS_PER_RUN``
    realizations. Tasks with assignment −1 are left out.
    """
    assignment = np.asarray(assignment, dtype=np.int64)
    if assignment.shape != (x.shape[0],):
        raise ValueError(f"assignment has {assignment.shape} entries for {x.shape[0]} tasks")
    m = int(assignment.max()) + 1 if n_bins is None else int(n_bins)
    starts = np.flatnonzero(np.diff(assignment, prepend=-2))
    if method == "auto":
        method = "blocks" if starts.size * _ELEMENTS_PER_RUN <= x.size else "sparse"
    if method == "sparse":
        placed = np.flatnonzero(assignment >= 0)
        a = sp.csc_array(
            (np.ones(placed.size, dtype=x.dtype), (assignment[placed], placed)), shape=(m, x.shape[0])
        )
        return np.asarray(a @ x)
    if method != "blocks":
        raise ValueError(f"method must be auto, sparse or blocks, got {method!r}")
    dtype = np.result_type(x.dtype, np.float32)
    out = np.zeros((m, x.shape[1]), dtype=dtype)
    ones = np.ones(x.shape[0], dtype=dtype)
    ends = np.append(starts[1:], assignment.size)
    for s, e, j in zip(starts.tolist(), ends.tolist(), assignment[starts].tolist()):
        if j < 0:
            continue
        if e - s == 1:
            np.add(out[j], x[s], out=out[j])
        else:
            out[j] += ones[: e - s] @ x[s:e]
    return out


def lower_bound(means: np.ndarray, capacity: float) -> int:
    """m_norm = ⌈Σ x̄_i / c⌉, the normalisation of the number of machines (Janus §5.1)."""
    capacity = _check_capacity(capacity)
    total = float(np.sum(means, dtype=np.float64))
    if not math.isfinite(total):
        raise ValueError("lower_bound: task means are not finite (NaN or inf in the realizations?)")
    return max(1, math.ceil(total / capacity))


@dataclass(frozen=True)
class Evaluation:
    """Metrics of one packing (Janus §5.1)."""

    m_abs: int
    m_norm: int
    q: float
    q_machine: np.ndarray  # q(j)/|E| per machine
    utilisation: np.ndarray  # mean total usage / c per machine, over E
    evaluations: int  # |E|: q is over m_abs · |E| (machine, realization) pairs

    @property
    def m(self) -> float:
        return self.m_abs / self.m_norm


def evaluate(packing: Packing, inst_eval: np.ndarray, capacity: float, m_norm: int) -> Evaluation:
    """q and machine counts of ``packing`` on the evaluation realizations ``inst_eval`` (N × |E|, inst data).

    q = (1/(m|E|)) Σ_j Σ_{t∈E} ⟨Σ_{i∈S_j} x[i][t] > c⟩ (Janus §5.1): the fraction of
    (machine, realization) pairs whose total exceeds c.
    """
    capacity = _check_capacity(capacity)
    x = _check_matrix(np.asarray(inst_eval), "inst_eval")
    totals = machine_totals(packing.assignment, x, packing.n_bins)
    util = totals.sum(axis=1, dtype=np.float64) / (x.shape[1] * capacity)
    if not np.isfinite(util).all():  # NaN and inf propagate into the machine's sum
        rows = np.flatnonzero(~np.isfinite(x.sum(axis=1)))
        raise ValueError(f"inst_eval: realizations of task(s) {rows[:5].tolist()} contain NaN or inf")
    over = np.count_nonzero(totals > capacity, axis=1)
    q_machine = over / x.shape[1]
    return Evaluation(
        m_abs=packing.n_bins,
        m_norm=int(m_norm),
        q=float(over.sum() / (packing.n_bins * x.shape[1])),
        q_machine=q_machine,
        utilisation=util,
        evaluations=int(x.shape[1]),
    )


def observe(
    observed: np.ndarray,
    clairvoyance: float = 1.0,
    percentiles: Sequence[float] = (),
    requests: np.ndarray | None = None,
) -> TaskStats:
    """Per-task statistics over the observation set O of ``observed`` (inst or avg realizations, N × R)."""
    obs, _ = split_realizations(_check_matrix(np.asarray(observed), "observed").shape[1], clairvoyance)
    return TaskStats.from_observations(observed[:, obs], percentiles, requests)


def run(
    inst: np.ndarray,
    fit: FitTest,
    capacity: float,
    *,
    stats: TaskStats,
    clairvoyance: float = 1.0,
    algorithm: Algorithm | str = "BF",
    rebalancing: bool = True,
    max_failures: int = 5,
    m_norm: int | None = None,
) -> tuple[Packing, Evaluation]:
    """One experiment cell of Janus §5: pack with ``stats`` (from :func:`observe`, inst or avg data, §5.3),
    then measure q on the *inst* realizations of the evaluation set E.

    ``m_norm`` defaults to :func:`lower_bound` of the tasks' inst means over all R realizations, so that
    m is comparable across clairvoyance levels and data sources of one instance.
    """
    x = _check_matrix(np.asarray(inst), "inst")
    if len(stats) != x.shape[0]:
        raise ValueError(f"stats describe {len(stats)} tasks but inst has {x.shape[0]}")
    _, ev = split_realizations(x.shape[1], clairvoyance)
    if m_norm is None:
        m_norm = lower_bound(x.mean(axis=1, dtype=np.float64), capacity)
    packing = pack(fit, stats, capacity, algorithm, rebalancing=rebalancing, max_failures=max_failures)
    return packing, evaluate(packing, x[:, ev], capacity, m_norm)
