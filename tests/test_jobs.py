"""Dominant jobs, job usage mixtures, task balance and durations (Beaumont et al. §3, §4.1, §4.3, §5.1)."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colocate.analysis import jobs
from colocate.prep import mapreduce
from colocate.trace import synth
from colocate.trace import PRIORITY_CLASSES, TRACE_START_US, WINDOW_US, EventType
from wfutil import TINY, judged

MIN = 60_000_000


def _jw(rows):
    """Job × window frame from (job, window, cpu[, mem, n_tasks, p10, p90]) tuples."""
    out = []
    for r in rows:
        job, window, cpu, *rest = r
        mem, n_tasks, p10, p90 = (list(rest) + [None] * 4)[:4]
        out.append(
            {
                "job_id": job,
                "window": window,
                "n_tasks": n_tasks or 1,
                "n_records": n_tasks or 1,
                "cpu_sum": float(cpu),
                "mem_sum": float(mem if mem is not None else cpu),
                "cpu_p10": float(p10 if p10 is not None else cpu),
                "cpu_p90": float(p90 if p90 is not None else cpu),
            }
        )
    return pl.DataFrame(out, schema_overrides={"window": pl.Int32, "n_tasks": pl.Int32, "n_records": pl.Int32})


# ----------------------------------------------------------------------------- D_i


def test_dominant_set_by_hand():
    # window 0: 5 + 3 = 8 < 9 = 90% of 10, so a third job is needed; C and D tie at 1, C has the lower ID
    # window 1: one job has 95% on its own
    jw = _jw([("A", 0, 5), ("B", 0, 3), ("C", 0, 1), ("D", 0, 1), ("A", 1, 0.5), ("B", 1, 9.5)])
    jw = jw.with_columns(pl.col("job_id").replace_strict({"A": 1, "B": 2, "C": 3, "D": 4}, return_dtype=pl.Int64))
    flagged = jobs.flag_dominant(jw, 0.9)
    got = {(r["window"], r["job_id"]) for r in flagged.filter("in_Di").iter_rows(named=True)}
    assert got == {(0, 1), (0, 2), (0, 3), (1, 2)}


def test_a_window_without_cpu_has_no_dominant_job():
    flagged = jobs.flag_dominant(_jw([(1, 0, 0.0), (2, 0, 0.0), (1, 1, 2.0)]), 0.9)
    assert flagged.filter(pl.col("window") == 0)["in_Di"].to_list() == [False, False]
    assert flagged.filter(pl.col("window") == 1)["in_Di"].to_list() == [True]


@pytest.mark.parametrize("share", [0.0, -0.1, 1.5])
def test_cpu_share_out_of_range_is_rejected(share):
    with pytest.raises(ValueError, match="cpu_share"):
        jobs.flag_dominant(_jw([(1, 0, 1.0)]), share)


@settings(max_examples=60, deadline=None)
@given(
    cpus=st.lists(st.floats(0.0, 10.0, allow_nan=False).map(lambda x: round(x, 3)), min_size=1, max_size=8),
    share=st.sampled_from([0.5, 0.8, 0.9, 0.95, 1.0]),
)
def test_dominant_set_is_a_smallest_set_reaching_the_share(cpus, share):
    """Brute force over all subsets: D_i reaches the share and no smaller subset does."""
    jw = _jw([(i + 1, 0, c) for i, c in enumerate(cpus)])
    flagged = jobs.flag_dominant(jw, share)
    members = set(flagged.filter("in_Di")["job_id"].to_list())
    total = sum(cpus)
    if total == 0:
        assert not members
        return
    cpu = dict(zip(range(1, len(cpus) + 1), cpus))
    assert sum(cpu[j] for j in members) >= share * total - 1e-9
    smallest = min(
        k
        for k in range(0, len(cpus) + 1)
        for subset in itertools.combinations(cpu, k)
        if sum(cpu[j] for j in subset) >= share * total - 1e-9
    )
    assert len(members) == smallest


def test_window_totals_and_table1_by_hand():
    # window 0: jobs 1 (8), 2 (1), 3 (1); D_0 = {1, 2} (8 < 9, then 9 ≥ 9). window 1: job 3 has 9 of 10: D_1 = {3}
    jw = _jw([(1, 0, 8, 2), (2, 0, 1, 2), (3, 0, 1, 6), (1, 1, 1, 1), (3, 1, 9, 3), (4, 1, 0, 6)])
    flagged = jobs.flag_dominant(jw, 0.9)
    ids = flagged.filter("in_Di")["job_id"].unique().sort()
    assert ids.to_list() == [1, 2, 3]
    totals = jobs.window_totals(flagged, ids)
    w0, w1 = totals.iter_rows(named=True)
    assert (w0["jobs"], w0["jobs_Di"], w0["jobs_D"]) == (3, 2, 3)
    assert (w1["jobs"], w1["jobs_Di"], w1["jobs_D"]) == (3, 1, 2)  # jobs 1 and 3 of D are alive
    assert w1["cpu_D"] == 10 and w1["mem_D"] == 4 and w1["mem"] == 10
    t1 = {r["statistic"]: r for r in jobs.dominant_table(totals).iter_rows(named=True)}
    assert t1["mean"]["jobs_D"] == pytest.approx(2.5)
    assert t1["mean"]["share_jobs"] == pytest.approx((1 + 2 / 3) / 2)
    assert t1["mean"]["R_mem"] == pytest.approx((1.0 + 0.4) / 2)
    assert t1["min"]["R_cpu"] == pytest.approx(1.0) and t1["max"]["R_cpu"] == pytest.approx(1.0)


def test_merge_job_windows_adds_pieces_of_a_window_cut_by_a_shard_boundary():
    a = _jw([(1, 5, 2.0, 1.0, 2, 0.5, 1.5), (2, 5, 1.0)])
    b = _jw([(1, 5, 1.0, 3.0, 1, 1.0, 1.0)])
    merged = jobs.merge_job_windows(pl.concat([a, b]))
    row = merged.filter(pl.col("job_id") == 1).row(0, named=True)
    assert (row["cpu_sum"], row["mem_sum"], row["n_tasks"]) == (3.0, 4.0, 3)
    assert (row["cpu_p10"], row["cpu_p90"]) == (0.5, 1.5)  # from the piece with more records
    assert merged.height == 2


# ----------------------------------------------------------------------------- job table and durations


def _job_events(rows):
    return pl.DataFrame(rows, schema=["time", "job_id", "event_type"], orient="row")


def test_lifetimes_by_hand_and_pieces_combine_across_shards():
    n_windows = 100
    end = TRACE_START_US + n_windows * WINDOW_US
    S, SC, F, K = int(EventType.SUBMIT), int(EventType.SCHEDULE), int(EventType.FINISH), int(EventType.KILL)
    shard1 = _job_events([(0, 1, S), (0, 1, SC), (TRACE_START_US + 60 * MIN, 2, S), (TRACE_START_US + 61 * MIN, 2, SC)])
    shard2 = _job_events([(TRACE_START_US + 91 * MIN, 2, F), (TRACE_START_US + 5 * MIN, 3, S), (TRACE_START_US + 7 * MIN, 3, K)])
    pieces = pl.concat([jobs.map_job_events(shard1), jobs.map_job_events(shard2)])
    life = {r["job_id"]: r for r in jobs.job_lifetimes(pieces, n_windows).iter_rows(named=True)}
    # the whole table: job 1 runs to the trace end, as the paper's 29 days, however early the last event
    assert life[1]["duration_min"] == pytest.approx((end - TRACE_START_US) / MIN) and not life[1]["ended"]
    assert not life[1]["censored_early"]
    assert life[2]["duration_min"] == pytest.approx(30.0) and life[2]["end_event"] == F and not life[2]["censored_early"]
    # never scheduled: from SUBMIT to KILL
    assert life[3]["duration_min"] == pytest.approx(2.0) and life[3]["end_event"] == K
    # a part of the table's shards: its events end at 91 min, in the window 90–95 min, so job 1 was seen 95 min
    life = {r["job_id"]: r for r in jobs.job_lifetimes(pieces, n_windows, whole_table=False).iter_rows(named=True)}
    assert life[1]["duration_min"] == pytest.approx(95.0) and not life[1]["ended"] and life[1]["censored_early"]
    assert life[2]["duration_min"] == pytest.approx(30.0) and not life[2]["censored_early"]


def test_job_table_takes_the_priority_of_the_first_task_event():
    pieces = pl.DataFrame(
        {
            "job_id": [7, 7, 7, 8],
            "task_index": [0, 1, 1, 0],
            "priority": [9, 0, 0, 11],
            "first_time": [5, 1, 9, 3],
            "last_event": [10, 20, 30, 4],
        }
    )
    t = {r["job_id"]: r for r in jobs.job_table(pieces, PRIORITY_CLASSES).iter_rows(named=True)}
    assert (t[7]["priority"], t[7]["class"], t[7]["n_tasks"]) == (0, "gratis", 2)
    assert (t[8]["class"], t[7]["last_task_event_us"]) == ("infrastructure", 30)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 4), st.integers(0, 11), st.integers(0, 10**6),
                          st.integers(0, 10**6)), min_size=1, max_size=60, unique_by=lambda r: (r[0], r[3])))
def test_job_table_of_scanned_shards_equals_that_of_the_concatenation(tmp_path_factory, rows):
    """The rule scans every shard's pieces (streaming engine) instead of concatenating them: the same table.
    First times are unique per job, so the first task event's priority is well defined."""
    cols = ["job_id", "task_index", "priority", "first_time", "last_event"]
    pieces = pl.DataFrame(rows, schema=cols, orient="row")
    d = tmp_path_factory.mktemp("pieces")
    paths = [d / f"{i}.parquet" for i in range(3)]
    for i, p in enumerate(paths):
        pieces.gather_every(3, offset=i).write_parquet(p)
    table = jobs.job_table(pl.scan_parquet(paths), PRIORITY_CLASSES)
    by_hand = {}
    for job, task, priority, first, last in rows:  # the earliest event's priority, distinct tasks, first, last
        b = by_hand.setdefault(job, {"first": (first, priority), "tasks": set(), "last": last})
        b["first"], b["last"] = min(b["first"], (first, priority)), max(b["last"], last)
        b["tasks"].add(task)
    assert table["job_id"].to_list() == sorted(by_hand)
    for r in table.iter_rows(named=True):
        b = by_hand[r["job_id"]]
        assert (r["first_task_event_us"], r["priority"]) == b["first"]
        assert (r["n_tasks"], r["last_task_event_us"]) == (len(b["tasks"]), b["last"])


