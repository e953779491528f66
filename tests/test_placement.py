"""Placement simulator (Tantawi & Steinder): γ, incremental moments, policies, optimisers, simulator
invariants, workloads, tables and statistics, bad input."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from colocate.registry import protocol_problems
from colocate.scheduling import placement as P
from colocate.scheduling import placement_analysis as pa
from colocate.scheduling import placement_runs as pr
from colocate.scheduling import placement_workload as pw
from colocate.scheduling.checks import check_placement_policy, check_simulation
from wfutil import judged

TABLE_I = {
    "nodes": 32,
    "resources": ["cpu", "memory", "gpu"],
    "capacity": [32, 256, 4],
    "pod_types": {
        "A": {"demand": [2, 24, 0], "load": 0.15},
        "B": {"demand": [8, 32, 2], "load": 0.20},
        "C": {"demand": [16, 96, 4], "load": 0.20},
    },
    "phases": [
        {"types": ["A"], "requests": 666},
        {"types": ["A", "B"], "requests": 1334},
        {"types": ["A", "B", "C"], "requests": 2000},
    ],
    "load_resource": "cpu",
    "arrival_rate": 1.0,
    "warmup": 60,
    "snapshot_pod": 3961,
}
TYPES = np.array([[2, 24, 0], [8, 32, 2], [16, 96, 4]], dtype=float)
CAP = np.array([32.0, 256.0, 4.0])


def all_policies() -> list[P.PlacementPolicy]:
    return [P.make_policy(k, prime_resource=2, weights=[1, 0, -2], alpha=0.01) for k in P.POLICIES]


@pytest.mark.parametrize("kind", P.POLICIES.names())
def test_every_policy_passes_the_common_checks(kind):
    """The checks a plug-in author runs on their own policy (colocate.scheduling.checks)."""
    check_placement_policy(lambda: P.make_policy(kind, prime_resource=2, weights=[1, 0, -2], alpha=0.01))


def random_state(rng, n=8, cap=CAP) -> P.ClusterState:
    state = P.ClusterState(np.tile(cap, (n, 1)))
    state.alloc[:] = np.floor(state.capacity * rng.uniform(0, 0.9, size=state.capacity.shape))
    state._refresh()
    return state


def ready(policy, state, rng, n_demands=30):
    policy.reset(state)
    for k in rng.integers(3, size=n_demands):
        policy.observe(TYPES[k])
    return policy


# ----------------------------------------------------------------------------- γ (eq. 3)


def test_gamma_known_answers():
    # μ = (1, 0), Σ = diag(4, 9): μᵀΣμ = 4, (μᵀμ)² = 1 → γ = 2 (only the first resource is used)
    assert P.mcv([1.0, 0.0], np.diag([4.0, 9.0])) == pytest.approx(2.0)
    # μ = (1, 1), Σ = [[1, .5], [.5, 1]]: μᵀΣμ = 3, (μᵀμ)² = 4 → √3 / 2
    assert P.mcv([1.0, 1.0], [[1, 0.5], [0.5, 1]]) == pytest.approx(np.sqrt(3) / 2)
    # R = 1 reduces to the ordinary coefficient of variation σ / μ
    assert P.mcv([0.5], [[0.04]]) == pytest.approx(0.2 / 0.5)
    # γ = 0 when μ = 0 (§II: "γ_r = 0 if μ_r = 0")
    assert P.mcv([0.0, 0.0], np.eye(2)) == 0.0
    # batched: leading dimensions are kept
    g = P.mcv(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([np.diag([4.0, 9.0]), [[1, 0.5], [0.5, 1]]]))
    assert g == pytest.approx([2.0, np.sqrt(3) / 2])


@pytest.mark.parametrize(
    ("mu", "sigma", "paper"),
    [
        # Table IV/V "Observed" → Table VIII 0.679
        ([0.300, 0.218, 0.566], [[0.033, 0.022, 0.073], [0.022, 0.017, 0.049], [0.073, 0.049, 0.166]], 0.679),
        # Tables VI/VII PACK → 0.456, ABP → 0.636
        ([0.459, 0.396, 0.703], [[0.035, 0.030, 0.055], [0.030, 0.043, 0.013], [0.055, 0.013, 0.175]], 0.456),
        ([0.455, 0.390, 0.703], [[0.090, 0.087, 0.122], [0.087, 0.094, 0.106], [0.122, 0.106, 0.191]], 0.636),
    ],
)
def test_gamma_of_the_papers_tables(mu, sigma, paper):
    # the inputs are printed to 3 decimals, so γ is reproduced to about ±0.002
    assert P.mcv(mu, sigma) == pytest.approx(paper, abs=0.002)


def test_analytic_demand_is_table_iv_and_v():
    exp = pw.Experiment.from_config(TABLE_I)
    mu, sigma = pw.analytic_demand(exp.demand_matrix(), exp.mix(2), CAP)
    assert mu == pytest.approx([0.271, 0.198, 0.500], abs=6e-4)
    paper = np.array([[0.032, 0.021, 0.073], [0.021, 0.016, 0.047], [0.073, 0.047, 0.167]])
    assert np.abs(sigma - paper).max() < 6e-4
    # Table VIII prints 0.761 for the analytic γ; the exact mix gives 0.7602
    assert P.mcv(mu, sigma) == pytest.approx(0.761, abs=0.0015)


# ----------------------------------------------------------------------------- cluster state


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 4), st.integers(0, 2**31))
def test_incremental_moments_equal_recomputation(n, r, seed):
    rng = np.random.default_rng(seed)
    state = P.ClusterState(rng.uniform(0.5, 10, size=(n, r)))
    state.alloc[:] = state.capacity * rng.uniform(0, 1, size=(n, r))
    state._refresh()
    d = rng.uniform(0, 0.5, r)
    nodes = np.arange(n)
    mu, sigma = state.candidate_moments(d, nodes)
    mu_n, sigma_n = state.candidate_moments_naive(d, nodes)
    assert np.allclose(mu, mu_n, atol=1e-12) and np.allclose(sigma, sigma_n, atol=1e-12)
    # and both equal numpy's population covariance of the matrix after an actual placement
    k = int(rng.integers(n))
    state.place(k, d)
    u = state.alloc / state.capacity
    assert np.allclose(sigma[k], np.cov(u.T, bias=True).reshape(r, r), atol=1e-12)
    assert np.allclose(state.moments()[1], sigma[k], atol=1e-12)


def test_feasibility_and_release():
    state = P.ClusterState([[4.0, 4.0], [2.0, 8.0]])
    assert list(state.feasible(np.array([3.0, 3.0]))) == [0]
    assert list(state.feasible(np.array([2.0, 8.0]))) == [1]
    assert list(state.feasible(np.array([5.0, 1.0]))) == []
    state.place(0, np.array([3.0, 1.0]))
    assert list(state.feasible(np.array([1.0, 3.0]))) == [0, 1]
    assert list(state.feasible(np.array([1.5, 1.0]))) == [1]
    state.release(0, np.array([3.0, 1.0]))
    assert (state.alloc == 0).all() and (state.util == 0).all()


@pytest.mark.parametrize("capacity", [[[0.0, 1.0]], [[np.nan, 1.0]], [[-1.0, 2.0]]])
def test_bad_capacity_is_rejected(capacity):
    with pytest.raises(ValueError, match="capacity"):
        P.ClusterState(capacity)


# ----------------------------------------------------------------------------- policies


def constructed():
    """Three nodes (CPU 10, GPU 4): GPU free 1, 4, 2; node 2's CPU is full."""
    state = P.ClusterState(np.tile([10.0, 4.0], (3, 1)))
    state.alloc[:] = [[0.0, 3.0], [0.0, 0.0], [10.0, 2.0]]
    state._refresh()
    return state


