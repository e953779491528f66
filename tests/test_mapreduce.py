"""Map / reduce to per-task data: hand-computed filters and sharded == direct."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colocate import io, trace
from colocate.prep import mapreduce, tasks
from colocate.prep.tasks import TASK_KEY

W = trace.WINDOW_US
T0 = trace.TRACE_START_US


def usage_rows(job, task, insts, avgs, start_window=0, machine=1):
    n = len(insts)
    return pl.DataFrame(
        {
            "start_time": [T0 + (start_window + k) * W for k in range(n)],
            "end_time": [T0 + (start_window + k + 1) * W for k in range(n)],
            "job_id": [job] * n,
            "task_index": [task] * n,
            "machine_id": [machine] * n,
            "cpu_rate": avgs,
            "canonical_memory_usage": [0.01] * n,
            "maximum_cpu_rate": [max(a, i) for a, i in zip(avgs, insts)],
            "sampled_cpu_usage": insts,
        },
        schema_overrides={"cpu_rate": pl.Float64, "sampled_cpu_usage": pl.Float64},
    )


def events_rows(job, task, types, priority=9, start=T0):
    n = len(types)
    return pl.DataFrame(
        {
            "time": [start + k for k in range(n)],
            "job_id": [job] * n,
            "task_index": [task] * n,
            "machine_id": [1] * n,
            "event_type": types,
            "scheduling_class": [1] * n,
            "priority": [priority] * n,
            "cpu_request": [0.1] * n,
            "memory_request": [0.05] * n,
        }
    )


def constructed():
    """Five tasks with a known fate (Janus & Rzadca §3.1)."""
    usage = pl.concat(
        [
            usage_rows(1, 0, [0.1] * 30, [0.1] * 30),  # long, kept
            usage_rows(1, 1, [0.2, 0.0, 0.4], [0.1, 1.7, 0.3]),  # short, kept, one avg>1 → inst 0.0
            usage_rows(2, 0, [0.0] * 25, [0.05] * 25),  # all-zero inst → dropped
            usage_rows(3, 0, [0.3] * 40, [0.3] * 40),  # failing (KILL) → dropped
            usage_rows(4, 0, [0.5] * 5, [0.5] * 5),  # no task_events → dropped
        ]
    )
    events = pl.concat(
        [
            events_rows(1, 0, [0, 1, 4]),
            events_rows(1, 1, [0, 1, 4], priority=0),
            events_rows(2, 0, [0, 1, 4]),
            events_rows(3, 0, [0, 1, 5, 0, 1, 4]),
        ]
    )
    return usage, events


def test_reduce_on_constructed_input():
    usage, events = constructed()
    out = mapreduce.reduce_bucket(usage.drop("end_time"), mapreduce.map_task_events(events, 1).drop("bucket"))
    counts = out["counts"].row(0, named=True)
    assert counts == {
        "tasks_with_usage": 5,
        "no_task_events": 1,
        "failing_dropped": 1,
        "all_zero_dropped": 1,
        "avg_above_one_replaced": 1,
        "long": 1,
        "short": 1,
    }
    stats = out["stats"]
    assert stats.select(TASK_KEY).rows() == [(1, 0), (1, 1)]
    short = stats.filter(pl.col("task_index") == 1).row(0, named=True)
    # avg record 1.7 replaced by its inst value 0.0: avg = (0.1, 0.0, 0.3)
    assert short["avg_mean"] == pytest.approx(0.4 / 3)
    assert short["avg_std"] == pytest.approx(np.std([0.1, 0.0, 0.3]))
    assert short["inst_mean"] == pytest.approx(0.2)
    assert short["n_records"] == 3 and not short["is_long"] and short["priority"] == 0
    long = stats.filter(pl.col("task_index") == 0).row(0, named=True)
    assert long["is_long"] and long["n_records"] == 30 and long["inst_std"] == pytest.approx(0)
    # the series holds the long task only, in time order; its histogram has all mass in bin 10
    assert out["series"].select(TASK_KEY).unique().rows() == [(1, 0)]
    assert out["series"]["start_time"].is_sorted()
    hist = np.asarray(out["hist"]["inst_hist"].to_list())
    assert hist.shape == (1, 100) and hist[0, 10] == pytest.approx(1.0) and hist.sum() == pytest.approx(1.0)


def test_task_events_piece_fields():
    _, events = constructed()
    pieces = mapreduce.map_task_events(events, 4)
    row = pieces.filter(pl.col("job_id") == 3).row(0, named=True)
    assert row["failing"] and row["n_kill"] == 1 and row["n_schedule"] == 2 and row["n_finish"] == 1
    assert row["first_schedule"] == T0 + 1 and row["last_event"] == T0 + 5
    assert row["bucket"] == (3 * 1_000_003 + 0) % 4
    assert not pieces.filter(pl.col("job_id") == 1)["failing"].any()


@pytest.mark.parametrize("code", [2, 3, 5, 6])
def test_each_failing_event_makes_a_task_failing(code):
    pieces = mapreduce.map_task_events(events_rows(9, 9, [0, 1, code, 0, 1, 4]), 1)
    assert pieces["failing"].to_list() == [True]


@pytest.mark.parametrize("code", [0, 1, 4, 7, 8])
def test_other_events_do_not(code):
    assert mapreduce.map_task_events(events_rows(9, 9, [0, 1, code]), 1)["failing"].to_list() == [False]


def test_long_threshold_is_inclusive():
    recs = pl.concat([usage_rows(1, 0, [0.1] * 24, [0.1] * 24), usage_rows(1, 1, [0.1] * 23, [0.1] * 23)])
    stats = tasks.task_statistics(recs)
    assert stats["is_long"].to_list() == [True, False]


def test_histogram_edges():
    recs = usage_rows(1, 0, [0.0, 0.0099, 0.01, 0.995, 1.0], [0.1] * 5)
    _, hist = tasks.inst_histograms(recs)
    expected = np.zeros(100)
    expected[[0, 1, 99]] = [0.4, 0.2, 0.4]  # 0 and 0.0099 → bin 0; 0.01 → bin 1; 0.995 and 1.0 → bin 99
    np.testing.assert_allclose(hist[0], expected, atol=1e-7)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.one_of(st.none(), st.floats(-0.5, 1.5))),
                min_size=1, max_size=60))
def test_histograms_match_a_brute_force_count_in_any_record_order(rows):
    """Janus §3.5's h_i[k] = |{t : k/100 ≤ x_i(t) < (k+1)/100}| / T_i (missing as 0, clipped to [0, 1]), one row per
    task in key order, whatever the order of the records (the reducer passes them sorted, other callers need not)."""
    recs = pl.DataFrame(rows, schema={"job_id": pl.Int64, "task_index": pl.Int64, "sampled_cpu_usage": pl.Float32},
                        orient="row")
    keys, hist = tasks.inst_histograms(recs)
    expected_keys = sorted({(j, t) for j, t, _ in rows})
    assert keys.rows() == expected_keys and hist.dtype == np.float32
    for (j, t), h in zip(expected_keys, hist):
        xs = [np.float32(x or 0.0) for jj, tt, x in rows if (jj, tt) == (j, t)]
        count = np.zeros(100)
        for x in xs:
            # in float32, as the column is stored: 0.9f · 100 rounds to 90
            count[min(99, int(np.floor(np.clip(x, np.float32(0), np.float32(1)) * np.float32(100))))] += 1
        np.testing.assert_allclose(h, count / len(xs), atol=1e-7)


def test_reduce_bucket_counts_each_dropped_task_once():
    """A failing task, a task without events, an all-zero task (whose avg > 1 record is not counted as fixed) and
    a kept task with one avg > 1 record: the counts, and only the kept task's statistics."""
    recs = pl.concat([
        usage_rows(1, 0, [0.2] * 30, [0.1] * 29 + [1.5]),  # kept, long, one avg > 1 replaced by its inst
        usage_rows(2, 0, [0.0] * 30, [1.5] * 30),  # all-zero inst: dropped, its avg > 1 not counted
        usage_rows(3, 0, [0.3] * 5, [0.3] * 5),  # failing
        usage_rows(4, 0, [0.3] * 5, [0.3] * 5),  # no task events
    ])
    events = pl.concat([events_rows(1, 0, [0, 1, 4]), events_rows(2, 0, [0, 1, 4]), events_rows(3, 0, [0, 1, 5])])
    out = mapreduce.reduce_bucket(recs, mapreduce.map_task_events(events, 1))
    assert out["counts"].row(0, named=True) == {"tasks_with_usage": 4, "no_task_events": 1, "failing_dropped": 1,
                                                "all_zero_dropped": 1, "avg_above_one_replaced": 1, "long": 1, "short": 0}
    stats = out["stats"].row(0, named=True)
    assert out["stats"].height == 1 and (stats["job_id"], stats["n_records"]) == (1, 30)
    assert stats["avg_mean"] == pytest.approx((29 * 0.1 + 0.2) / 30)  # the fixed record counts with its inst
    assert out["series"]["avg"].max() == pytest.approx(0.2)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**33), st.integers(0, 50_000), st.integers(1, 512))
