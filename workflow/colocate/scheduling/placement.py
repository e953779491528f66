"""Placement simulator: Pack, Spread, XBalance and Adaptive Bin Packing (Tantawi & Steinder).

A request goes to one node that can hold it (eq. 1), chosen by minimising a policy's objective (problem 2), or is
rejected. :class:`ClusterState` makes the cluster's utilisation moments after a tentative placement cost O(R²) per
candidate, not O(N·R²) (§III-A); :class:`PlacementPolicy` and :class:`Optimiser` are the protocols of the
objectives and of their solvers; :func:`simulate` runs a stream of requests through a policy.

Method (the problem, the policies, the solvers, the statistics): docs/methods.md#placement-simulator.
"""

from __future__ import annotations

import heapq
import math
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
import polars as pl

from colocate.registry import Registry

#: Relative slack of the feasibility test a⁺ ≥ 0 (allocations are sums of floats).
FEASIBILITY_TOL = 1e-9
#: Two objective values closer than this (relative) are a tie.
TIE_TOL = 1e-12


# ----------------------------------------------------------------------------- variability


def mcv(mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Albert–Zhang multivariate coefficient of variation γ = √(μᵀΣμ / (μᵀμ)²) (Tantawi & Steinder eq. 3).

    ``mu`` is (..., R) and ``sigma`` (..., R, R); the result has the leading shape. γ = 0 where
    μᵀμ = 0 (an idle cluster or an all-zero demand).
    """
    mu = np.asarray(mu, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    quad = np.einsum("...r,...rs,...s->...", mu, sigma, mu)
    norm2 = np.einsum("...r,...r->...", mu, mu)
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.sqrt(np.maximum(quad, 0.0)) / norm2
    return np.where(norm2 > 0, g, 0.0)


def std_from_cov(sigma: np.ndarray) -> np.ndarray:
    """Standard deviations σ_r = √Σ_rr (clipped at 0 against rounding), shape (..., R)."""
    return np.sqrt(np.maximum(np.diagonal(sigma, axis1=-2, axis2=-1), 0.0))


class DemandStatistics:
    """Exponentially weighted relative-demand mean μ^dem(t) and covariance Σ^dem(t) (§III-C step 1).

    Relative demand is v = d / c̄ with c̄ the largest capacity of each resource in the cluster
    (§III-A). Each update is step 1 of the ABP algorithm with smoothing α:
    ν ← (1 − α)ν + α v,  M ← (1 − α)M + α v vᵀ,  Σ = M − ννᵀ.
    The recursion starts from zero weight and is normalised by the total weight 1 − (1 − α)^k
    (bias correction), so that the first request gives μ = v, Σ = 0 instead of a mean shrunk
    towards 0; after k ≫ 1/α requests the two coincide.
    """

    def __init__(self, alpha: float, cbar: np.ndarray):
        if not 0 < alpha <= 1:
            raise ValueError(f"smoothing alpha must be in (0, 1], got {alpha}")
        cbar = np.asarray(cbar, dtype=np.float64)
        if (cbar <= 0).any():
            raise ValueError(f"maximum capacities c̄ must be positive, got {cbar}")
        self.alpha = float(alpha)
        self.cbar = cbar
        r = cbar.size
        self._w = 0.0
        self._m1 = np.zeros(r)
        self._m2 = np.zeros((r, r))

    def update(self, demand: np.ndarray) -> None:
        v = np.asarray(demand, dtype=np.float64) / self.cbar
        a = self.alpha
        self._w = (1 - a) * self._w + a
        self._m1 = (1 - a) * self._m1 + a * v
        self._m2 = (1 - a) * self._m2 + a * np.outer(v, v)

    @property
    def mean(self) -> np.ndarray:
        """μ^dem(t)."""
        return self._m1 / self._w if self._w else np.zeros_like(self._m1)

    @property
    def cov(self) -> np.ndarray:
        """Σ^dem(t)."""
        if not self._w:
            return np.zeros_like(self._m2)
        mu = self.mean
        return self._m2 / self._w - np.outer(mu, mu)

    @property
    def gamma(self) -> float:
        """γ^dem(t), eq. 3 on μ^dem(t), Σ^dem(t)."""
        return float(mcv(self.mean, self.cov))


# ----------------------------------------------------------------------------- cluster state


class ClusterState:
    """N nodes × R resources: capacity c, allocation g, availability a = c − g, utilisation u = g / c (§II).

    Keeps S1 = Σ_i u_i and S2 = Σ_i u_i u_iᵀ (recomputed from u at each committed change, so no
    rounding drifts in), from which :meth:`candidate_moments` gives μ^sys(n) and Σ^sys(n) after a
    tentative placement of d on node n in O(R²) per candidate: only row n of u changes, by
    δ = d / c_n, so S1' = S1 + δ and S2' = S2 + (u_n + δ)(u_n + δ)ᵀ − u_n u_nᵀ.
    """

    def __init__(self, capacity: np.ndarray):
        capacity = np.atleast_2d(np.asarray(capacity, dtype=np.float64))
        if capacity.ndim != 2 or capacity.size == 0:
            raise ValueError(f"capacity must be an N × R matrix, got shape {capacity.shape}")
        if not np.isfinite(capacity).all() or (capacity <= 0).any():
            raise ValueError("every node capacity must be finite and positive")
        self.capacity = capacity
        self.inv_capacity = 1.0 / capacity
        self.alloc = np.zeros_like(capacity)
        self.n_nodes, self.n_resources = capacity.shape
        self.cbar = capacity.max(axis=0)
        self._refresh()

    def _refresh(self) -> None:
        self.util = self.alloc * self.inv_capacity
        self._s1 = self.util.sum(axis=0)
        self._s2 = self.util.T @ self.util

    @property
    def available(self) -> np.ndarray:
        """a = c − g (N × R)."""
        return self.capacity - self.alloc

    def feasible(self, demand: np.ndarray) -> np.ndarray:
        """Indices of the nodes n with a⁺(n; d) = a_n − d ≥ 0 (constraint ψ, eq. 1)."""
        slack = self.capacity - self.alloc - demand
        ok = (slack >= -FEASIBILITY_TOL * self.capacity).all(axis=1)
        return np.flatnonzero(ok)

    def place(self, node: int, demand: np.ndarray) -> None:
        self.alloc[node] += demand
        self._refresh()

    def release(self, node: int, demand: np.ndarray) -> None:
        row = self.alloc[node] - demand
        # a node emptied of all its requests returns to exactly zero
        row[np.abs(row) <= FEASIBILITY_TOL * self.capacity[node]] = 0.0
        self.alloc[node] = row
        self._refresh()

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Current μ^sys (R,) and Σ^sys (R × R) of u across the nodes."""
        mu = self._s1 / self.n_nodes
        return mu, self._s2 / self.n_nodes - np.outer(mu, mu)

    def candidate_moments(self, demand: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """μ^sys(n) (K × R) and Σ^sys(n) (K × R × R) after placing d on each candidate n: O(R²) each."""
        delta = demand * self.inv_capacity[nodes]
        u = self.util[nodes]
        up = u + delta
        mu = (self._s1 + delta) / self.n_nodes
        s2 = self._s2 + up[:, :, None] * up[:, None, :] - u[:, :, None] * u[:, None, :]
        return mu, s2 / self.n_nodes - mu[:, :, None] * mu[:, None, :]

    def candidate_moments_naive(self, demand: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The same by recomputing the moments of the whole utilisation matrix per candidate: O(N·R²) each.

        The reference for tests and for ``bench/placement.py``.
        """
        mus, sigmas = [], []
        for n in np.asarray(nodes):
            u = self.util.copy()
            u[n] = (self.alloc[n] + demand) * self.inv_capacity[n]
            mu = u.mean(axis=0)
            c = u - mu
            mus.append(mu)
            sigmas.append(c.T @ c / self.n_nodes)
        r = self.n_resources
        return np.array(mus).reshape(-1, r), np.array(sigmas).reshape(-1, r, r)

    def candidate_util(self, demand: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """u_n(n; d): the utilisation row of each candidate after placement (K × R)."""
        return (self.alloc[nodes] + demand) * self.inv_capacity[nodes]


# ----------------------------------------------------------------------------- policies


@runtime_checkable
class PlacementPolicy(Protocol):
    """The objective φ(n; d, a) of placement problem 2 (Tantawi & Steinder §II-A), lower is better.

    ``reset`` starts a run on a cluster, ``observe`` sees every arriving demand (accepted or not,
    before the decision), ``objective`` scores candidate nodes for demand d. Policies never check
    feasibility: the optimiser only offers feasible candidates. ``kind`` is the policy's name in
    config and ``name`` its label in results; an optional ``options`` class attribute maps the
    settings it takes (``prime_resource`` as a resource index, ``xbalance_weights``, ``alpha``) to
    constructor arguments (:class:`colocate.registry.Registry`).
    """

    kind: ClassVar[str]
    name: str

    def reset(self, state: ClusterState) -> None: ...

    def observe(self, demand: np.ndarray) -> None: ...

    def objective(self, state: ClusterState, demand: np.ndarray, nodes: np.ndarray) -> np.ndarray: ...


#: Placement policies by their config name (``placement.policies``); config may add a plug-in ``module:Class``.
POLICIES: Registry[PlacementPolicy] = Registry("placement policy", PlacementPolicy, key="kind")


class _Stateless:
    options: ClassVar[dict[str, str]] = {}

    def reset(self, state: ClusterState) -> None:
        pass

    def observe(self, demand: np.ndarray) -> None:
        pass


@POLICIES.register
@dataclass
class Pack(_Stateless):
    """Pack_r (§II-B): the node with the least a_{n,r} − d_r ≥ 0 on the prime resource r."""

    kind: ClassVar[str] = "pack"
    options: ClassVar[dict[str, str]] = {"prime_resource": "resource"}

    resource: int
    name: str = "PACK"

    def objective(self, state, demand, nodes):
        return state.available[nodes, self.resource] - demand[self.resource]


@POLICIES.register
@dataclass
class Spread(_Stateless):
    """Spread_r (§II-C): the node with the most a_{n,r} − d_r ≥ 0 on the prime resource r."""

    kind: ClassVar[str] = "spread"
    options: ClassVar[dict[str, str]] = {"prime_resource": "resource"}

    resource: int
    name: str = "SPREAD"

    def objective(self, state, demand, nodes):
        return -(state.available[nodes, self.resource] - demand[self.resource])


@POLICIES.register
@dataclass
class PackDist(_Stateless):
    """Pack_dist (§II-B): the node with the largest ‖u_n(n; d)‖ after placement."""

    kind: ClassVar[str] = "pack_dist"

    name: str = "PACK_DIST"

    def objective(self, state, demand, nodes):
        return -np.linalg.norm(state.candidate_util(demand, nodes), axis=1)


@POLICIES.register
@dataclass
class SpreadDist(_Stateless):
    """Spread_dist (§II-C): the node with the smallest ‖u_n(n; d)‖ after placement."""

    kind: ClassVar[str] = "spread_dist"

    name: str = "SPREAD_DIST"

    def objective(self, state, demand, nodes):
        return np.linalg.norm(state.candidate_util(demand, nodes), axis=1)


@POLICIES.register
@dataclass
class XBalance(_Stateless):
    """XBalance(w) (§II-D): minimise wᵀσ(n; d); w_r > 0 balances (spreads) resource r, w_r < 0 packs it."""

    kind: ClassVar[str] = "xbalance"
    options: ClassVar[dict[str, str]] = {"xbalance_weights": "weights"}

    weights: Sequence[float]
    name: str = "XBAL"

    def __post_init__(self):
        self.weights = np.asarray(self.weights, dtype=np.float64)

    def objective(self, state, demand, nodes):
        _, sigma = state.candidate_moments(demand, nodes)
        return std_from_cov(sigma) @ self.weights


@POLICIES.register
@dataclass
class ABP:
    """Adaptive Bin Packing (ABP), Tantawi & Steinder §III: minimise (γ^sys(n) − γ^dem(t))² (eq. 4).

    γ is the Albert–Zhang coefficient of variation (eq. 3); γ^dem(t) comes from the exponentially
    weighted relative demand statistics with smoothing ``alpha`` (step 1 of §III-C).
    """

    kind: ClassVar[str] = "abp"
    options: ClassVar[dict[str, str]] = {"alpha": "alpha"}

    alpha: float
    name: str = "ABP"
    demand: DemandStatistics | None = field(default=None, init=False, repr=False)

    def reset(self, state: ClusterState) -> None:
        self.demand = DemandStatistics(self.alpha, state.cbar)

    def observe(self, demand: np.ndarray) -> None:
        self.demand.update(demand)

    def objective(self, state, demand, nodes):
        mu, sigma = state.candidate_moments(demand, nodes)
        return (mcv(mu, sigma) - self.demand.gamma) ** 2


def make_policy(
    kind: str, *, prime_resource: int = 0, weights: Sequence[float] | None = None, alpha: float = 0.005,
    own: dict | None = None, key: str = "placement.policies",
) -> PlacementPolicy:
    """A fresh policy by its config name or plug-in ``module:Class``, given the run's settings and its ``own`` options."""
    settings = {"prime_resource": prime_resource, "alpha": alpha}
    if weights is not None:
        settings["xbalance_weights"] = weights
    return POLICIES.build(kind, key=key, settings=settings, own=own)


# ----------------------------------------------------------------------------- optimisers

Objective = Callable[[np.ndarray], np.ndarray]


@runtime_checkable
class Optimiser(Protocol):
    """Solver of problem 2/4: pick one of the feasible nodes (non-empty) minimising the objective.

    ``objective`` maps candidate node indices to objective values; ``features`` (optional, one row
    per feasible node) describe each candidate's state after placement, for optimisers that bias
    their search by similarity.
    """

    name: str

    def choose(
        self, objective: Objective, feasible: np.ndarray, rng: np.random.Generator, features: np.ndarray | None = None
    ) -> int: ...


#: Optimisers by their config name (``placement.optimiser``); config may add a plug-in ``module:Class``.
OPTIMISERS: Registry[Optimiser] = Registry("optimiser", Optimiser)


def _ties(values: np.ndarray) -> np.ndarray:
    best = values.min()
    return np.flatnonzero(values <= best + TIE_TOL * max(1.0, abs(best)))


@OPTIMISERS.register
@dataclass
class Exhaustive:
    """Exact argmin of the objective over all feasible nodes (exact for a single placement).

    Ties are broken uniformly at random (``tie_break="random"``, as kube-scheduler picks among
    equally scored nodes) or by the lowest node index (``"first"``).
    """

    tie_break: str = "random"
    name: str = "exhaustive"
    options: ClassVar[dict[str, str]] = {"tie_break": "tie_break"}

    def __post_init__(self):
        if self.tie_break not in ("random", "first"):
            raise ValueError(f"tie_break must be 'random' or 'first', got {self.tie_break!r}")

    def choose(self, objective, feasible, rng, features=None):
        values = objective(feasible)
        ties = _ties(values)
        if ties.size == 1 or self.tie_break == "first":
            return int(feasible[ties[0]])
        return int(feasible[ties[rng.integers(ties.size)]])


@OPTIMISERS.register
@dataclass
class BiasedSampling:
    """Biased sampling optimiser in the spirit of BSA (Tantawi, ICAC 2016), cross-entropy style.

    Candidate nodes are drawn from a distribution p over the feasible nodes, uniform at first.
    Each of ``iterations`` rounds draws ``samples`` not yet evaluated nodes from p (without
    replacement), evaluates the objective on them and moves p toward the ``elite`` fraction of
    the best samples: p ← (1 − β) p + β q with β = ``smoothing`` (importance sampling of good
    placements). With candidate ``features`` (the utilisation row u_n(n; d) each node would have,
    R values) q is a Gaussian kernel of width ``bandwidth`` around the elite nodes' features, so
    the bias reaches unevaluated nodes in similar states (nodes have no other structure for a
    single placement); without features q is the elite frequency. The best sample seen is
    returned. The budget is ``samples × iterations`` objective evaluations, and the bias costs
    O(N · elite · R) per iteration.
    """

    samples: int = 4
    iterations: int = 4
    elite: float = 0.25
    smoothing: float = 0.5
    bandwidth: float = 0.2
    name: str = "bsa"
    options: ClassVar[dict[str, str]] = {"bsa": "**"}  # the placement.bsa mapping, spread

    def __post_init__(self):
        if self.samples < 1 or self.iterations < 1:
            raise ValueError("BSA needs samples ≥ 1 and iterations ≥ 1")
        if not 0 < self.elite <= 1 or not 0 < self.smoothing <= 1:
            raise ValueError("BSA elite fraction and smoothing must be in (0, 1]")
        if self.bandwidth <= 0:
            raise ValueError("BSA kernel bandwidth must be positive")

    @property
    def budget(self) -> int:
        return self.samples * self.iterations

    def choose(self, objective, feasible, rng, features=None):
        k = feasible.size
        if k == 1:
            return int(feasible[0])
        p = np.full(k, 1.0 / k)
        unseen = np.ones(k, dtype=bool)
        best_value, best_node = math.inf, -1
        for _ in range(self.iterations):
            w = p * unseen
            if not w.any():
                break
            draw = self._draw(w / w.sum(), rng)
            unseen[draw] = False
            values = objective(feasible[draw])
            order = np.argsort(values, kind="stable")
            if values[order[0]] < best_value:
                best_value, best_node = float(values[order[0]]), int(feasible[draw[order[0]]])
            elite = draw[order[: max(1, int(math.ceil(self.elite * draw.size)))]]
            if features is None:
                q = np.bincount(elite, minlength=k).astype(np.float64)
            else:
                dist2 = ((features[:, None, :] - features[elite][None, :, :]) ** 2).sum(axis=2)
                q = np.exp(-dist2 / (2 * self.bandwidth**2)).sum(axis=1)
            p = (1 - self.smoothing) * p + self.smoothing * q / q.sum()
        return best_node

    def _draw(self, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """``samples`` distinct nodes drawn with probabilities p, sequentially without replacement (Gumbel top-k)."""
        support = np.count_nonzero(p)
        s = min(self.samples, support)
        with np.errstate(divide="ignore"):
            keys = np.log(p) - np.log(-np.log(rng.random(p.size)))
        if s == p.size:
            return np.argsort(-keys, kind="stable")
        top = np.argpartition(-keys, s - 1)[:s]
        return top[np.argsort(-keys[top], kind="stable")]


def make_optimiser(kind: str, *, tie_break: str = "random", key: str = "placement.optimiser", **bsa) -> Optimiser:
    """An optimiser by its config name (``exhaustive``, ``bsa`` with the :class:`BiasedSampling` parameters) or plug-in."""
    return OPTIMISERS.build(kind, key=key, settings={"tie_break": tie_break, "bsa": bsa})


# ----------------------------------------------------------------------------- simulator


@dataclass(frozen=True)
class Workload:
    """A stream of single-entity requests: arrival times (non-decreasing), demands (K × R), lifetimes.

    ``kind`` labels each request (pod type, or 0 for the trace) and ``phase`` its phase.
    """

    time: np.ndarray
    demand: np.ndarray
    lifetime: np.ndarray
    kind: np.ndarray
    phase: np.ndarray

    def __post_init__(self):
        k = len(self.time)
        if self.demand.ndim != 2 or self.demand.shape[0] != k or len(self.lifetime) != k:
            raise ValueError("time, demand (K × R) and lifetime must describe the same K requests")
        if len(self.kind) != k or len(self.phase) != k:
            raise ValueError("kind and phase must have one entry per request")
        if k and (np.diff(self.time) < 0).any():
            raise ValueError("arrival times must be non-decreasing")
        if (self.lifetime < 0).any() or (self.demand < 0).any():
            raise ValueError("lifetimes and demands must be non-negative")

    def __len__(self) -> int:
        return len(self.time)

    def to_frame(self, resources: Sequence[str]) -> pl.DataFrame:
        cols = {"request": np.arange(len(self)), "time": self.time, "kind": self.kind, "phase": self.phase}
        cols |= {f"d_{r}": self.demand[:, i] for i, r in enumerate(resources)}
        return pl.DataFrame(cols | {"lifetime": self.lifetime})

    @classmethod
    def from_frame(cls, df: pl.DataFrame, resources: Sequence[str]) -> Workload:
        return cls(
            time=df["time"].to_numpy().astype(np.float64),
            demand=np.column_stack([df[f"d_{r}"].to_numpy() for r in resources]).astype(np.float64),
            lifetime=df["lifetime"].to_numpy().astype(np.float64),
            kind=df["kind"].to_numpy(),
            phase=df["phase"].to_numpy(),
        )


@dataclass
class Shadow:
    """Agreement of a second optimiser with the main one, decision by decision, and their timings.

    At every decision with at least two feasible nodes the shadow optimiser solves the same
    problem on the same state with its own generator; it *agrees* when its choice has the
    objective value of the main choice (ties count as agreement). Times are wall-clock ns.
    """

    optimiser: Optimiser
    rng: np.random.Generator
    decisions: int = 0
    agreements: int = 0
    main_ns: list[int] = field(default_factory=list)
    shadow_ns: list[int] = field(default_factory=list)

    @property
    def agreement(self) -> float:
        return self.agreements / self.decisions if self.decisions else math.nan


@dataclass
class SimulationResult:
    """The per-request log (one row per arrival), the event log, and the snapshot (if asked)."""

    requests: pl.DataFrame
    events: pl.DataFrame
    snapshot: np.ndarray | None  # N × R utilisation after placing the snapshot request


_EVENTS = {0: "place", 1: "reject", 2: "release"}


class _Recorder:
    """The logs of one simulation: per request (decision, cluster statistics) and per event (place, reject, release)."""

    def __init__(self, k: int, n_res: int) -> None:
        self.node = np.full(k, -1, dtype=np.int64)
        self.mu = np.zeros((k, n_res))
        self.sd = np.zeros((k, n_res))
        self.gamma_sys = np.zeros(k)
        self.gamma_dem = np.zeros(k)
        self.running = np.zeros(k, dtype=np.int64)
        self.events: list[tuple[float, int, int, int]] = []  # time, event code, request, node

    def event(self, t: float, code: int, request: int, node: int) -> None:
        self.events.append((t, code, request, node))

    def after_arrival(self, j: int, state: ClusterState, gamma_dem: float, running: int) -> None:
        mu, sigma = state.moments()
        self.mu[j], self.sd[j] = mu, std_from_cov(sigma)
        self.gamma_sys[j], self.gamma_dem[j], self.running[j] = float(mcv(mu, sigma)), gamma_dem, running

    def frames(self, workload: Workload, resources: Sequence[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The per-request log (the workload's columns, then the decision and statistics) and the event log."""
        cols = workload.to_frame(resources).to_dict()
        cols |= {"accepted": self.node >= 0, "node": self.node, "running": self.running}
        cols |= {f"mu_{r}": self.mu[:, i] for i, r in enumerate(resources)}
        cols |= {f"sd_{r}": self.sd[:, i] for i, r in enumerate(resources)}
        cols |= {"gamma_sys": self.gamma_sys, "gamma_dem": self.gamma_dem}
        ev = np.array(self.events, dtype=np.float64).reshape(-1, 4)
        events = pl.DataFrame(
            {
                "seq": np.arange(len(ev)),
                "time": ev[:, 0],
                "event": pl.Series(ev[:, 1].astype(np.int8)).replace_strict(_EVENTS, return_dtype=pl.String),
                "request": ev[:, 2].astype(np.int64),
                "node": ev[:, 3].astype(np.int64),
            }
        )
        return pl.DataFrame(cols), events


def _choose_with_shadows(optimiser: Optimiser, shadows: Sequence[Shadow], objective: Objective,
                         feasible: np.ndarray, rng: np.random.Generator, features: np.ndarray) -> int:
    """The main optimiser's choice; each shadow solves the same decision and records agreement and timings."""
    if not shadows or feasible.size < 2:
        return optimiser.choose(objective, feasible, rng, features)
    t0 = time.perf_counter_ns()
    n = optimiser.choose(objective, feasible, rng, features)
    t1 = time.perf_counter_ns()
    v_main = objective(np.array([n]))[0]
    for sh in shadows:
        t2 = time.perf_counter_ns()
        m = sh.optimiser.choose(objective, feasible, sh.rng, features)
        t3 = time.perf_counter_ns()
        sh.decisions += 1
        sh.agreements += bool(objective(np.array([m]))[0] <= v_main + TIE_TOL * max(1.0, abs(v_main)))
        sh.main_ns.append(t1 - t0)
        sh.shadow_ns.append(t3 - t2)
    return n


def simulate(
    capacity: np.ndarray,
    workload: Workload,
    policy: PlacementPolicy,
    optimiser: Optimiser,
    rng: np.random.Generator,
    *,
    resources: Sequence[str],
    demand_alpha: float = 0.005,
    snapshot: int | None = None,
    shadow: Shadow | Sequence[Shadow] = (),
) -> SimulationResult:
    """Run ``workload`` through ``policy`` on a cluster of the given capacities (N × R).

    Discrete events: before each arrival every request whose departure time (arrival + lifetime)
    is at or before it is released; the arrival is rejected when no node is feasible, otherwise
    placed on the optimiser's choice. After each arrival the per-request log records the
    decision and μ^sys, σ^sys and γ^sys of the cluster, and γ^dem(t) from relative-demand
    statistics with smoothing ``demand_alpha`` (the same for every policy: the observed demand
    of Tables IV–V). After the last arrival the remaining requests depart, so every accepted
    request is placed once and released once. ``snapshot`` (0-based request index) keeps the
    utilisation matrix after that request (Fig. 3). ``shadow`` optimisers (see :class:`Shadow`)
    solve every decision again without affecting it.
    """
    shadows = [shadow] if isinstance(shadow, Shadow) else list(shadow)
    state = ClusterState(capacity)
    if workload.demand.shape[1] != state.n_resources:
        raise ValueError(f"demands have {workload.demand.shape[1]} resources, the nodes {state.n_resources}")
    policy.reset(state)
    observed = DemandStatistics(demand_alpha, state.cbar)
    log = _Recorder(len(workload), state.n_resources)
    departures: list[tuple[float, int]] = []
    snap = None

    def release_until(t: float) -> None:
        while departures and departures[0][0] <= t:
            when, j = heapq.heappop(departures)
            state.release(log.node[j], workload.demand[j])
            log.event(when, 2, j, int(log.node[j]))

    for j in range(len(workload)):
        t, d = float(workload.time[j]), workload.demand[j]
        release_until(t)
        policy.observe(d)
        observed.update(d)
        feasible = state.feasible(d)
        if feasible.size:

            def objective(nodes, d=d):
                return policy.objective(state, d, nodes)

            n = _choose_with_shadows(optimiser, shadows, objective, feasible, rng, state.candidate_util(d, feasible))
            state.place(n, d)
            log.node[j] = n
            heapq.heappush(departures, (t + float(workload.lifetime[j]), j))
            log.event(t, 0, j, n)
        else:
            log.event(t, 1, j, -1)
        log.after_arrival(j, state, observed.gamma, len(departures))
        if snapshot is not None and j == snapshot:
            snap = state.util.copy()
    release_until(math.inf)
    requests, events = log.frames(workload, resources)
    return SimulationResult(requests, events, snap)


def stream(seed: int, replicate: int, purpose: str) -> np.random.Generator:
    """An independent generator for (seed, replicate, purpose): ``workload``, ``policy:ABP``, ``bsa:…``.

    The purpose is hashed (CRC-32) so that adding or reordering policies leaves each policy's
    draws unchanged.
    """
    return np.random.default_rng([seed, replicate, zlib.crc32(purpose.encode())])