def test_duration_table_by_hand():
    dom = pl.DataFrame({"class": ["gratis"] * 4 + ["production"], "duration_min": [10.0, 20.0, 30.0, None, 5.0]})
    t = {r["statistic"]: r for r in jobs.duration_table(dom, ("gratis", "production")).iter_rows(named=True)}
    assert t["n"]["gratis"] == 3 and t["jobs_without_events"]["gratis"] == 1
    assert t["mean"]["gratis"] == pytest.approx(20.0) and t["std"]["gratis"] == pytest.approx(10.0)
    assert t["50%"]["gratis"] == pytest.approx(20.0) and t["25%"]["gratis"] == pytest.approx(15.0)
    assert t["std"]["production"] == 0.0
    assert t["censored_early"]["gratis"] == 0 and t["events_end_min"]["gratis"] is None


def test_duration_table_keeps_only_the_percentiles_that_early_censoring_leaves_unbiased():
    """Job events that end 60 min into the trace: 2 of 10 gratis jobs still run, seen 60 min. The percentiles whose
    interpolation reads only the 8 ended durations, all below 60, are the true ones (the 50th reads the 5th and 6th
    values, the 75th the 7th and 8th); the 90th reads a censored one and is empty, as are the mean and std.
    All 3 production jobs still run: no statistic but the counts."""
    end = TRACE_START_US + 60 * MIN
    gratis = [5.0, 10, 15, 20, 25, 30, 35, 40, 60, 60]
    dom = pl.DataFrame({"class": ["gratis"] * 10 + ["production"] * 3, "duration_min": gratis + [60.0] * 3,
                        "end_us": [end] * 13, "censored_early": [False] * 8 + [True] * 5})
    t = {r["statistic"]: r for r in jobs.duration_table(dom, ("gratis", "production")).iter_rows(named=True)}
    assert t["censored_early"]["gratis"] == 2 and t["events_end_min"]["gratis"] == pytest.approx(60.0)
    assert t["50%"]["gratis"] == pytest.approx(np.quantile(gratis, 0.5)) == pytest.approx(27.5)
    assert t["75%"]["gratis"] == pytest.approx(np.quantile(gratis, 0.75))
    assert t["90%"]["gratis"] is None and t["mean"]["gratis"] is None and t["std"]["gratis"] is None
    assert t["n"]["production"] == 3 and t["censored_early"]["production"] == 3
    assert all(t[s]["production"] is None for s in ("mean", "std", "25%", "50%", "99%"))