def test_bucket_is_stable_and_in_range(job, task, n):
    df = pl.DataFrame({"job_id": [job], "task_index": [task]})
    b = df.select(mapreduce.bucket_expr(n)).item()
    assert 0 <= b < n and b == (job * 1_000_003 + task) % n


def test_sampled_windows_per_day_and_deterministic():
    w = mapreduce.sampled_windows(trace.TRACE_WINDOWS, 20, seed=3)
    assert len(w) == 29 * 20 and len(np.unique(w)) == len(w)
    assert np.all(np.bincount(w // 288) == 20)
    np.testing.assert_array_equal(w, mapreduce.sampled_windows(trace.TRACE_WINDOWS, 20, seed=3))
    assert not np.array_equal(w, mapreduce.sampled_windows(trace.TRACE_WINDOWS, 20, seed=4))


def test_job_window_aggregates_hand_computed():
    usage = pl.concat(
        [
            usage_rows(7, 0, [0.1, 0.1], [0.1, 0.3]),
            usage_rows(7, 1, [0.1], [0.2]),
            usage_rows(8, 0, [0.1], [0.5], start_window=1),
        ]
    )
    _, jw, sampled = mapreduce.map_task_usage(usage, 2, np.array([1], dtype=np.int32))
    w0 = jw.filter((pl.col("job_id") == 7) & (pl.col("window") == 0)).row(0, named=True)
    assert w0["n_tasks"] == 2 and w0["cpu_sum"] == pytest.approx(0.3) and w0["mem_sum"] == pytest.approx(0.02)
    assert w0["cpu_p10"] == pytest.approx(0.11) and w0["cpu_p90"] == pytest.approx(0.19)
    assert jw.height == 3
    assert sampled.select("window", *TASK_KEY).rows() == [(1, 7, 0), (1, 8, 0)]


# ----------------------------------------------------------------------------- sharded == direct


def random_trace(rng, n_jobs=40):
    """A random trace with every case: failing, all-zero, avg > 1, long and short tasks."""
    usage, events = [], []
    for job in range(n_jobs):
        job_id = int(rng.integers(1, 6_000_000_000))
        for task in range(int(rng.integers(1, 6))):
            n = int(rng.choice([3, 10, 30, 80]))
            start = int(rng.integers(0, 200))
            inst = rng.exponential(0.05, n).clip(0, 1)
            if rng.random() < 0.1:
                inst[:] = 0
            avg = (inst + rng.normal(0, 0.01, n)).clip(0, None)
            if rng.random() < 0.1:
                avg[rng.integers(n)] = 1.3
            usage.append(usage_rows(job_id, task, inst.round(4).tolist(), avg.round(4).tolist(), start))
            types = [0, 1] + ([int(rng.choice([2, 3, 5, 6])), 0, 1] if rng.random() < 0.2 else []) + [4]
            events.append(events_rows(job_id, task, types, priority=int(rng.integers(0, 12)), start=T0 + start * W))
    usage = pl.concat(usage).sort("start_time")
    events = pl.concat(events).sort("time")
    return usage, events


def shards_by_time(df, col, n):
    edges = np.linspace(df[col].min(), df[col].max() + 1, n + 1)
    return [df.filter((pl.col(col) >= edges[i]) & (pl.col(col) < edges[i + 1])) for i in range(n)]


def test_sharded_bucketed_path_equals_direct(tmp_path):
    rng = np.random.default_rng(11)
    usage, events = random_trace(rng)
    n_buckets = 5
    # full path through files: write shards in the trace format, read them back, map, write bucketed Parquet
    rec_files, piece_files = [], []
    for i, part in enumerate(shards_by_time(usage, "start_time", 4)):
        full = part.with_columns(pl.lit(None, dtype=pl.Float64).alias(c) for c in trace.column_names("task_usage") if c not in part.columns)
        src = tmp_path / f"usage-{i}.csv.gz"
        trace.write_table(full, src, "task_usage")
        recs, _, _ = mapreduce.map_task_usage(trace.read_table(src, "task_usage", mapreduce.USAGE_COLUMNS, float_dtype=pl.Float32), n_buckets, np.array([], np.int32))
        rec_files.append(tmp_path / f"rec-{i}.parquet")
        io.write_bucketed(recs, rec_files[-1], n_buckets)
    for i, part in enumerate(shards_by_time(events, "time", 3)):
        full = part.with_columns(pl.lit(None).alias(c) for c in trace.column_names("task_events") if c not in part.columns)
        src = tmp_path / f"events-{i}.csv.gz"
        trace.write_table(full, src, "task_events")
        pieces = mapreduce.map_task_events(trace.read_table(src, "task_events", mapreduce.TASK_EVENT_COLUMNS, float_dtype=pl.Float32), n_buckets)
        piece_files.append(tmp_path / f"pieces-{i}.parquet")
        io.write_bucketed(pieces, piece_files[-1], n_buckets)
    outs = [mapreduce.reduce_bucket(io.read_bucket(rec_files, b), io.read_bucket(piece_files, b)) for b in range(n_buckets)]
    sharded = pl.concat([o["stats"] for o in outs]).sort(TASK_KEY)
    counts = pl.concat([o["counts"] for o in outs]).sum()

    direct = mapreduce.reduce_bucket(usage.drop("end_time"), mapreduce.map_task_events(events, 1).drop("bucket"))
    assert counts.equals(direct["counts"])
    assert direct["counts"]["failing_dropped"].item() > 0 and direct["counts"]["all_zero_dropped"].item() > 0
    assert direct["counts"]["avg_above_one_replaced"].item() > 0 and direct["counts"]["long"].item() > 0
    expected = direct["stats"].sort(TASK_KEY)
    assert sharded.select(TASK_KEY).equals(expected.select(TASK_KEY))
    # the pipeline reads floats as float32: the trace's 4 significant digits survive (relative error < 1e-7)
    for col in ["n_records", "inst_mean", "inst_std", "avg_mean", "avg_std", "priority", "is_long"]:
        np.testing.assert_allclose(sharded[col].to_numpy().astype(float), expected[col].to_numpy().astype(float), rtol=1e-6, atol=1e-9)
    series = pl.concat([o["series"] for o in outs]).sort(*TASK_KEY, "start_time")
    want = direct["series"].sort(*TASK_KEY, "start_time")
    assert series.select(*TASK_KEY, "start_time", "machine_id").equals(want.select(*TASK_KEY, "start_time", "machine_id"))
    for col in ["inst", "avg", "memory"]:
        np.testing.assert_allclose(series[col].to_numpy(), want[col].to_numpy(), rtol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 30)), st.integers(0, 5)), min_size=0, max_size=120,
                unique=True),
       st.integers(1, 4), st.integers(1, 50))
