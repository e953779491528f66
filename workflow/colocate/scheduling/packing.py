"""Stochastic bin packing of tasks' CPU usage (Janus & Rzadca §4–5; Unuvar et al. §III).

An *instance* is a realization matrix ``x[i][t]`` (N tasks × R realizations,
Janus §5.1). The R columns are split into the observation set O and the
evaluation set E by the clairvoyance level (:func:`split_realizations`);
per-task statistics over O (:class:`TaskStats`) drive the packing, and the
frequency q of capacity violations is measured on E (:func:`evaluate`).

Three concepts, one protocol each:

* :class:`FitTest` — *does task k fit bin j?* Each test maps a task to a few
  additive per-task quantities (:meth:`FitTest.columns`) and keeps their
  per-bin sums as running statistics, so a fit check is O(1) per bin
  (:meth:`FitTest.slack` on the bin's sums plus the task's columns). A task
  fits iff the slack is ≥ 0. Probabilistic tests (GPA, Beta) return a slack in
  probability — Janus's ``FitBin`` of Algorithm 1 — and size-based tests
  return the leftover capacity. Implementations: :class:`GPA`,
  :class:`Cantelli`, :class:`Av`, :class:`Perc`, :class:`BetaFit`,
  :class:`NSigma`, :class:`RCLike`, :class:`MaxPredictor`,
  :class:`BorgDefault`.
* :class:`Algorithm` — *which of the bins that fit?* :class:`FirstFit` and
  :class:`BestFit` (Janus §4); :func:`pack` runs either over any fit test, and
  :func:`rebalance` is the post-pass of Janus §4.
* evaluation — :func:`machine_totals` (one sparse product), :func:`evaluate`
  (m_abs, m_norm, m, q, per-machine q, mean utilisation; Janus §5.1);
  :func:`observe` and :func:`run` put the pieces together for one experiment
  cell (statistics from inst or avg over O, q on inst over E).

Conventions. A task that does not fit even an empty bin (e.g. mean above the
capacity, possible for c < 1; Janus §5.4) is placed alone on a new machine,
as Algorithm 1 does (``FindBin`` opens machine m+1 unconditionally); such
tasks are listed in :attr:`Packing.oversized`, and nothing else fits with them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
from scipy import special

__all__ = [
    "TaskStats",
    "FitTest",
    "GPA",
    "Cantelli",
    "Av",
    "Perc",
    "BetaFit",
    "NSigma",
    "RCLike",
    "MaxPredictor",
    "BorgDefault",
    "FIT_TESTS",
    "make_fit_test",
    "required_percentiles",
    "beta_parameters",
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


def _check_matrix(x: np.ndarray, name: str) -> np.ndarray:
    if x.ndim != 2:
        raise ValueError(f"{name}: realization matrix must be 2-D (tasks × realizations), got shape {x.shape}")
    if x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"{name}: realization matrix is empty (shape {x.shape})")
    return x


def _bad_rows(values: np.ndarray) -> np.ndarray:
    return np.flatnonzero(~np.isfinite(values))


# ----------------------------------------------------------------------------- per-task statistics


class TaskStats:
    """Per-task statistics over the observation set O (Janus §5.1).

    ``mean`` and ``var`` (population variance, ddof = 0) are float64 arrays of
    length N; percentiles (numpy's linear interpolation, as ``perc`` of Janus
    §5.1) are computed on demand from the kept observation matrix and cached —
    pass the ones you need up front to compute them in one pass.
    ``requests`` is the task's CPU request from task_events (NaN where unknown),
    used only by :class:`BorgDefault`.
    """

    def __init__(
        self,
        mean: np.ndarray,
        var: np.ndarray,
        percentiles: Mapping[float, np.ndarray] | None = None,
        requests: np.ndarray | None = None,
        observations: np.ndarray | None = None,
    ) -> None:
        self.mean = np.asarray(mean, dtype=np.float64)
        self.var = np.asarray(var, dtype=np.float64)
        if self.mean.ndim != 1 or self.mean.shape != self.var.shape:
            raise ValueError(f"mean and var must be 1-D of equal length, got {self.mean.shape} and {self.var.shape}")
        for name, arr in (("mean", self.mean), ("var", self.var)):
            bad = _bad_rows(arr)
            if bad.size:
                raise ValueError(f"task statistics: {name} is not finite for task(s) {bad[:5].tolist()} (NaN or inf in the realizations?)")
        if np.any(self.var < 0):
            raise ValueError("task statistics: var must be ≥ 0")
        self._percentiles: dict[float, np.ndarray] = {float(p): np.asarray(v, np.float64) for p, v in (percentiles or {}).items()}
        self.requests = None if requests is None else np.asarray(requests, dtype=np.float64)
        if self.requests is not None and self.requests.shape != self.mean.shape:
            raise ValueError(f"requests must have one value per task ({self.mean.size}), got {self.requests.shape}")
        self._obs = observations

    @classmethod
    def from_observations(
        cls,
        observations: np.ndarray,
        percentiles: Sequence[float] = (),
        requests: np.ndarray | None = None,
    ) -> TaskStats:
        """Statistics of each row of ``observations`` (N × |O|, any float dtype), accumulated in float64.

        Raises ValueError naming the first tasks whose observations hold NaN or inf.
        """
        obs = _check_matrix(np.asarray(observations), "observations")
        mean = obs.mean(axis=1, dtype=np.float64)
        bad = _bad_rows(mean)
        if bad.size:
            raise ValueError(f"observations: realizations of task(s) {bad[:5].tolist()} contain NaN or inf")
        var = obs.var(axis=1, dtype=np.float64)
        out = cls(mean, var, requests=requests, observations=obs)
        out.compute_percentiles(percentiles)
        return out

    def __len__(self) -> int:
        return self.mean.size

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(self.var)

    def compute_percentiles(self, ps: Sequence[float]) -> None:
        """Compute and cache the p-th percentiles (0 ≤ p ≤ 100) not cached yet, in one pass."""
        todo = sorted({float(p) for p in ps} - set(self._percentiles))
        if not todo:
            return
        for p in todo:
            if not 0 <= p <= 100:
                raise ValueError(f"percentile p must be in [0, 100], got {p}")
        if self._obs is None:
            raise ValueError(f"percentile(s) {todo} were not given and no observations are kept to compute them")
        values = np.percentile(self._obs, todo, axis=1).astype(np.float64)
        for p, v in zip(todo, values):
            self._percentiles[p] = v

    def percentile(self, p: float) -> np.ndarray:
        """The p-th percentile of each task over O."""
        self.compute_percentiles([p])
        return self._percentiles[float(p)]

    def subset(self, rows: np.ndarray) -> TaskStats:
        """The statistics of tasks ``rows`` (cached percentiles and requests follow)."""
        return TaskStats(
            self.mean[rows],
            self.var[rows],
            {p: v[rows] for p, v in self._percentiles.items()},
            None if self.requests is None else self.requests[rows],
            None if self._obs is None else self._obs[rows],
        )


# ----------------------------------------------------------------------------- fit tests


@runtime_checkable
class FitTest(Protocol):
    """A fit criterion with per-bin running statistics.

    ``columns(stats)`` gives, per task, the K additive quantities a bin keeps
    summed (e.g. μ_i and σ_i² for GPA); ``slack(sums, capacity)`` maps bins'
    sums (m × K, already including the candidate task) to a slack per bin;
    the candidate fits iff slack ≥ 0 (NaN never fits). Best Fit picks the
    smallest non-negative slack.
    """

    estimator: ClassVar[str]

    @property
    def parameter(self) -> float: ...

    @property
    def label(self) -> str: ...

    def percentiles_needed(self) -> tuple[float, ...]: ...

    def columns(self, stats: TaskStats) -> np.ndarray: ...

    def slack(self, sums: np.ndarray, capacity: float) -> np.ndarray: ...


def _probability(name: str, value: float, *, open_upper: bool = True) -> float:
    value = float(value)
    ok = 0 < value < 1 if open_upper else 0 < value <= 1
    if not ok:
        raise ValueError(f"{name} must be in (0, 1{')' if open_upper else ']'}, got {value}")
    return value


def _nonneg(name: str, value: float) -> float:
    value = float(value)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number ≥ 0, got {value}")
    return value


def _percent(name: str, value: float) -> float:
    value = float(value)
    if not 0 <= value <= 100:
        raise ValueError(f"{name} must be in [0, 100], got {value}")
    return value


def _gaussian_exceedance(mu: np.ndarray, var: np.ndarray, capacity: float) -> np.ndarray:
    """P(X > c) for X ~ N(mu, var): ``1 − F(c | μ, σ²)`` (``scipy.special.ndtr``, the normal CDF).

    With σ = 0 the distribution is a point mass: 1 if μ > c, else 0.
    """
    sd = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = special.ndtr((mu - capacity) / sd)
    return np.where(sd > 0, p, (mu > capacity).astype(np.float64))


class _SizeFit:
    """Shared slack of size-based tests: leftover capacity ``c − Σ size_i``."""

    def slack(self, sums: np.ndarray, capacity: float) -> np.ndarray:
        return capacity - sums[:, 0]

    def percentiles_needed(self) -> tuple[float, ...]:
        return ()


@dataclass(frozen=True)
class GPA:
    """Gaussian Percentile Approximation GPA(ρ) — Janus & Rzadca §4, Algorithm 1.

    A bin keeps μ_j = Σμ_i and σ_j² = Σσ_i²; task k fits iff
    F(c | μ_j + μ_k, σ_j² + σ_k²) ≥ 1 − ρ. The slack is Algorithm 1's
    ``FitBin`` = ρ − (1 − F(c | μ', σ'²)).
    """

    rho: float
    estimator: ClassVar[str] = "GPA"

    def __post_init__(self) -> None:
        _probability("GPA rho", self.rho)

    @property
    def parameter(self) -> float:
        return self.rho

    @property
    def label(self) -> str:
        return f"GPA {self.rho:g}"

    def percentiles_needed(self) -> tuple[float, ...]:
        return ()

    def columns(self, stats: TaskStats) -> np.ndarray:
        return np.column_stack([stats.mean, stats.var])

    def slack(self, sums: np.ndarray, capacity: float) -> np.ndarray:
        sd = np.sqrt(sums[:, 1])
        if sd.all():  # the common case, without the point-mass branch
            return self.rho - special.ndtr((sums[:, 0] - capacity) / sd)
        return self.rho - _gaussian_exceedance(sums[:, 0], sums[:, 1], capacity)


@dataclass(frozen=True)
class Cantelli(_SizeFit):
    """Cantelli(b) — Janus §5.1 after Hwang & Pedram: item size μ_i + b·σ_i.

    By Cantelli's inequality Pr[X > μ + bσ] < 1/(1 + b²): b = 4.4 for a 95% SLO,
    1.7 for Gaussian items; Janus also try b = 1.0.
    """

    b: float
    estimator: ClassVar[str] = "Cantelli"

    def __post_init__(self) -> None:
        _nonneg("Cantelli b", self.b)

    @property
    def parameter(self) -> float:
        return self.b

    @property
    def label(self) -> str:
        return f"Cantelli {self.b:g}"

    def columns(self, stats: TaskStats) -> np.ndarray:
        return (stats.mean + self.b * stats.std)[:, None]


@dataclass(frozen=True)
class Av(_SizeFit):
    """av(f) — Janus §5.1: item size f·μ_i, the mean from the observation period times f ∈ {1, 1.25, 2}."""

    f: float
    estimator: ClassVar[str] = "av"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.f) and self.f > 0):
            raise ValueError(f"av factor f must be a finite number > 0, got {self.f}")

    @property
    def parameter(self) -> float:
        return self.f

    @property
    def label(self) -> str:
        return f"av {self.f:g}"

    def columns(self, stats: TaskStats) -> np.ndarray:
        return (self.f * stats.mean)[:, None]


@dataclass(frozen=True)
class Perc(_SizeFit):
    """perc(p) — Janus §5.1: item size = the task's p-th percentile over O (p = 100 is *max*)."""

    p: float
    estimator: ClassVar[str] = "perc"

    def __post_init__(self) -> None:
        _percent("perc p", self.p)

    @property
    def parameter(self) -> float:
        return self.p

    @property
    def label(self) -> str:
        return "max" if self.p == 100 else f"perc {self.p:g}"

    def percentiles_needed(self) -> tuple[float, ...]:
        return (self.p,)

    def columns(self, stats: TaskStats) -> np.ndarray:
        return stats.percentile(self.p)[:, None]