@pytest.mark.parametrize("ended, censored, kept", [
    ([1.0, 2, 3], [60.0] * 7, []),  # the 25th interpolates towards the 4th value, a censored one: none kept
    (list(range(10, 200, 10)), [100.0], ["25%"]),  # 1 of 20 censored at 100: the 50th would read the 10th value, 100
    ([100.0, 110, 120, 130, 140, 150, 160, 170], [2.0, 3.0], []),  # censored late starters at 2–3 min bound all
])
def test_a_percentile_is_kept_only_where_it_reads_ended_durations_below_every_censored_one(ended, censored, kept):
    dom = pl.DataFrame({"class": ["gratis"] * (len(ended) + len(censored)), "duration_min": [float(x) for x in ended + censored],
                        "end_us": [TRACE_START_US + 60 * MIN] * (len(ended) + len(censored)),
                        "censored_early": [False] * len(ended) + [True] * len(censored)})
    t = {r["statistic"]: r["gratis"] for r in jobs.duration_table(dom, ("gratis",)).iter_rows(named=True)}
    assert [s for s in ("25%", "50%", "75%", "90%", "95%", "99%") if t[s] is not None] == kept
    values = np.array(ended + censored, dtype=float)
    for s in kept:
        assert t[s] == pytest.approx(np.quantile(values, int(s[:-1]) / 100))
        assert t[s] < min(censored)


