"""Shared fixtures."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import matplotlib
import pytest
from hypothesis import settings

from wfutil import run_tiny

matplotlib.use("Agg")  # the tests draw figures to files, as the rule scripts do (colocate.rulescript.run)

# Property tests run without a deadline: the suite runs on pytest-xdist workers beside Snakemake subprocesses,
# where a 200 ms deadline would measure the machine's load, not the algorithm.
settings.register_profile("colocate", deadline=None)
settings.load_profile("colocate")


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto``: one worker per CPU this process may use, at most 4 (each worker starts Snakemake runs of two
    cores; beyond 4 the longest test file bounds the wall time), and none on a single CPU."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cpus, 4) if cpus > 1 else 0


def pytest_collection_modifyitems(config, items) -> None:
    """Every ``workflow`` and ``study`` test is ``slow`` too: the unit tier is ``-m "not slow"`` alone."""
    for item in items:
        if item.get_closest_marker("workflow") or item.get_closest_marker("study"):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """The whole default DAG at the tiny scale, run once per test session.

    Under pytest-xdist (pyproject.toml runs the suite on ``-n auto`` workers) the workers share one run: the first
    to need it builds it under a file lock in the session's common temporary directory, the others wait and
    read it. Tests read the run, or copy it before changing anything.
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return run_tiny(tmp_path_factory.mktemp("tiny"))
    shared = tmp_path_factory.getbasetemp().parent  # the same directory for every worker of this session
    work, done = shared / "tiny-shared", shared / "tiny-shared.done"
    with open(shared / "tiny-shared.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(work, ignore_errors=True)  # a worker that failed half-way leaves no half-built run
            work.mkdir()
            run_tiny(work)
            done.touch()
    return work
