"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pytest

from wfutil import snakemake, write_config

matplotlib.use("Agg")  # the tests draw figures to files, as the rule scripts do (colocate.rulescript.run)


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """The whole default DAG at the tiny scale, run once per test session."""
    workdir = tmp_path_factory.mktemp("tiny")
    write_config(workdir)
    snakemake(workdir)
    return workdir
