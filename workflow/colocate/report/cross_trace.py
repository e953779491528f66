"""The cross-trace comparison (issue 16): the same quantities on Google 2011 (the paper), on a Google run of this
pipeline (synthetic, sample or real) and on runs of other traces (VM traces), side by side.

Every trace's analyses write their summary rows by the same rules, through the source contract, so a quantity is
matched across traces by its name. Each row names the trace and run it came from.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

#: The quantities compared, as the Google summary names them (Janus §3 and §3.6, Beaumont §5.2, Unuvar §IV and §IV-F).
QUANTITIES = (
    "Fig 2: share of tasks with inst std > avg std",
    "Fig 3: inst std-vs-mean slope",
    "Fig 3: avg std-vs-mean slope",
    "Fig 4: largest of 16 cluster shares",
    "Table 1: A-D rejection rate, N = 10",
    "Table 1: A-D rejection rate, N = 50",
    "Table 1: A-D rejection rate, N = 100",
    "Fig 6: median (F⁻¹(k) − P_k)/P_k, N = 10, k = 99.9",
    "share with significant daily pattern",
    "Table 4 daily ratio, median",
    "Table 4 weekly ratio, median",
    "Table 4 long_term ratio, median",
    "Table 4 noise ratio, median",
    "Table II: std of utilisation, 18 tasks (trace)",
    "§IV-C: K-S D, 18 tasks (trace)",
    "Table VII: P(U ≥ 0.8) actual, 18 tasks (trace)",
    "Table VII: P(U ≥ 0.8) Beta estimate, 18 tasks (trace)",
    "Table IV: std of utilisation, 154 tasks (trace)",
    "Table VI: K-S D, 154 tasks (trace)",
    "Table VII: P(U ≥ 0.8) actual, 154 tasks (trace)",
    "Table VII: P(U ≥ 0.8) Beta estimate, 154 tasks (trace)",
    "P(U > 0.8) without the controller (every ε)",
    "ε=0.01: P(U > 0.8) with the controller",
    "ε=0.01: rejected share",
    "GPA ρ=0.01: mean q",
    "Cantelli 1: mean q",
    "Cantelli 1.7: machines / lower bound m",
    "machines Cantelli 1.7 / GPA 0.05",
    "% reject PACK",
    "% reject SPREAD",
    "% reject ABP",
)

#: One row per quantity and run: the paper's value (Google 2011), the run's trace and name, its value and its ratio
#: to the paper's.
COLUMNS = {"quantity": pl.String, "unit": pl.String, "paper_google_2011": pl.Float64, "trace": pl.String,
           "run": pl.String, "value": pl.Float64, "over_paper": pl.Float64}


def cross_trace(runs: Sequence[tuple[str, str, pl.DataFrame | None]]) -> pl.DataFrame:
    """The quantities of :data:`QUANTITIES` across any number of runs, each ``(trace, run, summary table)``
    (:data:`colocate.report.summary.COLUMNS`; None for a run that does not exist): one row per quantity and run
    that measured it, for every quantity some run measured, with the paper's value (Google 2011) and the run's over
    it. A run's row is found by the quantity's name (every trace's rows come from the same rules)."""
    found = []
    for trace, run, table in runs:
        by_quantity = {} if table is None else dict(zip(table["quantity"], table.iter_rows(named=True)))
        found.append((trace, run, by_quantity))
    rows = []
    for q in QUANTITIES:
        measured = [(trace, run, r) for trace, run, by in found
                    if (r := by.get(q)) is not None and r["ours_value"] is not None]
        if not measured:
            continue
        paper = next((r["paper_value"] for *_, r in measured if r["paper_value"] is not None), None)
        unit = next((r["unit"] for *_, r in measured if r["unit"]), "")
        rows += [{"quantity": q, "unit": unit, "paper_google_2011": paper, "trace": trace, "run": run,
                  "value": r["ours_value"], "over_paper": r["ours_value"] / paper if paper else None}
                 for trace, run, r in measured]
    return pl.DataFrame(rows, schema=COLUMNS)


def google_label(run: str) -> str:
    """The trace of a Google run, as the table names it: a synthetic run is the calibrated model, not Google's data."""
    return "synthetic model of Google 2011" if run.startswith("synthetic") else "Google 2011 data"


def markdown(table: pl.DataFrame, runs: Sequence[tuple[str, str]], note: str = "") -> str:
    """The table as a summary.md section: a column per run of ``runs`` ((trace, run) pairs, in order)."""
    lines = ["## Across traces", "",
             "The same quantities on Google's 2011 cluster (the papers), on a Google run of this pipeline (the synthetic "
             "model is calibrated to the papers, so it is no independent evidence; the shipped or full real trace is) "
             "and on the other trace of this run (its entities, such as VMs, stand for tasks). Another trace is compared, not "
             "judged.",
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
