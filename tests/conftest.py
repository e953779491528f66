"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from wfutil import snakemake, write_config


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """The whole default DAG at the tiny scale, run once per test session."""
    workdir = tmp_path_factory.mktemp("tiny")
    write_config(workdir)
    snakemake(workdir)
    return workdir
