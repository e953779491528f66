"""colocate.report.notebooks: the executed notebooks a run keeps, without run times and absolute paths."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat
import pytest

from colocate.report import notebooks

REPO = Path(__file__).resolve().parents[1]


def executed(run_dir: str, started: str, preamble_id: str) -> dict:
    """An executed notebook as papermill writes it for Snakemake's `notebook:` directive (two cells)."""
    timing = {"duration": 0.1, "end_time": started, "exception": False, "start_time": started, "status": "completed"}
    kernel = {"iopub.execute_input": started, "iopub.status.busy": started, "iopub.status.idle": started,
              "shell.execute_reply": started}
    return {
        "cells": [
            {
                "cell_type": "code", "execution_count": 1, "id": preamble_id, "outputs": [],
                "metadata": {"execution": dict(kernel), "papermill": dict(timing), "tags": [notebooks.PREAMBLE_TAG]},
                "source": ["######## snakemake preamble start (automatically inserted, do not edit) ########\n",
                           (f"import sys;sys.path.extend(['/opt/wf']);import pickle;snakemake = pickle.loads(b'..');"
                            f"import os; os.chdir(r'{run_dir}');\n"),
                           "######## snakemake preamble end #########\n"],
            },
            {
                "cell_type": "code", "execution_count": 2, "id": "table-01",
                "metadata": {"execution": dict(kernel), "papermill": dict(timing), "tags": []},
                "source": ["print(path)"],
                "outputs": [
                    {"name": "stdout", "output_type": "stream",
                     "text": [f"read {run_dir}/results/x/tables/a.csv\n", f"in {run_dir}\n", "/opt/wf/colocate/io.py: warning\n"]},
                    {"output_type": "display_data", "metadata": {},
                     "data": {"image/png": "iVBORw0KGgo/opt/wf", "text/plain": [f"<Figure at {run_dir}/fig.png>"]}},
                ],
            },
        ],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python", "version": "3.11.7"},
            "papermill": {"duration": 5.6, "start_time": started, "end_time": started,
                          "input_path": f"{run_dir}/.snakemake/scripts/tmpab12.01.py.ipynb", "output_path": "x.ipynb"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def test_two_runs_keep_the_same_bytes():
    a = executed("/tmp/run-a", "2026-01-01T10:00:00Z", "f230b4d7")
    b = executed("/scratch/elsewhere/run-b", "2026-03-04T11:12:13Z", "991fa992")
    assert notebooks.dumps(a) != notebooks.dumps(b)
    kept = [notebooks.normalise(nb, {"/opt/wf": "<workflow>", run: "."})
            for nb, run in ((a, "/tmp/run-a"), (b, "/scratch/elsewhere/run-b"))]
    assert notebooks.dumps(kept[0]) == notebooks.dumps(kept[1])


def test_what_is_taken_out_and_what_is_kept():
    nb = executed("/tmp/run-a", "2026-01-01T10:00:00Z", "f230b4d7")
    before = copy.deepcopy(nb)
    out = notebooks.normalise(nb, {"/opt/wf": "<workflow>", "/tmp/run-a": "."})
    assert nb == before  # the input is not modified
    assert "papermill" not in out["metadata"] and out["metadata"]["kernelspec"] == nb["metadata"]["kernelspec"]
    preamble, table = out["cells"]
    assert preamble["id"] == notebooks.PREAMBLE_TAG and preamble["source"] == notebooks.PREAMBLE_NOTE
    assert preamble["metadata"] == {"tags": [notebooks.PREAMBLE_TAG]} and table["metadata"] == {"tags": []}
    assert table["id"] == "table-01" and table["source"] == ["print(path)"] and table["execution_count"] == 2
    stream, figure = table["outputs"]
    assert stream["text"] == ["read ./results/x/tables/a.csv\n", "in .\n", "<workflow>/colocate/io.py: warning\n"]
    assert figure["data"] == {"image/png": "iVBORw0KGgo/opt/wf", "text/plain": ["<Figure at ./fig.png>"]}  # images untouched
    text = notebooks.dumps(out)
    assert "/tmp/run-a" not in text and "2026-01-01" not in text
    assert notebooks.normalise(out, {"/opt/wf": "<workflow>", "/tmp/run-a": "."}) == out  # idempotent
    nbformat.validate(nbformat.from_dict(out))  # still a valid notebook, the preamble's id included


def test_only_whole_directories_are_replaced_the_longest_first():
    nb = executed("/w/run", "t", "x")
    nb["cells"][1]["outputs"][0]["text"] = ["/w/run/a /w/run.bak /w/other /w/runner /w\n"]
    out = notebooks.normalise(nb, {"/w": "<workflow>", "/w/run/": "."})
    assert out["cells"][1]["outputs"][0]["text"] == ["./a <workflow>/run.bak <workflow>/other <workflow>/runner <workflow>\n"]


def test_a_notebook_that_stopped_for_too_little_data_keeps_its_reason_without_a_traceback():
    """The stop (SystemExit(0) after the reason is shown) is not an error: its output goes; any other error stays."""
    nb = executed("/w/run", "t", "x")
    reason = {"output_type": "display_data", "metadata": {}, "data": {"text/markdown": ["**insufficient data.** …"]}}
    stop = {"output_type": "error", "ename": "SystemExit", "evalue": "0",
            "traceback": ["An exception has occurred, use %tb to see the full traceback.\n", "SystemExit: 0\n"]}
    failure = {"output_type": "error", "ename": "SystemExit", "evalue": "1", "traceback": ["SystemExit: 1\n"]}
    nb["cells"][1]["outputs"] = [reason, stop]
    assert notebooks.normalise(nb)["cells"][1]["outputs"] == [reason]
    assert "SystemExit" not in notebooks.to_html(notebooks.normalise(nb))
    nb["cells"][1]["outputs"] = [reason, failure]
    assert notebooks.normalise(nb)["cells"][1]["outputs"] == [reason, failure]


def test_prints_split_across_stream_messages_are_kept_as_one_output():
    """The kernel splits a cell's prints into messages as it flushes: the same prints kept alike either way."""
    nb = executed("/w/run", "t", "x")
    whole = {"name": "stdout", "output_type": "stream", "text": ["GPA  machines 40\n", "ABP  machines 41\n"]}
    split = [{"name": "stdout", "output_type": "stream", "text": ["GPA  machines 40\n"]},
             {"name": "stdout", "output_type": "stream", "text": "ABP  machines 41\n"}]
    err = {"name": "stderr", "output_type": "stream", "text": ["warning\n"]}
    kept = []
    for outputs in ([whole, err], [*split, err]):
        nb["cells"][1]["outputs"] = copy.deepcopy(outputs)
        kept.append(notebooks.dumps(notebooks.normalise(nb)))
    assert kept[0] == kept[1]
    nb["cells"][1]["outputs"] = [split[0], err, split[1]]  # not adjacent: kept apart
    assert len(notebooks.normalise(nb)["cells"][1]["outputs"]) == 3


def test_html_shows_sources_outputs_and_figures_the_same_way_each_time():
    """The report's copy: every cell's source and text output, each PNG as an inline image; no run time."""
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# 05 — Jobs and failures\n", "What it shows."]},
        {"cell_type": "code", "id": "fig", "metadata": {}, "execution_count": 1, "source": ["table.sort('jobs')"],
         "outputs": [{"output_type": "stream", "name": "stdout", "text": ["dominant jobs: 42\n"]},
                     {"output_type": "display_data", "metadata": {}, "data": {"image/png": png, "text/plain": ["<Figure>"]}}]},
    ]}
    html = notebooks.to_html(nb)
    assert "05 — Jobs and failures" in html and "dominant jobs: 42" in html and "table" in html
    assert f"data:image/png;base64,{png}" in html
    assert html == notebooks.to_html(copy.deepcopy(nb))


