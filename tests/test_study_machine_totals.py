"""studies/machine_totals.py on a constructed run: a machine whose total alternates 0.3 / 0.6 under a capacity of 0.5,
and one that stays at 0.2, with the shares and the Unuvar statistics worked out by hand."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import polars as pl
import pytest

from colocate.trace import TRACE_START_US, WINDOW_US, write_table
from wfutil import REPO

pytestmark = pytest.mark.study

WINDOWS = 600


def _fake_run(tmp_path):
    w = np.arange(WINDOWS)
    start = TRACE_START_US + w * WINDOW_US
    busy = np.where(w % 2 == 0, 0.3, 0.6)  # machine 7: two tasks sharing this total; machine 8: one task at 0.2
    records = pl.DataFrame({
        "machine_id": np.concatenate([np.full(2 * WINDOWS, 7), np.full(WINDOWS, 8)]),
        "start_time": np.concatenate([start, start, start]),
        "cpu_rate": np.concatenate([busy / 2, busy / 2, np.full(WINDOWS, 0.2)]),
    })
    run = tmp_path / "results" / "r"
    (run / "map/task_usage/batch-00000-00000-of-00001").mkdir(parents=True)
    records.write_parquet(run / "map/task_usage/batch-00000-00000-of-00001/records.parquet")
    trace = tmp_path / "trace"
    (trace / "machine_events").mkdir(parents=True)
    events = pl.DataFrame({"time": [0, 0], "machine_id": [7, 8], "event_type": [0, 0], "platform_id": ["p", "p"],
                           "cpus": [0.5, 0.5], "memory": [0.5, 0.5]})
    write_table(events, trace / "machine_events/part-00000-of-00001.csv.gz", "machine_events")
    (run / "logs/map_task_usage").mkdir(parents=True)  # as a map job logs what it read (relative to the workdir)
    (run / "logs/map_task_usage/batch-00000-00000-of-00001.log").write_text(
        "2026-11-27 01:08:16,900 INFO read 1800 records from trace/task_usage/part-00000-of-00001.csv.gz\n")
    return run, trace


def _study(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "studies" / "machine_totals.py"), *map(str, args)],
                          capture_output=True, text=True)


def test_shares_over_capacity_and_the_statistics_raw_and_capped(tmp_path):
    run, trace = _fake_run(tmp_path)
    res = _study(run, trace, "--observations", WINDOWS)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    # 300 of machine 7's 600 windows are above 0.5, none of machine 8's: 300 of 1,200
    assert "exceeds the machine's capacity: 25.00% of 1,200 (above 1.2 × capacity: 0.00%)" in out  # 0.6 is not above 0.6
    rows = {int(line.split()[0]): line.split() for line in out.splitlines() if line.split()[:1] in (["7"], ["8"])}
    assert list(rows) == [7, 8]  # densest first
    tasks, cap, over = (float(v) for v in rows[7][1:4])
    assert (tasks, cap, over) == (2.0, 0.5, 0.5)
    # raw: the maximum 0.6 is 90%, so U is 0.45 / 0.9, half of them at or above 0.8
    raw_mean, raw_std, raw_p = (float(v) for v in rows[7][4:7])
    assert raw_mean == 0.675 and raw_p == 0.5
    assert abs(raw_std - np.std(np.tile([0.45, 0.9], 300), ddof=1)) < 1e-3
    # capped at 0.5: totals 0.3 / 0.5, U 0.54 / 0.9
    cap_mean, _, cap_p = (float(v) for v in rows[7][7:10])
    assert cap_mean == 0.72 and cap_p == 0.5
    # machine 8 is flat: U = 0.9 everywhere, never over its capacity
    assert [float(v) for v in rows[8][3:]] == [0.0, 0.9, 0.0, 1.0, 0.9, 0.0, 1.0]


def test_a_run_too_short_says_so(tmp_path):
    run, trace = _fake_run(tmp_path)
    res = _study(run, trace)  # 500 observations of 600 windows: reads; 601 cannot
    assert res.returncode == 0
    res = _study(run, trace, "--observations", WINDOWS + 1)
    assert res.returncode == 0 and "no machine spans 601 windows: nothing to read" in res.stdout
    assert "Traceback" not in res.stderr


def test_the_trace_defaults_to_the_one_the_logs_name_and_another_is_refused(tmp_path):
    run, trace = _fake_run(tmp_path)
    res = _study(run, "--observations", WINDOWS)
    assert res.returncode == 0 and "exceeds the machine's capacity: 25.00% of 1,200" in res.stdout
    other = tmp_path / "other"
    (other / "machine_events").mkdir(parents=True)
    events = pl.DataFrame({"time": [0], "machine_id": [99], "event_type": [0], "platform_id": ["p"], "cpus": [0.5],
                           "memory": [0.5]})
    write_table(events, other / "machine_events/part-00000-of-00001.csv.gz", "machine_events")
    res = _study(run, other)
    assert res.returncode != 0 and f"{other}: its machine_events name none of the 2 machines" in res.stderr
    (run / "logs/map_task_usage/batch-00000-00000-of-00001.log").write_text("no trace named here\n")
    res = _study(run)
    assert res.returncode != 0 and "names the trace the run read: give TRACE_DIR" in res.stderr


def test_a_run_without_records_is_named(tmp_path):
    (tmp_path / "nothing").mkdir()
    res = _study(tmp_path / "nothing", tmp_path)
    assert res.returncode != 0 and f"{tmp_path / 'nothing'}: no map/task_usage" in res.stderr


def test_a_machine_without_a_capacity_is_read_but_not_capped(tmp_path):
    run, trace = _fake_run(tmp_path)
    events = pl.DataFrame({"time": [0], "machine_id": [7], "event_type": [0], "platform_id": ["p"], "cpus": [0.5],
                           "memory": [0.5]})
    write_table(events, trace / "machine_events/part-00000-of-00001.csv.gz", "machine_events")
    res = _study(run, trace, "--observations", WINDOWS)
    assert res.returncode == 0, res.stderr
    row = next(line.split() for line in res.stdout.splitlines() if line.split()[:1] == ["8"])
    assert row[2:4] == ["nan", "nan"] and row[4:7] == row[7:10] == ["0.900", "0.000", "1.000"]
    # the share over capacity counts only machines with one: machine 7's 300 of 600
    assert "exceeds the machine's capacity: 50.00% of 600" in res.stdout