# ----------------------------------------------------------------------------- Table 2 mixtures


def test_mixture_recovers_known_two_lognormal_parameters():
    """2,000 draws of 0.3·N(−1, 0.4) + 0.7·N(2, 0.8): EM recovers them to about 3 standard errors."""
    rng = np.random.default_rng(11)
    n = 2000
    first = rng.random(n) < 0.3
    z = np.where(first, rng.normal(-1, 0.4, n), rng.normal(2, 0.8, n))
    dom = pl.DataFrame({"class": ["gratis"] * n, "cpu_mean": np.exp(z), "mem_mean": np.exp(rng.normal(0.5, 1.2, n))})
    t = {r["resource"]: r for r in jobs.usage_mixtures(dom, ("gratis",), n_init=3, seed=0).iter_rows(named=True)}
    cpu = t["cpu"]
    assert cpu["chosen"] == 2
    # se of a weight ≈ sqrt(.21/2000) = 0.01; of a mean ≈ σ/sqrt(n_k) ≤ 0.03
    assert cpu["lambda1"] == pytest.approx(0.7, abs=0.04) and cpu["mu1"] == pytest.approx(2.0, abs=0.1)
    assert cpu["mu2"] == pytest.approx(-1.0, abs=0.1) and cpu["sigma2"] == pytest.approx(0.4, abs=0.06)
    assert cpu["sigma1"] == pytest.approx(0.8, abs=0.06)
    # one Gaussian: BIC keeps the single component, whose µ, σ are the sample's
    mem = t["memory"]
    assert mem["chosen"] == 1
    assert mem["mu"] == pytest.approx(np.log(dom["mem_mean"]).mean(), abs=1e-6)
    assert mem["sigma"] == pytest.approx(np.log(dom["mem_mean"].to_numpy()).std(), abs=1e-4)  # ML: ddof 0


def test_mixtures_are_seeded_and_small_classes_get_nulls():
    rng = np.random.default_rng(1)
    dom = pl.DataFrame({"class": ["other"] * 50 + ["production"] * 3, "cpu_mean": np.exp(rng.normal(0, 1, 53)),
                        "mem_mean": np.exp(rng.normal(0, 1, 53))})
    a = jobs.usage_mixtures(dom, n_init=2, seed=4)
    assert a.equals(jobs.usage_mixtures(dom, n_init=2, seed=4))
    prod = a.filter(pl.col("class") == "production")
    assert prod["n_jobs"].to_list() == [3, 3] and prod["sigma"].null_count() == 2


# ----------------------------------------------------------------------------- task balance


def test_task_count_dispersion_and_balance_thresholds_by_hand():
    # job 1: 5 windows, task CPU ratios p90/p10 = 1, 1.5, 2, 3, 4 → 80% 'higher' quantile = 3
    # job 2: a window with idle tasks (p10 = 0) counts as infinitely unbalanced; a 1-task window is skipped
    rows = [(1, w, 4.0, 1.0, 4, 1.0, r) for w, r in enumerate([1, 1.5, 2, 3, 4])]
    rows += [(2, 0, 1.0, 1.0, 3, 0.0, 1.0), (2, 1, 1.0, 1.0, 3, 1.0, 1.2), (2, 2, 1.0, 1.0, 1, 1.0, 9.0)]
    windows = _jw(rows)
    dominant = pl.DataFrame({"job_id": [1, 2], "class": ["production", "gratis"], "tasks_p10": [4.0, 1.0], "tasks_p90": [4.0, 3.0]})
    thr = {r["job_id"]: r for r in jobs.balance_thresholds(windows, dominant, 0.8).iter_rows(named=True)}
    assert thr[1]["threshold"] == 3.0 and thr[1]["windows_used"] == 5
    assert thr[2]["threshold"] == float("inf") and thr[2]["windows_used"] == 2
    disp = jobs.task_count_dispersion(dominant)
    assert disp["task_count_idr"].to_list() == [1.0, 3.0]
    table = {r["class"]: r for r in jobs.balance_table(disp, pl.DataFrame(list(thr.values()))).iter_rows(named=True)}
    assert table["all"]["task_count_idr_1"] == 0.5 and table["all"]["task_count_idr_le_2"] == 0.5
    assert table["production"]["threshold_below_2"] == 0.0


