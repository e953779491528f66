"""How the benchmarks and the studies find a finished run: a run's directory (results/<run>) or a working directory
holding one run; a path with none or with several is refused by name (bench/finished_run.py, bench/memory.py,
studies/machine_totals.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from wfutil import REPO

sys.path.insert(0, str(REPO / "bench"))
import finished_run  # noqa: E402


def _runs(tmp_path, *names):
    for name in names:
        (tmp_path / "results" / name / "jobs").mkdir(parents=True)
    return tmp_path


def test_a_run_directory_or_a_workdir_with_one_run(tmp_path):
    wd = _runs(tmp_path, "a")
    assert finished_run.run_subdir(wd / "results/a", "jobs") == wd / "results/a/jobs"
    assert finished_run.run_subdir(wd, "jobs") == wd / "results/a/jobs"


def test_several_runs_or_none_are_named(tmp_path):
    wd = _runs(tmp_path, "a", "b")
    with pytest.raises(SystemExit, match=r"matches 2 runs \(.*results/a, .*results/b\): name one"):
        finished_run.run_subdir(wd, "jobs")
    with pytest.raises(SystemExit, match=r"neither jobs/ nor results/\*/jobs/: not a finished run"):
        finished_run.run_subdir(wd / "elsewhere", "jobs")


@pytest.mark.slow  # runs each script
@pytest.mark.parametrize("script, args, message", [
    ("bench/periodicity_scale.py", [], "neither jobs/ nor results/*/jobs/: not a finished run"),
    ("studies/machine_totals.py", [], "no such directory (give a finished run's directory, results/<run>)"),
    ("bench/memory.py", [], "not a working directory with results/"),
])
def test_a_missing_run_is_a_clear_error_not_a_traceback(tmp_path, script, args, message):
    res = subprocess.run([sys.executable, str(REPO / script), str(tmp_path / "missing"), *args],
                         capture_output=True, text=True)
    assert res.returncode != 0
    assert message in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow  # runs the benchmarks and a study on a constructed run
def test_a_run_too_short_for_the_scripts_says_so(tmp_path):
    """One 5-minute window (the shipped sample's task_usage): periodicity_scale has no job running the whole trace
    to decompose, and unuvar_sets --tasks all no 500 windows to observe; each says so and exits 0."""
    import polars as pl

    jobs = tmp_path / "results/r/jobs"
    jobs.mkdir(parents=True)
    pl.DataFrame({"job_id": [1], "class": ["production"], "first_window": [0], "last_window": [0],
                  "n_windows": [1]}).write_parquet(jobs / "dominant_jobs.parquet")
    pl.DataFrame({"job_id": [1], "window": [0], "cpu_sum": [0.5]}).write_parquet(jobs / "dominant_windows.parquet")
    records = tmp_path / "results/r/map/task_usage/batch-0"
    records.mkdir(parents=True)
    pl.DataFrame({"job_id": list(range(200)), "task_index": [0] * 200, "start_time": [600_000_000] * 200,
                  "cpu_rate": [0.01] * 200}).write_parquet(records / "records.parquet")
    for script, args, said in (
        ("bench/periodicity_scale.py", [], "too little data: no production job of the run's D"),
        ("studies/unuvar_sets.py", ["--tasks", "all", "--sets", "1"],
         "too little data: the tasks' series cover 1 window(s), fewer than the 500 observations of a set"),
    ):
        res = subprocess.run([sys.executable, str(REPO / script), str(tmp_path / "results/r"), *args],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        assert said in res.stdout and "Traceback" not in res.stderr