def test_the_interpreter_s_bin_directory_goes_first_on_path_once():
    """``.venv/bin/snakemake`` without the venv activated: its bin directory goes first, and only once."""
    from colocate.report.notebooks import interpreter_bin_first

    env = {"PATH": "/usr/bin:/bin"}
    assert interpreter_bin_first(env, "/opt/venv/bin/python") == "/opt/venv/bin:/usr/bin:/bin"
    assert interpreter_bin_first(env, "/opt/venv/bin/python") == "/opt/venv/bin:/usr/bin:/bin"  # already there
    assert interpreter_bin_first({"PATH": "/usr/bin:/opt/venv/bin"}, "/opt/venv/bin/python") == "/usr/bin:/opt/venv/bin"
    empty: dict[str, str] = {}
    assert interpreter_bin_first(empty, "/opt/venv/bin/python") == "/opt/venv/bin" and empty["PATH"] == "/opt/venv/bin"


@pytest.mark.slow  # two nbconvert runs, each starting a Jupyter kernel
def test_the_projects_jupyter_config_goes_first_once_and_its_kernels_run_without_the_tcp_warning(tmp_path):
    """ipykernel warns "Kernel is running over TCP without encryption" on every notebook of every run; with the
    project's nbconvert config first on JUPYTER_CONFIG_PATH the kernel runs over IPC and says nothing."""
    import subprocess
    import sys

    from colocate.report.notebooks import jupyter_config_first

    config_dir = REPO / "workflow" / "jupyter"
    env = {"JUPYTER_CONFIG_PATH": "/etc/jupyter"}
    assert jupyter_config_first(env, config_dir) == f"{config_dir}:/etc/jupyter"
    assert jupyter_config_first(env, config_dir) == f"{config_dir}:/etc/jupyter"  # already there
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    nbformat.write(nb, tmp_path / "t.ipynb")
    nbconvert = [str(Path(sys.executable).parent / "jupyter-nbconvert"), "--log-level", "ERROR", "--execute", "--to",
                 "notebook", "--output", str(tmp_path / "out.ipynb"), str(tmp_path / "t.ipynb")]
    base = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    plain = subprocess.run(nbconvert, env=base, capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr[-3000:]
    assert "without encryption" in plain.stderr  # the warning this removes, so the test can fail
    env = dict(base)
    jupyter_config_first(env, config_dir)
    ours = subprocess.run(nbconvert, env=env, capture_output=True, text=True)
    assert ours.returncode == 0, ours.stderr[:2500]
    assert "without encryption" not in ours.stderr and "42" in (tmp_path / "out.ipynb").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.ipynb", "t.ipynb"]  # no socket files left here



RERUN_JOB = {"threads": 2,
             "input": {"values": ["results/r/a.csv", "results/r/b1.csv", "results/r/b2.csv", "<workflow>/workflow/papers/x.tsv"],
                       "names": {"a": [0, None], "b": [1, 3], "paper": [3, None]}},
             "output": {"values": ["results/r/figures/f.png"], "names": {"figure": [0, None]}},
             "params": {"values": [24, {"k": [1, 2]}], "names": {"long_min_records": [0, None], "experiment": [1, None]}},
             "wildcards": {"values": [], "names": {}}}


def test_the_run_root_is_found_walking_up_from_a_nested_directory(tmp_path):
    (tmp_path / "wf/results/r/notebooks/deeper").mkdir(parents=True)
    (tmp_path / "wf/results/other").mkdir()
    assert notebooks.find_run_root(tmp_path / "wf/results/r/notebooks/deeper", "r") == (tmp_path / "wf").resolve()
    assert notebooks.find_run_root(tmp_path / "wf", "r") == (tmp_path / "wf").resolve()
    assert notebooks.find_run_root(str(tmp_path / "wf/results"), "other") == (tmp_path / "wf").resolve()


def test_a_run_root_not_found_is_an_error_naming_the_run(tmp_path):
    (tmp_path / "wf/results/r/notebooks").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=r"results/elsewhere/ is not in .*notebooks or a directory above it"):
        notebooks.find_run_root(tmp_path / "wf/results/r/notebooks", "elsewhere")