def best(policy, state, d):
    feas = state.feasible(d)
    return P.Exhaustive("first").choose(lambda nodes: policy.objective(state, d, nodes), feas, None)


def test_pack_and_spread_choose_the_expected_node():
    state, d = constructed(), np.array([1.0, 1.0])
    assert list(state.feasible(d)) == [0, 1]  # node 2 has no CPU left
    assert best(P.Pack(1), state, d) == 0  # least GPU left after placement (1 − 1 = 0)
    assert best(P.Spread(1), state, d) == 1  # most GPU left (4 − 1 = 3)
    state.alloc[2, 0] = 0.0
    state._refresh()
    assert best(P.Pack(1), state, d) == 0 and best(P.Spread(1), state, d) == 1
    # Pack_r / Spread_r ignore the other resources: prime resource CPU, all nodes equal on CPU → first index
    assert best(P.Pack(0), state, d) == 0
    # Pack_dist / Spread_dist on ‖u_n‖: u after placement = (.1, 1), (.1, .25), (.1, .75)
    assert best(P.PackDist(), state, d) == 0 and best(P.SpreadDist(), state, d) == 1


@pytest.mark.parametrize("seed", range(30))
def test_xbalance_cpu_only_minimises_the_cpu_std(seed):
    rng = np.random.default_rng(seed)
    state = random_state(rng)
    d = TYPES[rng.integers(3)]
    feas = state.feasible(d)
    if feas.size == 0:
        return
    chosen = best(P.XBalance([1, 0, 0]), state, d)

    def cpu_std(n):
        u = state.alloc[:, 0].copy()
        u[n] += d[0]
        return np.std(u / state.capacity[:, 0])

    assert cpu_std(chosen) == pytest.approx(min(cpu_std(n) for n in feas), abs=1e-12)


@pytest.mark.parametrize("policy", all_policies(), ids=lambda p: p.name)
def test_exhaustive_choice_is_the_brute_force_optimum(policy):
    """Every policy's objective against a reference computed from scratch on the placed matrix."""
    rng = np.random.default_rng(7)
    for _ in range(25):
        state = random_state(rng)
        ready(policy, state, rng)
        d = TYPES[rng.integers(3)]
        feas = state.feasible(d)
        if feas.size == 0:
            continue

        def reference(n):
            g = state.alloc.copy()
            g[n] += d
            u = g / state.capacity
            mu, sigma = u.mean(axis=0), np.cov(u.T, bias=True)
            return {
                "PACK": (state.capacity - g)[n, 2],
                "SPREAD": -(state.capacity - g)[n, 2],
                "PACK_DIST": -np.linalg.norm(u[n]),
                "SPREAD_DIST": np.linalg.norm(u[n]),
                "XBAL": np.sqrt(np.diag(sigma)) @ [1, 0, -2],
                "ABP": (P.mcv(mu, sigma) - policy.demand.gamma if policy.name == "ABP" else 0.0) ** 2,
            }[policy.name]

        ref = np.array([reference(n) for n in feas])
        assert np.allclose(policy.objective(state, d, feas), ref, atol=1e-12)
        assert reference(best(policy, state, d)) == pytest.approx(ref.min(), abs=1e-12)


