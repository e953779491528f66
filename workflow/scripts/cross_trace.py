"""The cross-trace table and figure: the paper's Google 2011 values, a Google run's and this run's (another trace)."""
from pathlib import Path

import polars as pl

from colocate import insufficient, rulescript
from colocate.figures.cross_trace import cross_trace_figure
from colocate.report import claims, cross_trace, summary


def main(inputs, outputs, params, log):
    papers, causes = claims.read_claims(inputs.claims), claims.read_causes(inputs.causes)
    parts = claims.summary_frames([p for p in inputs.parts if not insufficient.read_status(p)], papers, causes)
    google = pl.read_csv(inputs.google[0], schema=summary.COLUMNS) if inputs.google else None
    runs = [(cross_trace.google_label(params.google_run), params.google_run, google)] if google is not None else []
    runs.append((params.trace, params.run, summary.combine(parts)))
    table = cross_trace.cross_trace(runs)
    table.write_csv(outputs.table)
    cross_trace_figure(table).savefig(outputs.figure, dpi=150)
    note = "" if google is not None else (
        f"No Google run to compare: results/{params.google_run}/summary.csv does not exist. Run the default pipeline "
        "(`snakemake --cores 2`) first, or set cross_trace.compare_with to a Google run." if params.google_run else "")
    Path(outputs.section).write_text(cross_trace.markdown(table, [(trace, run) for trace, run, _ in runs], note))
    log.info("%d quantities across traces\n%s", table["quantity"].n_unique(), table)


if __name__ == "__main__":
    # no analysis name: a part that lacked data is left out of the table, it does not stop it
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