def test_example_jobs_pick_constant_and_most_variable():
    dominant = pl.DataFrame({"job_id": [1, 2, 3, 4], "n_windows": [100, 90, 80, 10], "tasks_mean": [5.0, 9.0, 4.0, 50.0],
                             "tasks_max": [5, 9, 8, 50], "tasks_p10": [5.0, 9.0, 2.0, 1.0], "tasks_p90": [5.0, 9.0, 8.0, 50.0],
                             "class": ["production"] * 4})
    ex = jobs.example_jobs(dominant, jobs.task_count_dispersion(dominant))
    assert ex == {"constant": 2, "variable": 3}  # job 4 varies more but is too short


# ----------------------------------------------------------------------------- recovery on a synthetic trace


@pytest.fixture(scope="module")
def synthetic():
    params = synth.SynthParams.from_dict(TINY)
    out = synth.generate(params, 5, truth=True)
    _, job_windows, _ = mapreduce.map_task_usage(out["task_usage"], 2, np.empty(0, np.int32))
    return params, out, jobs.merge_job_windows(job_windows)


def test_dominant_share_of_cpu_is_the_models(synthetic):
    """The model puts ``dominant_cpu_share`` of each window's CPU in large jobs; D, a superset of the
    90% sets, must carry at least that much on average (Beaumont Table 1: 0.947)."""
    params, out, jw = synthetic
    flagged = jobs.flag_dominant(jw, 0.9)
    ids = flagged.filter("in_Di")["job_id"].unique()
    t1 = {r["statistic"]: r for r in jobs.dominant_table(jobs.window_totals(flagged, ids)).iter_rows(named=True)}
    large = out["truth_jobs"].filter("large")["job_id"]
    large_share = jw.group_by("window").agg(
        pl.col("cpu_sum").filter(pl.col("job_id").is_in(large.implode())).sum() / pl.col("cpu_sum").sum()
    )
    # the model's large-job CPU share per window, measured: within 0.02 of its parameter (the per-window
    # spread of Table 1 is 0.009; the tiny trace has only two days)
    assert large_share[:, 1].mean() == pytest.approx(params.dominant_cpu_share, abs=0.02)
    assert t1["mean"]["R_cpu"] >= large_share[:, 1].mean() - 0.02
    # nearly every large job is dominant in some window
    assert ids.is_in(large.implode()).mean() > 0.6
    assert large.is_in(ids.implode()).mean() > 0.8


def test_job_mean_cpu_recovers_the_models_job_sizes(synthetic):
    """A large job's mean total CPU over its windows is its drawn size (Table 2's variable, already
    multiplied by job_size_scale in the truth), up to task starts/ends inside its lifetime and usage noise."""
    params, out, jw = synthetic
    truth = out["truth_jobs"].filter("large")
    mean = jw.group_by("job_id").agg(pl.col("cpu_sum").mean(), pl.len().alias("w")).filter(pl.col("w") >= 12)
    both = truth.join(mean, on="job_id")
    ratio = np.log(both["cpu_sum"].to_numpy() / both["cpu_total"].to_numpy())
    assert both.height > 50
    # the jobs' log sizes spread over σ ≈ 1.1-1.7 (Table 2); each is recovered to a few percent
    assert abs(np.median(ratio)) < 0.1
    assert np.quantile(np.abs(ratio), 0.9) < 0.35


@pytest.mark.parametrize(("common", "low", "high"), [(1.0, 1.2, 2.2), (0.0, 4.0, 32.0)])
def test_balance_follows_the_models_common_fluctuation(common, low, high):
    """Beaumont §4.3: with job_common_fluctuation = 1 a job's tasks move together and the per-window
    interdecile ratio of task CPU is set by the spread of task means (task_balance_sigma 0.15: 1.5; production
    jobs' production_task_balance_sigma 0.27: 2.0) and
    the remaining per-record noise; with independent tasks each task's own CV (Janus's lines, ~0.6-1.2
    for these small tasks) spreads them far wider. Median over windows of large jobs with >= 5 tasks.

    The bounds of independent tasks: a log-normal of CV 0.6 has p90/p10 = exp(2·1.2816·σ) ≈ 4.1 (σ² = ln 1.36);
    the widest per-record noise of the model, the exponential (gamma of CV 1), has ln 10 / ln(10/9) ≈ 21.9, which
    the spread of task means (× exp(2·1.2816·0.15) ≈ 1.47) takes to ≈ 32. Above it, records are spikier than the
    model's laws allow (e.g. near-zero records kept in a task's p10); seeds 1-3 and 9 give 7.8-17."""
    params = synth.SynthParams.from_dict({**TINY, "job_common_fluctuation": common})
    out = synth.generate(params, 9, truth=True)
    _, jw, _ = mapreduce.map_task_usage(out["task_usage"], 2, np.empty(0, np.int32))
    large = out["truth_jobs"].filter("large")["job_id"]
    w = jw.filter(pl.col("job_id").is_in(large.implode()) & (pl.col("n_tasks") >= 5) & (pl.col("cpu_p10") > 0))
    ratio = float((w["cpu_p90"] / w["cpu_p10"]).median())
    assert low <= ratio <= high, ratio


