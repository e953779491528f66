"""results/<run>/summary.csv and summary.md: every reproduced number beside the paper's.

Each analysis writes a small tidy table (one row per headline number) with
:func:`rows`, each row compared with the paper's value in one unit and within a
stated tolerance (:mod:`colocate.report.compare`); :func:`combine` stacks them
into the machine-readable ``summary.csv`` and :func:`render` writes it as one
Markdown page, one section per analysis, in the order given.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Iterable, Sequence

import polars as pl

from colocate.insufficient import NOT_APPLICABLE
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
    # the claim judged (workflow/papers/*.tsv) and the values of the run its braces name (JSON), whether its value
    # reads the trace, and the row's verdict (VERDICTS)
    "claim": pl.String,
    "values": pl.String,
    "reads_trace": pl.Boolean,
    "verdict": pl.String,
}

#: A row's verdict: judged (within, outside) or why not.
VERDICTS = {
    "within": "within the tolerance of the paper's value (or on the side of its bound, or stating what it states)",
    "outside": "outside it",
    "too little data": "the data read span too little of the trace to stand beside the paper's",
    "count": "a count that grows with the trace: shown, not judged",
    "no paper value": "the paper gives no value: shown, not counted",
    "reference": "beside this project's own measurement on the real trace: not judged",
    "another trace": "measured on another trace than the paper's: compared, not judged",
    "not judged": "the paper's statement has no relation to judge it by",
}


def verdict(within: bool | None, scale_dependent: bool, relation: str, paper: object, measured: bool = True) -> str:
    """The :data:`VERDICTS` key of a row from its comparison, its claim's relation, and whether ours was
    ``measured`` (a statistic the data could not give, e.g. a weekly ratio on a trace without a whole week, is too
    little data)."""
    if within is not None:
        return "within" if within else "outside"
    if scale_dependent:
        return "count"
    if relation == "reference":
        return "reference"
    if paper is None or relation == "none":
        return "no paper value"
    return "not judged" if measured else "too little data"


def _fmt(value: object) -> str:
    """4 significant digits; from 10,000 up, whole with thousands separators (132,982, not 1.33e+05)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Real) and math.isfinite(value) and abs(value) >= 9999.5:  # numpy's too; ≥ 1e4 once rounded
        return f"{value:,.0f}"
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
        paper_text = _fmt(paper)
        if spec is not None and spec.unit == "%" and re.fullmatch(r"[-+]?[\d.,]+(e[-+]?\d+)?", paper_text):
            paper_text += "%"  # the same unit on both sides, where the paper's table gives it in its header
        out.append({"section": section, "quantity": str(quantity), "paper": paper_text,
                    "ours": _fmt(shown) + suffix if shown is not None else "", "note": note, **c,
                    "claim": spec.claim if spec is not None else "", "values": spec.values if spec is not None else "",
                    "reads_trace": spec.reads_trace if spec is not None else None,
                    "verdict": verdict(c["within"], c["scale_dependent"], spec.relation if spec is not None else "≈", paper,
                                       ours is not None and (isinstance(ours, str) or c["ours_value"] is not None))})
    return pl.DataFrame(out, schema=COLUMNS)


def _unjudged(frame: pl.DataFrame, said: str, hit: pl.Expr, why: str) -> pl.DataFrame:
    """The ``hit`` rows shown but not judged: ``within``, the tolerance and the cause cleared, ``said`` in the note,
    ``why`` their verdict."""
    return frame.with_columns(
        pl.when(hit).then(pl.lit(why)).otherwise("verdict").alias("verdict"),
        pl.when(hit).then(None).otherwise("within").alias("within"),
        pl.when(hit).then(None).otherwise("tolerance").alias("tolerance"),
        pl.when(hit).then(None).otherwise("tolerance_reason").alias("tolerance_reason"),
        pl.when(hit).then(pl.lit("")).otherwise("cause").alias("cause"),
        pl.when(hit & (pl.col("note") != "")).then(pl.col("note") + "; " + said)
        .when(hit).then(pl.lit(said)).otherwise("note").alias("note"),
    ).select(list(COLUMNS)).cast(COLUMNS)


def too_little_data(frame: pl.DataFrame, reason: str, rows: pl.Expr | None = None) -> pl.DataFrame:
    """Rows whose data span too little of the trace to stand beside the paper's: shown, not judged.

    Too little data is not bad input: the value is still shown, but ``within`` and the tolerance are cleared for
    the compared rows (those ``rows`` selects, all by default) and the note says why, e.g. a statistic the paper
    takes over 29 days measured on 5 minutes of task_usage.
    """
    # judged rows, and rows with a paper value that lack ours (a statistic too little data left empty)
    compared = pl.col("within").is_not_null() | (pl.col("paper_value").is_not_null() & ~pl.col("scale_dependent"))
    return _unjudged(frame, f"too little data: {reason}; not judged", compared & (pl.lit(True) if rows is None else rows), "too little data")


