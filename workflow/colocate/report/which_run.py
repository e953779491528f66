"""Which run a report shows: ``snakemake --report results/<run>/report.html`` reports the run the config names, so a
report path in another run's directory would hold the wrong run's results under that run's name. The workflow
refuses it (workflow/rules/common.smk) with the message built here, naming both runs and the ``--config`` to add."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any


def report_run(path: Any) -> str | None:
    """The run whose directory holds the report path ``path`` (``results/<run>/...``, relative to the working
    directory), or None for a path outside ``results/<run>/``."""
    if path is None:
        return None
    parts = PurePosixPath(str(path).replace("\\", "/")).parts
    parts = parts[1:] if parts[:1] == (".",) else parts
    return parts[1] if len(parts) >= 3 and parts[0] == "results" else None


def config_for(run: str, config: Mapping[str, Any], sources: Iterable[str], scales: Iterable[str]) -> str:
    """The ``--config`` entries that make the configured run (``config``) the run ``run``: its source and scale when
    the name is ``<source>-<scale>`` of a known source and scale, else ``run=<run>`` with the settings it ran with."""
    sources, scales = set(sources), set(scales)
    source, _, scale = run.rpartition("-")
    if source in sources and scale in scales:
        entries = []
        if source != config.get("trace", {}).get("source", "synthetic"):
            entries.append("trace='" + json.dumps({"source": source}) + "'")
        if scale != config.get("scale", "default"):
            entries.append(f"scale={scale}")
        if config.get("run"):
            entries.append(f"run={run}")
        return "--config " + " ".join(entries)
    return f"--config run={run} and the other settings that run was started with"


def mismatch(path: Any, run: str, config: Mapping[str, Any], sources: Iterable[str], scales: Iterable[str]) -> str | None:
    """Why a report at ``path`` cannot be built by the configured run ``run``, or None when it can."""
    other = report_run(path)
    if other is None or other == run:
        return None
    return (f"--report {path} is in the directory of run {other}, but this config's run is {run}: the report would "
            f"show {run}'s results. Give the report the run's own --config, as the run was started: add "
            f"{config_for(other, config, sources, scales)} (or write the report to results/{run}/).")
