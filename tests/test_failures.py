"""Machine failures (colocate.failures: Beaumont et al. §6).

Constructed machine_events with hand-computed answers, brute-force references and
hypothesis properties for the counting and the outstanding-event detector, the dispersion
tests' size on pure Poisson counts and power on over-dispersed ones, and parameter recovery
on the synthetic trace (colocate.synth), whose injected failures, maintenance bursts and
outstanding events are known.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from colocate import failures as F, synth
from colocate.trace import TRACE_START_US, WINDOW_US, MachineEventType, TraceFormatError

ADD, REMOVE, UPDATE = int(MachineEventType.ADD), int(MachineEventType.REMOVE), int(MachineEventType.UPDATE)
S = 1_000_000


def events(rows: list[tuple[float, int, int]]) -> pl.DataFrame:
    """machine_events from (time in seconds, machine, event type) rows, in file order."""
    return pl.DataFrame(
        {
            "time": [int(round(t * S)) for t, _, _ in rows],
            "machine_id": [m for _, m, _ in rows],
            "event_type": [e for _, _, e in rows],
        },
        schema={"time": pl.Int64, "machine_id": pl.Int64, "event_type": pl.Int64},
    )


def win(i: int, offset_s: float = 0.0) -> float:
    """A time (seconds) ``offset_s`` into window ``i``."""
    return (TRACE_START_US + i * WINDOW_US) / S + offset_s


def analyse(ev: pl.DataFrame, n_windows: int, criterion=F.OutstandingCriterion(), maintenance=10):
    rem, eps = F.detect_outstanding(F.removals(ev, n_windows), criterion)
    return rem, eps, F.window_counts(rem, n_windows, maintenance)


# ============================================================================ removals and durations


def test_removals_windows_durations_and_censoring_by_hand():
    ev = events(
        [(0, 1, ADD), (0, 2, ADD), (0, 3, ADD),
         (600, 1, REMOVE), (700, 1, ADD),                 # window 0, back after 100 s
         (899.999999, 2, REMOVE),                         # window 0 (its last µs), never back: censored
         (900, 1, REMOVE), (900 + 17 * 60, 1, ADD),       # window 1, back after exactly 17 min
         (1000, 3, UPDATE),                               # ignored
         (600 + 300 * 10, 3, REMOVE)]                     # at the end of 10 windows: outside
    )
    rem = F.removals(ev, n_windows=10)
    assert rem["machine_id"].to_list() == [1, 2, 1, 3]
    assert rem["window"].to_list() == [0, 0, 1, None]
    assert rem["duration_s"].to_list() == [100.0, math.inf, 1020.0, math.inf]
    assert rem["censored"].to_list() == [False, True, False, True]
    # 17 min inclusive: 2 of the 4 removals are back (censored ones count as not back)
    assert F.back_within(rem["duration_s"].to_numpy(), 17) == 0.5
    facts = F.event_counts(ev, 10).row(0, named=True)
    assert facts == {"machines": 3, "adds": 5, "removes": 4, "updates": 1, "removes_outside_windows": 1, "windows": 10}


def test_readd_is_the_next_add_in_time_then_file_order():
    ev = events([(0, 7, ADD), (1000, 7, ADD), (1000, 7, REMOVE), (1500, 7, ADD), (2000, 7, REMOVE), (2000, 7, ADD)])
    rem = F.removals(ev, 100)
    # an ADD at the removal's own µs counts only when the file lists it after the REMOVE
    assert rem["duration_s"].to_list() == [500.0, 0.0]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(600, 5000), st.integers(1, 4), st.sampled_from([ADD, REMOVE, UPDATE])), max_size=40))
def test_durations_match_a_brute_force_scan(rows):
    """Rows come in any order; the reference orders them by time, ties in file order, and scans forward."""
    rows = [(0, m, ADD) for m in range(1, 5)] + rows
    ev = events([(float(t), m, e) for t, m, e in rows])
    rem = F.removals(ev, 20)
    seq = sorted(range(len(rows)), key=lambda i: (rows[i][0], i))
    want = []
    for pos, i in enumerate(seq):
        t, m, e = rows[i]
        if e != REMOVE:
            continue
        later = [rows[j][0] for j in seq[pos + 1:] if rows[j][1] == m and rows[j][2] == ADD]
        want.append((t, m, float(later[0] - t) if later else math.inf, (t * S - TRACE_START_US) // WINDOW_US))
    got = [(r["time"] // S, r["machine_id"], r["duration_s"], r["window"]) for r in rem.iter_rows(named=True)]
    assert sorted(got) == sorted(want)


def test_check_events_names_file_and_line():
    F.check_events(events([(0, 1, ADD), (700, 1, REMOVE)]), "me.csv.gz")
    with pytest.raises(TraceFormatError, match=r"me\.csv\.gz:3: event type 5"):
        F.check_events(events([(0, 1, ADD), (700, 1, REMOVE), (800, 1, 5)]), "me.csv.gz")
    with pytest.raises(TraceFormatError, match=r"me\.csv\.gz:2: negative time"):
        F.check_events(events([(0, 1, ADD), (-1, 1, REMOVE)]), "me.csv.gz")


# ============================================================================ outstanding events


def constructed_trace() -> tuple[pl.DataFrame, dict]:
    """A 200-window trace of 400 machines with every §6 pattern, at hand-chosen times.

    - a mass removal: machines 1..100 removed one every 30 s from window 20, each back after 3 s;
    - a flapping event: machines 201..210 removed 6 times each within window 80 (down 10 s, up 20 s);
    - a maintenance burst: 30 removals in window 150, all back within 20 s (quick!) — below 50;
    - 12 ordinary removals in window 160 (back after 30 min), and one quick removal an hour apart, twice.
    """
    rows = [(0, m, ADD) for m in range(1, 401)]
    for j, m in enumerate(range(1, 101)):
        t = win(20) + 30 * j
        rows += [(t, m, REMOVE), (t + 3, m, ADD)]
    for m in range(201, 211):
        for c in range(6):
            t = win(80) + 30 * c + 0.1 * (m - 200)
            rows += [(t, m, REMOVE), (t + 10, m, ADD)]
    for j, m in enumerate(range(301, 331)):
        rows += [(win(150, 5 * j), m, REMOVE), (win(150, 5 * j + 20), m, ADD)]
    for j, m in enumerate(range(331, 343)):
        rows += [(win(160, 10 * j), m, REMOVE), (win(160, 10 * j + 1800), m, ADD)]
    rows += [(win(190), 350, REMOVE), (win(190, 5), 350, ADD), (win(190, 3600), 351, REMOVE), (win(190, 3605), 351, ADD)]
    rows.sort(key=lambda r: r[0])
    return events(rows), {"mass": set(range(1, 101)), "flapping": set(range(201, 211))}


def test_detector_finds_the_mass_and_flapping_events_and_spares_maintenance():
    ev, truth = constructed_trace()
    rem, eps, counts = analyse(ev, 200)
    out = eps.filter(pl.col("outstanding"))
    assert sorted(out["kind"].to_list()) == ["flapping", "mass"]
    mass = out.filter(pl.col("kind") == "mass").row(0, named=True)
    assert (mass["removals"], mass["machines"], mass["first_window"], mass["last_window"]) == (100, 100, 20, 29)
    flap = out.filter(pl.col("kind") == "flapping").row(0, named=True)
    assert (flap["removals"], flap["machines"], flap["removals_per_machine"]) == (60, 10, 6.0)
    flagged = set(rem.filter(pl.col("outstanding"))["machine_id"].to_list())
    assert flagged == truth["mass"] | truth["flapping"]
    # the quick maintenance burst is an episode of 30 < 50: kept, and flagged as maintenance instead
    assert eps.filter(~pl.col("outstanding"))["removals"].max() == 30
    assert counts.filter(pl.col("maintenance"))["window"].to_list() == [150, 160]
    # windows 20..29 held 10, 10, ... mass removals (one every 30 s): all counted, none remaining
    w = counts.filter(pl.col("window").is_between(20, 29))
    assert w["removals"].to_list() == [10] * 10 and w["remaining"].sum() == 0


def test_episode_gap_is_inclusive():
    rows = [(0, m, ADD) for m in range(60)]
    for m in range(60):
        t = win(10) + 300 * m  # exactly episode_gap_s apart
        rows += [(t, m, REMOVE), (t + 1, m, ADD)]
    ev = events(sorted(rows))
    _, eps, _ = analyse(ev, 100)
    assert eps["removals"].to_list() == [60] and eps["outstanding"].all()
    _, eps, _ = analyse(ev, 100, F.OutstandingCriterion(episode_gap_s=299.999))
    assert eps.height == 60 and not eps["outstanding"].any()


@pytest.mark.parametrize("bad", [{"quick_readd_s": 0}, {"episode_gap_s": -1}, {"min_removals": 1}, {"flapping_min_cycles": 0}])
def test_criterion_rejects_bad_values(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        F.OutstandingCriterion(**bad)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20_000), st.sampled_from([1, 5, 30, 60, 100, 10_000])), min_size=1, max_size=80),
    st.integers(2, 10),
    st.sampled_from([60.0, 300.0, 1000.0]),
)
def test_episodes_match_a_brute_force_chaining(removal_rows, min_removals, gap):
    """Every quick removal is in exactly one episode; episodes are maximal chains with gaps ≤ gap."""
    rows = []
    for m, (t, dur) in enumerate(removal_rows):
        rows += [(0, m, ADD), (600 + t, m, REMOVE), (600 + t + dur, m, ADD)]
    crit = F.OutstandingCriterion(quick_readd_s=60, episode_gap_s=gap, min_removals=min_removals)
    rem, eps = F.detect_outstanding(F.removals(events(sorted(rows)), 200), crit)
    quick_times = sorted(600 + t for t, dur in removal_rows if dur <= 60)
    chains: list[list[int]] = []
    for t in quick_times:
        if chains and t - chains[-1][-1] <= gap:
            chains[-1].append(t)
        else:
            chains.append([t])
    assert sorted(eps["removals"].to_list()) == sorted(len(c) for c in chains)
    assert int(rem["outstanding"].sum()) == sum(len(c) for c in chains if len(c) >= min_removals)
    assert rem.filter(~pl.col("quick"))["episode"].null_count() == rem.filter(~pl.col("quick")).height


# ============================================================================ counts per window


def test_window_counts_histogram_and_sets_by_hand():
    rem = pl.DataFrame(
        {"window": [0, 0, 2, 2, 2, 3, None] + [4] * 12 + [5] * 11,
         "outstanding": [False, False, True, True, False, False, False] + [False] * 12 + [True] * 11}
    )
    counts = F.window_counts(rem, 7, maintenance_min_removals=10)
    assert counts["removals"].to_list() == [2, 0, 3, 1, 12, 11, 0]
    assert counts["outstanding"].to_list() == [0, 0, 2, 0, 0, 11, 0]
    assert counts["remaining"].to_list() == [2, 0, 1, 1, 12, 0, 0]
    assert counts["maintenance"].to_list() == [False, False, False, False, True, False, False]
    assert counts["start_s"].to_list() == [600 + 300 * i for i in range(7)]
    sets = F.count_sets(counts)
    assert sets["without_maintenance"].tolist() == [2, 0, 1, 1, 0, 0]
    h = F.histogram(sets)
    assert h.rows() == [
        (0, 2, 3, 3),
        (1, 1, 2, 2),
        (2, 1, 1, 1),
        (3, 1, 0, 0),
        (11, 1, 0, 0),
        (12, 1, 1, 0),
    ]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 29), st.booleans()), max_size=200), st.integers(1, 8))
def test_window_counts_add_up(rows, threshold):
    rem = pl.DataFrame({"window": [w for w, _ in rows], "outstanding": [o for _, o in rows]},
                       schema={"window": pl.Int64, "outstanding": pl.Boolean})
    c = F.window_counts(rem, 30, threshold)
    assert c["removals"].sum() == len(rows)
    assert (c["removals"] == c["outstanding"] + c["remaining"]).all()
    assert (c["maintenance"] == (c["remaining"] >= threshold)).all()
    for w in range(30):
        assert c["remaining"][w] == sum(1 for w2, o in rows if w2 == w and not o)
    h = F.histogram(F.count_sets(c))
    assert h["windows_all"].sum() == h["windows_without_outstanding"].sum() == 30
    assert h["windows_without_maintenance"].sum() == 30 - int(c["maintenance"].sum())


def test_poisson_table_by_hand():
    t = F.poisson_table(np.array([0, 0, 1, 3]))  # mean 1
    assert t["k"].to_list() == [0, 1, 2, 3]
    assert t["windows"].to_list() == [2, 1, 0, 1]
    e = math.exp(-1)
    assert np.allclose(t["expected"].to_numpy(), [4 * e, 4 * e, 4 * e / 2, 4 * e / 6])


# ============================================================================ rates and the Poisson comparison


def test_failure_rate_matches_the_papers_arithmetic():
    # 0.96 removals per window over 12,000 machines: 0.8e-4 per window, 12 windows per hour, MTBF 1041.7 h
    r = F.failure_rate(0.96, 12_000)
    assert r["rate_per_window"] == pytest.approx(0.8e-4)
    assert r["rate_per_hour"] == pytest.approx(9.6e-4)
    assert r["mtbf_hours"] == pytest.approx(1 / 9.6e-4)


def test_set_statistics_by_hand():
    s = F.set_statistics({"x": np.array([0, 2, 4])}, 1000, maintenance_min_removals=3, tail_more_than=1).row(0, named=True)
    assert (s["windows"], s["removals"], s["mean"], s["variance"], s["dispersion_index"]) == (3, 6, 2.0, 4.0, 2.0)
    assert (s["windows_maintenance"], s["windows_tail"]) == (1, 2)
    # P(X >= 3) and P(X > 1) under Poisson(2)
    p_ge3 = 1 - math.exp(-2) * (1 + 2 + 2)
    p_gt1 = 1 - math.exp(-2) * (1 + 2)
    assert s["expected_maintenance"] == pytest.approx(3 * p_ge3)
    assert s["expected_tail"] == pytest.approx(3 * p_gt1)
    assert s["rate_per_window"] == pytest.approx(0.002) and s["mtbf_hours"] == pytest.approx(1 / 0.024)


def test_paper_table_expects_fewer_than_2e3_windows_of_10_or_more():
    """The paper's own table (Beaumont §6): 38 windows with ≥ 10 removals, < 2e-3 expected, mean 1.005 then 0.94."""
    k = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 23, 25, 30]
    n = [3674, 2679, 1276, 410, 150, 66, 32, 14, 9, 4, 5, 5, 2, 3, 7, 1, 2, 3, 4, 1, 1, 3, 1]
    x = np.repeat(k, n)
    s = {r["set"]: r for r in F.set_statistics({"after": x, "kept": x[x < 10]}, 12_583, 10, 5).iter_rows(named=True)}
    assert s["after"]["windows_maintenance"] == 38 and s["after"]["expected_maintenance"] < 2e-3
    assert round(s["after"]["mean"], 3) == 1.005
    assert s["kept"]["windows"] == 8314 and round(s["kept"]["mean"], 2) == 0.94
    assert s["kept"]["windows_tail"] > 10 * s["kept"]["expected_tail"]  # "far more present than Poisson"
    d = F.dispersion_table({"kept": x[x < 10]}, alpha=0.05)
    assert d["reject"].all()  # the paper's "some correlation exists"