@settings(max_examples=25, deadline=None)
@given(chunk=st.integers(1, 9), seed=st.integers(0, 10_000))
def test_dominant_by_chunks_equals_the_whole_table_at_once(chunk, seed):
    """Chunking the windows (and a window cut in two pieces by a shard boundary) changes nothing."""
    rng = np.random.default_rng(seed)
    n_windows, n = 8, 60
    jw = _jw([(int(rng.integers(1, 12)), int(rng.integers(0, n_windows)), float(rng.exponential())) for _ in range(n)])
    jw = jw.unique(["job_id", "window"], keep="first")
    whole = jobs.merge_job_windows(jw)
    flagged = jobs.flag_dominant(whole, 0.9)
    ids = flagged.filter("in_Di")["job_id"].unique().sort()
    want_rows = flagged.filter(pl.col("job_id").is_in(ids.implode())).drop("in_Di").sort("job_id", "window")
    want_totals = jobs.window_totals(flagged, ids)
    # split window 3's rows into two pieces (half the CPU each), as two shards would hold them
    w3 = jw.filter(pl.col("window") == 3).with_columns(pl.col("cpu_sum") / 2, pl.col("mem_sum") / 2, pl.lit(0, pl.Int32).alias("n_tasks"))
    pieces = pl.concat([jw.with_columns(pl.when(pl.col("window") == 3).then(pl.col("cpu_sum") / 2).otherwise("cpu_sum").alias("cpu_sum"),
                                        pl.when(pl.col("window") == 3).then(pl.col("mem_sum") / 2).otherwise("mem_sum").alias("mem_sum")), w3])
    load = lambda lo, hi: pieces.filter(pl.col("window").is_between(lo, hi - 1))  # noqa: E731
    rows, totals = jobs.dominant_by_chunks(load, n_windows, 0.9, chunk)
    assert set(rows["job_id"]) == set(want_rows["job_id"])
    assert np.allclose(rows["cpu_sum"].to_numpy(), want_rows["cpu_sum"].to_numpy())
    assert totals.select("window", "jobs", "jobs_Di", "jobs_D").equals(want_totals.select("window", "jobs", "jobs_Di", "jobs_D"))
    assert np.allclose(totals["cpu_D"].to_numpy(), want_totals["cpu_D"].to_numpy())


def test_dominant_by_chunks_rejects_a_bad_chunk():
    with pytest.raises(ValueError, match="chunk"):
        jobs.dominant_by_chunks(lambda lo, hi: _jw([(1, 0, 1.0)]), 4, 0.9, 0)


# ----------------------------------------------------------------------------- measurements (the summary's rows)


def _summary_inputs(share_jobs=0.3, whole_trace=0.156):
    stats = ["mean", "std", "min", "max"]
    table1 = pl.DataFrame({"statistic": stats, "jobs_D": [40.0, 2.0, 30.0, 50.0], "share_jobs": [share_jobs, 0.01, 0.2, 0.4],
                           "R_cpu": [0.95, 0.01, 0.91, 0.98], "R_mem": [0.89, 0.01, 0.85, 0.92]})
    shares = pl.DataFrame({"class": ["production", "gratis", "other"], "tasks": [0.27, 0.21, 0.17],
                           "cpu": [0.6, 0.2, 0.15], "memory": [0.5, 0.2, 0.2]})
    mixtures = pl.DataFrame({"resource": ["cpu"], "class": ["gratis"], "sigma": [1.4], "mu": [1.6], "chosen": [2], "lambda1": [0.7]})
    durations = pl.DataFrame({"statistic": ["50%", "n"], "gratis": [25.0, 100.0], "production": [100.0, 20.0], "other": [30.0, 50.0]})
    # one window: 2 jobs of D with 24 tasks (T_D = 12), 18 others with 27 (t_N = 1.5)
    totals = pl.DataFrame({"window": [0], "jobs": [20], "jobs_D": [2], "tasks": [51], "tasks_D": [24]})
    return {"table1": table1, "shares": shares, "n_jobs": 1000, "n_dominant": 40, "tasks_per_job": pl.Series([10, 20, 30]),
            "mixtures": mixtures, "dispersion": pl.DataFrame({"task_count_idr": [1.0, 1.0, 2.0, 3.0]}),
            "thresholds": pl.DataFrame({"class": ["production", "gratis"], "threshold": [1.5, 3.0]}),
            "durations": durations, "whole_trace_production": whole_trace, "window_totals": totals}


