"""Fit tests of stochastic bin packing: *does task k fit bin j?* (Janus & Rzadca §4–5; Unuvar et al. §III;
Bashir et al.'s peak predictors).

A fit test maps a task to a few additive per-task quantities
(:meth:`FitTest.columns`, read from the task's statistics over the
observation set O, :class:`TaskStats`) and keeps their per-bin sums as running
statistics, so a fit check is O(1) per bin (:meth:`FitTest.slack` on the bin's
sums plus the task's columns). A task fits iff the slack is ≥ 0. Probabilistic
tests (GPA, Beta) return a slack in probability — Janus's ``FitBin`` of
Algorithm 1 — and size-based tests return the leftover capacity.

Implementations: :class:`GPA` (Janus & Rzadca §4, Algorithm 1),
:class:`Cantelli`, :class:`Av`, :class:`Perc` (Janus §5.1), :class:`BetaFit`
(Unuvar §III), :class:`NSigma`, :class:`RCLike`, :class:`MaxPredictor`,
:class:`BorgDefault` (Bashir et al.). :data:`FIT_TESTS` is the registry by
estimator name (:class:`colocate.registry.Registry`; config may add a plug-in
``module:Class``). A test that takes grid-wide options (config keys under
``packing:``) declares them in its ``options`` class attribute, config key →
constructor argument; :data:`FIT_OPTIONS` lists every declared key.

The packing algorithms and the evaluation that use these tests are in
:mod:`colocate.scheduling.packing`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
from scipy import special

from colocate.analysis.betafit import beta_parameters
from colocate.registry import Registry

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
    "FIT_OPTIONS",
    "required_percentiles",
]


# ----------------------------------------------------------------------------- validation


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

    A test is built from its main parameter (GPA's ρ, Cantelli's b, …) by
    :meth:`colocate.registry.Registry.build`. An optional ``options`` class
    attribute maps each grid-wide option the test takes (a config key under
    ``packing:``, e.g. ``beta_threshold``) to its constructor argument.
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


#: Fit tests by the estimator name used in results tables and config, in the order of the papers.
FIT_TESTS: Registry[FitTest] = Registry("fit test", FitTest, key="estimator")


class _Options:
    """Default ``options`` of every fit test: none (see :class:`FitTest`)."""

    options: ClassVar[Mapping[str, str]] = {}


class _SizeFit(_Options):
    """Shared slack of size-based tests: leftover capacity ``c − Σ size_i``."""

    def slack(self, sums: np.ndarray, capacity: float) -> np.ndarray:
        return capacity - sums[:, 0]

    def percentiles_needed(self) -> tuple[float, ...]:
        return ()


@FIT_TESTS.register
@dataclass(frozen=True)
class GPA(_Options):
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


@FIT_TESTS.register
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


@FIT_TESTS.register
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


@FIT_TESTS.register
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


@FIT_TESTS.register
@dataclass(frozen=True)
class BetaFit(_Options):
    """Beta(ε) — Unuvar et al. §III (eqs 6–9) applied per bin.

    The bin's utilisation U = (total usage)/C of a machine of physical
    capacity C has moments R̄ = Σμ_i/C and S̄² = Σσ_i²/C²; α, β follow from eqs
    7–8 (:func:`~colocate.analysis.betafit.beta_parameters`) and task k fits iff the Beta CDF at the
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
    options: ClassVar[Mapping[str, str]] = {"beta_threshold": "threshold"}

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


@FIT_TESTS.register
@dataclass(frozen=True)
class NSigma(_Options):
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


@FIT_TESTS.register
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


@FIT_TESTS.register
@dataclass(frozen=True)
class MaxPredictor(_Options):
    """Max of predictors (Bashir et al.): max(N-sigma peak, RC-like peak) ≤ c.

    Keeps Σμ, Σσ² and Σ p-th percentiles per bin. ``parameter`` is N; the
    percentile p of the RC-like part is part of the label.
    """

    n: float
    p: float = 99.0
    estimator: ClassVar[str] = "max-pred"
    options: ClassVar[Mapping[str, str]] = {"max_pred_percentile": "p"}

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


@FIT_TESTS.register
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


#: Every grid-wide option (config key under ``packing:``) that a built-in fit test declares.
FIT_OPTIONS: tuple[str, ...] = FIT_TESTS.options()


def required_percentiles(tests: Sequence[FitTest]) -> tuple[float, ...]:
    """Every percentile the given tests read, to compute them in one pass."""
    return tuple(sorted({p for t in tests for p in t.percentiles_needed()}))