def another_trace(frame: pl.DataFrame, trace: str) -> pl.DataFrame:
    """Rows measured on another trace than the paper's: shown beside the paper's value, not judged.

    The papers measured Google's 2011 cluster; a number from ``trace`` (e.g. a VM trace) answers whether the
    finding holds elsewhere, so no tolerance applies: ``within`` and the tolerance are cleared, and the note says
    which trace the row came from (issue 16's cross-trace comparison).
    """
    return _unjudged(frame, f"{trace}; the paper's is Google 2011's: compared, not judged", pl.lit(True), "another trace")


#: How a cause measured on the synthetic trace's model begins (e.g. "synthetic model: small jobs are too few …").
MODEL_CAUSE = "synthetic model"


def causes_for_trace(table: pl.DataFrame, synthetic: bool) -> pl.DataFrame:
    """``table`` with the causes that explain the synthetic model (those beginning with :data:`MODEL_CAUSE`) kept
    only on a synthetic run: on a real trace a row outside its tolerance is not the model's doing, and shows as
    "Cause not measured yet" until one is measured there."""
    if synthetic:
        return table
    model = pl.col("cause").fill_null("").str.to_lowercase().str.starts_with(MODEL_CAUSE)
    return table.with_columns(pl.when(model).then(pl.lit("")).otherwise(pl.col("cause")).alias("cause"))


