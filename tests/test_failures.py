"""Machine failures (colocate.analysis.failures: Beaumont et al. §6).

Constructed machine_events with hand-computed answers, brute-force references and
hypothesis properties for the counting and the outstanding-event detector, the dispersion
tests' size on pure Poisson counts and power on over-dispersed ones, and parameter recovery
on the synthetic trace (colocate.trace.synth), whose injected failures, maintenance bursts and
outstanding events are known.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from colocate.analysis import failures as F
from wfutil import judged
from colocate.trace import synth
from colocate.trace.synth import machines as synth_machines
from colocate.trace import TRACE_START_US, WINDOW_US, MachineEventType, TraceFormatError, read_table

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

    - a mass removal: machines 1..60 removed one every 30 s from window 20 (30 minutes: windows 20..25),
      all re-added from window 40 on, one a second (60 re-adds within 59 s);
    - a flapping event: machines 201..216 removed 6 times each from window 80, down 10 min and up 5 min
      per cycle, the last re-adds 2 s apart (16 within 30 s); machine 201 also failed a day before (ordinary);
    - a maintenance burst: machines 301..330 removed in window 150, each back 20 s after its removal, the
      removals 5 s apart: a chain of 30 re-adds 5 s apart, of which at most 13 lie within 60 s;
    - 12 ordinary removals in window 160, 10 s apart, back after 30 min: at most 7 re-adds within 60 s.
    """
    rows = [(0, m, ADD) for m in range(1, 401)]
    for j, m in enumerate(range(1, 61)):
        rows += [(win(20, 30 * j), m, REMOVE), (win(40, j), m, ADD)]
    rows += [(win(80, -86_400), 201, REMOVE), (win(80, -86_400 + 600), 201, ADD)]
    for i, m in enumerate(range(201, 217)):
        for c in range(6):
            t = win(80) + 900 * c + 2 * i
            rows += [(t, m, REMOVE), (t + 600, m, ADD)]
    for j, m in enumerate(range(301, 331)):
        rows += [(win(150, 5 * j), m, REMOVE), (win(150, 5 * j + 20), m, ADD)]
    for j, m in enumerate(range(331, 343)):
        rows += [(win(160, 10 * j), m, REMOVE), (win(160, 10 * j + 1800), m, ADD)]
    rows.sort(key=lambda r: r[0])
    return events(rows), {"mass": set(range(1, 61)), "flapping": set(range(201, 217))}


def test_detector_finds_the_mass_and_flapping_events_and_spares_maintenance():
    ev, truth = constructed_trace()
    rem, eps, counts = analyse(ev, 200)
    out = eps.filter(pl.col("outstanding"))
    assert out["kind"].to_list() == ["mass", "flapping"]  # by peak, largest first
    mass = out.row(0, named=True)
    assert (mass["removals"], mass["machines"], mass["first_window"], mass["last_window"]) == (60, 60, 20, 25)
    assert (mass["peak_readds"], mass["readd_groups"]) == (60, 1)
    assert mass["start_time"] == win(20) * S and mass["last_readd_time"] == win(40, 59) * S
    flap = out.row(1, named=True)
    # 6 cycles of 16 machines; machine 201's failure a day before is not part of it (up for 23.8 h)
    assert (flap["removals"], flap["machines"], flap["removals_per_machine"], flap["peak_readds"]) == (96, 16, 6.0, 16)
    # the last removals at 5 × 900 s + 2 s × 0..15 after window 80 starts: window 95
    assert (flap["first_window"], flap["last_window"]) == (80, 95)
    flagged = set(rem.filter(pl.col("outstanding"))["machine_id"].to_list())
    assert flagged == truth["mass"] | truth["flapping"]
    assert rem.filter(pl.col("outstanding")).height == 156
    # the quick maintenance burst peaks at 13 < 15 re-adds a minute: kept, and flagged as maintenance instead
    others = eps.filter(~pl.col("outstanding"))
    assert others.select("removals", "peak_readds").rows()[:2] == [(30, 13), (12, 7)]
    assert counts.filter(pl.col("maintenance"))["window"].to_list() == [150, 160]
    # windows 20..25 held 10 mass removals each (one every 30 s): all counted, none remaining
    w = counts.filter(pl.col("window").is_between(20, 25))
    assert w["removals"].to_list() == [10] * 6 and w["remaining"].sum() == 0


