"""The cross-trace comparison (issues 16 and 45): the same quantities on Google 2011 (the paper), on Google runs of
this pipeline (the 2011 trace, synthetic, sample or real, and the 2019 trace) and on runs of other traces (VM
traces), side by side.

Every trace's analyses write their measurements by the same rules, through the source contract, judged against the
same claims, so a quantity is matched across traces by its claim's id and the values it was measured at, not by its
wording. Each row names the trace and run it came from.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import polars as pl

#: The quantities compared, by the claim each answers (workflow/papers/*.tsv) and, for a claim measured at several
#: settings, the values that pick one (Janus §3 and §3.6, Beaumont §5.2, Unuvar §IV and §IV-F, Tantawi on the trace).
COMPARED: tuple[tuple[str, dict], ...] = (
    ("janus.fig2.inst_above_avg", {}),
    ("janus.fig3.inst_slope", {}),
    ("janus.fig3.avg_slope", {}),
    ("janus.fig4.largest_share", {}),
    ("janus.t1.ad_rejection_n10", {}),
    ("janus.t1.ad_rejection_n50", {}),
    ("janus.t1.ad_rejection_n100", {}),
    ("janus.fig6.median", {"N": 10, "k": "99.9"}),
    ("beaumont.s52.daily_significant", {}),
    ("beaumont.t4.daily.median", {}),
    ("beaumont.t4.weekly.median", {}),
    ("beaumont.t4.long_term.median", {}),
    ("beaumont.t4.noise.median", {}),
    ("unuvar.t2.std.18", {"source": "trace"}),
    ("unuvar.s4c.ks_d.18", {"source": "trace"}),
    ("unuvar.t7.actual.18", {"source": "trace"}),
    ("unuvar.t7.estimated.18", {"source": "trace"}),
    ("unuvar.t4.std.154", {"source": "trace"}),
    ("unuvar.t6.ks_d.154", {"source": "trace"}),
    ("unuvar.t7.actual.154", {"source": "trace"}),
    ("unuvar.t7.estimated.154", {"source": "trace"}),
    ("unuvar.t8.without.trace", {}),
    ("unuvar.t8.with.eps0.01.trace.measured", {}),
    ("unuvar.t8.rejected.eps0.01.trace.measured", {}),
    ("janus.f9.gpa_q_slo99", {}),
    ("janus.s52.q_cantelli1", {}),
    ("janus.s6.cantelli1_7_machines", {}),
    ("janus.s7.cantelli1_7_over_gpa", {}),
    ("tantawi.trace.reject", {"policy": "PACK"}),
    ("tantawi.trace.reject", {"policy": "SPREAD"}),
    ("tantawi.trace.reject", {"policy": "ABP"}),
)

#: One row per quantity and run: the paper's value (Google 2011), the run's trace and name, its value and its ratio
#: to the paper's.
COLUMNS = {"quantity": pl.String, "unit": pl.String, "paper_google_2011": pl.Float64, "trace": pl.String,
           "run": pl.String, "value": pl.Float64, "over_paper": pl.Float64}


def _picks(row: dict, claim: str, selector: dict) -> bool:
    """Is ``row`` (a summary row) the claim's, at the selector's values?"""
    if row.get("claim") != claim:
        return False
    values = json.loads(row["values"]) if row.get("values") else {}
    return all(values.get(k) == v for k, v in selector.items())


def cross_trace(runs: Sequence[tuple[str, str, pl.DataFrame | None]]) -> pl.DataFrame:
    """The quantities of :data:`COMPARED` across any number of runs, each ``(trace, run, summary table)``
    (:data:`colocate.report.summary.COLUMNS`; None for a run that does not exist): one row per quantity and run
    that measured it, for every quantity some run measured, with the paper's value (Google 2011) and the run's over
    it. A run's row is found by its claim and values (every trace's rows come from the same rules and claims), and
    named by the first run's quantity."""
    rows = []
    for claim, selector in COMPARED:
        measured = []
        for trace, run, table in runs:
            found = next((r for r in ([] if table is None else table.iter_rows(named=True))
                          if _picks(r, claim, selector)), None)
            if found is not None and found["ours_value"] is not None:
                measured.append((trace, run, found))
        if not measured:
            continue
        quantity = measured[0][2]["quantity"]
        # a value, not a bound: a paper's "> 50%" is no number to take a ratio to
        paper = next((r["paper_value"] for *_, r in measured
                      if r["paper_value"] is not None and r["relation"] not in ("<", ">")), None)
        unit = next((r["unit"] for *_, r in measured if r["unit"]), "")
        rows += [{"quantity": quantity, "unit": unit, "paper_google_2011": paper, "trace": trace, "run": run,
                  "value": r["ours_value"], "over_paper": r["ours_value"] / paper if paper else None}
                 for trace, run, r in measured]
    return pl.DataFrame(rows, schema=COLUMNS)


