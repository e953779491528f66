"""studies/unuvar_sets.py on a constructed run, with the statistics worked out by hand.

The run's 20 long tasks (reduce series) alternate 0.1 / 0.2 over 600 windows; its map holds 60 tasks that alternate
0.05 / 0.15. A set's total alternates too, so at §IV-C's 90% normalisation U is 0.45 / 0.9 for the long tasks and
0.3 / 0.9 for every task: half the observations at or above 0.8 either way, means 0.675 and 0.6.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import polars as pl

from colocate.trace import TRACE_START_US, WINDOW_US
from wfutil import REPO

pytestmark = pytest.mark.study

WINDOWS = 600


def _tasks(n: int, low: float, high: float, column: str) -> pl.DataFrame:
    w = np.arange(WINDOWS)
    return pl.DataFrame({
        "job_id": np.repeat(np.arange(n, dtype=np.int64) + 100, WINDOWS),  # one task per job: the cap is 1
        "task_index": np.zeros(n * WINDOWS, dtype=np.int64),
        "start_time": np.tile(TRACE_START_US + w * WINDOW_US, n),
        column: np.tile(np.where(w % 2 == 0, low, high), n),
    })


def _fake_run(tmp_path):
    run = tmp_path / "results" / "r"
    (run / "reduce/bucket-0").mkdir(parents=True)
    _tasks(20, 0.1, 0.2, "avg").write_parquet(run / "reduce/bucket-0/series.parquet")
    (run / "map/task_usage/batch-00000-00000-of-00001").mkdir(parents=True)
    _tasks(60, 0.05, 0.15, "cpu_rate").write_parquet(run / "map/task_usage/batch-00000-00000-of-00001/records.parquet")
    return run


def _study(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "studies" / "unuvar_sets.py"), *map(str, args)],
                          capture_output=True, text=True)


def _stat(out: str, size: int, name: str) -> list[str]:
    block = out.split(f"\n{size} tasks (cap ")[1].split("\n\n")[0]
    line = next(line for line in block.splitlines() if line.strip().startswith(name))
    return line.split("median ")[1].split()


def test_long_tasks_from_the_workdir_or_the_run_directory(tmp_path):
    run = _fake_run(tmp_path)
    by_workdir = _study(tmp_path, "--sets", 2, "--observations", WINDOWS)
    by_run = _study(run, "--sets", 2, "--observations", WINDOWS)
    assert by_workdir.returncode == 0, by_workdir.stderr
    assert by_run.stdout == by_workdir.stdout
    out = by_run.stdout
    assert out.startswith("20 long tasks of 20 jobs over windows 0..599")
    assert "sizes 49, 88, 154 skipped: the long tasks run 20.0 at a time on average" in out
    assert _stat(out, 18, "mean")[0] == "0.675"
    assert _stat(out, 18, "P(U ≥ 0.8) actual")[0] == "0.500"
    assert _stat(out, 18, "tasks drawn")[0] == "18.000"  # 18 tasks running the whole span


def test_every_task_is_drawn_from_the_map_records(tmp_path):
    _fake_run(tmp_path)
    res = _study(tmp_path, "--sets", 2, "--observations", WINDOWS, "--tasks", "all")
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert out.startswith("60 tasks of 60 jobs over windows 0..599")
    assert "sizes 88, 154 skipped: the tasks run 60.0 at a time on average" in out
    for size in (18, 49):
        assert _stat(out, size, "mean")[0] == "0.600"  # U is 0.3 / 0.9
        assert _stat(out, size, "P(U ≥ 0.8) actual")[0] == "0.500"
        assert _stat(out, size, "tasks drawn")[0] == f"{size}.000"


def test_a_directory_without_a_run_is_named(tmp_path):
    res = _study(tmp_path, "--tasks", "all")
    assert res.returncode != 0
    assert f"{tmp_path}: no results/*/map/task_usage/*/records.parquet" in res.stderr


def test_the_what_ifs_clip_each_task_at_its_own_quantile_and_smooth_the_total():
    sys.path.insert(0, str(REPO / "studies"))
    import unuvar_sets

    w = np.arange(4)
    series = pl.DataFrame({"job_id": [1] * 4 + [2] * 4, "task_index": [0] * 8,
                           "start_time": np.tile(TRACE_START_US + w * WINDOW_US, 2),
                           "avg": [1.0, 2.0, 3.0, 4.0] + [10.0] * 4})
    drawn = pl.DataFrame({"job_id": [1, 2], "task_index": [0, 0]})
    # task 1's median is 2.5: its 3 and 4 are capped there; task 2 is constant
    got = unuvar_sets.clipped_total([series.lazy()], drawn, "avg", 0, 3, 0.5)
    assert got.tolist() == [11.0, 12.0, 12.5, 12.5]
    assert unuvar_sets.clipped_total([series.lazy()], drawn, "avg", 0, 3, 1.0).tolist() == [11.0, 12.0, 13.0, 14.0]
    assert unuvar_sets.smoothed(np.array([0.0, 3, 0, 3, 0]), 3).tolist() == [1.5, 1.0, 2.0, 1.0, 1.5]  # ends: 2 windows
    assert unuvar_sets.smoothed(np.array([0.0, 3]), 1).tolist() == [0.0, 3.0]


def test_what_if_arguments_out_of_range_are_refused_by_name(tmp_path):
    _fake_run(tmp_path)
    res = _study(tmp_path, "--clip-quantile", 0)
    assert res.returncode != 0 and "--clip-quantile must be in (0, 1]" in res.stderr


def test_the_what_ifs_divide_out_the_daily_cycle_or_the_tasks_running():
    sys.path.insert(0, str(REPO / "studies"))
    import unuvar_sets

    per_day = 288
    slot = np.arange(2 * per_day) % per_day
    cycle = 1.0 + 0.5 * np.cos(2 * np.pi * slot / per_day)  # a smooth daily cycle, the same on both days
    level = np.r_[np.full(per_day, 2.0), np.full(per_day, 3.0)]  # and the days' levels
    got = unuvar_sets.divided(level * cycle, np.ones(2 * per_day), "daily-profile")
    # the cycle is divided out (to within 0.5%, the hour's smoothing of its profile): each day is flat at its own level
    assert np.allclose(got[:per_day], got[0], rtol=5e-3) and np.allclose(got[per_day:], got[-1], rtol=5e-3)
    assert got[-1] / got[0] == pytest.approx(1.5, rel=1e-3)
    running = np.array([1.0, 2, 4, 0])
    assert unuvar_sets.divided(np.array([2.0, 4, 8, 0]), running, "running").tolist() == pytest.approx(
        [2 * 7 / 3, 2 * 7 / 3, 2 * 7 / 3, 0.0])  # usage per running task, at the mean of the windows with tasks
    assert unuvar_sets.divided(np.array([1.0, 2]), np.array([1.0, 1]), "none").tolist() == [1.0, 2.0]


def test_the_grid_shifts_by_its_offset_and_the_peak_is_decomposed():
    sys.path.insert(0, str(REPO / "studies"))
    import unuvar_sets

    # 4 of 10 windows: 0, 3, 6, 9; one window later 1, 4, 7 and the last stays the last
    values, at = unuvar_sets.observe(np.arange(10.0), 4, "window", 1)
    assert at.tolist() == [1, 4, 7, 9] and values.tolist() == [1.0, 4.0, 7.0, 9.0]
    assert unuvar_sets.observe(np.arange(10.0), 4, "window")[1].tolist() == [0, 3, 6, 9]
    w = np.arange(4)
    series = pl.DataFrame({"job_id": [1] * 4 + [2] * 4, "task_index": [0] * 8,
                           "start_time": np.tile(TRACE_START_US + w * WINDOW_US, 2),
                           "avg": [1.0, 2.0, 3.0, 4.0] + [1.0] * 4})
    drawn = pl.DataFrame({"job_id": [1, 2], "task_index": [0, 0]})
    # the set's total is 2, 3, 4, 5; over the observations 2 and 5 (mean 3.5) the peak's rise is 1.5. At window 3
    # both tasks run (own means 2.5 + 1 = 3.5: who runs adds 0), task 1 at 4, 1.5 above its own mean (all of the
    # rise; task 1 is the production task), at 1.6× its mean, over 4 records (1/3 h)
    got = unuvar_sets.peak_parts([series.lazy()], drawn, "avg", 0, 3, 3.5, 5.0, pl.DataFrame({"job_id": [1], "task_index": [0]}))
    assert got == pytest.approx([0.0, 1.0, 1.0, 1.0, 1.6, 4 / 12])
    # over a mean of 3 (a set whose other windows ran fewer tasks), who runs gives 0.5 / 2 of a rise of 2
    got = unuvar_sets.peak_parts([series.lazy()], drawn, "avg", 0, 3, 3.0, 5.0)
    assert got[:2] == pytest.approx([0.25, 0.75]) and np.isnan(got[2])
    # no rise, or no task running at the peak window: nothing to split
    assert np.isnan(unuvar_sets.peak_parts([series.lazy()], drawn, "avg", 0, 3, 5.0, 5.0)).all()
    assert np.isnan(unuvar_sets.peak_parts([series.lazy()], drawn, "avg", 0, 9, 3.5, 5.0)).all()


def test_offsets_average_over_shifted_grids_and_are_refused_with_file_observations(tmp_path):
    run = _fake_run(tmp_path)
    # every window observed (600 of 600): the grid's spacing is one window, so each offset is 0 and changes nothing
    res = _study(run, "--sets", 1, "--observations", WINDOWS, "--offsets", 3, "--peak")
    assert res.returncode == 0, res.stderr
    assert _stat(res.stdout, 18, "P(U ≥ 0.8) actual")[0] == "0.500"
    # the 3 grids are one (offset 0 three times): counted once, so the set's rows are independent draws again
    assert "grids" not in res.stdout.split("\n", 1)[1] and "K-S test at 0.05 rejects the Beta in 1 of 1 sets\n" in res.stdout
    # 600 windows observed 300 at a time: two grids (offsets 0 and 1) of one set, no range verdict over them
    two = _study(run, "--sets", 1, "--observations", WINDOWS // 2, "--offsets", 2)
    assert two.returncode == 0, two.stderr
    assert "P(U ≥ 0.8) actual of one set over its 2 grids" in two.stdout and " the range" not in two.stdout
    # the peak window (0.2 each) is 0.05 above each task's own mean 0.15: all of the rise is the tasks' above their
    # means, 1/18 of it the heaviest's, at 1.33× its mean; no production task (the run has no task_stats: NaN)
    assert ("who runs (their own means) 0.00, tasks above their own means 1.00, of which production tasks nan, "
            "the heaviest task's rise 0.06, the heaviest task over its own mean 1.33, the heaviest task's hours 50.00") in res.stdout
    bad = _study(run, "--offsets", 2, "--observation", "file")
    assert bad.returncode != 0 and "--offsets must be ≥ 1, and 1 with --observation file" in bad.stderr
    bad = _study(run, "--peak", "--smooth", 3)
    assert bad.returncode != 0 and "--peak splits the recorded total: it cannot follow --smooth" in bad.stderr


def test_the_throttle_bounds_each_machine_total_by_its_capacity():
    sys.path.insert(0, str(REPO / "studies"))
    import unuvar_sets

    # machine 7 (capacity 0.5) runs production task (1, 0) and batch task (2, 0); machine 8's capacity is unknown
    start = TRACE_START_US + np.arange(3) * WINDOW_US
    records = pl.DataFrame({"job_id": [1, 1, 1, 2, 2, 2, 3], "task_index": [0] * 7,
                            "machine_id": [7] * 6 + [8], "start_time": [*start, *start, start[0] + 7],
                            "cpu_rate": [0.4, 0.6, 0.1, 0.3, 0.2, 0.1, 5.0]})
    capacity = pl.DataFrame({"machine_id": [7], "capacity": [0.5]})
    production = pl.DataFrame({"job_id": [1], "task_index": [0]})
    # window 0: 0.4 + 0.3 over 0.5; window 1: 0.6 + 0.2, production alone over it; window 2: 0.2, under
    prop = unuvar_sets.throttle_factors(records.lazy(), capacity, production, "proportional").sort("window")
    assert prop["window"].to_list() == [0, 1, 2]
    assert prop["f_production"].to_list() == pytest.approx([0.5 / 0.7, 0.5 / 0.8, 1.0])
    assert prop["f_other"].to_list() == prop["f_production"].to_list()
    first = unuvar_sets.throttle_factors(records.lazy(), capacity, production, "batch-first").sort("window")
    assert first["f_production"].to_list() == pytest.approx([1.0, 0.5 / 0.6, 1.0])  # production keeps its own
    assert first["f_other"].to_list() == pytest.approx([0.1 / 0.3, 0.0, 1.0])  # the batch task gets what remains
    # the series scaled by their window's factors: machine 7's totals are its capacity at most; machine 8 unchanged
    series = records.rename({"cpu_rate": "avg"})
    for factors in (prop, first):
        got = pl.concat([p.collect() for p in unuvar_sets.throttled([series.lazy()], factors, production, "avg")])
        assert got.columns == series.columns
        assert got.filter(pl.col("machine_id") == 7).group_by("start_time").agg(pl.col("avg").sum())["avg"].max() \
            == pytest.approx(0.5)
        assert got.filter(pl.col("machine_id") == 8)["avg"].to_list() == [5.0]
    got = pl.concat([p.collect() for p in unuvar_sets.throttled([series.lazy()], first, production, "avg")])
    assert got.filter(pl.col("job_id") == 2)["avg"].to_list() == pytest.approx([0.1, 0.0, 0.1])


def test_the_throttle_on_a_run_reads_its_trace_and_refuses_batch_first_without_its_tasks(tmp_path):
    from colocate.trace import write_table

    run = _fake_run(tmp_path)
    # every map task (60 of them, 0.05 / 0.15) on machine 7 of capacity 6: the totals 3 / 9 are cut to 3 / 6
    recs = pl.read_parquet(run / "map/task_usage/batch-00000-00000-of-00001/records.parquet")
    recs.with_columns(machine_id=pl.lit(7, pl.Int64)).write_parquet(run / "map/task_usage/batch-00000-00000-of-00001/records.parquet")
    series = pl.read_parquet(run / "reduce/bucket-0/series.parquet")
    series.with_columns(machine_id=pl.lit(7, pl.Int64)).write_parquet(run / "reduce/bucket-0/series.parquet")
    trace = tmp_path / "trace"
    (trace / "machine_events").mkdir(parents=True)
    write_table(pl.DataFrame({"time": [0], "machine_id": [7], "event_type": [0], "platform_id": ["p"], "cpus": [6.0],
                              "memory": [0.5]}), trace / "machine_events/part-00000-of-00001.csv.gz", "machine_events")
    (run / "logs/map_task_usage").mkdir(parents=True)
    (run / "logs/map_task_usage/batch-00000-00000-of-00001.log").write_text(
        "INFO read 36000 records from trace/task_usage/part-00000-of-00001.csv.gz\n")
    res = _study(run, "--sets", 1, "--observations", WINDOWS, "--throttle", "proportional")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("throttle proportional: 50.00% of 600 machine-windows above their machine's capacity; "
                                 "production tasks throttled in 50.00%")
    # the long tasks' 0.1 / 0.2 become 0.1 / 0.2 × 6/9: U = 0.9 × 2/2.667 = 0.675 / 0.9, half at or above 0.8
    assert float(_stat(res.stdout, 18, "mean")[0]) == pytest.approx(0.7875, abs=1e-3)
    assert _stat(res.stdout, 18, "P(U ≥ 0.8) actual")[0] == "0.500"
    res = _study(run, "--sets", 1, "--observations", WINDOWS, "--throttle", "batch-first")
    assert res.returncode != 0 and "--throttle batch-first needs the run's tasks/task_stats.parquet" in res.stderr


def test_batch_first_gives_nothing_to_other_tasks_where_production_alone_fills_the_machine():
    sys.path.insert(0, str(REPO / "studies"))
    import unuvar_sets

    # production 0.6 on a machine of 0.5, and a batch task that records 0 CPU: its factor is 0 (not 0/0), and the
    # window counts as over capacity; production is listed twice and counted once
    records = pl.DataFrame({"job_id": [1, 2], "task_index": [0, 0], "machine_id": [7, 7],
                            "start_time": [TRACE_START_US] * 2, "cpu_rate": [0.6, 0.0]})
    production = pl.DataFrame({"job_id": [1, 1], "task_index": [0, 0]})
    f = unuvar_sets.throttle_factors(records.lazy(), pl.DataFrame({"machine_id": [7], "capacity": [0.5]}), production,
                                     "batch-first")
    assert f.row(0, named=True) == {"machine_id": 7, "window": 0, "f_production": pytest.approx(0.5 / 0.6),
                                    "f_other": 0.0, "over": True}
    got = pl.concat([p.collect() for p in unuvar_sets.throttled([records.rename({"cpu_rate": "avg"}).lazy()], f,
                                                                 production, "avg")])
    assert got["avg"].to_list() == pytest.approx([0.5, 0.0]) and got.height == 2