def combine(parts: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """Every part's rows in one table (``summary.csv``), sections in the order given."""
    parts = [p.select(list(COLUMNS)).cast(COLUMNS) for p in parts]
    return pl.concat(parts) if parts else pl.DataFrame(schema=COLUMNS)


def agreement(table: pl.DataFrame) -> pl.DataFrame:
    """Per section (and in total): rows, rows judged (``compared``) and within their tolerance, their share, and the
    rows not judged by why (:data:`VERDICTS`): too little data, counts (``scale_dependent``), no paper value,
    references."""
    verdict = pl.col("verdict").fill_null("")
    by = (
        table.group_by("section", maintain_order=True)
        .agg(
            rows=pl.len(),
            compared=pl.col("within").is_not_null().sum(),
            within=pl.col("within").fill_null(False).sum(),
            scale_dependent=pl.col("scale_dependent").sum(),
            too_little_data=(verdict == "too little data").sum(),
            no_paper_value=(verdict == "no paper value").sum(),
            reference=(verdict == "reference").sum(),
        )
    )
    total = by.select(pl.lit("all").alias("section"), pl.all().exclude("section").sum())
    out = pl.concat([by, total]).with_columns(
        share=pl.when(pl.col("compared") > 0).then(pl.col("within") / pl.col("compared"))
    )
    return out.cast({c: pl.Int64 for c in ("rows", "compared", "within", "scale_dependent", "too_little_data",
                                            "no_paper_value", "reference")})


def headline(table: pl.DataFrame) -> dict[str, int]:
    """The summary's headline counts: of the rows that read the trace, those judged and within (qualitative claims
    included), and apart, the rows that do not read it (judged and within), and every row not judged, by why."""
    reads = pl.col("reads_trace").fill_null(True)
    counts = {v: table.filter(pl.col("verdict") == v).height for v in VERDICTS}
    trace, apart = table.filter(reads), table.filter(~reads)
    return {"judged": trace["within"].is_not_null().sum(), "within": trace["within"].fill_null(False).sum(),
            "apart_judged": apart["within"].is_not_null().sum(), "apart_within": apart["within"].fill_null(False).sum(),
            **{v: n for v, n in counts.items() if v not in ("within", "outside")}}


def headline_text(table: pl.DataFrame) -> str:
    """:func:`headline` as the sentence summary.md and the fidelity page (:data:`PAGE`) give."""
    h = headline(table)
    if not h["judged"] and not h["apart_judged"]:
        return "No row is judged against the papers on this run."
    share = f" ({h['within'] / h['judged']:.0%})" if h["judged"] else ""
    text = (f"**{h['within']} of {h['judged']} judged rows that read the trace agree with the papers{share}; "
            f"{h['judged'] - h['within']} disagree** (qualitative claims, such as a test's verdict, included).")
    apart = []
    if h["apart_judged"]:
        apart.append(f"{h['apart_within']} of {h['apart_judged']} rows that do not read the trace (the placement "
                     "experiment at Table I's loads) agree")
    named = {"too little data": "with too little data", "count": "counts that grow with the trace",
             "no paper value": "with no paper value", "reference": "beside this project's own real-trace measurement",
             "another trace": "measured on another trace", "not judged": "stating what has no relation to judge it by"}
    apart += [f"{h[v]} {'row' if h[v] == 1 or v == 'count' else 'rows'} {what}".replace("row counts", "counts")
              for v, what in named.items() if h[v]]
    return text + (" Apart: " + "; ".join(apart) + "." if apart else "")


def differences(table: pl.DataFrame) -> str:
    """The rows outside their tolerance as Markdown, grouped under their measured cause (the fidelity page's list).

    Causes come in the order of their first row; rows without a measured cause come last.
    """
    out = table.filter(pl.col("within").eq(False)).with_columns(pl.col("cause").fill_null(""))
    if not table["within"].is_not_null().any():
        return "No row is compared with a tolerance (a run on another trace is compared, not judged).\n"
    if not out.height:
        return "Every compared row is within its tolerance.\n"
    numbers = cause_numbers(table)
    lines = []
    for cause in [*numbers, ""]:
        rows = out.filter(pl.col("cause") == cause)
        if not rows.height:
            continue
        text = cause[0].upper() + cause[1:] if cause else "Cause not measured yet"
        label = f"C{numbers[cause]}. " if cause else ""
        lines += [f"**{label}{text}{'' if text.endswith('.') else '.'}**", ""]
        for r in rows.iter_rows(named=True):
            # the item once: "(Table II): Table II % Reject XBAL" says it twice
            item = f" ({r['item']})" if r["item"] and not r["quantity"].startswith(r["item"]) else ""
            lines.append(f"- {r['section']}{item}: {r['quantity']}: paper {r['paper']}, ours {r['ours']} ({_judged_by(r)})")
        lines.append("")
    return "\n".join(lines)


def cause_numbers(table: pl.DataFrame) -> dict[str, int]:
    """C1, C2, …: each measured cause of a row outside its tolerance, numbered in the order of its first row, so a
    section's table can point to it instead of repeating a cause that several rows share."""
    out = table.filter(pl.col("within").eq(False)).with_columns(pl.col("cause").fill_null(""))
    return {c: i for i, c in enumerate((c for c in out["cause"].unique(maintain_order=True).to_list() if c), start=1)}


#: Markers of the fidelity page's generated list (see :func:`update_page`).
LIST_START, LIST_END = "<!-- differences: generated from the reference summary.csv; do not edit -->", "<!-- end of differences -->"


def update_page(page: str, table: pl.DataFrame) -> str:
    """``page`` (the text of :data:`PAGE`) with the block between the markers replaced by the headline
    (:func:`headline_text`) and :func:`differences` of ``table``."""
    start, end = page.index(LIST_START) + len(LIST_START), page.index(LIST_END)
    return page[:start] + "\n" + headline_text(table) + "\n\n" + differences(table) + page[end:]


def _ranges(indices: Iterable[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` → ``"0–2, 5, 7–8"``."""
    out, run = [], []
    for i in sorted(indices):
        if run and i != run[-1] + 1:
            out.append(run)
            run = []
        run.append(i)
    out += [run] if run else []
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in out)


def _part_indices(files: Iterable[str]) -> list[int] | None:
    """The part numbers of files named ``…N-of-M`` (the 2011 trace's ``part-00014-of-00500``), None otherwise."""
    found = [re.search(r"(\d+)-of-\d+$", f) for f in files]
    return [int(m.group(1)) for m in found] if found and all(found) else None


def coverage(record: dict) -> tuple[pl.DataFrame, list[str]]:
    """What a run read, from its capabilities record (``trace/capabilities.json``, :mod:`colocate.sources.contract`):
    one row per table of the trace (files read of how many, the parts read and those missing between them, and the
    rows and span of the first of the contract's tables it is mapped to), and notes on what that implies: whether
    the usage covers whole windows, and which counts and shares depend on how much was read."""
    read = record.get("read", {})
    rows, notes = [], []
    for c in record.get("coverage", []):
        if not c["read"] and not c.get("maps_to"):
            continue  # a table of the trace the analyses do not read (the 2011 machine_attributes)
        parts = _part_indices(c["files"])
        missing = sorted(set(range(min(parts), max(parts) + 1)) - set(parts)) if parts else []
        mapped = next((read[t] for t in c.get("maps_to", []) if t in read), {})
        rows.append({"table": c["table"], "files read": f"{c['read']:,} of {c['of']:,}" if c["of"] is not None else f"{c['read']:,}",
                     "parts read": _ranges(parts) if parts else "", "missing between them": _ranges(missing),
                     "rows": mapped.get("rows"), "from (h)": mapped.get("first_h"), "to (h)": mapped.get("last_h")})
        if "usage_records" in c.get("maps_to", []) and "first_window" in read.get("usage_records", {}):
            u = read["usage_records"]
            n = u["last_window"] - u["first_window"] + 1
            span = f"{c['table']} spans windows {u['first_window']}–{u['last_window']}: {n:,} five-minute window{'' if n == 1 else 's'}"
            span += f" ({n / 12:.3g} h)" + (f" of the trace's {record['span_windows']:,}" if record.get("span_windows") else "")
            if c["whole"]:
                span += ": every file read, so every window whole."
            elif record.get("files_in_time_order", True):
                span += (": not every file read, so the windows at either end of the span, and any beside a missing "
                         "file, may hold only part of their records.")
            else:
                span += (f": not every file read, and each of this trace's files holds rows from across its span, so "
                         f"every window may hold only part of its records and a {record.get('entity', 'task')}'s series "
                         "may have holes.")
            notes.append(span)
        if "entity_pieces" in c.get("maps_to", []) and c["read"] and not c["whole"]:
            notes.append(f"Counts and shares over {record.get('entity', 'task')}s and {record.get('group', 'job')}s (how "
                         f"many were dropped as failing, {record.get('entity', 'task')}s per {record.get('group', 'job')}, "
                         f"class shares) depend on how much of {c['table']} was read: {c['read']:,} of "
                         f"{c['of'] if c['of'] is not None else 'an unknown number of'} files.")
    if (s := record.get("series")) is not None:
        entity = record.get("entity", "task")
        notes.append(f"The {s['tasks']:,} long {entity}s' series hold {s['share_pooled']:.1%} of the five-minute windows "
                     f"from each one's first record to its last (median {s['share_median']:.1%} per {entity}, 10th "
                     f"percentile {s['share_p10']:.1%}; {s['complete']:.0%} have every window)." if s.get("tasks") else
                     f"No long {entity}: no series to cover.")
    schema = {"table": pl.String, "files read": pl.String, "parts read": pl.String, "missing between them": pl.String,
              "rows": pl.Int64, "from (h)": pl.Float64, "to (h)": pl.Float64}
    return pl.DataFrame(rows, schema=schema), notes


def settings_lines(scale: str, changed: Sequence[Sequence[object]]) -> list[str]:
    """What the run changed from the defaults (its scale's preset, its source's and the schema's), one line each."""
    if not changed:
        return [f"Settings: the defaults of the `{scale}` scale (`workflow/schemas/scales.yaml`, the config schemas).", ""]
    shown = lambda v: f"`{json.dumps(v, ensure_ascii=False)}`"  # noqa: E731
    lines = [f"Settings changed from the defaults of the `{scale}` scale (config.yaml or --config):", ""]
    lines += [f"- `{key}`: {shown(value)} (default {shown(default)})" for key, value, default in changed]
    return lines + [""]


def _coverage_lines(record: dict) -> list[str]:
    table, notes = coverage(record)
    lines = ["## What this run read", "", f"Trace: {record.get('trace', '')}; times in hours from its start "
             "(negative: before it). Rows and span are those of the tables the analyses read, mapped from each.", "",
             "| " + " | ".join(table.columns) + " |", "|" + "---|" * table.width]
    for r in table.iter_rows():
        lines.append("| " + " | ".join("" if v is None else f"{v:,}" if isinstance(v, int) else _cell(_fmt(v)) for v in r) + " |")
    return [*lines, "", *(f"- {n}" for n in notes), *([""] if notes else [])]


def _agrees(r: dict) -> str:
    if r["scale_dependent"]:
        return "count"
    if r["within"] is None:
        return {"no paper value": "no paper value", "reference": "reference", "too little data": "too little data"}.get(
            r["verdict"] or "", "")
    return "yes" if r["within"] else f"no ({_judged_by(r).removeprefix('tolerance ')})"


def _judged_by(r: dict) -> str:
    """What a judged row was held to: its tolerance, or a relation that takes none (a bound, the paper's words)."""
    return f"relation {r['tolerance']}" if r["tolerance"] in ("same", "≤", "≥") else f"tolerance {r['tolerance']}"


def render(
    parts: Iterable[pl.DataFrame],
    title: str = "Reproduced numbers beside the papers'",
    run: str | None = None,
    skipped: pl.DataFrame | None = None,
    read: dict | None = None,
    settings: tuple[str, Sequence[Sequence[object]]] | None = None,
) -> str:
    """One Markdown page: the run it shows, what it read, a table per section, then the analyses that lacked data.

    ``skipped`` has one row per analysis that could not run on this trace (``analysis``, ``origin``, the
    analysis that found the data lacking, ``reason``, ``needs``; see :mod:`colocate.insufficient`). ``read`` is
    the run's capabilities record (:func:`coverage`). ``settings`` is the scale and the settings the run changed
    from the defaults (:func:`colocate.configtypes.changed_settings`).
    """
    lines = [f"# {title}", ""]
    if run:
        lines += [f"Run: `{run}` (every output of this run is under `results/{run}/`).", ""]
    if settings is not None:
        lines += settings_lines(*settings)
    if read:
        lines += _coverage_lines(read)
    table = combine(parts)
    if table.height:
        lines += ["## Agreement", "", headline_text(table), "",
                  "Per section: rows judged, within their tolerance, and not judged by why (summary.csv gives each "
                  "row's tolerance, its reason and its verdict).", "",
                  "| section | judged | within | share | too little data | counts | no paper value |",
                  "|---|---|---|---|---|---|---|"]
        for r in agreement(table).iter_rows(named=True):
            share = "" if r["share"] is None else f"{r['share']:.0%}"
            lines.append(f"| {_cell(r['section'])} | {r['compared']} | {r['within']} | {share} | {r['too_little_data']} "
                         f"| {r['scale_dependent']} | {r['no_paper_value']} |")
        lines.append("")
    numbers = cause_numbers(table)
    for (section,), frame in table.group_by("section", maintain_order=True):
        lines += [f"## {_cell(section)}", "", "| quantity | paper | ours | agrees | note |", "|---|---|---|---|---|"]
        for r in frame.iter_rows(named=True):
            cause = r["cause"] and (f"cause C{numbers[r['cause']]} (under Outside tolerance)" if r["cause"] in numbers
                                    else f"cause: {r['cause']}")
            note = "; ".join(x for x in (r["note"], cause) if x)
            cells = (r["quantity"], r["paper"], r["ours"], _agrees(r), note)
            lines.append("| " + " | ".join(_cell(c or "") for c in cells) + " |")
        lines.append("")
    if table.height:
        lines += ["## Outside tolerance", "", differences(table)]
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
            .with_columns(pl.when(pl.col("origin") == "").then("analysis").otherwise("origin").alias("origin"),
                          # "not applicable to <trace>" is said; "insufficient data" is the section's default
                          pl.when((pl.col("status") == NOT_APPLICABLE) & ~pl.col("reason").str.starts_with("not applicable"))
                          .then(pl.lit(NOT_APPLICABLE + ": ") + pl.col("reason"))
                          .otherwise("reason").alias("reason") if "status" in skipped.columns else pl.col("reason"))
            .group_by("origin", "reason", "needs")
            .agg(pl.col("analysis").sort())
            .sort("origin", "reason")
        )
        for r in causes.iter_rows(named=True):
            names = "; ".join(_cell(a) for a in r["analysis"])
            lines.append(f"| {_cell(r['origin'])} | {_cell(r['reason'])} | {_cell(r['needs'])} | {names} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m colocate.report.summary SUMMARY_CSV``: make it the reference run and regenerate the fidelity page's list.

    Copies a run's summary.csv (normally ``results/synthetic-default/summary.csv``) to
    ``workflow/report/reference-summary.csv`` and rewrites the list of rows outside tolerance in
    ``docs/fidelity.md`` ("where the synthetic trace differs") from it; a test checks the page against the
    reference, so the list cannot drift.
    """
    import argparse
    import shutil
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("summary_csv", type=Path)
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[3])
    args = parser.parse_args(argv)
    reference = args.repo / REFERENCE
    shutil.copyfile(args.summary_csv, reference)
    page = args.repo / PAGE
    page.write_text(update_page(page.read_text(), pl.read_csv(reference, schema=COLUMNS)))
    print(f"{reference} and {page} updated")


#: The reference run's summary.csv (the default run), from which the fidelity page's list is generated.
REFERENCE = "workflow/report/reference-summary.csv"
#: The documentation page holding that list, between :data:`LIST_START` and :data:`LIST_END`.
PAGE = "docs/fidelity.md"

if __name__ == "__main__":
    main()
