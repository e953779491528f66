"""results/<run>/summary.csv and summary.md: every reproduced number beside the paper's.

Each analysis writes a small tidy table (one row per headline number) with
:func:`rows`, each row compared with the paper's value in one unit and within a
stated tolerance (:mod:`colocate.report.compare`); :func:`combine` stacks them
into the machine-readable ``summary.csv`` and :func:`render` writes it as one
Markdown page, one section per analysis, in the order given.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import polars as pl

from colocate.report.compare import compare

COLUMNS = {
    "section": pl.String,
    "item": pl.String,
    "quantity": pl.String,
    "paper": pl.String,
    "ours": pl.String,
    "unit": pl.String,
    "note": pl.String,
    "paper_value": pl.Float64,
    "relation": pl.String,
    "ours_value": pl.Float64,
    "tolerance": pl.String,
    "tolerance_reason": pl.String,
    "within": pl.Boolean,
    "scale_dependent": pl.Boolean,
    "cause": pl.String,
}


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
    """A section's headline numbers: ``(quantity, paper, ours[, note[, compare]])`` per item.

    ``paper`` is the value as the paper prints it (a string such as ``"0.36"``
    or ``"95%"``, or None where the paper gives none); ``ours`` is the computed
    value, shown to 4 significant digits in the row's unit; ``compare`` (a
    :class:`~colocate.report.compare.Compare`) says how the two compare.
    """
    out = []
    for entry in items:
        quantity, paper, ours, *rest = entry
        note = _fmt(rest[0]) if rest else ""
        spec = rest[1] if len(rest) > 1 else None
        c = compare(paper, ours, spec)
        shown = ours if isinstance(ours, str) or c["ours_value"] is None else c["ours_value"]
        # the unit is shown on our side only when the row says ours is in it (spec.unit)
        suffix = "%" if spec is not None and spec.unit == "%" and not isinstance(ours, str) else ""
        out.append({"section": section, "quantity": str(quantity), "paper": _fmt(paper),
                    "ours": _fmt(shown) + suffix if shown is not None else "", "note": note, **c})
    return pl.DataFrame(out, schema=COLUMNS)


def combine(parts: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """Every part's rows in one table (``summary.csv``), sections in the order given."""
    parts = [p.select(list(COLUMNS)).cast(COLUMNS) for p in parts]
    return pl.concat(parts) if parts else pl.DataFrame(schema=COLUMNS)


def agreement(table: pl.DataFrame) -> pl.DataFrame:
    """Per section (and in total): rows compared, rows within tolerance, their share, and scale-dependent rows."""
    by = (
        table.group_by("section", maintain_order=True)
        .agg(
            rows=pl.len(),
            compared=pl.col("within").is_not_null().sum(),
            within=pl.col("within").fill_null(False).sum(),
            scale_dependent=pl.col("scale_dependent").sum(),
        )
    )
    total = by.select(pl.lit("all").alias("section"), pl.all().exclude("section").sum())
    out = pl.concat([by, total]).with_columns(
        share=pl.when(pl.col("compared") > 0).then(pl.col("within") / pl.col("compared"))
    )
    return out.cast({"rows": pl.Int64, "compared": pl.Int64, "within": pl.Int64, "scale_dependent": pl.Int64})


def _agrees(r: dict) -> str:
    if r["scale_dependent"]:
        return "count"
    if r["within"] is None:
        return ""
    return "yes" if r["within"] else f"no ({r['tolerance']})"


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
    table = combine(parts)
    if table.height:
        lines += ["## Agreement", "", "Rows within their tolerance (see summary.csv for each row's tolerance and reason);",
                  "counts that grow with the trace are not compared.", "",
                  "| section | compared | within | share |", "|---|---|---|---|"]
        for r in agreement(table).iter_rows(named=True):
            share = "" if r["share"] is None else f"{r['share']:.0%}"
            lines.append(f"| {_cell(r['section'])} | {r['compared']} | {r['within']} | {share} |")
        lines.append("")
    for (section,), frame in table.group_by("section", maintain_order=True):
        lines += [f"## {_cell(section)}", "", "| quantity | paper | ours | agrees | note |", "|---|---|---|---|---|"]
        for r in frame.iter_rows(named=True):
            note = "; ".join(x for x in (r["note"], r["cause"] and f"cause: {r['cause']}") if x)
            cells = (r["quantity"], r["paper"], r["ours"], _agrees(r), note)
            lines.append("| " + " | ".join(_cell(c or "") for c in cells) + " |")
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