def test_write_sorted_in_passes_is_the_whole_sort(tmp_path_factory, keys, files, rows_per_pass):
    """io.write_sorted (collect_tasks: one row per task) sorts a range of the first key per pass: the file is the
    sort of every file's rows (nulls first) whatever the passes, and the same bytes when written again."""
    from colocate import io

    d = tmp_path_factory.mktemp("sorted")
    rng = np.random.default_rng(len(keys))
    df = pl.DataFrame(keys, schema={"job_id": pl.Int64, "task_index": pl.Int64}, orient="row").with_columns(
        x=pl.Series(rng.random(len(keys))))
    paths = [d / f"b{i}.parquet" for i in range(files)]
    for i, p in enumerate(paths):
        df.gather_every(files, offset=i).write_parquet(p)
    n = io.write_sorted(paths, d / "one.parquet", ["job_id", "task_index"], rows_per_pass=rows_per_pass)
    io.write_sorted(paths, d / "two.parquet", ["job_id", "task_index"], rows_per_pass=rows_per_pass)
    out = pl.read_parquet(d / "one.parquet")
    assert n == len(keys) and out.equals(df.sort("job_id", "task_index"))
    assert (d / "one.parquet").read_bytes() == (d / "two.parquet").read_bytes()
    assert not list(d.glob("*.tmp"))


