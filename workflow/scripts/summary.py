"""Assemble results/<run>/summary.md from the per-analysis summary tables and the status of every output."""
from pathlib import Path

import polars as pl

from colocate import insufficient, rulescript
from colocate.report import summary


def main(inputs, outputs, params, log):
    status = {p: insufficient.read_status(p) for p in [*inputs.parts, *inputs.outputs]}
    statuses = [s for s in status.values() if s]
    parts = [pl.read_csv(p, schema=summary.COLUMNS) for p in inputs.parts if not status[p]]
    skipped = pl.DataFrame([s.__dict__ for s in statuses], schema={k: pl.String for k in ("analysis", "reason", "needs", "origin")})
    Path(outputs[0]).write_text(summary.render(parts, run=params.run, skipped=skipped))
    log.info("%d parts, %d analyses lacked data", len(parts), skipped.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