@pytest.mark.parametrize("policy", all_policies(), ids=lambda p: p.name)
def test_policies_score_each_node_whatever_the_candidates(policy):
    """A node's objective is its own: the same whatever other nodes are offered and in whatever order
    (the optimiser offers the feasible subset, BSA a sample). Catches an objective indexed by position
    in ``nodes`` rather than by node (``state.alloc[:len(nodes)]``), or one normalised over the candidates."""
    assert protocol_problems(type(policy), P.PlacementPolicy) == []  # signatures too, not only names as isinstance
    rng = np.random.default_rng(11)
    for _ in range(20):
        state = random_state(rng)
        ready(policy, state, rng)
        d = TYPES[rng.integers(3)]
        nodes = np.arange(state.capacity.shape[0])
        full = np.asarray(policy.objective(state, d, nodes), dtype=float)
        some = rng.permutation(nodes)[: rng.integers(1, nodes.size + 1)]
        np.testing.assert_allclose(policy.objective(state, d, some), full[some], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("optimiser", [P.Exhaustive("first"), P.Exhaustive("random"), P.BiasedSampling()], ids=lambda o: f"{o.name}")
def test_optimisers_follow_the_protocol_and_return_a_feasible_node(optimiser):
    assert protocol_problems(type(optimiser), P.Optimiser) == []
    rng = np.random.default_rng(3)
    feas = np.array([2, 5, 7, 11])
    for _ in range(50):
        values = dict(zip(feas, rng.uniform(size=feas.size)))
        assert optimiser.choose(lambda nodes: np.array([values[n] for n in nodes]), feas, rng) in feas


def test_random_tie_break_is_uniform_over_the_ties():
    opt, rng = P.Exhaustive("random"), np.random.default_rng(0)
    feas = np.arange(6)
    vals = np.array([1.0, 0.0, 0.0, 3.0, 0.0, 2.0])
    picks = np.array([opt.choose(lambda n: vals[n], feas, rng) for _ in range(3000)])
    counts = np.array([(picks == k).sum() for k in (1, 2, 4)])
    assert counts.sum() == picks.size
    # χ² goodness of fit to uniform over the three tied nodes; p < 1e-4 would be a real bias
    assert stats.chisquare(counts).pvalue > 1e-4
    assert P.Exhaustive("first").choose(lambda n: vals[n], feas, rng) == 1


@pytest.mark.parametrize("kind", ["abp", "xbalance", "pack", "spread_dist"])
def test_bsa_finds_the_exhaustive_argmin_on_small_clusters(kind):
    """8 nodes, 4 samples × 8 iterations: over 300 random states BSA should hit the exact minimum in
    ≥ 95% (measured ≈ 97–99%; with p = 0.97 the standard error of the rate is 0.01, so 0.95 is 2 SE away)."""
    rng = np.random.default_rng(11)
    bsa = P.BiasedSampling(samples=4, iterations=8)
    hits = trials = 0
    while trials < 300:
        state = random_state(rng)
        policy = ready(P.make_policy(kind, prime_resource=2, weights=[1, 0, -2], alpha=0.01), state, rng)
        d = np.floor(rng.uniform(0, 0.3, 3) * CAP)
        feas = state.feasible(d)
        if feas.size < 2:
            continue

        def obj(nodes):
            return policy.objective(state, d, nodes)

        exact = obj(feas).min()
        got = obj(np.array([bsa.choose(obj, feas, rng, state.candidate_util(d, feas))]))[0]
        hits += got <= exact + 1e-12
        trials += 1
    assert hits / trials >= 0.95


def test_bsa_is_exact_when_its_budget_covers_the_cluster():
    rng = np.random.default_rng(2)
    for _ in range(50):
        state = random_state(rng, n=6)
        policy = ready(P.ABP(0.01), state, rng)
        d = TYPES[0]
        feas = state.feasible(d)
        if feas.size < 2:
            continue
        obj = lambda nodes: policy.objective(state, d, nodes)  # noqa: E731
        got = P.BiasedSampling(samples=3, iterations=2).choose(obj, feas, rng, state.candidate_util(d, feas))
        assert obj(np.array([got]))[0] == pytest.approx(obj(feas).min(), abs=1e-15)


def test_biasing_beats_unbiased_sampling_of_the_same_budget_on_a_large_cluster():
    """128 nodes, budget 32 (8 × 4, a narrow kernel): the bias toward elite states finds the exact ABP
    minimum more often than 32 uniform draws (measured ≈ 0.8 vs ≈ 0.35); a one-sided two-proportion
    test (statsmodels) must reject equality."""
    from statsmodels.stats.proportion import proportions_ztest

    rng = np.random.default_rng(5)
    biased, uniform, n = 0, 0, 0
    for _ in range(150):
        cap = np.tile(CAP, (128, 1))
        state = P.ClusterState(cap)
        level = rng.uniform(0, 0.9, size=(128, 1)) + rng.normal(0, 0.1, size=cap.shape)
        state.alloc[:] = np.floor(cap * np.clip(level, 0, 0.9))
        state._refresh()
        policy = ready(P.ABP(0.01), state, rng, 50)
        d = TYPES[1]
        feas = state.feasible(d)
        obj = lambda nodes: policy.objective(state, d, nodes)  # noqa: E731
        exact = obj(feas).min()
        x = state.candidate_util(d, feas)
        bsa = P.BiasedSampling(8, 4, smoothing=0.7, bandwidth=0.1)
        biased += obj(np.array([bsa.choose(obj, feas, rng, x)]))[0] <= exact + 1e-12
        uniform += obj(np.array([P.BiasedSampling(32, 1).choose(obj, feas, rng, x)]))[0] <= exact + 1e-12
        n += 1
    _, p = proportions_ztest([biased, uniform], [n, n], alternative="larger")
    assert biased > uniform and p < 1e-3


# ----------------------------------------------------------------------------- demand statistics


def test_ewma_of_a_cyclic_mix_converges_to_the_analytic_moments():
    # A, B, C, A, B, C, …: the weighted mean drifts within one cycle by O(α · range); α = 1e-3
    alpha = 1e-3
    s = P.DemandStatistics(alpha, CAP)
    for k in range(30_000):
        s.update(TYPES[k % 3])
    mu, sigma = pw.analytic_demand(TYPES, np.ones(3), CAP)
    assert np.abs(s.mean - mu).max() < 3 * alpha
    assert np.abs(s.cov - sigma).max() < 3 * alpha


@pytest.mark.slow  # 200 streams of 3,000 updates
def test_ewma_of_a_random_stationary_mix_is_unbiased_with_the_predicted_spread():
    """Uniform random types: the EWMA at a fixed time has mean μ and variance α/(2−α)·Var(v); over 200
    independent streams its average is within 4 standard errors and its spread matches (F-ratio band)."""
    alpha, reps = 0.005, 200
    mu, sigma = pw.analytic_demand(TYPES, np.ones(3), CAP)
    rng = np.random.default_rng(9)
    finals = []
    for _ in range(reps):
        s = P.DemandStatistics(alpha, CAP)
        for k in rng.integers(3, size=3000):  # 3000 ≫ 1/α: the start is forgotten (e^-15)
            s.update(TYPES[k])
        finals.append(s.mean)
    finals = np.array(finals)
    sd = np.sqrt(alpha / (2 - alpha) * np.diag(sigma))
    assert (np.abs(finals.mean(axis=0) - mu) < 4 * sd / np.sqrt(reps) + 1e-12).all()
    ratio = finals.std(axis=0, ddof=1) / sd
    assert ((ratio > 0.8) & (ratio < 1.2)).all()  # 200 samples: the sd estimate has ~5% relative error


def test_ewma_bias_correction_starts_at_the_first_demand():
    s = P.DemandStatistics(0.005, CAP)
    s.update(TYPES[2])
    assert s.mean == pytest.approx(TYPES[2] / CAP) and np.allclose(s.cov, 0) and s.gamma == 0.0


# ----------------------------------------------------------------------------- simulator


@st.composite
def scenarios(draw):
    n = draw(st.integers(1, 5))
    r = draw(st.integers(1, 3))
    cap = np.array(draw(st.lists(st.integers(1, 8), min_size=r, max_size=r)), dtype=float)
    k = draw(st.integers(1, 40))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    demand = np.floor(rng.uniform(0, 1, size=(k, r)) * (cap + 1)).clip(0, cap)
    times = np.cumsum(rng.exponential(1.0, k))
    if draw(st.booleans()):  # simultaneous arrivals and departures at arrival instants
        times = np.floor(times)
    lifetime = rng.choice([0.0, 1.0, 2.0, 5.0, rng.exponential(4.0)], size=k)
    wl = P.Workload(times, demand, lifetime, np.zeros(k, dtype=int), np.ones(k, dtype=int))
    return np.tile(cap, (n, 1)), wl, draw(st.sampled_from(P.POLICIES.names())), draw(st.sampled_from(["first", "random", "bsa"])), seed


def run(capacity, wl, kind, opt, seed):
    r = capacity.shape[1]
    policy = P.make_policy(kind, prime_resource=r - 1, weights=np.linspace(1, -2, r), alpha=0.05)
    optimiser = P.BiasedSampling(2, 2) if opt == "bsa" else P.Exhaustive(opt)
    return P.simulate(capacity, wl, policy, optimiser, np.random.default_rng(seed), resources=[f"r{i}" for i in range(r)])


@settings(max_examples=80, deadline=None)
@given(scenarios())
def test_simulator_invariants(case):
    capacity, wl, kind, opt, seed = case
    res = run(capacity, wl, kind, opt, seed)
    check_simulation(capacity, wl, res)
    ev, req = res.events, res.requests
    # the same seed gives the same event log and the same per-request log
    again = run(capacity, wl, kind, opt, seed)
    assert again.events.equals(ev) and again.requests.equals(req)


def test_simulator_records_the_cluster_statistics():
    exp = pw.Experiment.from_config(TABLE_I | {"phases": [{"types": ["A", "B", "C"], "requests": 300}], "snapshot_pod": 250})
    wl = exp.workload(P.stream(1, 0, "workload"))
    res = P.simulate(exp.capacity_matrix, wl, P.ABP(0.005), P.Exhaustive(), np.random.default_rng(0),
                     resources=exp.resources, snapshot=249)
    row = res.requests.row(249, named=True)
    mu, sigma = pa.system_moments(res.snapshot)
    assert [row[f"mu_{r}"] for r in exp.resources] == pytest.approx(mu)
    assert [row[f"sd_{r}"] for r in exp.resources] == pytest.approx(np.sqrt(np.diag(sigma)))
    assert row["gamma_sys"] == pytest.approx(P.mcv(mu, sigma))
    observed = pa.observed_demand(wl.demand[:250], 0.005, CAP)
    assert row["gamma_dem"] == pytest.approx(P.mcv(*observed))
    # the running count equals accepted requests not yet departed
    t = wl.time[249]
    acc = res.requests["accepted"].to_numpy()[:250]
    assert row["running"] == int((acc & (wl.time[:250] + wl.lifetime[:250] > t)).sum())


# ----------------------------------------------------------------------------- Table I workload


def test_table_i_workload_phases_mix_and_offered_load():
    exp = pw.Experiment.from_config(TABLE_I)
    # mean lifetimes set so that each type offers its CPU load: τ = ρ N c / (λ d)
    assert exp.mean_lifetimes() == pytest.approx([76.8, 25.6, 12.8])
    assert exp.offered_load(0) == pytest.approx([0.15, 0.225, 0.0])
    assert exp.offered_load(2) == pytest.approx([0.55, 0.475, 0.80])  # §IV: CPU ≈ 0.55, GPU ≈ 0.80
    wl = exp.workload(P.stream(3, 0, "workload"))
    assert len(wl) == 4000
    assert [int((wl.phase == p).sum()) for p in (1, 2, 3)] == [666, 1334, 2000]
    assert set(wl.kind[wl.phase == 1]) == {"A"} and set(wl.kind[wl.phase == 2]) == {"A", "B"}
    assert (np.diff(wl.time) > 0).all()
    # phases of equal expected duration: rates 1, 2, 3 for 666, 1334, 2000 arrivals
    ends = [wl.time[wl.phase == p].max() for p in (1, 2, 3)]
    durations = np.diff([0, *ends])
    assert durations == pytest.approx([666, 667, 667], rel=0.15)


def test_offered_load_statistically():
    """A long single-phase stream: busy CPU-time / (N c T) estimates the offered load 0.55. The
    relative error of a sum of n exponential lifetimes is ~1/√n per type; with ≥ 10⁴ per type, 5%."""
    exp = pw.Experiment.from_config(TABLE_I | {"phases": [{"types": ["A", "B", "C"], "requests": 60_000}], "snapshot_pod": 1})
    wl = exp.workload(P.stream(4, 0, "workload"))
    busy = (wl.demand[:, 0] * wl.lifetime).sum() / (exp.nodes * 32 * wl.time[-1])
    assert busy == pytest.approx(0.55, rel=0.05)
    share = [float(np.mean(wl.kind == t)) for t in "ABC"]
    assert share == pytest.approx([1 / 3] * 3, abs=0.01)


def test_load_arrival_mix_draws_types_in_proportion_to_their_loads():
    """``arrival_mix: load``: in a long phase of A, B, C, type k arrives with probability
    ρ_k / Σ ρ = 3/11, 4/11, 4/11. Each count is Binomial(n, p_k), sd √(n p (1−p)) ≤ 0.0035 n at
    n = 20,000; the tolerance 0.015 is over 4 sd (two-sided p < 10⁻⁴ per type for this fixed seed),
    and excludes the equal mix's 1/3 for A (0.061 away) and B, C (0.030 away)."""
    cfg = TABLE_I | {"arrival_mix": "load", "phases": [{"types": ["A", "B", "C"], "requests": 20_000}], "snapshot_pod": 1}
    exp = pw.Experiment.from_config(cfg)
    want = np.array([0.15, 0.20, 0.20]) / 0.55
    assert exp.mix(0, "load") == pytest.approx(want)
    assert exp.mix(0) == pytest.approx([1 / 3] * 3)  # the analytic row's mix stays the equal one
    wl = exp.workload(P.stream(6, 0, "workload"))
    share = np.array([np.mean(wl.kind == t) for t in "ABC"])
    assert share == pytest.approx(want, abs=0.015)
    # the phase holding every type keeps the total rate 3λ: the mean gap is 1/3 (relative sd 1/√n)
    assert wl.time[-1] / len(wl) == pytest.approx(1 / 3, rel=0.03)


def test_load_arrival_mix_keeps_each_type_s_offered_load():
    """λ_k · τ_k · d_k,cpu / (N c_cpu) is Table I's load for every type, with rates ∝ load (mean λ)."""
    equal = pw.Experiment.from_config(TABLE_I)
    exp = pw.Experiment.from_config(TABLE_I | {"arrival_mix": "load"})
    lam, tau = exp.arrival_rates(), exp.mean_lifetimes()
    assert lam == pytest.approx(np.array([0.15, 0.20, 0.20]) / (0.55 / 3))
    assert lam.mean() == pytest.approx(TABLE_I["arrival_rate"])
    offered = lam * tau * TYPES[:, 0] / (exp.nodes * CAP[0])
    assert offered == pytest.approx([0.15, 0.20, 0.20])
    for phase in range(3):  # Fig. 1's plateaus on every resource are those of the equal mix
        assert exp.offered_load(phase) == pytest.approx(equal.offered_load(phase))
    # phase II mixes A:B as 3:4 and runs at λ_A + λ_B
    assert exp.mix(1, "load") == pytest.approx([3 / 7, 4 / 7, 0])
    with pytest.raises(pw.ConfigError, match=r"placement\.arrival_mix"):
        pw.Experiment.from_config(TABLE_I | {"arrival_mix": "cpu"})


def test_equal_arrival_mix_is_the_stream_without_the_option():
    """``arrival_mix: equal`` (the default) draws exactly the stream of a config without the key."""
    absent = pw.Experiment.from_config(TABLE_I)
    equal = pw.Experiment.from_config(TABLE_I | {"arrival_mix": "equal"})
    assert "arrival_mix" not in TABLE_I and absent.arrival_mix == "equal"
    for rep in range(2):
        a, b = absent.workload(P.stream(2018, rep, "workload")), equal.workload(P.stream(2018, rep, "workload"))
        for field in ("time", "demand", "lifetime", "kind", "phase"):
            assert getattr(a, field).tobytes() == getattr(b, field).tobytes()
    # ... and the load mix draws another one
    load = pw.Experiment.from_config(TABLE_I | {"arrival_mix": "load"}).workload(P.stream(2018, 0, "workload"))
    assert load.time.tobytes() != absent.workload(P.stream(2018, 0, "workload")).time.tobytes()


@pytest.mark.parametrize("mix", ["equal", "load"])
def test_load_factor_scales_every_type_s_offered_load_through_its_lifetimes(mix):
    """``load_factor`` f: each λ_k stays and each τ_k becomes f·τ_k, so every phase offers f × its load on every
    resource (Fig. 1's plateaus × 0.92: CPU 0.138 / 0.322 / 0.506); the arrivals (times, kinds) are the same draws."""
    one = pw.Experiment.from_config(TABLE_I | {"arrival_mix": mix})
    low = pw.Experiment.from_config(TABLE_I | {"arrival_mix": mix, "load_factor": 0.92})
    assert low.arrival_rates() == pytest.approx(one.arrival_rates())
    assert low.mean_lifetimes() == pytest.approx(0.92 * one.mean_lifetimes())
    assert [low.offered_load(p)[0] for p in range(3)] == pytest.approx([0.138, 0.322, 0.506])
    for phase in range(3):
        assert low.offered_load(phase) == pytest.approx(0.92 * one.offered_load(phase))
    a, b = one.workload(P.stream(2018, 0, "workload")), low.workload(P.stream(2018, 0, "workload"))
    assert a.time == pytest.approx(b.time) and (a.kind == b.kind).all()
    assert b.lifetime == pytest.approx(0.92 * a.lifetime)


def test_load_factor_one_is_the_stream_without_the_key_and_a_bad_one_is_refused_by_name():
    absent = pw.Experiment.from_config(TABLE_I)
    one = pw.Experiment.from_config(TABLE_I | {"load_factor": 1.0})
    assert "load_factor" not in TABLE_I and absent.load_factor == 1.0
    a, b = absent.workload(P.stream(2018, 1, "workload")), one.workload(P.stream(2018, 1, "workload"))
    for field in ("time", "demand", "lifetime", "kind", "phase"):
        assert getattr(a, field).tobytes() == getattr(b, field).tobytes()
    for bad in (0, -0.5):
        with pytest.raises(pw.ConfigError, match=r"placement\.load_factor: must be positive"):
            pw.Experiment.from_config(TABLE_I | {"load_factor": bad})


def test_workload_is_deterministic():
    exp = pw.Experiment.from_config(TABLE_I)
    a, b = exp.workload(P.stream(5, 1, "workload")), exp.workload(P.stream(5, 1, "workload"))
    assert a.time.tobytes() == b.time.tobytes() and a.lifetime.tobytes() == b.lifetime.tobytes()
    assert exp.workload(P.stream(5, 2, "workload")).time.tobytes() != a.time.tobytes()


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"pod_types": TABLE_I["pod_types"] | {"C": {"demand": [16, 96, 5], "load": 0.2}}}, "placement.pod_types.C.demand"),
        ({"pod_types": TABLE_I["pod_types"] | {"A": {"demand": [2, 24], "load": 0.15}}}, "placement.pod_types.A.demand"),
        ({"pod_types": TABLE_I["pod_types"] | {"D": {"demand": [0, 8, 1], "load": 0.1}}}, "placement.pod_types.D.demand"),
        ({"snapshot_pod": 5000}, "placement.snapshot_pod"),
        ({"warmup": 4000}, "placement.warmup"),
        ({"phases": [{"types": ["A", "X"], "requests": 10}]}, "placement.phases[0].types"),
        ({"capacity": [32, 256]}, "placement.capacity"),
        ({"load_resource": "disk"}, "placement.load_resource"),
    ],
)
def test_inconsistent_experiment_config_names_the_key(change, key):
    with pytest.raises(pw.ConfigError) as err:
        pw.Experiment.from_config(TABLE_I | change)
    assert key in str(err.value)