def test_index_of_dispersion_by_hand():
    # x = 0, 2, 4: D = (4 + 0 + 4) / 2 = 4 on 2 df; χ²₂ has sf(x) = exp(-x/2): two-sided p = 2·exp(-2)
    d, p = F.IndexOfDispersion().test(np.array([0, 2, 4]))
    assert d == pytest.approx(4.0) and p == pytest.approx(2 * math.exp(-2))
    assert all(math.isnan(v) for v in F.IndexOfDispersion().test(np.zeros(5)))


@pytest.mark.parametrize("test", F.DISPERSION_TESTS, ids=lambda t: t.name)
def test_dispersion_tests_reject_pure_poisson_at_the_nominal_rate(test):
    """400 seeded samples of the paper's remaining windows (8314 windows of Poisson(0.94)).

    Under H0 the number of rejections at α is Binomial(400, α); we accept anything in its
    central 99.9% interval (for α = 0.05: 7..35), so a correct test fails this 1 time in 1000,
    while a test with a real size of 0.1 or 0.01 lands outside it.
    """
    alpha, reps = 0.05, 400
    rng = np.random.default_rng(20150101)
    rejected = sum(test.test(rng.poisson(0.94, 8314))[1] < alpha for _ in range(reps))
    lo, hi = stats.binom.interval(0.999, reps, alpha)
    assert lo <= rejected <= hi, (rejected, lo, hi)


