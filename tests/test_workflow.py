"""The workflow end to end at the tiny scale, through `python -m snakemake` in a temporary directory."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.workflow


def snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), "--cores", "2", *args]
    # the notebook directive calls jupyter-nbconvert: the interpreter's bin directory must be on PATH
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir, env=env)
    if check and res.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{res.stdout[-4000:]}\n{res.stderr[-6000:]}")
    return res


def write_config(workdir: Path, **sections) -> None:
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["scale"] = "tiny"
    for key, value in sections.items():
        if isinstance(value, dict):
            config.setdefault(key, {}).update(value)
        else:
            config[key] = value
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))


def planned_rules(workdir: Path) -> set[str]:
    """Rules a dry run would execute (from its job-stats table)."""
    out = snakemake(workdir, "-n", "--quiet", "rules").stdout
    if "Nothing to be done" in out:
        return set()
    return {m.group(1) for m in re.finditer(r"^(\w+)\s+\d+\s*$", out, re.M)} - {"total"}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("tiny")
    write_config(workdir)
    snakemake(workdir)
    return workdir


def test_full_dag_produces_the_outputs(tiny_run):
    counts = pl.read_csv(tiny_run / "results/tables/task_counts.csv")
    c = dict(zip(counts["quantity"], counts["count"]))
    assert c["tasks_with_usage"] > 0 and c["long"] >= 200 and c["short"] > c["long"]
    assert c["failing_dropped"] > 0 and c["all_zero_dropped"] > 0
    assert c["long"] + c["short"] + c["failing_dropped"] + c["all_zero_dropped"] + c["no_task_events"] == c["tasks_with_usage"]
    inst = np.load(tiny_run / "results/realizations/inst.npy", mmap_mode="r")
    avg = np.load(tiny_run / "results/realizations/avg.npy", mmap_mode="r")
    assert inst.shape == avg.shape == (200, 500) and inst.dtype == np.float32
    tasks = pl.read_parquet(tiny_run / "results/realizations/tasks.parquet")
    assert tasks.height == 200 and tasks["row"].to_list() == list(range(200))
    assert (tasks["n_records"] >= 24).all()
    nb = (tiny_run / "results/notebooks/01_trace_and_tasks.ipynb").read_text()
    assert '"output_type"' in nb  # the executed copy has outputs
    manifest = (tiny_run / "resources/trace/synthetic/SHA256SUM").read_text().splitlines()
    assert len(manifest) == 3 + 2 + 1 + 1  # tiny: task_usage 3, task_events 2, job_events 1, machine_events 1


def test_second_invocation_has_nothing_to_do(tiny_run):
    assert planned_rules(tiny_run) == set()


def test_changing_the_trace_seed_reruns_synthesis_and_downstream(tiny_run, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    write_config(work, trace={"seed": 99})
    rules = planned_rules(work)
    assert {"synthesize_trace", "map_task_usage", "reduce_bucket", "sample_realizations"} <= rules


def test_changing_a_realization_setting_reruns_only_realizations(tiny_run, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    write_config(work, realizations={"n_realizations": 300})
    assert planned_rules(work) == {"sample_realizations", "all"}


@pytest.mark.parametrize(
    ("sections", "key"),
    [
        ({"realizations": {"n_tasks": -5}}, "n_tasks"),
        ({"scale": "huge"}, "scale"),
        ({"mapreduce": {"buckets": 0}}, "buckets"),
        ({"trace": {"source": "s3"}}, "source"),
        ({"realizations": {"n_task": 10}}, "n_task"),
    ],
)
def test_invalid_config_is_rejected_naming_the_key(tmp_path, sections, key):
    write_config(tmp_path, **sections)
    res = snakemake(tmp_path, "-n", check=False)
    assert res.returncode != 0
    assert key in res.stdout + res.stderr
    assert not (tmp_path / "results").exists() and not (tmp_path / "resources").exists()