def _rows(share_jobs=0.3, **changes):
    """The measurements of :func:`_summary_inputs` (with ``changes``) judged against the project's claims."""
    inputs = {**_summary_inputs(share_jobs), **changes}
    return {r["quantity"]: r for r in judged(jobs.measurements(**inputs)).iter_rows(named=True)}


def test_measurements_judged_carry_items_units_counts_and_causes():
    rows = _rows()
    # every row names the paper's item and its claim, and every one is judged or says why not
    assert all(r["item"] and r["claim"].startswith("beaumont.") and r["reads_trace"] for r in rows.values())
    assert "not judged" not in {r["verdict"] for r in rows.values()}
    # shares are shown in % on both sides: the paper's 3.8% against our 40 / 1000
    d = rows["|D|, share of all jobs"]
    assert (d["unit"], d["paper_value"], d["ours_value"], d["ours"], d["note"]) == ("%", 3.8, pytest.approx(4.0), "4%", "of 1,000 jobs")
    assert rows["Fig 1: D's share of all tasks"]["ours_value"] == pytest.approx(65.0) and rows["Fig 1: D's share of all tasks"]["within"]
    # the paper's lists are one row per value, each compared
    assert rows["Fig 1: production share of tasks"]["paper_value"] == 27.0 and rows["Fig 1: gratis share of tasks"]["within"]
    assert (rows["Table 1: R_cpu, min"]["paper_value"], rows["Table 1: R_cpu, max"]["paper_value"]) == (0.905, 0.975)
    assert rows["Table 1: R_cpu, min"]["note"] == "over the windows"
    # counts that grow with the scale are not compared
    for q in ("Table 1: dominant jobs alive per window (mean)", "|D|, dominant jobs", "tasks per dominant job, mean",
              "tasks per dominant job, max"):
        assert rows[q]["scale_dependent"] and rows[q]["within"] is None and rows[q]["verdict"] == "count"
    # Table 2: σ beside the paper's 1.43; which fit BIC prefers, the paper does not say
    sigma, bic = rows["Table 2: σ of log mean cpu, gratis"], rows["Table 2: BIC prefers, cpu gratis"]
    assert (sigma["paper_value"], sigma["within"], sigma["note"]) == (1.43, True, "µ = 1.60")
    assert (bic["ours"], bic["paper"], bic["verdict"], bic["note"]) == ("2 component(s)", "", "no paper value", "λ1 = 0.70")
    # the measured cause, only where the row is outside: share of alive jobs 0.3 against 0.058, with this run's
    # T_D = 24 / 2 and t_N = 27 / 18
    alive = rows["Table 1: share of alive jobs (mean)"]
    assert alive["within"] is False and "job_size_scale" in alive["cause"] and "studies/alive_share.py" in alive["cause"]
    assert "a job of D runs 12.0 tasks in a window" in alive["cause"] and "the model's other jobs run 1.50)" in alive["cause"]
    prod = rows["Table 3: median duration of production jobs (min)"]
    assert (prod["unit"], prod["within"]) == ("min", False) and "small one-task jobs" in prod["cause"]
    assert rows["Table 3: production jobs running the whole trace"]["within"] and not rows["Table 3: production jobs running the whole trace"]["cause"]
    assert rows["Table 3: production jobs running the whole trace"]["note"] == "alive in every window"
    assert not rows["Table 3: median duration of gratis jobs (min)"]["cause"]
    # the cause follows the run: a share within tolerance names none
    again = _rows(share_jobs=0.06)["Table 1: share of alive jobs (mean)"]
    assert again["within"] and not again["cause"]


def test_the_class_with_most_cpu_is_judged_as_the_paper_states_it():
    """Beaumont Fig 1: most of the CPU is Normal Production's. Production's 0.6 of the CPU: the paper's statement;
    gratis holding more: outside."""
    top = _rows()["Fig 1: class with most CPU"]
    assert (top["paper"], top["ours"], top["within"], top["verdict"], top["tolerance"]) == (
        "production", "production", True, "within", "same")
    shares = _summary_inputs()["shares"].with_columns(cpu=pl.Series([0.2, 0.6, 0.15]))
    other = _rows(shares=shares)["Fig 1: class with most CPU"]
    assert (other["ours"], other["within"], other["verdict"]) == ("gratis", False, "outside")