def test_measurements_judged_compare_rates_and_leave_the_trace_counts_out():
    ev, _ = constructed_trace()
    rem, eps, counts = analyse(ev, 200)
    sets = F.count_sets(counts)
    stats_ = F.set_statistics(sets, 400, maintenance_min_removals=10, tail_more_than=5)
    rows = F.measurements(stats_, F.dispersion_table(sets, alpha=0.05), eps, rem, 17, 10, 5)
    t = {r["quantity"]: r for r in judged(rows).iter_rows(named=True)}
    assert all(r["item"] for r in t.values())
    # windows, events and removals over the trace grow with its length: not compared (200 windows here, 8351 there)
    for q in ("5-minute windows", "outstanding events", "removals in the outstanding events",
              "windows with ≥ 10 removals (maintenance)", "expected windows with ≥ 10 removals under Poisson",
              "remaining windows"):
        assert t[q]["scale_dependent"] and t[q]["within"] is None, q
    # rates are compared, in their units; the %-strings stay in %
    mean = t["mean removals per window, all"]
    assert mean["unit"] == "removals per window" and mean["within"] is not None
    assert (t["MTBF (hours), remaining windows"]["unit"], t["MTBF (hours), remaining windows"]["relation"]) == ("h", "≈")
    back = t["removed machines back within 17 min, all removals"]
    assert back["unit"] == "%" and back["ours"].endswith("%") and back["paper_value"] == 60.0
    assert back["ours_value"] == pytest.approx(float(back["ours"].rstrip("%")))
    # Fig 6's "far more than Poisson" is a bound on observed / expected windows in the tail: at least 2
    tail = t["remaining windows with > 5 removals: observed / Poisson expected"]
    m = stats_.filter(pl.col("set") == "without_maintenance").row(0, named=True)
    assert (tail["tolerance"], tail["paper_value"]) == ("≥", 2.0)
    if m["expected_tail"]:
        ratio = m["windows_tail"] / m["expected_tail"]
        assert tail["ours_value"] == pytest.approx(ratio) and tail["within"] is (ratio >= 2)
    else:  # no window expected in the tail: no ratio, nothing to judge
        assert tail["ours_value"] is None and tail["within"] is None


def test_min_readds_and_together_s_are_inclusive():
    """15 machines removed a minute apart, re-added exactly 60/14 s apart: 15 re-adds in a closed 60 s interval."""
    def trace(n: int, step: float):
        rows = [(0, m, ADD) for m in range(n)]
        for m in range(n):
            rows += [(win(10, 60 * m), m, REMOVE), (win(30, step * m), m, ADD)]
        return events(sorted(rows))

    _, eps, _ = analyse(trace(15, 60 / 14), 100)
    assert eps.select("removals", "peak_readds", "outstanding").rows() == [(15, 15, True)]
    _, eps, _ = analyse(trace(15, 60 / 14), 100, F.OutstandingCriterion(min_readds=16))
    assert eps.select("removals", "peak_readds", "outstanding").rows() == [(15, 15, False)]
    # re-adds exactly together_s apart chain into one group, but only 2 of them fit in an interval
    _, eps, _ = analyse(trace(15, 60), 100, F.OutstandingCriterion(min_readds=2))
    assert eps.select("removals", "peak_readds", "outstanding").rows() == [(15, 2, True)]
    _, eps, _ = analyse(trace(15, 60.5), 100, F.OutstandingCriterion(min_readds=2))
    assert eps.height == 15 and not eps["outstanding"].any()


