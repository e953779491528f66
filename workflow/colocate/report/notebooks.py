"""The executed notebooks a run keeps (``results/<run>/notebooks/``): the same bytes from the same inputs.

Snakemake's ``notebook:`` directive writes the executed copy through papermill, with what differs between
two runs of the same inputs: execution times (papermill's and the kernel's, per cell and for the notebook),
papermill's temporary input path, and the preamble cell Snakemake injects (the run's absolute paths and
the job pickled, under a random cell id). :func:`normalise` takes these out; outputs keep their text,
with the run's directories replaced by relative names, and a stream's adjacent outputs as one (the kernel's
flushes split them at random). A notebook that stopped for too little data keeps the reason it showed, without
the ``SystemExit`` the stop raised.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

__all__ = ["PREAMBLE_NOTE", "PREAMBLE_TAG", "RUN_METADATA", "JobValues", "dumps", "find_run_root", "job_of",
           "job_values", "normalise", "rerun_preamble", "to_html"]

#: The tag Snakemake gives the cell it injects (the job's ``snakemake`` object, ``sys.path``, ``os.chdir``).
PREAMBLE_TAG = "snakemake-job-properties"
#: The injected cell's source in the kept copy.
PREAMBLE_NOTE = (
    "# Snakemake's preamble ran here: it set sys.path, unpickled this job's `snakemake` object\n"
    "# (input, output, params, ...) and changed to the working directory. Left out of the kept copy:\n"
    "# it holds the run's absolute paths. The copy as executed is the rule's log, logs/notebooks/."
)
#: Metadata recording when and where a notebook or cell ran (papermill's, and the kernel's timing).
RUN_METADATA = ("papermill", "execution")


def _replace(value: Any, paths: list[tuple[re.Pattern, str]]) -> Any:
    if isinstance(value, str):
        for old, new in paths:
            value = old.sub(lambda _, new=new: new, value)  # new as it is (no backslash escapes)
        return value
    if isinstance(value, list):
        return [_replace(v, paths) for v in value]
    if isinstance(value, dict):
        # images are base64: left as they are
        return {k: v if k.startswith("image/") else _replace(v, paths) for k, v in value.items()}
    return value


def normalise(nb: Mapping[str, Any], paths: Mapping[str, str] | None = None, preamble: str = PREAMBLE_NOTE) -> dict[str, Any]:
    """A copy of the executed notebook ``nb`` (nbformat 4, as a dict) without run times and absolute paths.

    Drops :data:`RUN_METADATA` from the notebook and from every cell; the cell tagged :data:`PREAMBLE_TAG`
    gets the id ``snakemake-job-properties`` and ``preamble`` as its source (:func:`rerun_preamble` gives one that
    lets the kept copy re-run in Jupyter). In the cells' outputs,
    each directory of ``paths`` (absolute directory → what is shown instead, e.g. the working directory
    → ``"."``) is replaced wherever it is a whole directory (not followed by more of a file name), the
    longest first. Idempotent; the input is not modified.
    """
    out = copy.deepcopy(dict(nb))
    pairs = _pairs(paths or {})
    for key in RUN_METADATA:
        out.get("metadata", {}).pop(key, None)
    for cell in out.get("cells", []):
        meta = cell.setdefault("metadata", {})
        for key in RUN_METADATA:
            meta.pop(key, None)
        if PREAMBLE_TAG in meta.get("tags", []):
            cell["id"] = PREAMBLE_TAG
            cell["source"] = preamble
        if "outputs" in cell:
            cell["outputs"] = _replace(_coalesce_streams([o for o in cell["outputs"] if not _clean_stop(o)]), pairs)
    return out


def _pairs(paths: Mapping[str, str]) -> list[tuple[re.Pattern, str]]:
    """Each directory of ``paths`` as a pattern matching it as a whole directory, the longest first."""
    return [
        (re.compile(re.escape(old.rstrip("/")) + r"(?![\w.\-])"), new.rstrip("/") or new)
        for old, new in sorted(paths.items(), key=lambda kv: -len(kv[0].rstrip("/")))
        if old.rstrip("/")
    ]


def _coalesce_streams(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent ``stream`` outputs of the same stream (stdout, stderr) as one: how the kernel splits a cell's
    printing into messages depends on when it flushes, so the same prints can arrive in one output or two."""
    out: list[dict[str, Any]] = []
    for o in outputs:
        if o.get("output_type") == "stream" and out and out[-1].get("output_type") == "stream" and out[-1].get("name") == o.get("name"):
            text = "".join(_lines(out[-1]["text"]) + _lines(o["text"]))
            out[-1] = {**out[-1], "text": text.splitlines(keepends=True)}
        else:
            out.append(o)
    return out