def test_write_sorted_bounds_a_pass_and_leaves_nothing_on_failure(tmp_path, monkeypatch):
    """With 1,000 rows and 100 per pass, no pass collects more than about 100 rows; a failing read leaves no file."""
    from colocate import io

    seen = []
    collect = pl.LazyFrame.collect

    def spy(self, *a, **k):
        out = collect(self, *a, **k)
        seen.append(out.width > 1 and out.height)
        return out

    df = pl.DataFrame({"job_id": np.arange(1000)[::-1], "task_index": np.zeros(1000, np.int64), "x": np.ones(1000)})
    df.write_parquet(tmp_path / "a.parquet")
    monkeypatch.setattr(pl.LazyFrame, "collect", spy)
    io.write_sorted([tmp_path / "a.parquet"], tmp_path / "out.parquet", ["job_id", "task_index"], rows_per_pass=100)
    monkeypatch.undo()
    passes = [h for h in seen if h]
    assert len(passes) == 10 and max(passes) <= 101 and sum(passes) == 1000
    assert pl.read_parquet(tmp_path / "out.parquet")["job_id"].to_list() == list(range(1000))
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not parquet")
    with pytest.raises(Exception):
        io.write_sorted([tmp_path / "bad.parquet"], tmp_path / "bad-out.parquet", ["job_id"])
    assert not list(tmp_path.glob("bad-out*"))
    # a pass that fails after others were written leaves neither the file nor its temporary
    calls = []
    to_arrow = pl.DataFrame.to_arrow

    def third_fails(self, *a, **k):
        calls.append(self.height)
        if len(calls) == 4:  # the schema, then passes 1 and 2 are written, pass 3 fails
            raise OSError("disk full")
        return to_arrow(self, *a, **k)

    monkeypatch.setattr(pl.DataFrame, "to_arrow", third_fails)
    with pytest.raises(OSError, match="disk full"):
        io.write_sorted([tmp_path / "a.parquet"], tmp_path / "late.parquet", ["job_id"], rows_per_pass=100)
    assert len(calls) == 4 and not list(tmp_path.glob("late*"))


