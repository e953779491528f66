"""The cross-trace comparison (issue 16): the same quantities on Google 2011 (the paper), on a Google run of this
pipeline (synthetic, sample or real) and on the Azure VM trace, side by side.

The Azure analyses write their summary rows with the Google analyses' functions, so a quantity is matched across
traces by its name: :func:`vm_quantity` renames a Google quantity as the Azure part words it (a VM for a job or
a task). Each column names the trace and run it came from.
"""

from __future__ import annotations

import re

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

COLUMNS = {"quantity": pl.String, "unit": pl.String, "paper_google_2011": pl.Float64, "google_run": pl.String, "google": pl.Float64,
           "azure_run": pl.String, "azure": pl.Float64, "azure_over_paper": pl.Float64}


def vm_quantity(quantity: str) -> str:
    """A Google summary quantity as the Azure part words it: VMs for long-running jobs and for tasks."""
    quantity = quantity.replace("long-running production dominant jobs", "VMs read over the whole trace")
    return re.sub(r"\btasks\b", "VMs", quantity)


def cross_trace(azure: pl.DataFrame, google: pl.DataFrame | None, azure_run: str, google_run: str | None) -> pl.DataFrame:
    """One row per quantity of :data:`QUANTITIES` that the Azure run measured: the paper's value (Google 2011), the
    Google run's (null without one) and the Azure run's, and Azure over the paper.

    ``azure`` and ``google`` are summary tables (:data:`colocate.report.summary.COLUMNS`).
    """
    by_quantity = {q: r for q, r in zip(azure["quantity"], azure.iter_rows(named=True))}
    theirs = {} if google is None else dict(zip(google["quantity"], google["ours_value"]))
    rows = []
    for q in QUANTITIES:
        mine = by_quantity.get(vm_quantity(q))
        if mine is None or mine["ours_value"] is None:
            continue
        paper, value = mine["paper_value"], mine["ours_value"]
        rows.append({"quantity": q, "unit": mine["unit"] or "", "paper_google_2011": paper, "google_run": google_run if google is not None else None,
                     "google": theirs.get(q), "azure_run": azure_run, "azure": value,
                     "azure_over_paper": value / paper if paper else None})
    return pl.DataFrame(rows, schema=COLUMNS)


def google_label(run: str | None) -> str:
    """How a Google run is named in the table: a synthetic run is the calibrated model, not Google's data."""
    if not run:
        return "Google run (none)"
    return f"{run} (synthetic model of Google 2011)" if run.startswith("synthetic") else f"{run} (Google 2011 data)"


def markdown(table: pl.DataFrame, note: str = "") -> str:
    """The table as a summary.md section."""
    google = next((r for r in table["google_run"] if r), None)
    azure = table["azure_run"][0] if table.height else "Azure"
    lines = ["## Across traces", "",
             "The same quantities on Google's 2011 cluster (the papers), on a Google run of this pipeline (the synthetic "
             "model is calibrated to the papers, so it is no independent evidence; the shipped or full real trace is) "
             "and on the Azure VM trace of this run (a VM stands for a job or a task). Another trace is compared, not "
             "judged.",
             *(["", note] if note else []), "",
             f"| quantity | paper (Google 2011) | {google_label(google)} | {azure} (Azure) |", "|---|---|---|---|"]
    for r in table.iter_rows(named=True):
        cell = r["quantity"].replace("|", "\\|")
        fmt = lambda v: "" if v is None else f"{v:.4g}{r['unit']}"  # noqa: E731 (each value in the row's unit)
        lines.append(f"| {cell} | {fmt(r['paper_google_2011'])} | {fmt(r['google'])} | {fmt(r['azure'])} |")
    return "\n".join(lines) + "\n"