def _lines(text: str | list[str]) -> list[str]:
    return [text] if isinstance(text, str) else list(text)


def _clean_stop(output: Mapping[str, Any]) -> bool:
    """The error output of a notebook that stopped on purpose (``SystemExit(0)``, raised by
    :func:`colocate.insufficient.stop_notebook_if_lacking` after showing why): not an error, so not kept."""
    return output.get("output_type") == "error" and output.get("ename") == "SystemExit" and output.get("evalue") == "0"


def dumps(nb: Mapping[str, Any]) -> str:
    """``nb`` as nbformat writes it (one-space indent, sorted keys, UTF-8 text), ending in a newline."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def to_html(nb: Mapping[str, Any]) -> str:
    """``nb`` rendered by nbconvert's HTML exporter (the lab template, inputs and outputs, figures inline)."""
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nbformat.reads(json.dumps(nb), as_version=4))
    return body


def jupyter_config_first(environ: MutableMapping[str, str], directory: str | os.PathLike) -> str:
    """Put ``directory`` first on ``environ["JUPYTER_CONFIG_PATH"]``, unless it is already there, and return it.

    The project's ``jupyter_nbconvert_config.py`` there runs the notebooks' kernels over IPC sockets (in
    the local temporary directory) instead of TCP on localhost, which ipykernel warns about on every run.
    """
    here = str(directory)
    path = environ.get("JUPYTER_CONFIG_PATH", "")
    if here not in path.split(os.pathsep):
        environ["JUPYTER_CONFIG_PATH"] = os.pathsep.join([here, path]) if path else here
    return environ["JUPYTER_CONFIG_PATH"]


def interpreter_bin_first(environ: MutableMapping[str, str], executable: str = sys.executable) -> str:
    """Put the bin directory of ``executable`` (the Python running Snakemake) first on ``environ["PATH"]``, unless it
    is already there, and return the PATH.

    Snakemake's ``notebook:`` directive runs ``jupyter-nbconvert`` from PATH, and it is installed beside Snakemake:
    ``.venv/bin/snakemake`` run without activating the venv must still find it (rules/common.smk passes os.environ).
    """
    here = str(Path(executable).parent)
    path = environ.get("PATH", "")
    if here not in path.split(os.pathsep):
        environ["PATH"] = os.pathsep.join([here, path]) if path else here
    return environ["PATH"]


# ----------------------------------------------------------------------------- re-running a kept notebook

#: The parts of Snakemake's job object a notebook reads, in the kept copy's stand-in preamble.
JOB_PARTS = ("input", "output", "params", "wildcards")


