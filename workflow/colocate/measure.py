"""What an analysis measured, by the claim it answers (issue 44): the science side of the summary.

An analysis returns :func:`measurement` rows, each naming a claim of the papers' tables (``workflow/papers/*.tsv``)
by its id, with its value and a note; the summary rule judges them against the claims
(:mod:`colocate.report.claims`). No paper value, tolerance or cause is written here or by the analyses.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

__all__ = ["MEASUREMENT_COLUMNS", "measurement", "measurements"]

#: What an analysis writes (``summary/<part>.csv``): one row per measured claim, in the order the summary shows them.
MEASUREMENT_COLUMNS = {"id": pl.String, "value": pl.Float64, "text": pl.String, "note": pl.String,
                       "values": pl.String, "status": pl.String}


def measurement(claim: str, ours: Any, note: object = "", status: str = "", **values: Any) -> dict[str, Any]:
    """One measured claim: its id, ``ours`` (a number, a text, or None where nothing could be measured), a ``note``,
    a ``status`` ("" or why the data were too few to judge it) and the ``values`` of the run that the claim's
    quantity or note names in braces (a setting such as ``maintenance=10``)."""
    number = isinstance(ours, numbers.Real) and not isinstance(ours, bool)
    return {"id": claim, "value": float(ours) if number else None, "text": None if number or ours is None else str(ours),
            "note": "" if note is None else str(note), "status": status,
            "values": json.dumps(values, sort_keys=True, default=float) if values else ""}


def measurements(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """The rows of :func:`measurement` as the table an analysis writes."""
    return pl.DataFrame(list(rows), schema=MEASUREMENT_COLUMNS)
