"""The common checks every fit test and placement policy passes, importable for plug-in authors.

As scikit-learn's ``check_estimator`` does for estimators: the test suite runs these on every
built-in implementation (tests/test_packing.py, tests/test_placement.py), and a researcher runs
them on their own class before naming it in config as ``module:Class``::

    from colocate.scheduling.checks import check_fit_test, check_placement_policy
    check_fit_test(MyFitTest(0.05))
    check_placement_policy(lambda: MyPolicy())

Each check raises :class:`AssertionError` with what failed and on which generated case.

* :func:`check_fit_test` — the :class:`~colocate.scheduling.fit_tests.FitTest` protocol,
  deterministic per-task columns, and for both packing algorithms (Janus §4) with and without
  rebalancing: every task placed once, no empty machine, every machine fits its test.
* :func:`check_placement_policy` — the :class:`~colocate.scheduling.placement.PlacementPolicy`
  protocol, one finite objective value per candidate node that leaves the cluster unchanged, and
  simulations (Tantawi & Steinder §II) whose event log replays within capacity, rejects only when no
  node has room, and is the same for the same seed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from colocate.registry import protocol_problems
from colocate.scheduling import packing as pk
from colocate.scheduling import placement as P
from colocate.scheduling.fit_tests import FitTest, TaskStats, required_percentiles

__all__ = ["random_instance", "check_packing", "check_fit_test", "check_simulation", "check_placement_policy"]


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise AssertionError(message)


def random_instance(seed: int, n: int, r: int, scale: float, zero_share: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """N × R float32 usage with task-specific gamma shapes (skewed, like CPU usage) and CPU requests (some NaN)."""
    rng = np.random.default_rng(seed)
    shape = rng.uniform(0.3, 4.0, n)[:, None]
    mean = rng.uniform(0.2, 1.0, n)[:, None] * scale
    x = (rng.gamma(shape, 1.0, (n, r)) * mean / shape).astype(np.float32)
    x[rng.random(n) < zero_share] = 0.0
    requests = np.where(rng.random(n) < 0.3, np.nan, mean[:, 0] * rng.uniform(0.5, 3, n))
    return x, requests


def check_packing(fit: FitTest, stats: TaskStats, packing: pk.Packing, capacity: float) -> None:
    """Every task placed once, no empty machine, and every machine's tasks fit (bar lone oversized tasks)."""
    n = len(stats)
    placed = sorted(i for b in packing.bins for i in b)
    _require(placed == list(range(n)), f"{fit.label}: tasks are not each placed exactly once")
    _require(all(packing.bins), f"{fit.label}: an empty machine")
    cols = fit.columns(stats)
    alone = fit.slack(cols, capacity)
    # a task that fits no empty machine opens its own; for a non-monotone test (Beta) such a task may
    # still fit beside others, so the oversized ones are a subset of those failing alone
    _require(set(packing.oversized) <= set(np.flatnonzero(~(alone >= 0)).tolist()),
             f"{fit.label}: a task marked oversized fits an empty machine")
    for b in packing.bins:
        if len(b) == 1 and b[0] in packing.oversized:
            continue
        _require(not set(b) & set(packing.oversized), f"{fit.label}: a task is packed beside an oversized one")
        slack = fit.slack(cols[b].sum(axis=0)[None, :], capacity)[0]
        # sums recomputed from scratch may differ from the running sums in the last bits
        _require(slack >= -1e-9, f"{fit.label}: machine {b} violates the test (slack {slack})")


def check_fit_test(fit: FitTest, *, cases: int = 12, seed: int = 0) -> None:
    """Raise AssertionError unless ``fit`` behaves as a fit test on ``cases`` random instances."""
    problems = protocol_problems(type(fit), FitTest)
    _require(not problems, f"{type(fit).__name__} is not a FitTest: {'; '.join(problems)}")
    rng = np.random.default_rng(seed)
    for case in range(cases):
        n, r = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        scale, capacity = float(rng.choice([0.01, 0.1, 0.4, 1.5])), float(rng.choice([0.5, 1.0, 2.0]))
        x, requests = random_instance(int(rng.integers(2**32)), n, r, scale, float(rng.choice([0.0, 0.3])))
        stats = TaskStats.from_observations(x, required_percentiles([fit]), requests)
        where = f"{fit.label}, case {case} (n={n}, r={r}, scale={scale}, capacity={capacity})"
        cols = fit.columns(stats)
        _require(cols.ndim == 2 and cols.shape[0] == n, f"{where}: columns() must be n × K, got {cols.shape}")
        _require(np.array_equal(cols, fit.columns(stats), equal_nan=True), f"{where}: columns() is not deterministic")
        slack = np.asarray(fit.slack(cols, capacity))
        _require(slack.shape == (n,), f"{where}: slack() of n bins must have n values, got {slack.shape}")
        for algorithm in pk.ALGORITHMS:
            online = pk.pack(fit, stats, capacity, algorithm, rebalancing=False)
            check_packing(fit, stats, online, capacity)
            balanced = pk.rebalance(online, fit, stats, capacity)
            check_packing(fit, stats, balanced, capacity)
            _require(balanced.n_bins <= online.n_bins, f"{where}, {algorithm}: rebalancing opened a machine")