@pytest.mark.parametrize("test", F.DISPERSION_TESTS, ids=lambda t: t.name)
def test_dispersion_tests_detect_overdispersion(test):
    """Negative-binomial counts with mean 0.94 and variance 1.2 × mean over 8314 windows.

    The index is then ≈ 1.2, i.e. D − (n − 1) ≈ 0.2·n ≈ 1660 against a null sd of √(2n) ≈ 129:
    every one of 50 samples is rejected (power ≈ 1).
    """
    mean, var = 0.94, 1.2 * 0.94
    p = mean / var
    r = mean * p / (1 - p)
    rng = np.random.default_rng(7)
    assert all(test.test(rng.negative_binomial(r, p, 8314))[1] < 0.05 for _ in range(50))


def test_dispersion_table_shape():
    d = F.dispersion_table({"a": np.array([1, 2, 1, 0]), "b": np.zeros(3)}, alpha=0.05)
    assert d.height == 2 * len(F.DISPERSION_TESTS)
    assert d.filter(pl.col("set") == "b")["pvalue"].is_nan().all() and not d.filter(pl.col("set") == "b")["reject"].any()


def test_duration_table_by_hand():
    rem = pl.DataFrame({"duration_s": [30.0, 600.0, 1020.0, 4000.0, math.inf, 2.0],
                        "outstanding": [False, False, False, False, False, True]})
    t = F.duration_table(rem, [1, 17])
    assert t["minutes"].to_list() == ["1", "17", "never"]
    assert t["back_ordinary"].to_list() == [pytest.approx(1 / 5), pytest.approx(3 / 5), pytest.approx(1 / 5)]
    assert t["back_all"].to_list() == [pytest.approx(2 / 6), pytest.approx(4 / 6), pytest.approx(1 / 6)]


