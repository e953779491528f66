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


def render(parts: Iterable[pl.DataFrame], title: str = "Reproduced numbers beside the papers'") -> str:
    """One Markdown page: a table per section."""
    lines = [f"# {title}", ""]
    for part in parts:
        for (section,), frame in part.group_by("section", maintain_order=True):
            lines += [f"## {section}", "", "| quantity | paper | ours | note |", "|---|---|---|---|"]
            for r in frame.iter_rows(named=True):
                lines.append(f"| {r['quantity']} | {r['paper']} | {r['ours']} | {r['note']} |")
            lines.append("")
    return "\n".join(lines)