def compared_runs(compare_with: str | Sequence[str] | None, run: str) -> list[str]:
    """The runs ``cross_trace.compare_with`` names (one name, a list of them, or None for none), in order, once each,
    without ``run`` itself (this run is always its own column)."""
    names = [] if compare_with is None else [compare_with] if isinstance(compare_with, str) else list(compare_with)
    return [name for i, name in enumerate(names) if name != run and name not in names[:i]]


def google_label(run: str) -> str:
    """A guess at the trace of a Google run from its name (``<source>-<scale>``), for a run that did not record it
    (:func:`trace_label`): a synthetic run is a calibrated model, not Google's data."""
    if run.startswith("synthetic2019"):
        return "synthetic model of Google 2011 in the 2019 format"
    if run.startswith("google2019"):
        return "Google 2019 data"
    return "synthetic model of Google 2011" if run.startswith("synthetic") else "Google 2011 data"


def trace_label(run: str, capabilities: dict | None) -> str:
    """The trace of a compared run as the run recorded it (``trace`` of its ``trace/capabilities.json``, given as
    ``capabilities``), else as :func:`google_label` guesses it from its name."""
    recorded = (capabilities or {}).get("trace")
    return recorded if isinstance(recorded, str) and recorded else google_label(run)


def how_to_make(run: str, sources: Sequence[str], scales: Sequence[str]) -> str:
    """The command that makes the run ``run`` in this directory: its source and scale read off its default name
    (``<source>-<scale>``, :attr:`colocate.sources.SourceBase.run`), else a run of that name."""
    for source in sorted(sources, key=len, reverse=True):  # azure-sample-tiny is azure-sample's, not azure's
        scale = run.removeprefix(f"{source}-") if run.startswith(f"{source}-") else None
        if scale in scales:
            config = ([] if source == "synthetic" else [f"trace='{{\"source\": \"{source}\"}}'"]) + (
                [] if scale == "default" else [f"scale={scale}"])
            return "`snakemake --cores 2" + (" --config " + " ".join(config) if config else "") + "`"
    return f"a run of this pipeline named {run} (`--config run={run}`)"


def missing_note(missing: Sequence[tuple[str, str]]) -> str:
    """The section's note on the runs ``cross_trace.compare_with`` names that do not exist, each ``(run, how to make
    it)``: each named, with how to make it; empty when none is missing."""
    if not missing:
        return ""
    return "\n".join(["Not compared (a run compared with is read once it exists, never built from here):", "",
                      *(f"- results/{run}/summary.csv does not exist: make it with {how}." for run, how in missing),
                      "", "Or set cross_trace.compare_with to the Google runs to compare."])


def markdown(table: pl.DataFrame, runs: Sequence[tuple[str, str]], note: str = "") -> str:
    """The table as a summary.md section: a column per run of ``runs`` ((trace, run) pairs, in order)."""
    lines = ["## Across traces", "",
             "The same quantities on Google's 2011 cluster (the papers), on the Google runs of this pipeline named by "
             "cross_trace.compare_with (the synthetic model is calibrated to the papers, so it is no independent "
             "evidence; the shipped or full real trace is) and on the trace of this run (another trace's entities, "
             "such as VMs, stand for tasks). Another trace is compared, not judged.",
             *(["", note] if note else []), "",
             "| quantity | paper (Google 2011) | " + " | ".join(f"{run} ({trace})" for trace, run in runs) + " |",
             "|---|---|" + "---|" * len(runs)]
    for q in table["quantity"].unique(maintain_order=True):
        rows = table.filter(pl.col("quantity") == q)
        first = rows.row(0, named=True)
        fmt = lambda v: "" if v is None else f"{v:.4g}{first['unit']}"  # noqa: E731 (each value in the row's unit)
        values = {(r["trace"], r["run"]): r["value"] for r in rows.iter_rows(named=True)}
        cells = [fmt(first["paper_google_2011"]), *(fmt(values.get(key)) for key in runs)]
        lines.append(f"| {q.replace('|', chr(92) + '|')} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