@pytest.mark.parametrize(
    ("args", "key"),
    [
        ((["pack"], ["cpu", "gpu"], "memory", [1, 0]), "placement.prime_resource"),
        ((["xbalance"], ["cpu", "gpu"], "gpu", [1, 0, -2]), "placement.xbalance_weights"),
        ((["abp", "abp"], ["cpu", "gpu"], "gpu", [1, 0]), "placement.policies"),
    ],
)
def test_inconsistent_policy_settings_name_the_key(args, key):
    with pytest.raises(pw.ConfigError, match=key.replace(".", r"\.")):
        pw.policy_specs(*args, "placement")


def test_a_demand_no_node_can_hold_is_rejected_at_every_arrival():
    wl = P.Workload(np.array([0.0, 1.0]), np.array([[5.0], [1.0]]), np.array([10.0, 10.0]), np.zeros(2), np.ones(2))
    res = P.simulate(np.array([[4.0], [4.0]]), wl, P.Pack(0), P.Exhaustive(), np.random.default_rng(0), resources=["cpu"])
    assert res.requests["accepted"].to_list() == [False, True]


# ----------------------------------------------------------------------------- tables and statistics


def small_experiment():
    cfg = TABLE_I | {
        "phases": [{"types": ["A"], "requests": 100}, {"types": ["A", "B"], "requests": 200}, {"types": ["A", "B", "C"], "requests": 300}],
        "snapshot_pod": 590,
        "nodes": 8,
    }
    return pw.Experiment.from_config(cfg)