def test_cycle_uptime_is_strict_and_only_looks_back():
    """A burst machine's earlier removal joins its event when it was up < cycle_uptime_s before the next one;
    a removal after the burst never does."""
    def trace(up_s: float):
        rows = [(0, m, ADD) for m in range(20)]
        for m in range(20):
            rows += [(win(30, m), m, REMOVE), (win(40, m), m, ADD)]
        # machine 0: an earlier cycle ending up_s before its burst removal, and a removal 200 s after its
        # burst re-add (up less than cycle_uptime_s, but after the burst; its re-add is a group of its own)
        rows += [(win(30) - up_s - 100, 0, REMOVE), (win(30) - up_s, 0, ADD)]
        rows += [(win(40, 200), 0, REMOVE), (win(40, 300), 0, ADD)]
        return events(sorted(rows))

    rem, eps, _ = analyse(trace(3599), 100)
    assert eps.filter(pl.col("outstanding")).select("removals", "machines").row(0) == (21, 20)
    assert rem.filter(pl.col("time") == int(win(40, 200) * S))["outstanding"].to_list() == [False]
    rem, eps, _ = analyse(trace(3600), 100)
    assert eps.filter(pl.col("outstanding")).select("removals", "machines").row(0) == (20, 20)


def test_concurrent_streams_and_re_removals_are_one_event():
    """The real trace's 7193-7222 event in small: two interleaved streams re-added 4 minutes apart, then
    15 of the first stream's machines removed again and re-added together: three bursts, one event."""
    rows = [(0, m, ADD) for m in range(1, 41)]
    for j in range(20):
        rows += [(win(60, 30 * j), 1 + j, REMOVE), (win(70, j), 1 + j, ADD)]
        rows += [(win(60, 30 * j + 15), 21 + j, REMOVE), (win(70, 240 + j), 21 + j, ADD)]
    for j in range(15):
        rows += [(win(70, 400 + 5 * j), 1 + j, REMOVE), (win(73, j), 1 + j, ADD)]
    rem, eps, _ = analyse(events(sorted(rows)), 100)
    out = eps.filter(pl.col("outstanding"))
    assert out.select("kind", "removals", "machines", "readd_groups", "peak_readds").rows() == [("mass", 55, 40, 3, 20)]
    assert rem["outstanding"].all() and rem["episode"].n_unique() == 1
    # without the re-removals the two streams' spans still overlap: one event of 40
    keep = [r for r in rows if not (r[0] >= win(70, 400) and r[1] <= 15)]
    _, eps, _ = analyse(events(sorted(keep)), 100)
    assert eps.filter(pl.col("outstanding")).select("removals", "readd_groups").rows() == [(40, 2)]


def test_a_stray_removal_does_not_merge_unrelated_events():
    """Two mass removals 10 hours apart; machine 99 fails during the first and happens to come back within the
    second's burst. It joins the second event (its re-add is in that burst) without merging the two: spans
    start at the lower quartile of their removal times."""
    rows = [(0, m, ADD) for m in range(1, 100)]
    for j in range(20):
        rows += [(win(10, 30 * j), 1 + j, REMOVE), (win(20, j), 1 + j, ADD)]
        rows += [(win(130, 30 * j), 41 + j, REMOVE), (win(140, j), 41 + j, ADD)]
    rows += [(win(11), 99, REMOVE), (win(140, 5.5), 99, ADD)]
    rem, eps, _ = analyse(events(sorted(rows)), 200)
    out = eps.filter(pl.col("outstanding")).sort("start_time")
    assert out.select("removals", "machines", "first_window", "last_window").rows() == [(20, 20, 10, 11), (21, 21, 11, 131)]