# ============================================================================ parameter recovery on the synthetic trace


def synthetic(seed: int, **over):
    """A 29-day synthetic machine_events of 12,583 machines and what synth injected into it.

    ``machine_events`` draws the maintenance bursts, mass and flapping events first, in that
    order, from the generator it is given: replaying those draws on a copy of the generator
    gives exactly the injected removals.
    """
    p = synth.SynthParams.from_dict(over)
    rng = np.random.default_rng(seed)
    machines = synth.sample_machines(p, rng)
    twin = copy.deepcopy(rng)
    ev = synth.machine_events(p, machines, rng)
    n, ids = machines.height, machines["machine_id"].to_numpy()
    maint_m, maint_t, _ = synth._maintenance_removals(p, n, twin)
    mass_m, mass_t, _ = synth._mass_removals(p, n, twin)
    flap_m, flap_t, _ = synth._flapping_removals(p, n, twin)
    truth = {
        "params": p,
        "maintenance_windows": np.unique((maint_t - TRACE_START_US) // WINDOW_US),
        "outstanding": set(zip(ids[np.concatenate([mass_m, flap_m])].tolist(), np.concatenate([mass_t, flap_t]).tolist())),
    }
    return ev, truth


@pytest.fixture(scope="module")
def default_trace():
    ev, truth = synthetic(20110501)
    p = truth["params"]
    rem, eps, counts = analyse(ev, p.windows)
    return ev, truth, rem, eps, counts


def test_recovers_the_poisson_failure_rate_and_mtbf(default_trace):
    """synth draws Poisson(0.8e-4 × 12,583 × 8352 ≈ 8407) independent removals: their relative sd is
    1/√8407 ≈ 1.1%. The few maintenance bursts of 10 that stay below the threshold (9 removals when no
    background one joins them) add ≲ 0.3%. A 5% tolerance is > 4 sd."""
    ev, truth, rem, eps, counts = default_trace
    p = truth["params"]
    s = F.set_statistics(F.count_sets(counts), F.machine_count(ev), 10, 5)
    kept = s.filter(pl.col("set") == "without_maintenance").row(0, named=True)
    assert kept["machines"] == p.machines
    assert kept["rate_per_window"] == pytest.approx(p.machine_failure_rate, rel=0.05)
    assert kept["mtbf_hours"] == pytest.approx(1 / (12 * p.machine_failure_rate), rel=0.05)


def test_detects_exactly_the_injected_outstanding_events(default_trace):
    ev, truth, rem, eps, counts = default_trace
    out = eps.filter(pl.col("outstanding"))
    assert sorted(out["kind"].to_list()) == ["flapping", "mass", "mass"]
    found = set(rem.filter(pl.col("outstanding")).select("machine_id", "time").iter_rows())
    present = set(rem.select("machine_id", "time").iter_rows())
    injected = truth["outstanding"] & present  # synth drops removals of machines that are already down
    assert len(injected) > 0.97 * len(truth["outstanding"])
    assert injected <= found
    # background removals re-added within a minute (≈ 8% of ≈ 1 per window) may join an episode's chain
    # during its few windows; a handful at most
    assert len(found - injected) <= 5
    # nothing close to the threshold: the largest other episode is far below 50 removals
    assert eps.filter(~pl.col("outstanding"))["removals"].max() < 15


def test_recovers_the_injected_maintenance_windows(default_trace):
    """Flagged windows are the injected bursts. The background (negative binomial, mean 0.94,
    variance/mean 1.41) alone reaches 10 in 0.47 of 8352 windows on average: at most 3 such windows
    (P ≈ 0.002). A burst has at least 10 removals, so none is missed; allow 80% recall for bursts
    that fall on a window shared with an outstanding event."""
    ev, truth, rem, eps, counts = default_trace
    flagged = set(counts.filter(pl.col("maintenance"))["window"].to_list())
    injected = set(truth["maintenance_windows"].tolist())
    assert len(flagged - injected) <= 3
    assert len(flagged & injected) >= 0.8 * len(injected)
    # no maintenance window is an outstanding event's
    assert not (flagged & set(counts.filter(pl.col("outstanding") > 0)["window"].to_list()) - injected)


def test_recovers_the_fig7_removal_durations(default_trace):
    """Ordinary removals follow synth's Fig-7 quantile table (log-linear in minutes). About 8,900
    removals: a binomial share has sd ≤ 0.5%; censoring at the trace end shifts it by < 0.1%. ±2%."""
    ev, truth, rem, eps, counts = default_trace
    table = truth["params"].removal_duration_quantiles
    q, minutes = np.array([r[0] for r in table]), np.log(np.array([r[1] for r in table]))
    marks = [1, 5, 17, 60, 360, 1440]
    want = np.interp(np.log(marks), minutes, q)
    got = F.duration_table(rem, marks)["back_ordinary"].to_numpy()[: len(marks)]
    assert np.allclose(got, want, atol=0.02), (got, want)
    assert F.back_within(rem.filter(~pl.col("outstanding"))["duration_s"].to_numpy(), 17) == pytest.approx(0.6, abs=0.02)


def test_dispersion_tests_reject_the_synthetic_counts(default_trace):
    ev, truth, rem, eps, counts = default_trace
    d = F.dispersion_table(F.count_sets(counts), alpha=0.05)
    assert d.filter(pl.col("set").is_in(["all", "without_outstanding"]))["reject"].all()


@pytest.mark.parametrize(("mass", "flapping"), [(0, 0), (4, 2)])
def test_detector_counts_follow_the_injected_events(mass, flapping):
    ev, truth = synthetic(99, mass_removal_events=mass, flapping_events=flapping)
    rem, eps, _ = analyse(ev, truth["params"].windows)
    out = eps.filter(pl.col("outstanding"))
    assert out.filter(pl.col("kind") == "mass").height == mass
    assert out.filter(pl.col("kind") == "flapping").height == flapping
    found = set(rem.filter(pl.col("outstanding")).select("machine_id", "time").iter_rows())
    assert truth["outstanding"] & set(rem.select("machine_id", "time").iter_rows()) <= found
