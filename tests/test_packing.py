"""Stochastic bin packing (Janus & Rzadca §4–5, Unuvar §III): properties over every fit test × algorithm,
known answers, a statistical check of GPA, evaluation against brute force, and bad input.

Every fit test is exercised through :data:`FITS`, one instance of each implementation (as scikit-learn
checks all estimators); :func:`test_every_fit_test_is_exercised` keeps that list complete.
"""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy import special, stats

from colocate.analysis import betafit
from colocate.insufficient import InsufficientData
from colocate.registry import protocol_problems
from colocate.report import claims
from colocate.scheduling import admission
from colocate.scheduling import fit_tests as ft
from colocate.scheduling import packing as pk
from colocate.scheduling import packing_grid as pg
from colocate.scheduling.admission import BetaAdmissionController
from colocate.scheduling.checks import check_fit_test, check_packing, random_instance
from wfutil import PAPERS, judged

FITS = [
    ft.GPA(0.05),
    ft.Cantelli(1.7),
    ft.Av(1.25),
    ft.Perc(90),
    ft.BetaFit(0.05),
    ft.NSigma(2.0),
    ft.RCLike(95),
    ft.MaxPredictor(2.0, 95),
    ft.BorgDefault(0.9),
]
FIT_IDS = [f.label for f in FITS]
ALGOS = ["FF", "BF"]
PROPS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_fit_test_is_exercised():
    assert {type(f) for f in FITS} == set(ft.FIT_TESTS.classes())
    for f in FITS:
        assert protocol_problems(type(f), ft.FitTest) == []  # signatures too, not only names as isinstance
        assert ft.FIT_TESTS[f.estimator](f.parameter).estimator == f.estimator
    for a in pk.ALGORITHMS.defaults():
        assert protocol_problems(type(a), pk.Algorithm) == []


@pytest.mark.parametrize("fit", FITS, ids=FIT_IDS)
def test_every_fit_test_passes_the_common_checks(fit):
    """The checks a plug-in author runs on their own fit test (colocate.scheduling.checks)."""
    check_fit_test(fit)


def test_grid_builds_each_fit_test_with_the_options_it_declares():
    options = {"beta_threshold": 0.7, "max_pred_percentile": 97.0}  # packing.beta_threshold, packing.max_pred_percentile
    assert set(ft.FIT_OPTIONS) == set(options)
    assert pg.fit_test("Beta", 0.05, **options) == ft.BetaFit(0.05, threshold=0.7)
    assert pg.fit_test("max-pred", 3.0, **options) == ft.MaxPredictor(3.0, p=97.0)
    for f in FITS:
        built = pg.fit_test(f.estimator, f.parameter, **options)
        assert type(built) is type(f) and built.parameter == f.parameter
        assert pg.fit_test(f.estimator, f.parameter) == ft.FIT_TESTS[f.estimator](f.parameter)  # class defaults


# ----------------------------------------------------------------------------- helpers


def reference_first_fit(sizes, capacity):
    bins, loads = [], []
    for i, s in enumerate(sizes):
        for j, load in enumerate(loads):
            if load + s <= capacity:
                bins[j].append(i)
                loads[j] = load + s
                break
        else:
            bins.append([i])
            loads.append(s)
    return bins


def reference_best_fit(sizes, capacity):
    bins, loads = [], []
    for i, s in enumerate(sizes):
        best, best_left = -1, math.inf
        for j, load in enumerate(loads):
            left = capacity - (load + s)
            if 0 <= left < best_left:
                best, best_left = j, left
        if best < 0:
            bins.append([i])
            loads.append(s)
        else:
            bins[best].append(i)
            loads[best] += s
    return bins


# ----------------------------------------------------------------------------- properties


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize("fit", FITS, ids=FIT_IDS)
@PROPS
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    r=st.integers(1, 40),
    scale=st.sampled_from([0.01, 0.1, 0.4, 1.5]),
    capacity=st.sampled_from([0.5, 1.0, 2.0]),
    zero_share=st.sampled_from([0.0, 0.3]),
    max_failures=st.integers(1, 6),
)
def test_every_task_placed_once_and_every_bin_fits(fit, algorithm, seed, n, r, scale, capacity, zero_share, max_failures):
    x, requests = random_instance(seed, n, r, scale, zero_share)
    s = ft.TaskStats.from_observations(x, ft.required_percentiles([fit]), requests)
    online = pk.pack(fit, s, capacity, algorithm, rebalancing=False)
    check_packing(fit, s, online, capacity)
    assert online.migrations == 0
    balanced = pk.rebalance(online, fit, s, capacity, max_failures=max_failures)
    check_packing(fit, s, balanced, capacity)
    # rebalancing only moves tasks to the last machine and never opens one
    assert balanced.n_bins <= online.n_bins
    assert set(online.bins[-1]) <= set(balanced.bins[-1])
    moved = set(balanced.bins[-1]) - set(online.bins[-1])
    assert len(moved) == balanced.migrations
    assert pk.pack(fit, s, capacity, algorithm, max_failures=max_failures).bins == balanced.bins


@pytest.mark.parametrize("fit", FITS, ids=FIT_IDS)
@PROPS
@given(
    sizes=st.lists(st.integers(0, 64), min_size=1, max_size=60),
    r=st.integers(1, 5),
    capacity=st.sampled_from([1.0, 1.5, 3.0]),
)
def test_first_fit_with_deterministic_sizes_equals_reference(fit, sizes, r, capacity):
    """Zero-variance items: every test reduces to a size, and First Fit to the textbook algorithm."""
    v = np.asarray(sizes, dtype=np.float64) / 64  # dyadic: float32 storage and sums are exact
    x = np.repeat(v[:, None], r, axis=1).astype(np.float32)
    s = ft.TaskStats.from_observations(x, ft.required_percentiles([fit]), requests=v)
    size = {"av": 1.25 * v, "Borg": 0.9 * v}.get(fit.estimator, v)
    want = reference_first_fit(size.tolist(), capacity)
    got = pk.pack(fit, s, capacity, "FF", rebalancing=False)
    assert got.bins == want


@pytest.mark.parametrize("fit", [f for f in FITS if f.estimator not in ("GPA", "Beta")], ids=lambda f: f.label)
@PROPS
@given(sizes=st.lists(st.integers(0, 64), min_size=1, max_size=60), capacity=st.sampled_from([1.0, 1.5, 3.0]))
def test_best_fit_of_size_based_tests_equals_reference(fit, sizes, capacity):
    """Best Fit of the size-based tests: the smallest leftover capacity (Janus §4)."""
    v = np.asarray(sizes, dtype=np.float64) / 64
    x = np.repeat(v[:, None], 3, axis=1).astype(np.float32)
    s = ft.TaskStats.from_observations(x, ft.required_percentiles([fit]), requests=v)
    size = {"av": 1.25 * v, "Borg": 0.9 * v}.get(fit.estimator, v)
    assert pk.pack(fit, s, capacity, "BF", rebalancing=False).bins == reference_best_fit(size.tolist(), capacity)


@pytest.mark.parametrize("fit", FITS, ids=FIT_IDS)
@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(0, 64), min_size=1, max_size=60), capacity=st.sampled_from([1.0, 1.5]))
def test_zero_variance_items_pack_as_av1(fit, sizes, capacity):
    """Cantelli(b), GPA, Beta and every size-based test on zero-variance items equal av(1) (First Fit)."""
    v = np.asarray(sizes, dtype=np.float64) / 64
    x = np.repeat(v[:, None], 4, axis=1).astype(np.float32)
    s = ft.TaskStats.from_observations(x, ft.required_percentiles([fit]), requests=v)
    if fit.estimator == "av":
        fit = ft.Av(1.0)
    if fit.estimator == "Borg":
        fit = ft.BorgDefault(1.0)
    av1 = pk.pack(ft.Av(1.0), s, capacity, "FF")
    assert pk.pack(fit, s, capacity, "FF").bins == av1.bins


# ----------------------------------------------------------------------------- rebalancing (Janus §4)


def sized(values):
    v = np.asarray(values, dtype=np.float64)
    return ft.TaskStats(v, np.zeros_like(v))


def test_rebalancing_round_robin_worked_example():
    # First Fit at c = 1: [0.75, 0.25] [0.25 × 4] [0.5]. Round robin over machines 1..2:
    # 0.75 → last fails (1); 0.25 moves; 0.75 fails (2); 0.25 moves; 0.75 fails (3);
    # 0.25 fails (4, last is full); 0.75 fails (5): stop.
    s = sized([0.75, 0.25, 0.25, 0.25, 0.25, 0.25, 0.5])
    online = pk.pack(ft.Av(1.0), s, 1.0, "FF", rebalancing=False)
    assert online.bins == [[0, 1], [2, 3, 4, 5], [6]]
    out = pk.rebalance(online, ft.Av(1.0), s, 1.0, max_failures=5)
    assert out.bins == [[0, 1], [4, 5], [6, 2, 3]] and out.migrations == 2
    # max_failures = 1: the first attempt fails and the pass stops
    assert pk.rebalance(online, ft.Av(1.0), s, 1.0, max_failures=1).bins == online.bins