def test_experiment_tables_are_consistent_with_the_logs():
    exp = small_experiment()
    specs = pw.policy_specs(["pack", "spread", "xbalance", "abp"], exp.resources, "gpu", [1, 0, -2], "placement")
    reqs, snaps = zip(*(pr.run_replicate(exp, specs, seed=1, replicate=r, alpha=0.005) for r in range(3)))
    requests, snapshots = pl.concat(reqs), pl.concat(snaps)
    t = pa.experiment_tables(exp, requests, snapshots, alpha=0.005, resource="gpu")
    assert t["table2"].columns == ["measure", "resource", "PACK", "SPREAD", "XBAL", "ABP"]
    rep0 = requests.filter((pl.col("replicate") == 0) & (pl.col("request") >= exp.warmup))
    for p in ("PACK", "SPREAD", "XBAL", "ABP"):
        g = rep0.filter(pl.col("policy") == p)
        rejected = int((~g["accepted"]).sum())
        assert t["table3"].filter(pl.col("gpu demand") == "Total")[p].item() == rejected
        assert t["table3"].filter(pl.col("gpu demand") != "Total")[p].sum() == rejected
        assert t["table2"].filter(pl.col("measure") == "% Reject")[p].item() == pytest.approx(100 * rejected / g.height)
        assert t["table2"].filter((pl.col("measure") == "StDev") & (pl.col("resource") == "gpu"))[p].item() == pytest.approx(g["sd_gpu"].mean())
    # every type uses only integer GPU levels: no "other" row; demand levels 0..4 and Total
    assert t["table3"]["gpu demand"].to_list() == ["0", "1", "2", "3", "4", "Total"]
    # Table VIII's system γ equals the log's γ^sys at the snapshot pod
    snap_rows = rep0.filter(pl.col("request") == exp.snapshot_pod - 1)
    for p in ("PACK", "ABP"):
        assert t["table8"][p].item() == pytest.approx(snap_rows.filter(pl.col("policy") == p)["gamma_sys"].item())
    assert t["replicates"].filter((pl.col("policy") == "ABP") & (pl.col("metric") == "reject_pct"))["n"].item() == 3
    assert t["tests"]["baseline"].to_list() == ["PACK", "SPREAD", "XBAL"]