def test_bucket_frames_reads_a_parts_buckets_in_order_and_checks_their_numbers(tmp_path):
    """A part's bucket files come back one at a time with their bucket numbers (not their positions), the asked
    columns only; a list of numbers that does not match the files (in count, or a file's bucket-N name) is an error
    that says so."""
    paths = []
    for b in (4, 5, 7):
        paths.append(tmp_path / f"bucket-{b}.parquet")
        pl.DataFrame({"job_id": [b, b], "inst": [0.1 * b, 0.2 * b], "avg": [0.0, 1.0]}).write_parquet(paths[-1])
    got = list(io.bucket_frames(paths, [4, 5, 7], ["job_id", "inst"]))
    assert [b for b, _ in got] == [4, 5, 7]
    assert all(f.columns == ["job_id", "inst"] and f["job_id"].to_list() == [b, b] for b, f in got)
    with pytest.raises(ValueError, match="3 bucket files for 2 bucket numbers"):
        list(io.bucket_frames(paths, [4, 5]))
    with pytest.raises(ValueError, match=r"bucket-5\.parquet: the file of bucket 5, given as bucket 6"):
        list(io.bucket_frames(paths, [4, 6, 7]))  # a stale or shifted list of numbers
    nested = tmp_path / "bucket-1" / "reduce" / "bucket-12" / "series.parquet"  # a run may be named bucket-1
    nested.parent.mkdir(parents=True)
    pl.DataFrame({"job_id": [1]}).write_parquet(nested)
    assert [b for b, _ in io.bucket_frames([nested], [12])] == [12]
    with pytest.raises(ValueError, match="the file of bucket 12, given as bucket 1$"):
        list(io.bucket_frames([nested], [1]))