def test_rebalancing_keeps_the_source_machine_valid_for_non_monotone_tests():
    """Beta's exceedance is not monotone in the moments: removing a task can break a machine's test.

    Task A (μ 0.05, σ² 0.06) alone has no Beta (S̄² ≥ R̄(1 − R̄)) and fails; beside B (μ 0.05,
    σ² 1e-4) it fits. C opens the last machine. Migrating B, the first task of machine 1, to C's
    machine would fit there but would leave A alone and failing, so the migration must fail.
    """
    fit = ft.BetaFit(0.05)
    s = ft.TaskStats(np.array([0.05, 0.05, 0.9]), np.array([1e-4, 0.06, 0.0]))
    cols = fit.columns(s)
    assert fit.slack(cols, 1.0)[1] < 0 <= fit.slack(cols[:2].sum(axis=0)[None, :], 1.0)[0]
    assert fit.slack((cols[0] + cols[2])[None, :], 1.0)[0] >= 0
    online = pk.pack(fit, s, 1.0, "FF", rebalancing=False)
    assert online.bins == [[0, 1], [2]] and online.oversized == []
    out = pk.rebalance(online, fit, s, 1.0)
    assert out.bins == online.bins and out.migrations == 0
    check_packing(fit, s, out, 1.0)


def test_a_task_of_exactly_the_capacity_fits_an_empty_bin():
    p = pk.pack(ft.Av(1.0), sized([1.0, 0.0, 0.5]), 1.0, "FF")
    assert p.oversized == [] and p.bins == [[0, 1], [2]]


# ----------------------------------------------------------------------------- known answers


@settings(max_examples=60, deadline=None)
@given(
    mu=st.floats(0.005, 0.3),
    sigma=st.floats(0.0, 0.2),
    rho=st.sampled_from([0.001, 0.01, 0.05, 0.1, 0.3]),
    capacity=st.sampled_from([0.5, 1.0, 2.0]),
)
def test_gpa_identical_items_admits_the_analytic_count(mu, sigma, rho, capacity):
    """A bin of identical items (μ, σ) holds max{n : nμ + z₁₋ρ σ √n ≤ c} of them (Janus Algorithm 1)."""
    z = stats.norm.ppf(1 - rho)
    lhs = lambda n: n * mu + z * sigma * math.sqrt(n)  # noqa: E731
    n_star = max(n for n in range(0, 2000) if lhs(n) <= capacity)
    # stay off the boundary, where the two algebraically equal tests differ in the last bit
    assume(all(abs(lhs(n) - capacity) > 1e-9 for n in (n_star, n_star + 1)))
    assume(n_star >= 1)
    s = ft.TaskStats(np.full(n_star + 3, mu), np.full(n_star + 3, sigma**2))
    p = pk.pack(ft.GPA(rho), s, capacity, "FF", rebalancing=False)
    assert len(p.bins[0]) == n_star


def test_gpa_slack_is_algorithm1_fitbin():
    sums = np.array([[0.7, 0.01], [0.9, 0.0025], [1.2, 0.0], [0.5, 0.0]])
    want = 0.05 - stats.norm.sf(1.0, loc=sums[:, 0], scale=np.sqrt(sums[:, 1]).clip(1e-300))
    want[2:] = [0.05 - 1, 0.05]  # point masses above / below c
    np.testing.assert_allclose(ft.GPA(0.05).slack(sums, 1.0), want, rtol=1e-12, atol=1e-15)


def test_beta_moments_of_unuvar_eqs_7_8():
    # the issue's α = 5.757, β = 5.992 for mean 0.49, std 0.14 (the paper prints 5.76 and 5.93
    # from unrounded inputs)
    a, b = betafit.beta_parameters(0.49, 0.14**2)
    assert a == pytest.approx(5.757, abs=1e-3) and b == pytest.approx(5.992, abs=1e-3)
    # the Beta with these parameters has exactly the given mean and variance
    assert stats.beta.mean(a, b) == pytest.approx(0.49) and stats.beta.std(a, b) == pytest.approx(0.14)


def test_beta_fit_slack_is_eq6_with_scipy_beta_cdf():
    fit = ft.BetaFit(0.01, threshold=0.8)
    sums = np.array([[0.5, 0.01], [0.9, 0.02], [1.3, 0.01], [0.4, 0.0], [0.05, 0.5]])
    got = fit.slack(sums, 1.0)
    r, s2 = sums[:1, 0] * 0.8, sums[:1, 1] * 0.64
    a, b = betafit.beta_parameters(r, s2)
    assert got[0] == pytest.approx(stats.beta.cdf(0.8, a, b)[0] - 0.99)
    assert got[2] < 0  # R̄ ≥ 1: no Beta, does not fit
    assert got[3] == pytest.approx(0.01)  # point mass below U*
    assert got[4] < 0  # variance too large for a Beta on [0, 1]


def test_peak_predictors_and_size_tests():
    x = np.array([[0.1, 0.2, 0.3, 0.4], [0.0, 0.0, 0.5, 0.5]], dtype=np.float32)
    s = ft.TaskStats.from_observations(x, (50, 100), requests=np.array([0.6, np.nan]))
    np.testing.assert_allclose(s.percentile(50), np.percentile(x, 50, axis=1))
    np.testing.assert_allclose(ft.Perc(100).columns(s)[:, 0], [0.4, 0.5], rtol=1e-6)
    np.testing.assert_allclose(ft.BorgDefault(0.9).columns(s)[:, 0], [0.54, 0.45], rtol=1e-6)  # NaN → max
    np.testing.assert_allclose(ft.Cantelli(2).columns(s)[:, 0], s.mean + 2 * s.std)
    sums = np.array([[0.5, 0.04, 0.9]])
    assert ft.NSigma(3).slack(sums[:, :2], 1.0)[0] == pytest.approx(1 - (0.5 + 3 * 0.2))
    assert ft.MaxPredictor(3, 99).slack(sums, 1.0)[0] == pytest.approx(1 - 1.1)
    assert ft.MaxPredictor(1, 99).slack(sums, 1.0)[0] == pytest.approx(1 - 0.9)


# ----------------------------------------------------------------------------- statistical


@pytest.fixture(scope="module")
def gaussian_instance():
    """Independent Gaussian tasks, ~80 per machine at c = 1."""
    rng = np.random.default_rng(2017)
    n, r = 2000, 10_000
    mu = rng.uniform(0.002, 0.02, n)
    sd = rng.uniform(0.002, 0.015, n)
    x = rng.standard_normal((n, r), dtype=np.float32)
    x *= sd[:, None].astype(np.float32)
    x += mu[:, None].astype(np.float32)
    return x, ft.TaskStats.from_observations(x)


@pytest.mark.parametrize("rho", [0.1, 0.05, 0.01])
def test_gpa_empirical_q_matches_rho_on_gaussian_tasks(gaussian_instance, rho):
    """On Gaussian tasks GPA's empirical q is ρ up to three justified terms (no rebalancing; last machine out).

    * granularity: every machine j but the last rejected each task later placed elsewhere, and adding
      load only raises the Gaussian exceedance, so ρ − sf_j < min_t sf(S_j + t) − sf_j (computed below);
    * sampling: q is a mean of (m − 1)·R Bernoulli(≈ρ) draws, independent across realizations:
      4 standard errors;
    * estimation: μ_i, σ_i² are sample moments of the same R draws; omitted sample covariances shift a
      machine's variance by O(1/√R) relative, i.e. z by ~0.5% here: 2% of ρ covers it.
    """
    x, s = gaussian_instance
    p = pk.pack(ft.GPA(rho), s, 1.0, "FF", rebalancing=False)
    ev = pk.evaluate(p, x, 1.0, pk.lower_bound(s.mean, 1.0))
    bins = p.bins[:-1]
    m_sum = np.array([s.mean[b].sum() for b in bins])
    v_sum = np.array([s.var[b].sum() for b in bins])
    sf = special.ndtr((m_sum - 1.0) / np.sqrt(v_sum))
    assert (sf <= rho + 1e-12).all()  # GPA's guarantee on the model
    gaps = []
    for j, b in enumerate(bins):
        later = np.concatenate(p.bins[j + 1 :])
        nxt = special.ndtr((m_sum[j] + s.mean[later] - 1.0) / np.sqrt(v_sum[j] + s.var[later]))
        assert (nxt > rho).all()  # First Fit: every later task was rejected by machine j
        gaps.append(nxt.min() - sf[j])
    granularity = float(np.mean(gaps))
    se = math.sqrt(rho * (1 - rho) / (len(bins) * x.shape[1]))
    q = float(ev.q_machine[:-1].mean())
    assert granularity < 0.25 * rho  # the tolerance is meaningful
    print(f"rho={rho} q={q:.5f} granularity={granularity:.5f} se={se:.6f} machines={len(p.bins)}")
    assert rho - granularity - 4 * se - 0.02 * rho <= q <= rho + 4 * se + 0.02 * rho, (q, granularity, se)
    # with the last machine, and with rebalancing, q only drops
    assert ev.q <= q + 1e-12
    assert pk.evaluate(pk.pack(ft.GPA(rho), s, 1.0, "FF"), x, 1.0, 1).q <= ev.q + 4 * se