def test_demand_rejections_count_every_level_of_every_replicate():
    # two replicates, one policy; request 0 is in the warm-up (its rejection is not counted)
    req = pl.DataFrame({"policy": ["PACK"] * 6, "replicate": [0, 0, 0, 1, 1, 1], "request": [0, 1, 2, 0, 1, 2],
                        "d_gpu": [4.0, 4.0, 2.0, 2.0, 0.0, 4.0], "accepted": [False, False, False, True, True, False]})
    m = pa.demand_rejections(req, "gpu", 4, warmup=1)
    got = {(r["replicate"], r["metric"]): r["value"] for r in m.iter_rows(named=True)}
    assert m.height == 2 * 5 and set(m["metric"]) == {f"rejected_gpu_{v}" for v in range(5)}
    assert got[(0, "rejected_gpu_4")] == 1 and got[(0, "rejected_gpu_2")] == 1 and got[(0, "rejected_gpu_0")] == 0
    assert got[(1, "rejected_gpu_4")] == 1 and got[(1, "rejected_gpu_2")] == 0
    # the levels add up to run_metrics' total
    total = pa.run_metrics(req.with_columns(mu_gpu=pl.lit(0.0), sd_gpu=pl.lit(0.0)), ["gpu"], 1)
    totals = dict(total.filter(pl.col("metric") == "rejected").select("replicate", "value").iter_rows())
    assert {r: sum(v for (rr, _), v in got.items() if rr == r) for r in (0, 1)} == totals


def test_confidence_intervals_match_scipy():
    x = np.array([0.3, 0.5, 0.2, 0.9, 0.4])
    m = pl.DataFrame({"policy": ["ABP"] * 5, "replicate": range(5), "metric": ["reject_pct"] * 5, "value": x})
    ci = pa.confidence_intervals(m).row(0, named=True)
    lo, hi = stats.t.interval(0.95, df=4, loc=x.mean(), scale=stats.sem(x))
    assert (ci["mean"], ci["ci_low"], ci["ci_high"]) == pytest.approx((x.mean(), lo, hi))
    assert (ci["min"], ci["max"]) == (0.2, 0.9)  # the spread of a single run


def _summary_inputs(reject_pct: float, requests: int = 3940, tests: pl.DataFrame | None = None) -> dict[str, pl.DataFrame]:
    """Tables of a two-policy run: PACK rejects ``reject_pct`` % of ``requests`` in replicate 0."""
    total = round(reject_pct * requests / 100)
    table2 = pl.DataFrame({"measure": ["% Reject", "Average"], "resource": ["", "cpu"],
                           "PACK": [100 * total / requests, 0.41], "ABP": [100 * total / requests, 0.41]})
    table3 = pl.DataFrame({"gpu demand": ["0", "1", "2", "3", "4", "Total"],
                           "PACK": [0, 0, 1, 0, total - 1, total], "ABP": [0, 0, 3, 0, total - 3, total]})
    table8 = pl.DataFrame({"Analytic": [0.76], "Observed": [0.7], "PACK": [0.4], "ABP": [0.5]})
    reps = [("PACK", "reject_pct", 1.0, 0.4, 2.3), ("ABP", "reject_pct", 1.0, 0.5, 2.3),  # runs vary > ×1.5
            ("PACK", "mean_cpu", 0.41, 0.40, 0.43), ("ABP", "mean_cpu", 0.41, 0.40, 0.43),  # runs vary < ×1.5
            ("PACK", "rejected", 40.0, 16.0, 91.0), ("ABP", "rejected", 40.0, 14.0, 91.0),
            ("PACK", "rejected_gpu_4", 38.0, 16.0, 81.0)]  # ABP's per-level counts missing: the default factor
    replicates = pl.DataFrame([{"policy": p, "metric": m, "n": 20, "mean": mean, "sd": 0.1, "ci_low": mean - 0.1,
                                "ci_high": mean + 0.1, "min": lo, "max": hi} for p, m, mean, lo, hi in reps])
    return {"table2": table2, "table3": table3, "table8": table8, "replicates": replicates,
            "tests": pl.DataFrame(schema={"policy": pl.String, "baseline": pl.String}) if tests is None else tests,
            "bsa": pl.DataFrame()}


def _judged(**inputs) -> dict[str, dict]:
    return {r["quantity"]: r for r in judged(pa.measurements(**inputs)).iter_rows(named=True)}


def test_measurements_judged_compare_the_papers_one_run_with_the_spread_of_ours():
    by = _judged(**_summary_inputs(1.1))
    assert all(r["item"] and r["claim"].startswith("tantawi.") and r["reads_trace"] is False for r in by.values())
    # the paper's 0.46 (PACK) lies in our runs' 0.4–2.3, its 0.33 (ABP) below 0.5: a tolerance from the range
    pack, abp = by["Table II % Reject PACK"], by["Table II % Reject ABP"]
    assert (pack["item"], pack["unit"], pack["paper"], pack["ours"], pack["verdict"]) == ("Table II", "%", "0.46%", "1%", "within")
    assert pack["tolerance"] == "±0.6" and "range of our 20 replicates" in pack["tolerance_reason"]
    assert "a run's % Reject varies by more than the default ×1.5" in pack["tolerance_reason"]
    assert abp["verdict"] == "outside" and abp["tolerance"] == "±0.5"
    # the measured cause is the claims table's, shown only where the row is outside
    assert abp["cause"].startswith("the paper's run carried less than Table I's loads as stated (placement.load_factor 1)")
    assert not pack["cause"]
    # a quantity whose runs vary less than ×1.5 keeps the default factor
    assert by["Table II Average cpu PACK"]["tolerance"] == "×1.5"
    # Table III on the paper's 3,940 requests: compared; the total and a level against the runs' range (PACK's 18 in
    # 16–81: within, ours 42 − 16 = ±26); a level without per-replicate counts keeps the default factor (ABP: 11, 40)
    total, level = by["Table III rejections total, PACK"], by["Table III rejections with gpu demand 4, PACK"]
    assert total["item"] == "Table III" and total["verdict"] == "within" and total["note"] == "replicate 0, after warm-up, 3,940 requests"
    assert level["verdict"] == "within" and level["tolerance"] == "±26" and "range of our 20 replicates" in level["tolerance_reason"]
    abp_level = by["Table III rejections with gpu demand 4, ABP"]
    assert abp_level["tolerance"] == "×1.5" and abp_level["verdict"] == "outside" and abp_level["cause"] == abp["cause"]
    assert by["Table VIII γ^sys PACK"]["item"] == "Table VIII" and by["Table VIII γ^dem analytic"]["paper"] == "0.761"
    assert by["Table VIII γ^dem analytic"]["note"] == "mix of the snapshot's phase (Table I)"
    # the stream is the counts' precondition (its claim's), judged: the paper's 3,940 within ±0.5
    stream = by["Table III: requests after the warm-up"]
    assert (stream["ours_value"], stream["paper_value"], stream["verdict"]) == (3940, 3940, "within")
    # on a stream of another size the counts are shown, not judged, and say why
    judged_short = _judged(**_summary_inputs(1.1, requests=940))
    short = judged_short["Table III rejections total, PACK"]
    assert judged_short["Table III: requests after the warm-up"]["verdict"] == "outside"
    assert short["verdict"] == "too little data" and short["within"] is None and not short["cause"]
    assert short["note"] == ("replicate 0, after warm-up, 940 requests; too little data: Table III: requests after the "
                             "warm-up: ours 940, the paper's 3,940; not judged")