@pytest.mark.parametrize("bad", [{"together_s": 0}, {"cycle_uptime_s": -1}, {"min_readds": 1}, {"flapping_min_cycles": 0}])
def test_criterion_rejects_bad_values(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        F.OutstandingCriterion(**bad)


def test_criterion_defaults_are_the_config_schemas():
    import yaml

    schema = yaml.safe_load((Path(__file__).resolve().parents[1] / "workflow/schemas/failures.schema.yaml").read_text())
    props = schema["properties"]["outstanding"]["properties"]
    for f in dataclasses.fields(F.OutstandingCriterion):
        assert props[f.name]["default"] == f.default, f.name


def reference_outstanding(rows, together_s, min_readds, uptime_s):
    """A plain-Python :func:`F.detect_outstanding`: rows are (removal s, machine, re-add s or None) in any
    order; returns the events as a set of frozensets of (removal s, machine)."""
    readds = sorted({(a, m) for _, m, a in rows if a is not None})
    group, g = {}, -1
    for i, (a, m) in enumerate(readds):
        if i == 0 or a - readds[i - 1][0] > together_s:
            g += 1
        group[(m, a)] = g
    peak = {}
    for a, m in readds:
        n = sum(1 for b, m2 in readds if group[(m2, b)] == group[(m, a)] and a <= b <= a + together_s)
        peak[group[(m, a)]] = max(peak.get(group[(m, a)], 0), n)
    burst = {(t, m): group[(m, a)] for t, m, a in rows if a is not None and peak[group[(m, a)]] >= min_readds}
    member = {}
    for m in {m for _, m, _ in rows}:
        seq = sorted((t, a) for t, m2, a in rows if m2 == m)
        runs, run = [], []
        for t, a in seq:
            if run and not (run[-1][1] is not None and t - run[-1][1] < uptime_s):
                runs.append(run)
                run = []
            run.append((t, a))
        runs.append(run)
        for run in runs:
            hits = [t for t, _ in run if (t, m) in burst]
            if hits:
                for t, _ in run:
                    if t <= max(hits):
                        member[(t, m)] = burst[(max(hits), m)]
    spans = {}  # from the lower quartile of the removal times to the last re-add
    for g in set(member.values()):
        keys = [k for k, g2 in member.items() if g2 == g]
        times = sorted(t for t, _ in keys)
        spans[g] = (times[(len(times) - 1) // 4], max(a for t, m, a in rows if (t, m) in keys))
    merged, cur, end = {}, None, None
    for g, (s, e) in sorted(spans.items(), key=lambda kv: (kv[1][0], kv[0])):
        if cur is None or s > end:
            cur, end = g, e
        end = max(end, e)
        merged[g] = cur
    events_ = {}
    for key, g in member.items():
        events_.setdefault(merged[g], set()).add(key)
    return {frozenset(v) for v in events_.values()}


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 400), st.integers(1, 300), st.booleans()), min_size=1, max_size=5),
        min_size=1, max_size=8,
    ),
    st.sampled_from([30.0, 60.0, 120.0]),
    st.integers(2, 4),
    st.sampled_from([60.0, 300.0, 3600.0]),
)
def test_detector_matches_a_brute_force_reference(machines, together_s, min_readds, uptime_s):
    """Machines cycle through (up, down) periods in whole seconds; a cycle may end the machine (never back)."""
    rows, raw = [], []
    for m, cycles in enumerate(machines):
        raw.append((0, m, ADD))
        t = 600
        for up, down, last in cycles:
            t += up
            back = None if last else t + down
            rows.append((t, m, back))
            raw.append((t, m, REMOVE))
            if back is None:
                break
            raw.append((back, m, ADD))
            t = back
    raw.sort(key=lambda r: (r[0], r[2] != ADD))  # a re-add and the next removal at the same second: ADD first
    crit = F.OutstandingCriterion(together_s=together_s, min_readds=min_readds, cycle_uptime_s=uptime_s)
    rem, eps = F.detect_outstanding(F.removals(events(raw), 1000), crit)
    got = {
        frozenset((r["time"] // S, r["machine_id"]) for r in part.iter_rows(named=True))
        for part in rem.filter(pl.col("outstanding")).partition_by("episode")
    }
    assert got == reference_outstanding(rows, together_s, min_readds, uptime_s)
    out = eps.filter(pl.col("outstanding"))
    assert sorted(out["removals"].to_list()) == sorted(len(e) for e in got)
    assert (out["peak_readds"] >= min_readds).all()
    assert (eps.filter(~pl.col("outstanding"))["peak_readds"] < min_readds).all()
    # every burst's removals are outstanding, and every other re-add group is listed once
    groups = F.readd_groups(rem, together_s)
    bursts = groups.filter(pl.col("peak_readds") >= min_readds)["readd_group"].unique()
    assert rem.filter(pl.col("readd_group").is_in(bursts.implode()))["outstanding"].all()
    assert eps.filter(~pl.col("outstanding")).height == groups["readd_group"].n_unique() - bursts.len()
    assert int(out["readd_groups"].sum()) >= bursts.len()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2000), min_size=1, max_size=60), st.sampled_from([1.0, 30.0, 60.0, 300.0]))