@settings(max_examples=60, deadline=None)
@given(jobs=st.lists(st.integers(0, 40), min_size=0, max_size=80), n_buckets=st.integers(1, 7), chunks=st.integers(1, 3))
def test_bucket_records_is_a_stable_sort_by_bucket_whether_or_not_it_consumes(jobs, n_buckets, chunks):
    """The records grouped by bucket, file order kept within one (the stable sort it replaces), for a frame of
    several chunks as a CSV parse gives; consuming leaves the shard without the columns it moved."""
    n = len(jobs)
    frame = pl.DataFrame({"start_time": np.arange(n, dtype=np.int64), "end_time": np.arange(n, dtype=np.int64) + 1,
                          "job_id": jobs, "task_index": [j % 3 for j in jobs], "machine_id": [None] * n},
                         schema_overrides={"job_id": pl.Int64, "task_index": pl.Int64, "machine_id": pl.Int64})
    frame = frame.with_columns(pl.lit(0.5, pl.Float32).alias(c) for c in mapreduce.USAGE_COLUMNS[5:])
    if n and chunks > 1:  # the same rows in several chunks
        cut = np.linspace(0, n, chunks + 1).astype(int)
        frame = pl.concat([frame.slice(a, b - a) for a, b in zip(cut, cut[1:])], rechunk=False)
    expected = frame.with_columns(mapreduce.bucket_expr(n_buckets)).sort("bucket", maintain_order=True)
    assert mapreduce.bucket_records(frame, n_buckets).equals(expected)
    assert frame.columns == mapreduce.USAGE_COLUMNS  # not consumed
    assert mapreduce.bucket_records(frame, n_buckets, consume=True).equals(expected)
    assert frame.width == 0


def test_series_coverage_hand_computed():
    """Task (1, 0): windows 0, 1, 3 of 0..3 (two records in window 1): 3 of 4; task (2, 5): one record, whole."""
    w = trace.WINDOW_US
    series = pl.DataFrame({"job_id": [1, 1, 1, 1, 2], "task_index": [0, 0, 0, 0, 5],
                           "start_time": [600_000_000 + w * k for k in (0, 1, 1, 3)] + [600_000_000]})
    series = series.with_columns(pl.when(pl.int_range(pl.len()) == 2).then(pl.col("start_time") + 10_000_000)
                                 .otherwise(pl.col("start_time")).alias("start_time"))
    per_task = tasks.series_coverage(series, w)
    assert per_task.rows() == [(1, 0, 4, 4, 3, 0.75), (2, 5, 1, 1, 1, 1.0)]
    row = tasks.coverage_summary(per_task).row(0, named=True)
    assert row == {"tasks": 2, "windows_spanned": 5, "windows_present": 4, "share_pooled": 0.8, "share_median": 0.875,
                   "share_p10": 0.775, "complete": 0.5}


@given(st.lists(st.integers(0, 200), min_size=1, max_size=60), st.floats(0.05, 1.0), st.integers(0, 2**31))
@settings(max_examples=60, deadline=None)
def test_a_random_part_of_a_series_keeps_its_share_of_windows(windows, keep, seed):
    """Keeping each record with probability p, a series' present windows among those spanned are counted exactly
    (brute force over the kept set), and the whole series' share is 1 once its windows are made contiguous."""
    w = trace.WINDOW_US
    rng = np.random.default_rng(seed)
    kept = [k for k in windows if rng.random() < keep] or windows[:1]
    got = tasks.series_coverage(pl.DataFrame({"job_id": 7, "task_index": 0, "start_time": [k * w for k in kept]}), w)
    assert got.row(0)[2:] == (len(kept), max(kept) - min(kept) + 1, len(set(kept)), len(set(kept)) / (max(kept) - min(kept) + 1))
    whole = tasks.series_coverage(pl.DataFrame({"job_id": 7, "task_index": 0, "start_time": [k * w for k in range(min(kept), max(kept) + 1)]}), w)
    assert whole["share"].item() == 1.0