# ----------------------------------------------------------------------------- evaluation


def brute_force(assignment, x, capacity):
    m = int(assignment.max()) + 1
    over = np.zeros(m)
    util = np.zeros(m)
    for j in range(m):
        for t in range(x.shape[1]):
            total = 0.0
            for i in range(x.shape[0]):
                if assignment[i] == j:
                    total += float(x[i, t])
            over[j] += total > capacity
            util[j] += total
    return over.sum() / (m * x.shape[1]), over / x.shape[1], util / x.shape[1] / capacity


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 25),
    r=st.integers(1, 30),
    m=st.integers(1, 8),
    capacity=st.sampled_from([0.5, 1.0, 1.25]),
    runs=st.booleans(),
)
def test_q_equals_brute_force(seed, n, r, m, capacity, runs):
    rng = np.random.default_rng(seed)
    # dyadic usage (multiples of 1/64): every partial sum is exact in float32, so ties at c are exact too
    x = (rng.integers(0, 48, (n, r)) / 64).astype(np.float32)
    assignment = np.concatenate([np.arange(min(m, n)), rng.integers(0, min(m, n), n - min(m, n))])
    if runs:  # long runs of consecutive tasks on one machine, as First Fit makes
        assignment.sort()
    else:
        rng.shuffle(assignment)
    bins = [np.flatnonzero(assignment == j).tolist() for j in range(min(m, n))]
    packing = pk.Packing(bins, n)
    ev = pk.evaluate(packing, x, capacity, m_norm=3)
    q, qm, util = brute_force(packing.assignment, x, capacity)
    assert ev.q == q
    np.testing.assert_array_equal(ev.q_machine, qm)
    np.testing.assert_allclose(ev.utilisation, util, rtol=1e-12)
    assert ev.m_abs == len(bins) and ev.m == len(bins) / 3
    # both ways of summing give the same (exact) totals, including for unplaced tasks (−1)
    assignment[rng.random(n) < 0.2] = -1
    sparse = pk.machine_totals(assignment, x, len(bins), method="sparse")
    np.testing.assert_array_equal(pk.machine_totals(assignment, x, len(bins), method="blocks"), sparse)
    want = np.array([x[assignment == j].sum(axis=0, dtype=np.float64) for j in range(len(bins))])
    np.testing.assert_array_equal(sparse, want.reshape(len(bins), r))


def test_metrics_and_split():
    o, e = pk.split_realizations(10_000, 1.0)
    assert (o, e) == (slice(0, 10_000), slice(0, 10_000))
    o, e = pk.split_realizations(10_000, 0.001)  # Janus §5.5: 10 observations, 9,990 evaluations
    assert (o.stop - o.start, e.stop - e.start) == (10, 9_990) and o.stop == e.start
    assert pk.lower_bound(np.array([0.3, 0.4, 0.5]), 1.0) == 2
    assert pk.lower_bound(np.array([0.3, 0.4, 0.5]), 0.5) == 3
    x = np.array([[0.6, 0.2], [0.6, 0.2], [0.1, 0.1]], dtype=np.float32)
    ev = pk.evaluate(pk.Packing([[0, 1], [2]], 3), x, 1.0, 1)
    assert ev.q == 0.25 and ev.q_machine.tolist() == [0.5, 0.0] and ev.m == 2.0
    np.testing.assert_allclose(ev.utilisation, [0.8, 0.1], rtol=1e-6)
    for method in ("auto", "sparse", "blocks"):
        totals = pk.machine_totals(np.array([1, 0, 1]), x, method=method)
        np.testing.assert_allclose(totals, [[0.6, 0.2], [0.7, 0.3]], rtol=1e-6)
        assert totals.dtype == np.float32
    with pytest.raises(ValueError, match="method must be"):
        pk.machine_totals(np.array([1, 0, 1]), x, method="dense")


def test_run_observes_o_and_measures_q_on_inst_over_e():
    """Statistics come from O of the observed data (inst or avg); q from the inst realizations of E."""
    inst = np.full((4, 100), 0.5, dtype=np.float32)
    inst[:, :10] = 0.1
    avg = np.full((4, 100), 0.05, dtype=np.float32)
    fit = ft.Av(1.0)
    # 10 observations see 0.1 per task: all four on one machine, overloaded on every one of the 90 evaluations
    p, ev = pk.run(inst, fit, 1.0, stats=pk.observe(inst, 0.1), clairvoyance=0.1)
    assert p.n_bins == 1 and ev.q == 1.0 and ev.q_machine.size == 1 and ev.m_norm == 2
    # full clairvoyance: means 0.46, two per machine, totals 1.0 (not above c)
    p, ev = pk.run(inst, fit, 1.0, stats=pk.observe(inst, 1.0))
    assert p.n_bins == 2 and ev.q == 0.0 and ev.m == 1.0
    # avg data drive the packing, inst data the evaluation (Janus §5.3)
    p, ev = pk.run(inst, fit, 1.0, stats=pk.observe(avg, 1.0))
    assert p.n_bins == 1 and ev.q == 0.9
    with pytest.raises(ValueError, match="stats describe 3 tasks"):
        pk.run(inst, fit, 1.0, stats=pk.observe(avg[:3]))


def test_oversized_tasks_get_their_own_machine():
    s = sized([0.3, 1.4, 0.3, 0.2])
    for algo in ALGOS:
        p = pk.pack(ft.Av(1.0), s, 1.0, algo)
        assert p.oversized == [1] and [1] in p.bins and p.n_bins == 2


# ----------------------------------------------------------------------------- admission controller


def test_admission_controller_reestimates_at_every_arrival():
    c = BetaAdmissionController(threshold=0.8, eps=0.01, capacity=1.0)
    decisions = [c.offer(0.05, 0.0004) for _ in range(20)]
    n = sum(decisions)
    # admitted until the Beta of the running set plus the newcomer breaks eq 6, then everything is refused
    assert decisions == [True] * n + [False] * (20 - n) and 5 < n < 20
    r, sd = c.utilisation_moments
    assert r == pytest.approx(0.05 * n) and sd == pytest.approx(math.sqrt(0.0004 * n))
    a, b = betafit.beta_parameters(0.05 * (n + 1), 0.0004 * (n + 1))
    assert c.probability_within(0.05, 0.0004) == pytest.approx(stats.beta.cdf(0.8, a, b))
    assert c.probability_within(0.05, 0.0004) < 0.99 <= c.probability_within(0.0, 0.0) or n == 0
    c.release(0.05, 0.0004)
    assert c.offer(0.05, 0.0004)  # room again after a departure
    for _ in range(c.n_running):
        c.release(0.05, 0.0004)
    assert c.utilisation_moments == (0.0, 0.0)
    with pytest.raises(ValueError, match="no task is running"):
        c.release(0.05, 0.0004)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"threshold": 1.0}, "threshold"), ({"eps": 0.0}, "eps"), ({"capacity": 0.0}, "capacity")],
)
def test_admission_controller_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BetaAdmissionController(**kwargs)


# ----------------------------------------------------------------------------- bad input


def test_nan_in_realizations_is_named():
    x = np.ones((4, 5), dtype=np.float32) * 0.1
    x[2, 3] = np.nan
    with pytest.raises(ValueError, match=r"observations: .*task\(s\) \[2\].*NaN"):
        ft.TaskStats.from_observations(x)
    good = np.ones((4, 5), dtype=np.float32) * 0.1
    p = pk.pack(ft.Av(1), ft.TaskStats.from_observations(good), 1.0)
    with pytest.raises(ValueError, match=r"inst_eval: .*task\(s\) \[2\].*NaN"):
        pk.evaluate(p, x, 1.0, 1)
    x[2, 3] = np.inf
    with pytest.raises(ValueError, match="NaN or inf"):
        ft.TaskStats.from_observations(x)