def beta_parameters(mean: np.ndarray | float, var: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Shape parameters (α, β) of a Beta with the given mean R̄ and variance S̄² — Unuvar eqs 7–8.

    α = R̄ (R̄(1 − R̄)/S̄² − 1),  β = (1 − R̄)(R̄(1 − R̄)/S̄² − 1).
    The Beta exists iff 0 < R̄ < 1 and S̄² < R̄(1 − R̄); elsewhere α, β are not both > 0.
    """
    mean = np.asarray(mean, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = mean * (1 - mean) / var - 1
    return mean * k, (1 - mean) * k


@dataclass(frozen=True)
class BetaFit:
    """Beta(ε) — Unuvar et al. §III (eqs 6–9) applied per bin.

    The bin's utilisation U = (total usage)/C of a machine of physical
    capacity C has moments R̄ = Σμ_i/C and S̄² = Σσ_i²/C²; α, β follow from eqs
    7–8 (:func:`beta_parameters`) and task k fits iff the Beta CDF at the
    threshold U* is ≥ 1 − ε (eq 6; ``scipy.special.betainc`` is the Beta CDF).

    We read the bin capacity c as the threshold level, C = c/U*, so that
    U > U* ⟺ total > c: the criterion bounds the same event as GPA's and q
    (c = 1, U* = 0.8 is Unuvar's threshold on a machine of capacity 1.25).
    A bin whose moments admit no Beta (R̄ ≥ 1 or S̄² ≥ R̄(1 − R̄)) does not fit;
    with S̄² = 0 the utilisation is a point mass (fits iff R̄ ≤ U*).
    Slack: ε − P(U > U*).
    """

    eps: float
    threshold: float = 0.8
    estimator: ClassVar[str] = "Beta"

    def __post_init__(self) -> None:
        _probability("Beta eps", self.eps)
        _probability("Beta threshold", self.threshold)

    @property
    def parameter(self) -> float:
        return self.eps

    @property
    def label(self) -> str:
        return f"Beta {self.eps:g}"

    def percentiles_needed(self) -> tuple[float, ...]:
        return ()

    def columns(self, stats: TaskStats) -> np.ndarray:
        return np.column_stack([stats.mean, stats.var])

    def slack(self, sums: np.ndarray, capacity: float) -> np.ndarray:
        scale = self.threshold / capacity  # 1/C
        r = sums[:, 0] * scale
        s2 = sums[:, 1] * scale * scale
        a, b = beta_parameters(r, s2)
        valid = (a > 0) & (b > 0) & np.isfinite(a) & np.isfinite(b)
        with np.errstate(invalid="ignore"):
            cdf = special.betainc(np.where(valid, a, 1.0), np.where(valid, b, 1.0), self.threshold)
        point = s2 <= 0
        exceed = np.where(point, (r > self.threshold).astype(np.float64), np.where(valid, 1.0 - cdf, 1.0 + self.eps))
        return self.eps - exceed


@dataclass(frozen=True)
class NSigma:
    """N-sigma peak predictor (Bashir et al., EuroSys'21): fits iff Σμ_i + N·sqrt(Σσ_i²) ≤ c.

    Slack: the leftover capacity c − (Σμ + N·sqrt(Σσ²)).
    """

    n: float
    estimator: ClassVar[str] = "N-sigma"

    def __post_init__(self) -> None:
        _nonneg("N-sigma n", self.n)

    @property
    def parameter(self) -> float:
        return self.n

    @property
    def label(self) -> str:
        return f"N-sigma {self.n:g}"

    def percentiles_needed(self) -> tuple[float, ...]:
        return ()

    def columns(self, stats: TaskStats) -> np.ndarray:
        return np.column_stack([stats.mean, stats.var])

    def slack(self, sums: np.ndarray, capacity: float) -> np.ndarray:
        return capacity - (sums[:, 0] + self.n * np.sqrt(sums[:, 1]))


@dataclass(frozen=True)
class RCLike(_SizeFit):
    """RC-like peak predictor (Bashir et al., after Resource Central): Σ of per-task p-th percentiles ≤ c.

    As a fit test it coincides with perc(p); it is listed under its own name for
    the peak-predictor comparison and as a part of :class:`MaxPredictor`.
    """

    p: float
    estimator: ClassVar[str] = "RC-like"

    def __post_init__(self) -> None:
        _percent("RC-like p", self.p)

    @property
    def parameter(self) -> float:
        return self.p

    @property
    def label(self) -> str:
        return f"RC-like {self.p:g}"

    def percentiles_needed(self) -> tuple[float, ...]:
        return (self.p,)

    def columns(self, stats: TaskStats) -> np.ndarray:
        return stats.percentile(self.p)[:, None]


@dataclass(frozen=True)
class MaxPredictor:
    """Max of predictors (Bashir et al.): max(N-sigma peak, RC-like peak) ≤ c.

    Keeps Σμ, Σσ² and Σ p-th percentiles per bin. ``parameter`` is N; the
    percentile p of the RC-like part is part of the label.
    """

    n: float
    p: float = 99.0
    estimator: ClassVar[str] = "max-pred"

    def __post_init__(self) -> None:
        _nonneg("max-pred n", self.n)
        _percent("max-pred p", self.p)

    @property
    def parameter(self) -> float:
        return self.n

    @property
    def label(self) -> str:
        return f"max(N-sigma {self.n:g}, RC-like {self.p:g})"

    def percentiles_needed(self) -> tuple[float, ...]:
        return (self.p,)

    def columns(self, stats: TaskStats) -> np.ndarray:
        return np.column_stack([stats.mean, stats.var, stats.percentile(self.p)])

    def slack(self, sums: np.ndarray, capacity: float) -> np.ndarray:
        peak = np.maximum(sums[:, 0] + self.n * np.sqrt(sums[:, 1]), sums[:, 2])
        return capacity - peak


@dataclass(frozen=True)
class BorgDefault(_SizeFit):
    """Borg-default peak predictor (Bashir et al.): factor × Σ requests ≤ c (factor 0.9).

    Item size = factor × the task's CPU request from task_events. Where the
    request is unknown (NaN) the task's observed maximum over O stands in —
    the limit a cautious user would set.
    """

    factor: float = 0.9
    estimator: ClassVar[str] = "Borg"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.factor) and self.factor > 0):
            raise ValueError(f"Borg factor must be a finite number > 0, got {self.factor}")

    @property
    def parameter(self) -> float:
        return self.factor

    @property
    def label(self) -> str:
        return f"Borg {self.factor:g}"

    def percentiles_needed(self) -> tuple[float, ...]:
        return (100.0,)

    def columns(self, stats: TaskStats) -> np.ndarray:
        req = np.full(len(stats), np.nan) if stats.requests is None else stats.requests
        missing = ~np.isfinite(req)
        if missing.any():
            req = np.where(missing, stats.percentile(100.0), req)
        return (self.factor * req)[:, None]


#: Fit tests by the estimator name used in results tables and config.
FIT_TESTS: dict[str, type] = {
    cls.estimator: cls for cls in (GPA, Cantelli, Av, Perc, BetaFit, NSigma, RCLike, MaxPredictor, BorgDefault)
}


def make_fit_test(estimator: str, parameter: float, **options: float) -> FitTest:
    """The fit test named ``estimator`` (a key of :data:`FIT_TESTS`) with its main parameter."""
    try:
        cls = FIT_TESTS[estimator]
    except KeyError:
        raise ValueError(f"estimator must be one of {sorted(FIT_TESTS)}, got {estimator!r}") from None
    return cls(parameter, **options)


def required_percentiles(tests: Sequence[FitTest]) -> tuple[float, ...]:
    """Every percentile the given tests read, to compute them in one pass."""
    return tuple(sorted({p for t in tests for p in t.percentiles_needed()}))


# ----------------------------------------------------------------------------- algorithms


@runtime_checkable
class Algorithm(Protocol):
    """Chooses a bin among the open ones from their slack (NaN = does not fit); -1 opens a new bin."""

    name: ClassVar[str]

    def choose(self, slack: np.ndarray) -> int: ...


@dataclass(frozen=True)
class FirstFit:
    """First Fit — Janus Algorithm 1 ``FindBin``: the lowest-index bin with slack ≥ 0."""

    name: ClassVar[str] = "FF"

    def choose(self, slack: np.ndarray) -> int:
        ok = slack >= 0
        j = int(ok.argmax()) if ok.size else 0
        return j if ok.size and ok[j] else -1


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


ALGORITHMS: dict[str, Algorithm] = {"FF": FirstFit(), "BF": BestFit()}


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
    algo = ALGORITHMS[algorithm] if isinstance(algorithm, str) else algorithm
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