def job_of(preamble_source: str, paths: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The job's input, output, params and wildcards from the preamble Snakemake injected (``preamble_source``, a
    cell that unpickles the job's ``snakemake`` object): ``{part: {"values": [...], "names": {name: [start, end]}}}``
    and ``threads``, each directory of ``paths`` replaced as :func:`normalise` does (the workflow's as
    ``<workflow>``). Unpickles the run's own job (it needs Snakemake, as the rule that keeps the notebook has)."""
    import ast
    import pickle

    found = re.search(r"pickle\.loads\((b'.*?')\)", preamble_source, re.S) or re.search(r'pickle\.loads\((b".*?")\)', preamble_source, re.S)
    if found is None:
        raise ValueError("no pickled job in the notebook's Snakemake preamble")
    job = pickle.loads(ast.literal_eval(found.group(1)))  # noqa: S301 (the run's own job, written by Snakemake)
    pairs = _pairs(paths or {})
    out: dict[str, Any] = {"threads": int(job.threads)}
    for part in JOB_PARTS:
        values = getattr(job, part)
        out[part] = {"values": [_replace(v if isinstance(v, (int, float, bool, type(None), list, dict)) else str(v), pairs)
                                for v in values],
                     "names": {n: [start, end] for n, (start, end) in getattr(values, "_names", {}).items()}}
    return out


def rerun_preamble(run: str, job: Mapping[str, Any]) -> str:
    """The kept copy's first cell: it stands in for Snakemake's preamble, so the notebook re-runs in Jupyter against
    the run's files. The cell does what the library does not: it changes directory, makes the scratch directory
    and prints both (:func:`find_run_root`, :func:`job_values`)."""
    return (
        "# Snakemake's preamble ran here (the copy as executed is the rule's log, logs/notebooks/). This cell stands in\n"
        "# for it when you re-run the notebook in Jupyter, from anywhere inside the workflow's directory: it changes to\n"
        f"# that directory and gives the job's input, params and wildcards as run {run} had them. Outputs go to a\n"
        "# temporary directory, not over the run's files.\n"
        "import os\n"
        "import tempfile\n\n"
        "from colocate.report.notebooks import find_run_root, job_values\n\n"
        f"root = find_run_root(os.getcwd(), {run!r})\n"
        "os.chdir(root)\n"
        f"scratch = tempfile.mkdtemp(prefix={f'colocate-{run}-'!r})\n"
        'print(f"working directory {root}; outputs go to {scratch}")\n'
        f"snakemake = job_values({_sorted(job)!r}, scratch)"
    )


def _sorted(value: Any) -> Any:
    """``value`` with every dict's keys in order, so that its repr (a Python literal) is the same in every run."""
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [_sorted(v) for v in value]
    return value


class JobValues(list):
    """A job's input, output, params or wildcards as a notebook reads them: by position (``[0]``) and by name
    (``.counts``), as Snakemake's own lists."""

    def __init__(self, values: list[Any], names: Mapping[str, list]) -> None:
        super().__init__(values)
        for name, (start, end) in names.items():
            setattr(self, name, values[start] if end is None else values[start:end])

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"the job has no {name!r} (it has {', '.join(sorted(self.__dict__)) or 'none named'})")


def find_run_root(start: str | os.PathLike, run: str) -> Path:
    """The directory holding ``results/<run>/``: ``start`` (resolved) or the nearest one above it. A kept notebook
    re-runs from its own directory, below the workflow's."""
    here = Path(start).resolve()
    root = next((d for d in (here, *here.parents) if (d / "results" / run).is_dir()), None)
    if root is None:
        raise FileNotFoundError(f"results/{run}/ is not in {here} or a directory above it: open the notebook from "
                                "inside the workflow's directory that holds the run")
    return root


#: The workflow's own files (the papers' tables) from this checkout of it: the one the package is imported from.
WORKFLOW = str(Path(__file__).resolve().parents[3])


def job_values(job: Mapping[str, Any], scratch: str | os.PathLike, workflow: str = WORKFLOW) -> Any:
    """Snakemake's job object for re-running a kept notebook (:func:`rerun_preamble`), from ``job`` as
    :func:`job_of` gives it: input, params and wildcards as run (``<workflow>`` as ``workflow``); each output a file
    of the same name in ``scratch``, so that a re-run never writes over the run's files."""
    from types import SimpleNamespace

    parts = {part: JobValues(_replace(list(job[part]["values"]), [(re.compile(r"^<workflow>(?=/|$)"), workflow)]),
                             job[part]["names"]) for part in JOB_PARTS}
    moved = [str(Path(scratch) / Path(v).name) for v in job["output"]["values"]]
    parts["output"] = JobValues(moved, job["output"]["names"])
    return SimpleNamespace(**parts, threads=job.get("threads", 1), log=JobValues([], {}), scratch=str(scratch))