def test_measurements_say_when_the_job_events_end_early_instead_of_judging_censored_durations():
    """A part of job_events (the shipped sample's 2 shards): the gratis median is kept (it reads ended jobs only),
    the production one is empty with the reason."""
    durations = pl.DataFrame({"statistic": ["50%", "n", "censored_early", "events_end_min"],
                              "gratis": [20.0, 100.0, 10.0, 170.0], "production": [None, 20.0, 18.0, 170.0],
                              "other": [30.0, 50.0, 0.0, None]})
    rows = _rows(durations=durations)
    gratis, prod = rows["Table 3: median duration of gratis jobs (min)"], rows["Table 3: median duration of production jobs (min)"]
    assert gratis["within"] and gratis["note"] == "100 jobs, 10 still running"
    assert prod["within"] is None and prod["ours"] == "" and prod["tolerance"] is None and prod["verdict"] == "too little data"
    assert prod["note"] == ("20 jobs, 18 still running; too little data: the job_events read end 2.8 h into the trace; "
                            "not judged")
    # whether a job runs the whole trace comes from task_usage, not job_events: judged as before
    assert rows["Table 3: production jobs running the whole trace"]["within"] is True
    # censored and fed by 5 minutes of task_usage: both reasons, once
    short = _rows(durations=durations, usage_windows=1)["Table 3: median duration of production jobs (min)"]
    assert short["note"] == ("20 jobs, 18 still running; too little data: the job_events read end 2.8 h into the trace; "
                             "task_usage spans 1 window (5 min); not judged")


def test_rows_fed_by_less_than_a_day_of_task_usage_are_shown_not_judged():
    """The shipped sample's 5 minutes of task_usage: Beaumont's 29-day statistics are shown with the reason, not
    judged, Table 3's medians too (job_events give their durations, but of the jobs D found in that one window: the
    oldest, longest-running ones); a day of windows is judged as before."""
    short = _rows(usage_windows=1)
    alive = short["Table 1: share of alive jobs (mean)"]
    assert alive["within"] is None and alive["tolerance"] is None and not alive["cause"]
    assert alive["note"] == "too little data: task_usage spans 1 window (5 min); not judged" and alive["ours"] == "0.3"
    assert "too little data: task_usage spans 1 window" in short["|D|, share of all jobs"]["note"]
    assert short["|D|, share of all jobs"]["note"].startswith("of 1,000 jobs; ")
    median = short["Table 3: median duration of production jobs (min)"]
    assert median["within"] is None and "too little data: task_usage spans 1 window" in median["note"]
    assert short["Table 3: production jobs running the whole trace"]["within"] is None  # task_usage: not judged
    assert short["Fig 1: class with most CPU"]["verdict"] == "too little data"
    # counts and rows without a paper value are what they were
    assert short["|D|, dominant jobs"]["verdict"] == "count" and short["Table 2: BIC prefers, cpu gratis"]["verdict"] == "no paper value"
    # a day and more, of a part of task_usage: Table 3 alone is not judged (D's jobs found in a part are the long ones)
    part = _rows(usage_windows=1044, usage_whole=False)
    assert part["Table 1: share of alive jobs (mean)"]["within"] is False
    for q in ("Table 3: median duration of production jobs (min)", "Table 3: production jobs running the whole trace"):
        assert part[q]["within"] is None and "too little data: D found in 1,044 windows of task_usage, not the whole" in part[q]["note"]
    day = _rows(usage_windows=288)
    assert day["Table 1: share of alive jobs (mean)"]["within"] is False


def test_a_claim_with_nothing_to_measure_is_too_little_data_not_unjudged():
    """No production job of D with 2 tasks in a window (Fig 5), no other job with job events (Table 3), no
    production job in D (§5.1), no job of D in any window (Table 1's share: 0 of the alive jobs, and no T_D for its
    cause): each row says why, instead of a verdict "not judged" or a cause with no number."""
    rows = _rows(thresholds=pl.DataFrame({"class": ["gratis"], "threshold": [3.0]}),
                 durations=pl.DataFrame({"statistic": ["50%", "n"], "gratis": [25.0, 100.0], "production": [100.0, 20.0],
                                         "other": [None, 0.0]}),
                 whole_trace_production=None, share_jobs=0.0,
                 window_totals=pl.DataFrame({"window": [0], "jobs": [20], "jobs_D": [0], "tasks": [51], "tasks_D": [0]}))
    said = {q: rows[q]["note"] for q in ("Fig 5: production jobs with 80% of task-CPU interdecile ratios below 2",
                                         "Table 3: median duration of other jobs (min)",
                                         "Table 3: production jobs running the whole trace",
                                         "Table 1: share of alive jobs (mean)")}
    assert said == {
        "Fig 5: production jobs with 80% of task-CPU interdecile ratios below 2":
            "0 jobs; too little data: no production job of D with 2 tasks in a window; not judged",
        "Table 3: median duration of other jobs (min)": "0 jobs; too little data: no other job of D with job events; not judged",
        "Table 3: production jobs running the whole trace":
            "alive in every window; too little data: no production job in D; not judged",
        "Table 1: share of alive jobs (mean)": "too little data: no window with a job of D; not judged"}
    assert {rows[q]["verdict"] for q in said} == {"too little data"} and not rows["Table 1: share of alive jobs (mean)"]["cause"]
    assert "not judged" not in {r["verdict"] for r in rows.values()}