def test_a_policy_or_resource_beyond_the_papers_has_no_paper_value():
    inputs = _summary_inputs(1.1)
    inputs["table2"] = inputs["table2"].with_columns(MINE=pl.lit(0.5))
    inputs["table3"] = inputs["table3"].with_columns(MINE=pl.lit(1))
    inputs["table8"] = inputs["table8"].with_columns(MINE=pl.lit(0.3))
    by = _judged(**inputs)
    for quantity in ("Table II % Reject MINE", "Table II Average cpu MINE", "Table III rejections total, MINE",
                     "Table III rejections with gpu demand 4, MINE", "Table VIII γ^sys MINE"):
        assert by[quantity]["verdict"] == "no paper value" and by[quantity]["paper"] == "", quantity
    assert by["Table II % Reject MINE"]["ours"] == "0.5%"


def test_paired_verdict_in_the_papers_words_hand_computed():
    """Holm-adjusted p below 0.05: lower or higher by the mean difference's sign; otherwise not different."""
    assert pa.paired_verdict({"p_wilcoxon_holm": 0.01, "mean_diff": -0.2}) == "lower"
    assert pa.paired_verdict({"p_wilcoxon_holm": 0.049, "mean_diff": 0.3}) == "higher"
    assert pa.paired_verdict({"p_wilcoxon_holm": 0.05, "mean_diff": -0.3}) == "not significantly different"
    assert pa.paired_verdict({"p_wilcoxon_holm": 0.2, "mean_diff": -0.3}, level=0.75) == "lower"
    # the exact test's smallest p, 2 / 2^n, times the baselines: n = 6 alone 0.031 (can), n = 5 0.0625 (cannot);
    # against 3 baselines n = 7 gives 0.047 (can), n = 6 0.094 (cannot), the tiny run's 3 replicates 0.75
    assert pa.paired_test_can_reject(6, 1) and not pa.paired_test_can_reject(5, 1)
    assert pa.paired_test_can_reject(7, 3) and not pa.paired_test_can_reject(6, 3) and not pa.paired_test_can_reject(3, 3)
    assert not pa.paired_test_can_reject(0, 1)


def test_paired_tests_judge_the_papers_abp_slightly_lower():
    def test(baseline, n, mean_diff, holm):
        return {"policy": "ABP", "baseline": baseline, "metric": "reject_pct", "n": n, "mean_policy": 0.7,
                "mean_baseline": 0.7 - mean_diff, "mean_diff": mean_diff, "ci_low": mean_diff - 0.03,
                "ci_high": mean_diff + 0.03, "wins": 12, "losses": 6, "p_ttest": holm, "p_wilcoxon": holm / 2,
                "p_wilcoxon_holm": holm}
    tests = pl.DataFrame([test("PACK", 20, 0.02, 0.39), test("SPREAD", 20, -4.5, 0.0003), test("XBAL", 20, -0.01, 0.5)])
    by = _judged(**_summary_inputs(1.1, tests=tests))
    pack, spread = by["% reject of ABP against PACK (paired over 20 replicates)"], by["% reject of ABP against SPREAD (paired over 20 replicates)"]
    assert (spread["paper"], spread["ours"], spread["verdict"], spread["cause"]) == ("lower", "lower", "within", "")
    assert (pack["paper"], pack["ours"], pack["verdict"]) == ("lower", "not significantly different", "outside")
    assert pack["cause"].startswith("the paper's order of ABP, XBAL and PACK is one run's")
    assert pack["note"].startswith("mean difference 0.02 points, 95% CI [-0.01, 0.05]; Wilcoxon p = 0.195 (Holm 0.39; "
                                   "significant below 0.05); ABP lower in 12, higher in 6")
    assert pack["note"].endswith("the paper's one run: ABP 0.33%, PACK 0.46% (Table II)")
    # 3 replicates cannot reach 5% against 3 baselines: shown, not judged
    few = _judged(**_summary_inputs(1.1, tests=tests.with_columns(n=pl.lit(3))))
    row = few["% reject of ABP against SPREAD (paired over 3 replicates)"]
    assert row["verdict"] == "too little data" and "3 replicates: the paired test cannot find a difference at 0.05 against 3 baselines" in row["note"]
    # another policy's test has no paper statement
    other = _judged(**_summary_inputs(1.1, tests=tests.with_columns(policy=pl.lit("MINE"))))
    assert other["% reject of MINE against PACK (paired over 20 replicates)"]["verdict"] == "no paper value"


def test_trace_measurements_judged_have_one_value_per_row():
    table = pl.DataFrame({"policy": ["ABP"], "requests": [100], "rejected": [2], "reject_pct": [2.0], "sd_cpu": [0.2],
                          "sd_memory": [0.1], "offered_cpu_load": [0.55], "offered_memory_load": [0.3]})
    rows = {r["quantity"]: r for r in judged(pa.trace_measurements(table)).iter_rows(named=True)}
    assert set(rows) == {"% reject ABP", "StDev of CPU utilisation, ABP", "StDev of memory utilisation, ABP"}
    assert rows["% reject ABP"]["ours"] == "2%" and rows["StDev of memory utilisation, ABP"]["ours_value"] == 0.1
    assert all(r["item"].startswith("beyond the paper") and r["within"] is None for r in rows.values())


def test_paired_comparison_known_answers():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.5, 1.5, 20)
    rows = []
    for r in range(20):
        rows += [("ABP", r, base[r] - 0.3 + rng.normal(0, 0.01)), ("PACK", r, base[r]), ("XBAL", r, base[r] + rng.normal(0, 0.2))]
    m = pl.DataFrame(rows, schema=["policy", "replicate", "value"], orient="row").with_columns(metric=pl.lit("reject_pct"))
    out = {r["baseline"]: r for r in pa.compare_policies(m, "ABP").iter_rows(named=True)}
    # ABP is lower by 0.3 in every replicate: the CI covers −0.3 tightly, the test rejects, 20 wins
    assert out["PACK"]["ci_low"] < -0.3 < out["PACK"]["ci_high"] and out["PACK"]["ci_high"] - out["PACK"]["ci_low"] < 0.02
    assert out["PACK"]["wins"] == 20 and out["PACK"]["p_wilcoxon_holm"] < 1e-4
    # identical policies: no difference, p = 1
    same = pl.concat([m.filter(pl.col("policy") == "PACK"), m.filter(pl.col("policy") == "PACK").with_columns(policy=pl.lit("ABP"))])
    row = pa.compare_policies(same, "ABP").row(0, named=True)
    assert row["mean_diff"] == 0 and row["p_wilcoxon"] == 1.0