@pytest.mark.parametrize("capacity", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_capacity_is_named(capacity):
    s = sized([0.1, 0.2])
    with pytest.raises(ValueError, match="capacity must be"):
        pk.pack(ft.GPA(0.1), s, capacity)
    with pytest.raises(ValueError, match="capacity must be"):
        pk.evaluate(pk.Packing([[0, 1]], 2), np.ones((2, 3), np.float32), capacity, 1)
    with pytest.raises(ValueError, match="capacity must be"):
        pk.lower_bound(np.array([0.1]), capacity)


@pytest.mark.parametrize("clairvoyance", [0.0, -0.1, 1.5, float("nan")])
def test_bad_clairvoyance_is_named(clairvoyance):
    with pytest.raises(ValueError, match="clairvoyance must be in"):
        pk.split_realizations(100, clairvoyance)


def test_clairvoyance_leaving_no_evaluation_set():
    with pytest.raises(ValueError, match="no evaluation realizations"):
        pk.split_realizations(10, 0.99)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ft.GPA(0.0), "GPA rho"),
        (lambda: ft.GPA(1.0), "GPA rho"),
        (lambda: ft.BetaFit(1.2), "Beta eps"),
        (lambda: ft.BetaFit(0.1, threshold=1.0), "Beta threshold"),
        (lambda: ft.Perc(101), "perc p"),
        (lambda: ft.Cantelli(-1), "Cantelli b"),
        (lambda: ft.Av(0), "av factor"),
        (lambda: ft.NSigma(float("nan")), "N-sigma n"),
        (lambda: ft.MaxPredictor(2, 150), "max-pred p"),
        (lambda: ft.BorgDefault(-0.9), "Borg factor"),
        (lambda: ft.FIT_TESTS["GPAX"], "unknown fit test 'GPAX'"),
        (lambda: pg.fit_test("GPAX", 0.1), "packing.estimators.GPAX: unknown fit test"),
        (lambda: pg.fit_test("Beta", 0.1, beta_treshold=0.7), "unknown fit-test option"),
        (lambda: pk.pack(ft.GPA(0.1), sized([0.1]), 1.0, "WF"), "algorithm must be one of"),
        (lambda: pk.pack(ft.GPA(0.1), sized([0.1]), 1.0, max_failures=0), "max_failures"),
        (lambda: ft.TaskStats(np.array([0.1]), np.array([-1.0])), "var must be"),
        (lambda: ft.TaskStats.from_observations(np.ones(3)), "2-D"),
        (lambda: ft.TaskStats(np.array([0.1]), np.array([0.0])).percentile(50), "no observations"),
    ],
)
def test_bad_parameters_are_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()


# ----------------------------------------------------------------------------- the grid (Janus §5)


def test_grid_covers_the_sections_once_per_cell():
    estimators = {"GPA": [0.1, 0.001], "av": [1.0, 2.0], "Cantelli": [1.7]}
    sections = {
        "5.2": {"estimators": "all", "algorithm": ["FF", "BF"]},
        "5.4": {"estimators": {"av": [2.0], "GPA": [0.001]}, "capacity": [0.5, 1.0], "rebalance": [True, False]},
        "5.5": {"estimators": {"GPA": "all"}, "clairvoyance": [0.01, 1.0]},
    }
    cells = pg.expand_grid(estimators, sections)
    assert cells.select(list(pg.CELL_SCHEMA)).is_duplicated().sum() == 0
    # 5 × 2 + (2 × 2 × 2 − 2 shared with 5.2) + (2 × 2 − 2 shared) = 18
    assert cells.height == 18
    base = cells.filter((pl.col("capacity") == 1.0) & (pl.col("clairvoyance") == 1.0) & pl.col("rebalance")
                        & (pl.col("algorithm") == "BF") & (pl.col("estimator") == "GPA") & (pl.col("parameter") == 0.001))
    assert base["sections"].to_list() == ["5.2,5.4,5.5"]
    settings = pg.settings(cells)
    assert settings.height == 3  # (inst, 1, 1), (inst, 1, 0.5), (inst, 0.01, 1)
    assert sum(len(pg.cells_of(cells, s)) for s in settings.iter_rows(named=True)) == cells.height
    assert len(pg.cells_of(cells, {"data": "inst", "clairvoyance": "0.01", "capacity": "1.0"})) == 2


@pytest.mark.parametrize(
    "estimators, sections, match",
    [
        ({"GPAX": [0.1]}, {"a": {}}, "packing.estimators.GPAX: unknown fit test 'GPAX'"),
        ({"GPA": [0.1]}, {"5.4": {"estimators": {"av": [1.0]}}}, r"section 5.4: estimator 'av'"),
        ({"GPA": [0.1]}, {"5.4": {"algorithm": ["WF"]}}, "section 5.4: algorithm must be"),
        ({"GPA": [0.1]}, {"5.3": {"data": ["raw"]}}, "section 5.3: data must be"),
        ({"GPA": [0.1]}, {"5.3": {"colour": ["red"]}}, r"section 5.3: unknown keys \['colour'\]"),
    ],
)
def test_bad_grid_is_named(estimators, sections, match):
    with pytest.raises(ValueError, match=match):
        pg.expand_grid(estimators, sections)


def test_instances_are_seeded_samples_without_replacement():
    rows = pg.instances(500, 4, 100, seed=3)
    assert rows.shape == (4, 100) and all(np.unique(r).size == 100 for r in rows)
    np.testing.assert_array_equal(rows, pg.instances(500, 4, 100, seed=3))
    assert not np.array_equal(rows, pg.instances(500, 4, 100, seed=4))
    with pytest.raises(InsufficientData, match="tasks_per_instance 600 exceeds") as lacking:
        pg.instances(500, 1, 600, seed=3)
    assert lacking.value.needs == "at least 600 long tasks"  # too little data: the grid says so, the run goes on


def draw_png(draw, results, path) -> bytes:
    import matplotlib.pyplot as plt

    fig = draw(results)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return path.read_bytes()


def _at_base(results: pl.DataFrame, **free) -> pl.DataFrame:
    """The rows at the paper's base case (BF, rebalancing, c = 1, full clairvoyance, inst) but for ``free`` axes."""
    for axis, value in {**pg.BASE, **free}.items():
        if value is not None:
            results = results.filter(pl.col(axis) == value)
    return results


def _medians(frame: pl.DataFrame, by: list[str], column: str) -> dict[tuple, float]:
    return {tuple(str(v) for v in k): m for *k, m in frame.group_by(by).agg(pl.col(column).median()).iter_rows()}


def _is_empty_panel(ax) -> bool:
    return not ax.containers and not ax.collections and any(t.get_text().startswith("no cells") for t in ax.texts)


def _dots_are(ax, frame: pl.DataFrame) -> np.ndarray:
    """The Axes' one scatter shows exactly the (m, q) points of ``frame``, in any order; those points."""
    (dots,) = ax.collections
    xy = np.asarray(dots.get_offsets())
    want = frame.select("m", "q").to_numpy()
    np.testing.assert_allclose(xy[np.lexsort(xy.T[::-1])], want[np.lexsort(want.T[::-1])])
    return want


