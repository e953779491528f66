"""Assemble results/<run>/summary.csv (one row per compared quantity) and summary.md from the per-analysis parts
and the status of every output."""
import json
from pathlib import Path

import polars as pl

from colocate import insufficient, rulescript
from colocate.report import claims, summary


def main(inputs, outputs, params, log):
    status = {p: insufficient.read_status(p) for p in [*inputs.parts, *inputs.outputs]}
    statuses = [s for s in status.values() if s]
    # the analyses' measurements judged against the papers' claims
    papers, causes = claims.read_claims(inputs.claims), claims.read_causes(inputs.causes)
    read = json.loads(Path(inputs.capabilities).read_text())
    if inputs.series:  # the long tasks' series coverage, beside what was read
        read["series"] = pl.read_csv(inputs.series[0]).row(0, named=True)
    parts = claims.summary_frames([p for p in inputs.parts if not status[p]], papers, causes, claims.partial_reads(read))
    skipped = pl.DataFrame([s.__dict__ for s in statuses], schema={k: pl.String for k in ("analysis", "reason", "needs", "origin", "status")})
    table = summary.causes_for_trace(summary.combine(parts), params.synthetic)
    if params.another_trace:  # the papers measured Google 2011: another trace's rows are compared, not judged
        table = summary.another_trace(table, params.another_trace)
    table.write_csv(outputs.table)
    sections = [Path(p).read_text() for p in inputs.sections]
    Path(outputs.page).write_text(summary.render([table], run=params.run, skipped=skipped, read=read,
                                                  settings=(params.scale, params.settings)) + "".join(f"\n{s}" for s in sections))
    log.info("%d parts, %d analyses lacked data\n%s", len(parts), skipped.height, summary.agreement(table))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