def check_simulation(capacity: np.ndarray, workload: P.Workload, result: P.SimulationResult) -> None:
    """The event log of a simulation replays within capacity; each accepted request is placed and released once."""
    ev, req = result.events, result.requests
    _require(bool((np.diff(ev["time"].to_numpy()) >= 0).all()), "the clock goes backwards")
    accepted = req["accepted"].to_numpy()
    for j in range(len(workload)):
        e = ev.filter(pl.col("request") == j)
        if accepted[j]:
            _require(e["event"].to_list() == ["place", "release"], f"request {j}: not placed then released once")
            _require(e["time"][0] == workload.time[j] and e["time"][1] == workload.time[j] + workload.lifetime[j],
                     f"request {j}: placed or released at the wrong time")
            _require(e["node"][0] == e["node"][1] == req["node"][j], f"request {j}: released from another node")
        else:
            _require(e["event"].to_list() == ["reject"] and req["node"][j] == -1, f"request {j}: rejected but placed")
    g = np.zeros_like(capacity)
    for row in ev.iter_rows(named=True):
        d = workload.demand[row["request"]]
        if row["event"] == "place":
            g[row["node"]] += d
            _require(bool((g <= capacity + 1e-9).all()), f"request {row['request']}: a node is over capacity")
        elif row["event"] == "release":
            g[row["node"]] -= d
        else:
            _require(not (g + d <= capacity + 1e-9).all(axis=1).any(), f"request {row['request']}: rejected with room")
    _require(bool(np.allclose(g, 0)), "allocations remain after every request departed")


def _random_workload(rng: np.random.Generator, capacity: np.ndarray, k: int) -> P.Workload:
    demand = np.floor(rng.uniform(0, 1, size=(k, capacity.shape[1])) * (capacity[0] + 1)).clip(0, capacity[0])
    times = np.floor(np.cumsum(rng.exponential(1.0, k)))  # simultaneous arrivals and departures too
    lifetime = rng.choice([0.0, 1.0, 2.0, 5.0, 9.5], size=k)
    return P.Workload(times, demand, lifetime, np.zeros(k, dtype=int), np.ones(k, dtype=int))


def check_placement_policy(make: Callable[[], P.PlacementPolicy], *, cases: int = 8, seed: int = 0) -> None:
    """Raise AssertionError unless the policies ``make()`` returns (fresh each call) behave as placement policies.

    Runs on three resources, where a built-in's prime resource is index 2 (as ``make_policy`` builds them).
    """
    policy = make()
    problems = protocol_problems(type(policy), P.PlacementPolicy)
    _require(not problems, f"{type(policy).__name__} is not a PlacementPolicy: {'; '.join(problems)}")
    rng = np.random.default_rng(seed)
    for case in range(cases):
        n = int(rng.integers(1, 9))
        capacity = np.tile(rng.integers(1, 9, size=3).astype(float), (n, 1))
        state = P.ClusterState(capacity.copy())
        state.alloc[:] = np.floor(capacity * rng.uniform(0, 0.9, size=capacity.shape))
        state._refresh()
        policy = make()
        policy.reset(state)
        for d in rng.integers(0, 3, size=(10, 3)):
            policy.observe(d.astype(float))
        before = state.alloc.copy()
        nodes = np.arange(n)
        values = np.asarray(policy.objective(state, np.zeros(3), nodes))
        where = f"{policy.name}, case {case} (nodes={n})"
        _require(values.shape == (n,), f"{where}: objective() must give one value per candidate, got {values.shape}")
        _require(bool(np.isfinite(values).all()), f"{where}: objective() is not finite: {values}")
        _require(np.array_equal(before, state.alloc), f"{where}: objective() changed the cluster state")
        workload = _random_workload(rng, capacity, int(rng.integers(1, 40)))
        run_seed = int(rng.integers(2**31))
        results = [
            P.simulate(capacity, workload, make(), P.Exhaustive("random"), np.random.default_rng(run_seed),
                       resources=["r0", "r1", "r2"])
            for _ in range(2)
        ]
        check_simulation(capacity, workload, results[0])
        _require(results[0].events.equals(results[1].events), f"{where}: the same seed gave another event log")