def assert_packing_figures_show(results: pl.DataFrame) -> int:
    """Each figure of colocate.figures.packing, drawn from ``results``, shows that table's numbers: one box per
    label with the median of its instances at the base case (Figs 7, 9, 10, 13), per capacity and clairvoyance
    with the pairs' labels as hues (Figs 11, 12), one dot per instance of GPA/av/perc (Fig 8), one dot per fit
    test at its median (m, q) with the Pareto front (ours). A panel is empty ("no cells") exactly when the
    table holds none of its rows. Returns the number of non-empty panels.

    Catches a figure drawn from the wrong rows (another capacity or algorithm, the avg data, all
    clairvoyance levels in one box), a lost or swapped hue level, a mislabelled category axis, and a
    panel left empty although the grid has its cells.
    """
    import matplotlib.pyplot as plt

    from colocate.figures import packing as figs
    from wfutil import box_medians, legend_texts, tick_labels

    drawn = 0
    base = _at_base(results)
    labels = base.select("estimator", "parameter", "label").unique().sort("estimator", "parameter")["label"].to_list()

    def boxes_match(ax, frame: pl.DataFrame, x: str, y: str, hue: str | None = None, hues: list[str] | None = None):
        nonlocal drawn
        assert _is_empty_panel(ax) == (frame.height == 0), ax.get_title()
        if frame.height == 0:
            return
        drawn += 1
        shown = box_medians(ax)
        names = hues or legend_texts(ax) or [None]
        got = {((names[h],) if hue else ()) + (lab,): m for (h, lab), m in shown.items()}
        frame = frame.with_columns(pl.col(x).cast(pl.String))
        assert got == pytest.approx(_medians(frame, [hue, x] if hue else [x], y)), ax.get_title()

    fig = figs.fig7_machines(results)
    (ax,) = fig.axes
    if base.height:
        assert tick_labels(ax) == labels and "m_abs / m_norm" in ax.get_ylabel()
    boxes_match(ax, base, "label", "m")
    plt.close(fig)

    fig8 = base.filter(pl.col("estimator").is_in(["GPA", "av", "perc"]))
    fig = figs.fig8_m_vs_q(results)
    (ax,) = fig.axes
    assert _is_empty_panel(ax) == (fig8.height == 0)
    if fig8.height:
        _dots_are(ax, fig8)
        drawn += 1
    plt.close(fig)

    gpa = base.filter(pl.col("estimator") == "GPA").with_columns(((pl.col("q") - pl.col("parameter")) / pl.col("parameter")).alias("error"))
    fig = figs.fig9_gpa_error(results)
    boxes_match(fig.axes[0], gpa, "parameter", "error")
    plt.close(fig)

    with_avg = _at_base(results, data="avg")["label"].unique().implode()
    both = _at_base(results, data=None).filter(pl.col("label").is_in(with_avg))
    fig = figs.fig10_inst_vs_avg(results)
    boxes_match(fig.axes[0], both, "label", "q", hue="data", hues=["inst", "avg"])
    plt.close(fig)

    cap = _at_base(results, capacity=None, rebalance=None)
    fig = figs.fig11_capacity(results)
    pairs = [(("av", 2.0), ("GPA", 0.001)), (("av", 1.25), ("GPA", 0.1))]  # the figure's default pairs
    for col, pair in enumerate(pairs):
        for row, reb in enumerate((True, False)):
            which = pl.lit(False)
            for est, p in pair:
                which = which | ((pl.col("estimator") == est) & ((pl.col("parameter") - p).abs() < 1e-12))
            boxes_match(fig.axes[2 * row + col], cap.filter(which & (pl.col("rebalance") == reb)), "capacity", "q", hue="label")
    plt.close(fig)

    fig = figs.fig12_clairvoyance(results)
    clair = _at_base(results, clairvoyance=None)
    for ax, est in zip(fig.axes, ("GPA", "av")):
        sel = clair.filter(pl.col("estimator") == est)
        boxes_match(ax, sel if (sel["clairvoyance"] < 1).any() else sel.clear(), "clairvoyance", "q", hue="label")
    plt.close(fig)

    keys = ["instance", "estimator", "parameter", "label"]
    off = _at_base(results, rebalance=False).join(base.select(*keys, pl.col("q").alias("q_on")), on=keys)
    off = off.filter((pl.col("estimator") != "perc") & (pl.col("q") > 0))
    fig = figs.fig13_rebalancing(results)
    boxes_match(fig.axes[0], off.with_columns(((pl.col("q") - pl.col("q_on")) / pl.col("q")).alias("decrease")), "label", "decrease")
    plt.close(fig)

    med = base.group_by("label").agg(pl.col("m").median(), pl.col("q").median())
    fig = figs.fig_pareto(results)
    (ax,) = fig.axes
    assert _is_empty_panel(ax) == (med.height == 0)
    if med.height:
        want = _dots_are(ax, med)
        # the front: each step is a fit test, every fit test lies on or above it, none beats a step
        (front,) = [line for line in ax.lines if line.get_label() == "Pareto front"]
        steps = {(round(float(m), 12), round(float(q), 12)) for m, q in zip(front.get_xdata(), front.get_ydata())}
        tests = {(round(float(m), 12), round(float(q), 12)) for m, q in want}
        assert steps and steps <= tests
        assert all(any(fm <= m and fq <= q for fm, fq in steps) for m, q in tests)
        assert not any(m <= fm and q < fq for m, q in tests for fm, fq in steps)
        drawn += 1
    plt.close(fig)
    return drawn


def test_run_setting_headlines_and_figures(tmp_path):
    x, requests = random_instance(11, 120, 200, 0.05)
    avg = (0.5 * x + 0.5 * x.mean(axis=1, keepdims=True)).astype(np.float32)
    path = tmp_path / "inst.npy"
    np.save(path, x)
    inst = np.load(path, mmap_mode="r")
    estimators = {"GPA": [0.05, 0.001], "av": [1.0], "Cantelli": [1.7, 4.4], "perc": [90, 100], "Beta": [0.05]}
    sections = {
        "5.2": {"estimators": "all", "algorithm": ["FF", "BF"]},
        "5.3": {"estimators": "all", "data": ["inst", "avg"]},
        "5.6": {"estimators": "all", "rebalance": [True, False]},
    }
    cells = pg.expand_grid(estimators, sections)
    rows = pg.instances(120, 2, 60, seed=1)
    parts = []
    for s in pg.settings(cells).iter_rows(named=True):
        part = pg.run_setting(inst, avg, rows, pl.DataFrame(pg.cells_of(cells, s), schema=pg.CELL_SCHEMA), requests)
        parts.append(part)
    results = pl.concat(parts)
    assert results.height == 2 * cells.height and results["q"].is_between(0, 1).all()
    one = results.filter((pl.col("instance") == 0) & (pl.col("estimator") == "GPA") & (pl.col("parameter") == 0.05)
                         & (pl.col("algorithm") == "BF") & pl.col("rebalance") & (pl.col("data") == "inst"))
    s = pk.observe(x[rows[0]])
    packing, ev = pk.run(x[rows[0]], ft.GPA(0.05), 1.0, stats=s)
    assert one["m_abs"].item() == ev.m_abs and one["q"].item() == ev.q
    assert one["q_machines"].item().to_list() == ev.q_machine.tolist()
    summary = pg.summarise(results)
    assert summary.height == cells.height and (summary["instances"] == 2).all()
    names = judged(pg.headline_measurements(results))["quantity"].to_list()
    assert "GPA ρ=0.001: mean q" in names and "max |m_abs FF − m_abs BF|" in names
    assert "machines Cantelli 4.4 / GPA 0.05" in names and "GPA 0.05: q(avg) / q(inst)" in names
    from colocate.figures import packing as figs

    # 5.2, 5.3 and 5.6 only: Fig 11's second pair (av 1.25, GPA 0.1) and Fig 12 have no cells, so their panels say so
    assert assert_packing_figures_show(results) == 12 - 2 - 2
    # the same results in another row order draw the same Pareto figure (ties on m are many)
    again = draw_png(figs.fig_pareto, results.sample(fraction=1.0, shuffle=True, seed=3), tmp_path / "again.png")
    assert again == draw_png(figs.fig_pareto, results, tmp_path / "pareto2.png")
    with pytest.raises(ValueError, match="one setting"):
        pg.run_setting(inst, avg, rows, cells, requests)


# ----------------------------------------------------------------------------- admission control on a stream (Unuvar §IV-F)


def test_a_mean_q_of_zero_is_compared_within_the_exact_bound_of_a_rate_never_seen():
    """No overload in any instance: the SE over instances is 0 and says nothing, so the band is the upper end of
    the exact (Clopper–Pearson) two-sided 95% interval of a zero count over the pooled m_abs · |E| pairs,
    1 − 0.025^(1/n) (janus.tsv's ±zero of n, to 2 significant digits).

    perc 99 (paper 2e-8): 4 instances × 100 machines × 1,000 realizations = 400,000 pairs, bound 9.2e-6, within.
    Cantelli 1 (paper 3e-4): 4 × 53 × 1,000 = 212,000 pairs, where the paper's rate would give 64 overloads:
    none seen is outside (its bound 1.7e-5 and the 2× band both miss 0).
    """
    rows = [{**pg.BASE, "instance": i, "estimator": est, "parameter": par, "m_abs": m_abs, "m": m_abs / 28, "q": 0.0,
             "evaluations": 1000}
            for (est, par, m_abs) in (("perc", 99.0, 100), ("Cantelli", 1.0, 53)) for i in range(4)]
    measured = {m["id"]: m for m in pg.headline_measurements(pl.DataFrame(rows))}
    assert json.loads(measured["janus.s52.q_perc99"]["values"]) == {"instances": 4, "overloaded": 0, "se": 0.0, "n": 400_000}
    r = {row["quantity"]: row for row in judged(list(measured.values())).iter_rows(named=True)}
    p99 = r["perc 99: mean q"]
    bound = 1 - 0.025 ** (1 / 400_000)
    assert f"{bound:.2g}" == "9.2e-06"
    assert p99["within"] is True and p99["tolerance"] == "±9.2e-06" and "400,000" in p99["tolerance_reason"]
    assert r["Cantelli 1: mean q"]["within"] is False
    # without the pair counts (results from before the column) the band stays the row's factor
    old = judged(pg.headline_measurements(pl.DataFrame(rows).drop("evaluations")))
    assert old.filter(pl.col("quantity") == "perc 99: mean q")["within"].item() is False