def test_a_kept_notebooks_job_gives_its_files_by_name_and_position_and_its_outputs_go_elsewhere(tmp_path):
    """job_values rebuilds the job without Snakemake: inputs and params as run, by name and by position; each output
    in the scratch directory, so a re-run never writes over the run's files. It changes nothing on disk."""
    import json

    before = os.getcwd()
    snakemake = notebooks.job_values(json.loads(json.dumps(RERUN_JOB)), tmp_path / "scratch", workflow="/wf")
    assert os.getcwd() == before and list(tmp_path.iterdir()) == []
    assert snakemake.input.a == snakemake.input[0] == "results/r/a.csv" and snakemake.input.b == ["results/r/b1.csv", "results/r/b2.csv"]
    assert snakemake.input.paper == "/wf/workflow/papers/x.tsv"
    assert notebooks.job_values(RERUN_JOB, "s").input.paper == str(REPO / "workflow/papers/x.tsv")  # this checkout's
    assert snakemake.params.long_min_records == 24 and snakemake.params.experiment == {"k": [1, 2]} and snakemake.threads == 2
    assert snakemake.output.figure == snakemake.output[0] == str(tmp_path / "scratch/f.png")
    assert snakemake.scratch == str(tmp_path / "scratch") and snakemake.log == [] and snakemake.wildcards == []
    with pytest.raises(AttributeError, match="the job has no 'c'"):
        _ = snakemake.input.c


def test_a_kept_notebooks_first_cell_changes_to_the_run_root_and_sends_outputs_to_scratch(tmp_path, monkeypatch, capsys):
    """The cell rerun_preamble writes, run as Jupyter runs it from inside the workflow's directory: it changes to
    the directory holding results/<run>/, makes a scratch directory for the outputs and prints both."""
    (tmp_path / "results/r/notebooks").mkdir(parents=True)
    preamble = notebooks.rerun_preamble("r", RERUN_JOB)
    assert "snakemake = job_values({'input': {'names': {'a': [0, None]," in preamble
    monkeypatch.chdir(tmp_path / "results/r/notebooks")
    scope: dict = {}
    exec(compile(preamble, "<preamble>", "exec"), scope)  # the cell as Jupyter runs it
    snakemake = scope["snakemake"]
    assert Path(os.getcwd()) == tmp_path.resolve() and snakemake.input.a == "results/r/a.csv"
    scratch = Path(snakemake.scratch)
    try:
        assert scratch.is_dir() and scratch.name.startswith("colocate-r-") and not scratch.is_relative_to(tmp_path)
        assert snakemake.output.figure == str(scratch / "f.png")
        assert capsys.readouterr().out == f"working directory {tmp_path.resolve()}; outputs go to {scratch}\n"
    finally:
        scratch.rmdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"results/elsewhere/ is not in"):
        exec(compile(notebooks.rerun_preamble("elsewhere", RERUN_JOB), "<preamble>", "exec"), {})
