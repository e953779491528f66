"""Benchmark: the placement simulator (Tantawi & Steinder), on one core.

References measured in the same run:

* μ^sys(n), Σ^sys(n) of every candidate node, incrementally (O(R²) per candidate, ``candidate_moments``)
  against recomputing the moments of the whole utilisation matrix per candidate (O(N·R²) each,
  ``candidate_moments_naive``), at N = 32 … 1024 nodes;
* a full 4,000-request run of the Table I experiment with ABP and the exact optimiser, against the
  target of 2 s, and the same run with the naive recomputation inside ABP's objective;
* the biased sampling optimiser (BSA, budget 16) against the exact argmin and against unbiased
  sampling of the same budget, on random cluster states of N = 32 … 512 nodes: time per decision
  and agreement with the exact minimum;
* peak memory (``resource.getrusage``).

    python bench/placement.py [--repeat 3]
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from colocate.scheduling import placement as P# noqa: E402
from timing import best_of, parse_args  # noqa: E402
from colocate.scheduling.placement_workload import Experiment  # noqa: E402

TABLE_I = {
    "nodes": 32, "resources": ["cpu", "memory", "gpu"], "capacity": [32, 256, 4],
    "pod_types": {"A": {"demand": [2, 24, 0], "load": 0.15}, "B": {"demand": [8, 32, 2], "load": 0.20},
                  "C": {"demand": [16, 96, 4], "load": 0.20}},
    "phases": [{"types": ["A"], "requests": 666}, {"types": ["A", "B"], "requests": 1334},
               {"types": ["A", "B", "C"], "requests": 2000}],
    "load_resource": "cpu", "arrival_rate": 1.0, "warmup": 60, "snapshot_pod": 3961,
}
TARGET_S = 2.0


class NaiveABP(P.ABP):
    """ABP whose objective recomputes Σ^sys from the whole utilisation matrix per candidate."""

    def objective(self, state, demand, nodes):
        mu, sigma = state.candidate_moments_naive(demand, nodes)
        return (P.mcv(mu, sigma) - self.demand.gamma) ** 2


def random_state(rng: np.random.Generator, n: int) -> tuple[P.ClusterState, np.ndarray]:
    cap = np.tile([32.0, 256.0, 4.0], (n, 1))
    state = P.ClusterState(cap)
    level = rng.uniform(0, 0.9, size=(n, 1)) + rng.normal(0, 0.1, size=cap.shape)
    state.alloc[:] = np.floor(cap * np.clip(level, 0, 0.9))
    state._refresh()
    return state, np.array([8.0, 32.0, 2.0])


def moments(repeat: int) -> None:
    print("candidate moments μ^sys(n), Σ^sys(n) for all N candidates (R = 3):")
    rng = np.random.default_rng(0)
    d = np.array([2.0, 24.0, 0.0])
    for n in (32, 128, 1024):
        state, _ = random_state(rng, n)
        nodes = np.arange(n)
        a, b = state.candidate_moments(d, nodes), state.candidate_moments_naive(d, nodes)
        assert np.allclose(a[1], b[1], atol=1e-12)
        calls = max(1, 20000 // n)
        inc = best_of(lambda: [state.candidate_moments(d, nodes) for _ in range(calls)], repeat) / calls
        naive = best_of(lambda: [state.candidate_moments_naive(d, nodes) for _ in range(max(1, calls // 20))], repeat) / max(1, calls // 20)
        print(f"  N = {n:5d}: incremental {inc * 1e6:9.1f} µs   naive {naive * 1e6:11.1f} µs   naive / incremental = {naive / inc:7.1f}x")


def full_run(repeat: int) -> None:
    exp = Experiment.from_config(TABLE_I)
    wl = exp.workload(P.stream(2018, 0, "workload"))

    def run(policy):
        P.simulate(exp.capacity_matrix, wl, policy, P.Exhaustive("first"), P.stream(2018, 0, "policy:ABP"), resources=exp.resources)

    t_inc = best_of(lambda: run(P.ABP(0.005)), repeat)
    t_naive = best_of(lambda: run(NaiveABP(0.005)), 1)
    print("full 4,000-request Table I run, ABP, exact optimiser, one core:")
    print(f"  incremental {t_inc:6.2f} s   target {TARGET_S:.1f} s   time / target = {t_inc / TARGET_S:5.2f}")
    print(f"  naive Σ^sys {t_naive:6.2f} s   naive / incremental = {t_naive / t_inc:5.1f}x")


def optimisers(repeat: int) -> None:
    print("BSA (4 × 4 = 16 samples) vs exact argmin vs unbiased sampling of 16 nodes, ABP objective, 200 random states:")
    for n in (32, 128, 512):
        rng = np.random.default_rng(n)
        cases = []
        for _ in range(200):
            state, d = random_state(rng, n)
            pol = P.ABP(0.01)
            pol.reset(state)
            for k in rng.integers(3, size=50):
                pol.observe(np.array([[2, 24, 0], [8, 32, 2], [16, 96, 4]], dtype=float)[k])
            feas = state.feasible(d)
            if feas.size > 1:
                cases.append((state, d, pol, feas, state.candidate_util(d, feas)))
        res = {}
        for name, opt in (("exact", P.Exhaustive("first")), ("bsa", P.BiasedSampling(4, 4)), ("unbiased", P.BiasedSampling(16, 1))):
            for s, d, p, f, x in cases[:20]:  # warm-up
                opt.choose(lambda nodes, s=s, d=d, p=p: p.objective(s, d, nodes), f, np.random.default_rng(0), x)
            orng = np.random.default_rng(1)
            t = time.perf_counter()
            picks = [opt.choose(lambda nodes, s=s, d=d, p=p: p.objective(s, d, nodes), f, orng, x) for s, d, p, f, x in cases]
            dt = (time.perf_counter() - t) / len(cases)
            res[name] = (dt, picks)
        agree = {}
        for name in ("bsa", "unbiased"):
            ok = 0
            for (s, d, p, f, _), m in zip(cases, res[name][1]):
                v = p.objective(s, d, f)
                ok += p.objective(s, d, np.array([m]))[0] <= v.min() + P.TIE_TOL * max(1, abs(v.min()))
            agree[name] = ok / len(cases)
        ex = res["exact"][0]
        print(f"  N = {n:4d}: exact {ex * 1e6:7.1f} µs   BSA {res['bsa'][0] * 1e6:7.1f} µs ({res['bsa'][0] / ex:4.1f}x exact), "
              f"agreement {agree['bsa']:.3f}   unbiased {res['unbiased'][0] * 1e6:7.1f} µs, agreement {agree['unbiased']:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = parse_args(ap)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    moments(args.repeat)
    full_run(args.repeat)
    optimisers(args.repeat)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: {peak:.0f} MB")


if __name__ == "__main__":
    main()
