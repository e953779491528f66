"""results/summary.md: every reproduced number beside the paper's.

Each analysis writes a small tidy table (one row per headline number) with
:func:`rows`; :func:`render` assembles all of them into one Markdown page,
one section per analysis, in the order given.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import polars as pl

COLUMNS = {"section": pl.String, "quantity": pl.String, "paper": pl.String, "ours": pl.String, "note": pl.String}


def _fmt(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.4g}"
    return str(value)


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def rows(section: str, items: Iterable[Sequence[object]]) -> pl.DataFrame:
    """A section's headline numbers: ``(quantity, paper, ours[, note])`` per item.

    ``paper`` is the value as the paper prints it (a string such as ``"0.36"``
    or ``"95%"``, or None where the paper gives none); ``ours`` is the computed
    value, formatted to 4 significant digits.
    """
    out = []
    for item in items:
        quantity, paper, ours, *rest = item
        out.append(
            {
                "section": section,
                "quantity": str(quantity),
                "paper": _fmt(paper),
                "ours": _fmt(ours),
                "note": _fmt(rest[0]) if rest else "",
            }
        )
    return pl.DataFrame(out, schema=COLUMNS)


def render(
    parts: Iterable[pl.DataFrame],
    title: str = "Reproduced numbers beside the papers'",
    run: str | None = None,
    skipped: pl.DataFrame | None = None,
) -> str:
    """One Markdown page: the run it shows, a table per section, then the analyses that lacked data.

    ``skipped`` has one row per analysis that could not run on this trace (``analysis``, ``origin``, the
    analysis that found the data lacking, ``reason``, ``needs``; see :mod:`colocate.insufficient`).
    """
    lines = [f"# {title}", ""]
    if run:
        lines += [f"Run: `{run}` (every output of this run is under `results/{run}/`).", ""]
    for part in parts:
        for (section,), frame in part.group_by("section", maintain_order=True):
            lines += [f"## {section}", "", "| quantity | paper | ours | note |", "|---|---|---|---|"]
            for r in frame.iter_rows(named=True):
                lines.append(f"| {r['quantity']} | {r['paper']} | {r['ours']} | {r['note']} |")
            lines.append("")
    if skipped is not None and skipped.height:
        lines += [
            "## Analyses this trace cannot support",
            "",
            "Each wrote its outputs with the reason (its figures show it) instead of a result; one row per cause.",
            "",
            "| found by | reason | it needs | analyses without a result |",
            "|---|---|---|---|",
        ]
        causes = (
            skipped.unique(subset=["analysis"], keep="first")
            .with_columns(pl.when(pl.col("origin") == "").then("analysis").otherwise("origin").alias("origin"))
            .group_by("origin", "reason", "needs")
            .agg(pl.col("analysis").sort())
            .sort("origin", "reason")
        )
        for r in causes.iter_rows(named=True):
            names = "; ".join(_cell(a) for a in r["analysis"])
            lines.append(f"| {_cell(r['origin'])} | {_cell(r['reason'])} | {_cell(r['needs'])} | {names} |")
        lines.append("")
    return "\n".join(lines)