def test_readd_groups_match_a_brute_force_chaining(times, together_s):
    """Groups are maximal chains with gaps ≤ together_s; the peak is the most re-adds in [t, t + together_s]."""
    rem = pl.DataFrame({"machine_id": list(range(len(times))), "readd_time": [(600 + t) * S for t in times]})
    g = F.readd_groups(rem, together_s)
    ts = sorted(times)
    chains: list[list[int]] = []
    for t in ts:
        if chains and t - chains[-1][-1] <= together_s:
            chains[-1].append(t)
        else:
            chains.append([t])
    assert g["readd_group"].n_unique() == len(chains)
    want = sorted(max(sum(1 for b in c if a <= b <= a + together_s) for a in c) for c in chains)
    got = sorted(g.group_by("readd_group").agg(pl.col("peak_readds").first())["peak_readds"].to_list())
    assert got == want
    assert (g.group_by("readd_group").agg(pl.len())["len"].sort().to_list()) == sorted(len(c) for c in chains)


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


@pytest.mark.parametrize("test", F.DISPERSION_TESTS.defaults(), ids=lambda t: t.name)
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


@pytest.mark.parametrize("test", F.DISPERSION_TESTS.defaults(), ids=lambda t: t.name)
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


# ============================================================================ the real machine_events (Beaumont §6 itself)

REAL_MACHINE_EVENTS = (
    Path(__file__).resolve().parents[1] / "workflow/data/google-2011-sample/machine_events/part-00000-of-00001.csv.gz"
)
#: Beaumont §6's table after removing the three outstanding events: windows with k removals, k = 0..5.
PAPER_WINDOWS = [3674, 2679, 1276, 410, 150, 66]


@pytest.fixture(scope="module")
def real_trace():
    """The whole machine_events table of the 2011 trace, shipped in the repository (never skipped)."""
    assert hashlib.md5(REAL_MACHINE_EVENTS.read_bytes()).hexdigest() == "f2db36613e6480e653eaa25b9e23eebf"
    ev = read_table(str(REAL_MACHINE_EVENTS), "machine_events", columns=["time", "machine_id", "event_type"])
    F.check_events(ev, str(REAL_MACHINE_EVENTS))
    rem, eps, counts = analyse(ev, 8352)
    return ev, rem, eps, counts


def test_real_file_raw_counts(real_trace):
    ev, rem, eps, counts = real_trace
    assert F.event_counts(ev, 8352).row(0, named=True) == {
        "machines": 12583, "adds": 21443, "removes": 8957, "updates": 7380, "removes_outside_windows": 0, "windows": 8352,
    }
    # the paper: 8351 windows, mean 1.07
    assert counts.height == 8352 and counts["removals"].mean() == pytest.approx(1.0724, abs=5e-5)


def test_real_file_three_outstanding_events(real_trace):
    """Two mass removals and one flapping event, as in the paper; the next re-add group peaks far lower."""
    ev, rem, eps, counts = real_trace
    out = eps.filter(pl.col("outstanding")).sort("start_time")
    t = lambda us: round((us - TRACE_START_US) / WINDOW_US, 2)  # noqa: E731 — in windows
    got = [(r["kind"], r["machines"], r["removals"], t(r["start_time"]), t(r["last_readd_time"])) for r in out.iter_rows(named=True)]
    assert got == [
        ("flapping", 21, 269, 4728.06, 4842.8),  # 21 machines cycling for 9.5 h, all back within 2 minutes
        ("mass", 84, 84, 6824.44, 6831.63),  # removed over 14 minutes, back within 78 s
        ("mass", 161, 208, 7193.91, 7223.21),  # two streams at ~34 s, back 4 min apart; 47 removed again
    ]
    assert out["peak_readds"].to_list() == [17, 80, 81]
    assert eps.filter(~pl.col("outstanding"))["peak_readds"].max() == 11  # min_readds = 15 sits in the gap