def test_headline_measurements_are_judged_by_their_claims():
    """Each §5 row names its paper item; a size-based test's mean q is compared within the issue's 2× (GPA's
    within the default band), or within 2 SE over instances when that rare-event noise is wider; §6's range
    2.5–5 gives each Cantelli b its end; 7% is shown in %; FF and BF differ by at most 1 machine, exactly."""
    cells = {("GPA", 0.05): ([0.05] * 4, 37), ("GPA", 0.001): ([0.0016] * 4, 47), ("av", 1.0): ([0.46] * 4, 28),
             ("Cantelli", 1.0): ([5.7e-4, 5.9e-4, 5.5e-4, 5.7e-4], 53), ("Cantelli", 1.7): ([2e-6] * 4, 70),
             ("Cantelli", 4.4): ([0.0] * 4, 140), ("perc", 99.0): ([0.0, 0.0, 0.0, 4e-6], 100),
             ("perc", 90.0): ([1.47e-4] * 4, 60)}
    rows = []
    for (est, par), (qs, m_abs) in cells.items():
        for i, q in enumerate(qs):
            for axes in ({}, {"algorithm": "FF"}, {"rebalance": False}, {"data": "avg"}):
                rows.append({**pg.BASE, "instance": i, "estimator": est, "parameter": par, "m_abs": m_abs,
                             "m": m_abs / 28, "q": q * (1.1 if axes.get("rebalance") is False else 2.0 if axes else 1.0), **axes})
    t = judged(pg.headline_measurements(pl.DataFrame(rows)))
    r = {row["quantity"]: row for row in t.iter_rows(named=True)}
    assert t["item"].str.len_chars().min() > 0  # every row names the paper's item
    assert t["claim"].str.starts_with("janus.").all()
    rare = r["perc 99: mean q"]  # one instance of four with any overload: 2 SE = 2 · 2e-6 / √4
    assert rare["tolerance"] == "±2e-06" and rare["within"] is True and "4 instances (1 with any overload)" in rare["tolerance_reason"]
    c1 = r["Cantelli 1: mean q"]  # 1.9× the paper's 3e-4, its noise narrower than the 2× band
    assert (c1["tolerance"], c1["within"], c1["cause"]) == ("×2", True, "") and "issue 13" in c1["tolerance_reason"]
    p90 = r["perc 90: mean q"]  # 2.1× the paper's 7e-5: outside, with the measured cause
    tails = claims.read_causes([PAPERS / "causes/janus-packing-tails.md"])["janus-packing-tails"]
    assert (p90["tolerance"], p90["within"], p90["cause"]) == ("×2", False, tails)
    assert tails.startswith("synthetic model:")
    assert r["GPA ρ=0.001: mean q"]["tolerance"] == "×1.5"  # Fig 9's q is not a size-based test's tail
    ends = (r["Cantelli 1.7: machines / lower bound m"], r["Cantelli 4.4: machines / lower bound m"])
    assert [e["paper_value"] for e in ends] == [2.5, 5.0] and all(e["item"] == "§6" for e in ends)
    rebalancing = r["rebalancing: mean relative decrease of q (GPA, av)"]
    assert (rebalancing["paper"], rebalancing["unit"], rebalancing["paper_value"]) == ("≈ 7%", "%", 7.0)
    assert rebalancing["ours"].endswith("%") and rebalancing["ours_value"] == pytest.approx(100 * 0.1 / 1.1)
    ff = r["max |m_abs FF − m_abs BF|"]
    assert (ff["tolerance"], ff["paper_value"], ff["ours_value"], ff["within"]) == ("≤", 1.0, 0.0, True)


def test_gpa_q_is_judged_against_its_target_rho_within_the_papers_largest_relative_error():
    """Fig 9: the largest relative error (q − ρ)/ρ is +60%, at ρ = 0.001, so at ρ = 0.05 q within ±0.03 of 0.05:
    0.079 agrees, 0.081 does not; ρ = 0.01 within ±0.006: 0.0041 agrees. A ρ the paper did not run (0.2) is shown
    without a paper value."""
    def rows_of(rho, q):
        return [{**pg.BASE, "instance": i, "estimator": "GPA", "parameter": rho, "m_abs": 30, "m": 1.1, "q": q}
                for i in range(2)]

    def judged_q(*cells):
        t = judged(pg.headline_measurements(pl.DataFrame([row for c in cells for row in rows_of(*c)])))
        return {row["quantity"]: row for row in t.iter_rows(named=True)}

    r = judged_q((0.05, 0.079), (0.01, 0.0041), (0.2, 0.19))
    assert (r["GPA ρ=0.05: mean q"]["tolerance"], r["GPA ρ=0.05: mean q"]["verdict"]) == ("±0.03", "within")
    assert (r["GPA ρ=0.05: mean q"]["paper"], r["GPA ρ=0.05: mean q"]["paper_value"]) == ("≈ 0.05 (ρ)", 0.05)
    assert (r["GPA ρ=0.01: mean q"]["tolerance"], r["GPA ρ=0.01: mean q"]["verdict"]) == ("±0.006", "within")
    assert r["GPA ρ=0.2: mean q"]["verdict"] == "no paper value" and r["GPA ρ=0.2: mean q"]["paper"] == ""
    assert judged_q((0.05, 0.081))["GPA ρ=0.05: mean q"]["verdict"] == "outside"


def test_arrivals_follow_littles_law_and_draws_come_from_each_task():
    rng = np.random.default_rng(5)
    lifetimes = rng.integers(24, 300, 50)
    stream = admission.arrivals(lifetimes, 20_000, 40.0, rng)
    assert (np.diff(stream.start) >= 0).all() and (stream.end - stream.start == lifetimes[stream.task]).all()
    running = np.bincount(np.repeat(stream.start, stream.end - stream.start)
                          + np.arange((stream.end - stream.start).sum())
                          - np.repeat(np.cumsum(stream.end - stream.start) - (stream.end - stream.start), stream.end - stream.start))
    steady = running[int(lifetimes.mean()) : int(stream.start[-1])]
    assert steady.mean() == pytest.approx(40.0, rel=0.05)
    x = (rng.integers(1, 9, (50, 7)) / 8).astype(np.float32)
    step, arrival, usage = admission.usage_draws(stream, x, rng)
    assert step.size == (stream.end - stream.start).sum()
    assert ((step >= stream.start[arrival]) & (step < stream.end[arrival])).all()
    rows = stream.task[arrival]
    assert all(np.isin(usage[rows == r], x[r]).all() for r in range(0, 50, 7))


def _trace_set_series() -> pl.DataFrame:
    """A (windows 0–9, usage 1, no record at window 8), B (2–5, usage 1), C (4–9, usage 2): constant usage."""
    rows = [(1, 0, w, 1.0) for w in range(10) if w != 8] + [(2, 0, w, 1.0) for w in range(2, 6)] + [(3, 0, w, 2.0) for w in range(4, 10)]
    return pl.DataFrame(rows, schema=["job_id", "task_index", "window", "usage"], orient="row")


@pytest.mark.parametrize("estimator", admission.ESTIMATORS)
def test_admission_on_the_trace_by_hand(estimator):
    """Totals 1, 1, 2, 2, 4, 4, 3, 3, 2, 3 (A has no record at window 8): the capacity is the peak 4 at 90%, so
    U without is 0.2 of the time above 0.8. Usage is constant (σ = 0): C arrives at window 4 with A and B running,
    (1 + 1 + 2) / (4 / 0.9) = 0.9 > 0.8, and is rejected whatever ε; with it out U never exceeds 0.8. The measured
    estimate sees the same: 2 in each of windows 2–3 before C, with no variance."""
    res = admission.run_trace(_trace_set_series(), 0, 9, [0.01, 0.05], peak_quantile=1.0, estimator=estimator, history=2)
    assert res.capacity == pytest.approx(4 / 0.9)
    assert res.table["p_over_without"].to_list() == pytest.approx([0.2, 0.2])
    assert res.table["p_over_with"].to_list() == [0.0, 0.0]
    assert res.table["rejection"].to_list() == pytest.approx([1 / 3, 1 / 3])
    u = res.utilisation
    assert u["step"].to_list() == list(range(10))
    assert u["without"].to_list() == pytest.approx(np.array([1, 1, 2, 2, 4, 4, 3, 3, 2, 3]) * 0.9 / 4)
    assert u["eps=0.01"].to_list() == pytest.approx(np.array([1, 1, 2, 2, 2, 2, 1, 1, 0, 1]) * 0.9 / 4)
    # the same set seen from a later origin: windows shifted, same table
    shifted = admission.run_trace(_trace_set_series().with_columns(pl.col("window") + 100), 100, 109, [0.01], peak_quantile=1.0)
    assert shifted.table.select("p_over_without", "p_over_with", "rejection").row(0) == pytest.approx((0.2, 0.0, 1 / 3))
    with pytest.raises(ValueError, match="outside windows"):
        admission.run_trace(_trace_set_series(), 1, 9, [0.01])
    with pytest.raises(ValueError, match="no records"):
        admission.run_trace(_trace_set_series().clear(), 0, 9, [0.01])


