"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pytest

from wfutil import run_tiny

matplotlib.use("Agg")  # the tests draw figures to files, as the rule scripts do (colocate.rulescript.run)


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """The whole default DAG at the tiny scale, run once per test session."""
    return run_tiny(tmp_path_factory.mktemp("tiny"))