def test_sorted_snapshot_is_lexicographic():
    u = np.array([[0.5, 0.1, 1.0], [0.2, 0.9, 0.0], [0.2, 0.3, 0.0], [0.1, 0.3, 1.0]])
    out = pa.sort_snapshot(u, [2, 0, 1])  # GPU, then CPU, then memory
    assert out.tolist() == [[0.2, 0.3, 0.0], [0.2, 0.9, 0.0], [0.1, 0.3, 1.0], [0.5, 0.1, 1.0]]


# ----------------------------------------------------------------------------- trace-driven


def trace_frames(rng, n_tasks=300):
    te = []
    for i in range(n_tasks):
        t0 = int(600e6 + i * 10e6)
        cpu, mem = float(rng.uniform(0.01, 0.2)), float(rng.uniform(0.01, 0.1))
        job, task = 1 + i // 7, i % 7
        te += [(t0, job, task, 0, cpu, mem), (t0 + 5_000_000, job, task, 1, cpu, mem),
               (t0 + int(rng.uniform(1, 50) * 60e6), job, task, 4, None, None)]
    te += [(600e6, 999, 0, 0, 3.0, 0.1), (601e6, 999, 0, 1, 3.0, 0.1), (700e6, 999, 0, 4, None, None)]  # larger than every machine
    events = pl.DataFrame(te, schema=["time", "job_id", "task_index", "event_type", "cpu_request", "memory_request"], orient="row")
    events = events.with_columns(pl.col("time").cast(pl.Int64))
    stats_ = events.select("job_id", "task_index").unique().with_columns(n_records=pl.lit(4, dtype=pl.Int64))
    machines = pl.DataFrame({"time": [0] * 10 + [9_000_000], "machine_id": list(range(11)), "event_type": [0] * 11,
                             "cpus": [0.5] * 5 + [1.0] * 5 + [0.25], "memory": [0.5] * 10 + [0.25]})
    return events, stats_, machines


@pytest.mark.parametrize("lifetime", ["usage", "events"])
def test_trace_requests_scale_to_the_offered_load(lifetime):
    rng = np.random.default_rng(0)
    events, stats_, machines = trace_frames(rng)
    nodes = pw.trace_nodes(machines, 6, np.random.default_rng(1))
    assert nodes.height == 6 and set(nodes["machine_id"]) <= set(range(10))  # only machines present at the start
    arrivals = pw.task_arrivals(events)
    req, facts = pw.trace_requests(arrivals, stats_, nodes, n_requests=100, offered_load=0.6, lifetime=lifetime, rng=np.random.default_rng(2))
    assert req.height == 100 and facts["tasks_too_big"] == 1
    assert (np.diff(req["time"].to_numpy()) >= 0).all()
    span = req["time"][-1] - req["time"][0]
    load = (req["d_cpu"] * req["lifetime"]).sum() / (span * nodes["cpus"].sum())
    assert load == pytest.approx(0.6)
    if lifetime == "usage":
        assert (req["lifetime"] == 4 * 300.0).all()
    else:
        assert (req["lifetime"] >= 60 - 5).all()
    wl = P.Workload.from_frame(req, ["cpu", "memory"])
    assert wl.demand.shape == (100, 2)


def test_trace_requests_span_the_submissions_of_task_events_not_only_the_tasks_usage_saw():
    """A partial trace: the task table holds only the tasks of the first 5-minute window (all submitted at once),
    but task_events holds 50 minutes of submissions. The requests are drawn over those; a task the table lacks
    takes its lifetime from its events (SCHEDULE to end), and the facts count both kinds."""
    rng = np.random.default_rng(0)
    events, stats_, machines = trace_frames(rng)
    first_window = stats_.join(events.filter((pl.col("event_type") == 0) & (pl.col("time") < 600e6 + 300e6)),
                               on=["job_id", "task_index"], how="semi").filter(pl.col("job_id") != 999)  # placeable ones
    assert 0 < first_window.height < stats_.height
    nodes = pw.trace_nodes(machines, 6, np.random.default_rng(1))
    arrivals = pw.task_arrivals(events)
    req, facts = pw.trace_requests(arrivals, first_window, nodes, n_requests=300, offered_load=0.6, lifetime="usage",
                                   rng=np.random.default_rng(2))
    assert req.height == 300 and facts["tasks_too_big"] == 1  # every placeable task drawn
    assert facts["lifetimes_from_usage"] == first_window.height and facts["lifetimes_from_events"] == 300 - first_window.height
    assert facts["submit_span_h"] == pytest.approx(299 * 10 / 3600)  # a submission every 10 s
    table = req.join(first_window, on=["job_id", "task_index"], how="left")
    assert (table.filter(pl.col("n_records").is_not_null())["lifetime"] == 4 * 300.0).all()
    ends = pw.task_arrivals(events).select("job_id", "task_index", ((pl.col("end") - pl.col("schedule")) / 1e6).alias("events_life"))
    rest = table.filter(pl.col("n_records").is_null()).join(ends, on=["job_id", "task_index"])
    assert rest.height == 300 - first_window.height and (rest["lifetime"] == rest["events_life"]).all()


def test_trace_bad_settings_name_the_key():
    rng = np.random.default_rng(0)
    events, stats_, machines = trace_frames(rng)
    with pytest.raises(pw.ConfigError, match=r"placement\.trace\.machines"):
        pw.trace_nodes(machines, 50, rng)
    nodes = pw.trace_nodes(machines, 4, rng)
    with pytest.raises(pw.ConfigError, match=r"placement\.trace\.lifetime"):
        pw.trace_requests(pw.task_arrivals(events), stats_, nodes, n_requests=10, offered_load=0.5, lifetime="runtime", rng=rng)


def test_shadow_optimisers_do_not_change_the_run_and_the_bsa_table_repeats():
    exp = small_experiment()
    wl = exp.workload(P.stream(1, 0, "workload"))
    kw = dict(resources=exp.resources, demand_alpha=0.005)
    plain = P.simulate(exp.capacity_matrix, wl, P.ABP(0.005), P.Exhaustive("first"), np.random.default_rng(3), **kw)
    shadows = [P.Shadow(P.BiasedSampling(), np.random.default_rng(4)), P.Shadow(P.BiasedSampling(16, 1), np.random.default_rng(5))]
    shadowed = P.simulate(exp.capacity_matrix, wl, P.ABP(0.005), P.Exhaustive("first"), np.random.default_rng(3), shadow=shadows, **kw)
    assert shadowed.requests.equals(plain.requests) and shadowed.events.equals(plain.events)
    assert 0 < shadows[0].decisions == shadows[1].decisions <= len(wl) and 0 <= shadows[0].agreement <= 1
    specs = pw.policy_specs(["pack", "abp"], exp.resources, "gpu", [1, 0, -2], "placement")
    bsa = {"samples": 3, "iterations": 2, "elite": 0.25, "smoothing": 0.5, "bandwidth": 0.2}
    a, _ = pr.compare_optimisers(exp, specs, seed=2, replicate=0, alpha=0.005, tie_break="first", bsa=bsa)
    b, _ = pr.compare_optimisers(exp, specs, seed=2, replicate=0, alpha=0.005, tie_break="first", bsa=bsa)
    assert a.equals(b) and a["policy"].to_list() == ["PACK", "ABP"]