def test_measured_utilisation_is_the_running_level_and_the_measured_variance_before_the_arrival():
    """Unuvar §III, measured: σ² of the admitted usage over the ``history`` steps before the arrival plus the
    newcomer's, μ the running tasks' means plus the newcomer's. Arrival 0 uses 1, 3, 1, 3 at steps 0–3, arrival 1
    uses 2 at steps 2–5: over the 4 steps before step 4 the admitted usage is 1, 3, 3, 5 (variance 2)."""
    step = np.array([0, 1, 2, 3, 2, 3, 4, 5])
    arrival = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    usage = np.array([1.0, 3, 1, 3, 2, 2, 2, 2])
    est = admission.estimator("measured", 4, step, arrival, usage, 8)
    assert est.moments(0, 0.5, 0.1) == (0.5, 0.1)  # nothing runs, no history: the newcomer alone
    est.admitted(0, 2.0, 1.0)
    assert est.moments(1, 0.5, 0.1) == (2.5, 1.1)  # one step of history: the running tasks' own variances
    est.admitted(1, 2.0, 0.0)
    assert est.moments(4, 0.5, 0.1) == pytest.approx((4.5, 2.1))
    assert est.moments(2, 0.0, 0.0) == pytest.approx((4.0, 1.0))  # steps 0–1: 1 and 3
    est.departed(0, 2.0, 1.0)  # its mean leaves the level; its usage leaves the measurement by itself
    assert est.moments(6, 0.0, 0.0) == pytest.approx((2.0, np.var([3, 5, 2, 2])))
    independent = admission.estimator("independent", 4, step, arrival, usage, 8)
    independent.admitted(0, 2.0, 1.0)
    assert independent.moments(4, 0.5, 0.1) == (2.5, 1.1)
    with pytest.raises(ValueError, match="estimator must be one of measured, independent"):
        admission.estimator("oracle", 4, step, arrival, usage, 8)
    with pytest.raises(ValueError, match="history must be ≥ 2"):
        admission.estimator("measured", 1, step, arrival, usage, 8)


@pytest.mark.parametrize("estimator", admission.ESTIMATORS)
def test_arrivals_in_the_same_window_see_each_other(estimator):
    """Ten constant tasks of 0.3 arriving at one step on a machine of capacity 1 (U* = 0.8): each estimate counts
    the ones admitted before it at that step, so two are admitted (0.6), not all ten; five more arriving one step
    apart later find it as full."""
    start = np.r_[np.zeros(10, dtype=np.int64), np.arange(20, 25)]
    stream = admission.Arrivals(np.arange(15), start, start + 50)
    lengths = stream.end - stream.start
    arrival = np.repeat(np.arange(15), lengths)
    step = np.concatenate([np.arange(a, b) for a, b in zip(stream.start, stream.end)])
    usage = np.full(step.size, 0.3)
    ok = admission.admit(stream, np.full(15, 0.3), np.zeros(15), admission.BetaAdmissionController(0.8, 0.01, 1.0),
                         admission.estimator(estimator, 4, step, arrival, usage, 80))
    assert ok.tolist() == [True, True] + [False] * 13
    with pytest.raises(ValueError, match="finite with variances ≥ 0"):
        admission.admit(stream, np.full(15, 0.3), np.full(15, -1.0), admission.BetaAdmissionController())
    with pytest.raises(ValueError, match="finite with variances ≥ 0"):
        admission.admit(stream, np.full(15, np.nan), np.zeros(15), admission.BetaAdmissionController())


def test_measured_estimate_sees_a_shared_daily_load_that_the_independent_sum_misses():
    """Tasks whose usage follows one common cycle: the sum of their own variances counts the cycle once per task
    (independent), while the measured utilisation carries it fully correlated, so with the same arrivals the
    measured controller rejects more, and keeps U above U* less often."""
    rng = np.random.default_rng(3)
    n_tasks, steps = 400, 2000
    start = np.sort(rng.integers(0, steps - 200, n_tasks))
    end = start + rng.integers(100, 200, n_tasks)
    stream = admission.Arrivals(np.arange(n_tasks), start, end)
    lengths = end - start
    arrival = np.repeat(np.arange(n_tasks), lengths)
    step = np.concatenate([np.arange(a, b) for a, b in zip(start, end)])
    usage = 1.0 + 0.6 * np.sin(2 * np.pi * step / 288) + 0.1 * rng.standard_normal(step.size)
    count = np.bincount(arrival)
    means = np.bincount(arrival, weights=usage) / count
    variances = np.bincount(arrival, weights=(usage - means[arrival]) ** 2) / count
    total = np.bincount(step, weights=usage, minlength=steps)
    capacity = np.quantile(total, 0.998) / 0.9
    out = {}
    for name in admission.ESTIMATORS:
        ok = admission.admit(stream, means, variances, admission.BetaAdmissionController(0.8, 0.01, capacity),
                             admission.estimator(name, 288, step, arrival, usage, steps))
        u = admission.utilisation(step, arrival, usage, steps, capacity, ok)
        out[name] = (1 - ok.mean(), (u > 0.8).mean())
    assert out["measured"][0] > out["independent"][0] + 0.02
    assert out["measured"][1] < out["independent"][1]


def test_admission_source_is_the_trace_where_it_holds_the_running_tasks():
    records = pl.DataFrame({"job_id": [1, 2], "task_index": [0, 0], "records": [1000, 540]})
    assert admission.choose_source("auto", records, 0, 9, 154) == ("trace", "")  # 1,540 records over 10 windows
    source, note = admission.choose_source("auto", records, 0, 9, 155)
    assert source == "realizations" and "154.0 at a time" in note
    with pytest.raises(ValueError, match="admission source trace: .* fewer than mean_running = 155"):
        admission.choose_source("trace", records, 0, 9, 155)
    assert admission.choose_source("realizations", None, 0, -1, 154) == ("realizations", "")
    assert admission.choose_source("auto", records.clear(), 0, -1, 1)[0] == "realizations"  # no long task at all
    with pytest.raises(ValueError, match="must be one of"):
        admission.choose_source("machines", records, 0, 9, 1)


def test_admission_trace_replicates_are_seeded_sets():
    """Replicate r is run_trace on the set drawn with seed's r-th child; the table is their mean, min and max."""
    from colocate.analysis import aggregate
    from colocate.trace import TRACE_START_US, WINDOW_US

    rng = np.random.default_rng(4)
    rows = []
    for job in range(30):
        for task in range(4):
            first = int(rng.integers(0, 150))
            for w in range(first, min(200, first + int(rng.integers(20, 120)))):
                rows.append((job, task, TRACE_START_US + w * WINDOW_US, float(rng.gamma(4, 0.05))))
    series = pl.DataFrame(rows, schema=["job_id", "task_index", "start_time", "avg"], orient="row")
    parts = [series.filter(pl.col("job_id") % 3 == b).lazy() for b in range(3)]
    records, lo, hi = aggregate.task_records(parts)
    kw = {"mean_running": 12, "job_cap": 2, "peak_quantile": 1.0}
    res, each = admission.run_trace_replicates(parts, records, lo, hi, [0.005, 0.05], replicates=3, seed=9, **kw)
    children = np.random.SeedSequence(9).spawn(3)
    for i, child in enumerate(children):
        drawn, cap = aggregate.draw_trace_set(records, 12, hi - lo + 1, np.random.default_rng(child), 2)
        assert cap == 2 and drawn.group_by("job_id").len()["len"].max() <= 2
        single = admission.run_trace(aggregate.set_series(parts, drawn, "avg"), lo, hi, [0.005, 0.05], peak_quantile=1.0)
        got = each.filter(pl.col("replicate") == i)
        assert got["rejection"].to_list() == single.table["rejection"].to_list()
        assert got["tasks"].unique().to_list() == [drawn.height]
    assert res.table["replicates"].to_list() == [3, 3]
    assert res.table["rejection"].to_list() == pytest.approx(each.group_by("eps", maintain_order=True).agg(pl.col("rejection").mean())["rejection"].to_list())
    assert (res.table["rejection"][0] >= res.table["rejection"][1])  # a tighter bound rejects at least as much


@pytest.mark.slow  # two admission runs of 6,000 arrivals
def test_admission_run_reproduces_the_shape_of_table_viii():
    x, _ = random_instance(8, 60, 400, 0.02)
    lifetimes = np.random.default_rng(8).integers(24, 200, 60)
    res = admission.run(x, lifetimes, [0.005, 0.02], n_arrivals=6000, mean_running=50, seed=3)
    t = res.table
    assert t["eps"].to_list() == [0.005, 0.02]
    assert (t["p_over_with"] <= t["p_over_without"]).all()
    assert t["rejection"][0] >= t["rejection"][1] > 0  # a tighter bound rejects more
    assert set(res.utilisation.columns) == {"step", "without", "eps=0.005", "eps=0.02"}
    assert (res.utilisation["eps=0.005"] <= res.utilisation["without"] + 1e-12).all()
    again = admission.run(x, lifetimes, [0.005, 0.02], n_arrivals=6000, mean_running=50, seed=3)
    assert again.table.equals(t)
    ids = [m["id"] for m in admission.headline_measurements(t)]
    assert "unuvar.t8.rejected.eps0.005.trace.measured" in ids


