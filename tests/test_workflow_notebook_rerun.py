"""The kept notebooks (results/<run>/notebooks/) re-run as they are, outside Snakemake (issue 46): their first cell
stands in for Snakemake's preamble, finds the run's files from the notebook's own directory and sends the outputs
to a scratch directory, so a re-run leaves every file of the run as it was."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from wfutil import REPO, page_activation, shell, venv_checkout

pytestmark = pytest.mark.workflow


def digests(root: Path) -> dict[str, tuple[str, int]]:
    return {p.relative_to(root).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_kept_notebook_re_runs_from_its_directory_without_touching_the_run(tiny_run, tmp_path):
    run = tiny_run / "results/synthetic-tiny"
    kept = sorted((run / "notebooks").glob("*.ipynb"))
    assert [p.name for p in kept] == ["01_trace_and_tasks.ipynb", "02_characterisation.ipynb", "03_packing.ipynb",
                                      "04_placement.ipynb", "05_jobs_and_failures.ipynb"]
    before = digests(run)
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(REPO / "workflow/jupyter")}
    for nb in kept:
        out = tmp_path / nb.name
        done = subprocess.run([str(Path(sys.executable).parent / "jupyter-nbconvert"), "--log-level", "ERROR", "--execute",
                               "--to", "notebook", "--output", str(out), nb.name], cwd=nb.parent, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{nb.name}: {done.stderr[-2000:]}"
        first = nbformat.read(out, as_version=4).cells[0]
        printed = "".join(o.get("text", "") for o in first.outputs)
        assert f"working directory {tiny_run.resolve()}" in printed, printed
        scratch = Path(printed.split("outputs go to ")[1].strip())
        assert scratch.is_dir() and any(scratch.iterdir()), f"{nb.name} wrote none of its outputs to {scratch}"
    assert digests(run) == before  # not one file of the run written again


def test_the_docs_command_re_runs_a_kept_notebook(tiny_run, tmp_path):
    """docs/outputs.md's command, verbatim but for the run (the tiny one) and the output's place, as a user runs it:
    in a shell without the venv on PATH but for the activation the page states or inherits (wfutil.shell), from a
    checkout-like directory whose results/ is the tiny run's."""
    page = REPO / "docs/outputs.md"
    text = page.read_text()
    (command,) = re.findall(r"^cd results/\S+/notebooks && jupyter nbconvert .*$", text, re.M)
    activation = page_activation(page, text.index(command))
    command = command.replace("synthetic-default", "synthetic-tiny").replace("/tmp/01.ipynb", str(tmp_path / "01.ipynb"))
    work = tmp_path / "checkout"
    work.mkdir()
    (work / "results").symlink_to(tiny_run / "results", target_is_directory=True)
    venv_checkout(work)
    done = shell(f"{activation}\n{command}" if activation else command, work)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "task_lengths" in (tmp_path / "01.ipynb").read_text()
