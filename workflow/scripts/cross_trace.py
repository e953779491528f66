"""The cross-trace table and figure: the paper's Google 2011 values, the compared Google runs' (cross_trace.compare_with)
and this run's (another trace)."""
import json
from pathlib import Path

import polars as pl

from colocate import insufficient, rulescript
from colocate.figures.cross_trace import cross_trace_figure
from colocate.report import claims, cross_trace, summary


def main(inputs, outputs, params, log):
    papers, causes = claims.read_claims(inputs.claims), claims.read_causes(inputs.causes)
    parts = claims.summary_frames([p for p in inputs.parts if not insufficient.read_status(p)], papers, causes)
    runs, missing = [], []
    for run in params.compared:  # in cross_trace.compare_with's order, then this run
        path, capabilities = f"results/{run}/summary.csv", f"results/{run}/trace/capabilities.json"
        if path not in inputs.compared:
            missing.append((run, params.how_to_make[run]))
            continue
        recorded = json.loads(Path(capabilities).read_text()) if capabilities in inputs.compared_capabilities else None
        runs.append((cross_trace.trace_label(run, recorded), run, pl.read_csv(path, schema=summary.COLUMNS)))
    runs.append((params.trace, params.run, summary.combine(parts)))
    table = cross_trace.cross_trace(runs)
    table.write_csv(outputs.table)
    cross_trace_figure(table).savefig(outputs.figure, dpi=150)
    note = cross_trace.missing_note(missing)
    Path(outputs.section).write_text(cross_trace.markdown(table, [(trace, run) for trace, run, _ in runs], note))
    log.info("%d quantities across traces\n%s", table["quantity"].n_unique(), table)


if __name__ == "__main__":
    # no analysis name: a part that lacked data is left out of the table, it does not stop it
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