def test_admission_measurements_show_the_rejected_share_in_percent():
    """Table VIII's rejection is a % in the paper and a fraction here: measured in %, with the reading's cause when off."""
    from colocate.report import claims
    from wfutil import PAPERS, judged

    causes = claims.read_causes(sorted((PAPERS / "causes").glob("*.md")))
    t = pl.DataFrame({"eps": [0.005, 0.02], "p_over_with": [0.011, 0.03], "p_over_without": [0.044, 0.044],
                      "rejection": [0.1, 0.01]})
    rows = {r["quantity"]: r for r in judged(admission.headline_measurements(t)).iter_rows(named=True)}
    close, far = rows["ε=0.005: rejected share"], rows["ε=0.02: rejected share"]
    assert (close["paper"], close["ours"], close["unit"]) == ("10.83%", "10%", "%")
    assert (close["paper_value"], close["ours_value"], close["within"], close["cause"]) == (10.83, 10.0, True, "")
    assert far["ours"] == "1%" and far["within"] is False and far["cause"] == causes["unuvar.t8.rejected.trace.measured"]
    for source in ("trace", "realizations"):  # each reading of Table VIII carries its own measured cause
        for estimator in admission.ESTIMATORS:
            rows_of = judged(admission.headline_measurements(t, source=source, estimator=estimator))
            cause = rows_of.filter(pl.col("quantity") == "ε=0.02: rejected share")["cause"].item()
            assert cause == causes[f"unuvar.t8.rejected.{source}.{estimator}"]
            assert estimator in rows_of["note"][0]
    p = rows["ε=0.005: P(U > 0.8) with the controller"]
    assert (p["item"], p["unit"], p["ours_value"], p["within"]) == ("Table VIII", "", 0.011, True)
    assert p["note"] == "Table VIII (sets of the trace, measured μ and σ)"
    assert {r["item"] for r in rows.values()} == {"Table VIII"}
    # the uncontrolled run is one quantity, not one per ε: one row, and a table whose ε disagree on it is refused
    assert [q for q in rows if "without" in q] == ["P(U > 0.8) without the controller (every ε)"]
    assert rows["P(U > 0.8) without the controller (every ε)"]["paper_value"] == 0.044
    with pytest.raises(ValueError, match="differs between the ε"):
        admission.headline_measurements(t.with_columns(p_over_without=pl.Series([0.044, 0.05])))
    with pytest.raises(ValueError, match="admission source"):
        admission.headline_measurements(t, source="racks")


def test_admission_measurements_name_the_claim_of_their_reading_and_epsilon():
    """ε = 0.01 on the trace's sets with the measured estimator answers that reading's claim; an ε Table VIII does
    not print (0.03) the ε-free claim, shown without a paper value; the rejected share is measured in % with its
    replicates' range in % too (0.02–0.12 → 2–12)."""
    from wfutil import judged

    t = pl.DataFrame({"eps": [0.01, 0.03], "p_over_with": [0.01, 0.02], "p_over_with_min": [0.008, 0.01],
                      "p_over_with_max": [0.012, 0.03], "p_over_without": [0.03, 0.03], "p_over_without_min": [0.02, 0.02],
                      "p_over_without_max": [0.04, 0.04], "rejection": [0.05, 0.01], "rejection_min": [0.02, 0.0],
                      "rejection_max": [0.12, 0.02], "replicates": [7, 7]})
    m = admission.headline_measurements(t, source="trace", estimator="independent")
    assert [r["id"] for r in m] == ["unuvar.t8.without.trace", "unuvar.t8.with.eps0.01.trace.independent",
                                    "unuvar.t8.rejected.eps0.01.trace.independent", "unuvar.t8.with", "unuvar.t8.rejected"]
    assert m[2]["value"] == 5.0 and '"max": 12.0' in m[2]["values"] and '"min": 2.0' in m[2]["values"]
    rows = judged(m)
    assert rows["quantity"].to_list()[-2:] == ["ε=0.03: P(U > 0.8) with the controller", "ε=0.03: rejected share"]
    assert rows["verdict"].to_list()[-2:] == ["no paper value", "no paper value"]
    assert rows["note"][1] == "Table VIII (sets of the trace, independent μ and σ)"


@pytest.mark.slow  # six admission runs of 3,000 arrivals
def test_admission_replicates_are_independent_streams_summarised_by_mean_and_range():
    """Replicate r is the stream of ``seed``'s r-th child (nested: more replicates keep the first ones); Table VIII is
    their mean with min and max, and the utilisation is replicate 0's."""
    x, _ = random_instance(8, 60, 400, 0.02)
    lifetimes = np.random.default_rng(8).integers(24, 200, 60)
    kw = {"n_arrivals": 3000, "mean_running": 40}
    res, each = admission.run_replicates(x, lifetimes, [0.005, 0.02], replicates=3, seed=11, **kw)
    children = np.random.SeedSequence(11).spawn(3)
    singles = [admission.run(x, lifetimes, [0.005, 0.02], seed=c, **kw).table for c in children]
    assert each.drop("replicate").equals(pl.concat(singles)) and each["replicate"].to_list() == [0, 0, 1, 1, 2, 2]
    for m in admission.MEASURES:
        values = np.array([t[m].to_numpy() for t in singles])
        assert np.allclose(res.table[m], values.mean(axis=0)) and np.allclose(res.table[f"{m}_min"], values.min(axis=0))
        assert np.allclose(res.table[f"{m}_max"], values.max(axis=0))
    assert res.table["replicates"].to_list() == [3, 3]
    first = admission.run(x, lifetimes, [0.005, 0.02], seed=children[0], **kw)
    assert res.utilisation.equals(first.utilisation) and res.capacity == first.capacity
    two, _ = admission.run_replicates(x, lifetimes, [0.005, 0.02], replicates=2, seed=11, **kw)
    assert two.utilisation.equals(res.utilisation)
    with pytest.raises(ValueError, match="replicates must be ≥ 1"):
        admission.run_replicates(x, lifetimes, [0.01], replicates=0, **kw)


def test_admission_measurements_compare_the_paper_run_with_the_replicates_range():
    """Where the replicates vary by more than ×1.5, the paper's one stream agrees iff it lies in their range
    (the rejected share compared in %) or within issue 13's 2×; otherwise the 2× band applies to their mean."""
    from colocate.report import claims
    from wfutil import PAPERS, judged

    causes = claims.read_causes(sorted((PAPERS / "causes").glob("*.md")))
    t = pl.DataFrame({"eps": [0.005], "p_over_with": [0.001], "p_over_with_min": [0.0008], "p_over_with_max": [0.0012],
                      "p_over_without": [0.02], "p_over_without_min": [0.01], "p_over_without_max": [0.05],
                      "rejection": [0.05], "rejection_min": [0.02], "rejection_max": [0.12], "replicates": [7]})
    rows = {r["quantity"]: r for r in judged(admission.headline_measurements(t)).iter_rows(named=True)}
    without = rows["P(U > 0.8) without the controller (every ε)"]  # 0.044 inside 0.01–0.05
    assert without["within"] is True and "7 replicates" in without["tolerance_reason"]
    rejected = rows["ε=0.005: rejected share"]  # 10.83% inside 2–12%: the band from 5% reaches 12% (±7)
    assert rejected["within"] is True and rejected["tolerance"] == "±7" and rejected["unit"] == "%"
    narrow = rows["ε=0.005: P(U > 0.8) with the controller"]  # replicates within ×1.5 of their mean: issue 13's 2×
    assert narrow["tolerance"] == "×2" and "issue 13" in narrow["tolerance_reason"] and narrow["within"] is False
    assert narrow["cause"] == causes["unuvar.t8.with.trace.measured"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"lifetimes": np.full(5, 30)}, "5 lifetimes for 60 tasks"),
        ({"peak_quantile": 1.5}, "peak_quantile"),
        ({"n_arrivals": 3}, "warm-up"),
        ({"lifetimes": np.zeros(60, dtype=int)}, "lifetime ≥ 1"),
    ],
)
def test_admission_run_bad_input(kwargs, match):
    x, _ = random_instance(8, 60, 40, 0.02)
    args = {"lifetimes": np.full(60, 30), **kwargs}
    with pytest.raises(ValueError, match=match):
        admission.run(x, args.pop("lifetimes"), [0.01], **{"n_arrivals": 500, "mean_running": 20, **args})


def test_admission_run_rejects_nan_realizations():
    x, _ = random_instance(8, 60, 40, 0.02)
    x[:, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        admission.run(x, np.full(60, 30), [0.01], n_arrivals=500, mean_running=20)
