"""The identity between D's shares of tasks and of alive jobs (``alive_share.needed_other_tasks``, a property, at
the paper's pair read from the claims table) and studies/alive_share.py: a constructed run's window totals worked out
by hand, and the real trace's start on the shipped sample (known answers)."""

from __future__ import annotations

import subprocess
import sys

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from colocate.analysis import jobs
from wfutil import REPO

pytestmark = pytest.mark.study

sys.path.insert(0, str(REPO / "studies"))
import alive_share  # noqa: E402


def test_needed_other_tasks_by_hand():
    # the paper's pair, as beaumont.tsv prints it (Fig 1's 65%, Table 1's 0.058)
    pair = alive_share.paper_pair()
    assert pair == {"task_share": pytest.approx(0.65), "alive_share": pytest.approx(0.058)}
    # 0.35 / 0.65 · 0.058 / 0.942 = 0.033153…; T_D = 30 needs about one task
    assert alive_share.needed_other_tasks(1.0, **pair) == pytest.approx(0.35 / 0.65 * 0.058 / 0.942)
    assert alive_share.needed_other_tasks(30.0, **pair) == pytest.approx(0.9946, abs=1e-4)
    assert alive_share.needed_other_tasks(10.0, task_share=0.5, alive_share=0.5) == pytest.approx(10.0)


@given(st.floats(1.0, 1000.0), st.floats(0.05, 0.95), st.floats(0.01, 0.9))
def test_needed_other_tasks_gives_back_both_shares(tasks_per_d_job, task_share, alive_share_):
    """One job of D with T_D tasks and (1 − s)/s other jobs of t_N tasks each: D is s of the jobs and f of the tasks."""
    t_n = alive_share.needed_other_tasks(tasks_per_d_job, task_share, alive_share_)
    others = (1 - alive_share_) / alive_share_
    assert 1 / (1 + others) == pytest.approx(alive_share_)
    assert tasks_per_d_job / (tasks_per_d_job + t_n * others) == pytest.approx(task_share)


def test_run_shares_by_hand(tmp_path):
    run = tmp_path / "results" / "r"
    (run / "jobs").mkdir(parents=True)
    # window 0: 2 jobs of D with 20 tasks, 8 others with 10; window 1: 1 of D with 10, 3 others with 6; window 2: none
    pl.DataFrame({"window": [0, 1, 2], "jobs": [10, 4, 0], "jobs_D": [2, 1, 0], "tasks": [30, 16, 0],
                  "tasks_D": [20, 10, 0]}).write_parquet(run / "jobs" / "window_totals.parquet")
    r = alive_share.run_shares(run)
    assert r["T_D"] == pytest.approx(30 / 3)
    assert r["t_N"] == pytest.approx(16 / 11)
    assert r["s"] == pytest.approx((0.2 + 0.25) / 2)  # the mean over windows with a job, as Table 1's row
    assert r["f"] == pytest.approx(30 / 46)  # over task-windows, as Fig 1's
    assert r["needed"] == pytest.approx(0.35 / 0.65 * 0.058 / 0.942 * 10.0)  # 0.33: fewer than one task
    empty = pl.DataFrame({"window": [0], "jobs": [3], "jobs_D": [0], "tasks": [5], "tasks_D": [0]})
    assert jobs.alive_share_identity(empty) is None  # no job of D: too little data, no identity


def test_the_real_trace_start_on_the_shipped_sample():
    real = alive_share.trace_start(REPO / "workflow" / "data" / "google-2011-sample")
    assert (real["jobs"], real["tasks"]) == (3976, 132_982)  # workflow/papers/real-trace.tsv's running tasks, by job
    assert real["D"] == 235  # 5.9% of the alive jobs, Beaumont Table 1's 5.8% (its 240.9 jobs of D)
    assert real["D_tasks"] / real["D"] == pytest.approx(453, abs=1)  # Beaumont §3: 470 tasks a job of D
    assert real["others_ended"] == pytest.approx(0.030, abs=0.001)


def test_a_run_without_window_totals_is_named(tmp_path):
    res = subprocess.run([sys.executable, str(REPO / "studies" / "alive_share.py"), str(tmp_path / "nothing")],
                         capture_output=True, text=True)
    assert res.returncode != 0
    assert str(tmp_path / "nothing" / "jobs" / "window_totals.parquet") in res.stderr
