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

__all__ = ["PREAMBLE_NOTE", "PREAMBLE_TAG", "RUN_METADATA", "dumps", "normalise", "to_html"]

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


def normalise(nb: Mapping[str, Any], paths: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A copy of the executed notebook ``nb`` (nbformat 4, as a dict) without run times and absolute paths.

    Drops :data:`RUN_METADATA` from the notebook and from every cell; the cell tagged :data:`PREAMBLE_TAG`
    gets the id ``snakemake-job-properties`` and :data:`PREAMBLE_NOTE` as its source. In the cells' outputs,
    each directory of ``paths`` (absolute directory → what is shown instead, e.g. the working directory
    → ``"."``) is replaced wherever it is a whole directory (not followed by more of a file name), the
    longest first. Idempotent; the input is not modified.
    """
    out = copy.deepcopy(dict(nb))
    pairs = [
        (re.compile(re.escape(old.rstrip("/")) + r"(?![\w.\-])"), new.rstrip("/") or new)
        for old, new in sorted((paths or {}).items(), key=lambda kv: -len(kv[0].rstrip("/")))
        if old.rstrip("/")
    ]
    for key in RUN_METADATA:
        out.get("metadata", {}).pop(key, None)
    for cell in out.get("cells", []):
        meta = cell.setdefault("metadata", {})
        for key in RUN_METADATA:
            meta.pop(key, None)
        if PREAMBLE_TAG in meta.get("tags", []):
            cell["id"] = PREAMBLE_TAG
            cell["source"] = PREAMBLE_NOTE
        if "outputs" in cell:
            cell["outputs"] = _replace(_coalesce_streams([o for o in cell["outputs"] if not _clean_stop(o)]), pairs)
    return out


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