def test_real_file_reproduces_beaumont_section6_table(real_trace):
    ev, rem, eps, counts = real_trace
    sets = F.count_sets(counts)
    after = sets["without_outstanding"]
    windows = np.bincount(after, minlength=6)[:6]
    for k, (ours, paper) in enumerate(zip(windows, PAPER_WINDOWS)):
        assert abs(ours - paper) <= 0.02 * paper, (k, ours, paper)
    assert after.mean() == pytest.approx(1.005, abs=0.005)
    assert int((after >= 10).sum()) == pytest.approx(38, abs=2)
    kept = sets["without_maintenance"]
    assert kept.size == pytest.approx(8314, abs=3)
    assert kept.mean() == pytest.approx(0.94, abs=0.01)
    # what we get, exactly: k = 6..9 and the whole ≥ 10 tail are the paper's to the window
    assert windows.tolist() == [3675, 2678, 1275, 410, 151, 66]
    tail = dict(zip(*np.unique(after[after >= 6], return_counts=True)))
    assert {int(k): int(v) for k, v in tail.items()} == {
        6: 32, 7: 14, 8: 9, 9: 4, 10: 5, 11: 5, 13: 2, 14: 3, 15: 7, 16: 1, 17: 2, 18: 3, 19: 4, 20: 1, 23: 1, 25: 3, 30: 1,
    }
    assert (int(after.sum()), kept.size) == (8396, 8314)  # the paper's table holds 8395 removals


@pytest.mark.parametrize(
    ("over", "same"),
    [({"min_readds": 12}, True), ({"min_readds": 17}, True), ({"cycle_uptime_s": 1800}, True),
     ({"cycle_uptime_s": 6000}, True), ({"together_s": 45}, False), ({"together_s": 120}, False)],
)
def test_real_file_events_do_not_hang_on_the_thresholds(real_trace, over, same):
    """The defaults sit inside plateaus: min_readds 12-17 and cycle_uptime_s 30 min - 1 h 48 give the same
    removals; a burst window of 45 s or 2 minutes moves a few of them and keeps the paper's table."""
    ev, rem, eps, counts = real_trace
    rem2, _ = F.detect_outstanding(F.removals(ev, 8352), F.OutstandingCriterion(**over))
    a = set(rem.filter(pl.col("outstanding")).select("machine_id", "time").iter_rows())
    b = set(rem2.filter(pl.col("outstanding")).select("machine_id", "time").iter_rows())
    assert (a == b) if same else (len(a ^ b) <= 20), (over, len(a ^ b))
    after = F.count_sets(F.window_counts(rem2, 8352, 10))["without_outstanding"]
    assert np.allclose(np.bincount(after, minlength=6)[:6], PAPER_WINDOWS, rtol=0.02, atol=0)
    assert after.mean() == pytest.approx(1.005, abs=0.005) and int((after >= 10).sum()) == 38


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
    maint_m, maint_t, _ = synth_machines._maintenance_removals(p, n, twin)
    mass_m, mass_t, _ = synth_machines._mass_removals(p, n, twin)
    flap_m, flap_t, _ = synth_machines._flapping_removals(p, n, twin)
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
    # a background removal whose re-add falls within a minute of an event's re-adds joins its group, and so
    # does a burst machine's earlier removal less than an hour before; ≈ 1 removal per 5 minutes: a handful
    assert len(found - injected) <= 5
    # nothing close to the threshold: the other re-add groups peak far below 15 re-adds a minute
    assert eps.filter(~pl.col("outstanding"))["peak_readds"].max() <= 10
    # the events look like the real trace's: mass removals over tens of minutes, re-added within a minute
    mass = eps.filter(pl.col("kind") == "mass")
    assert ((mass["end_time"] - mass["start_time"]) >= 20 * 60 * S).all() and (mass["peak_readds"] >= 100).all()


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
