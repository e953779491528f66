"""Assemble results/<run>/summary.md from the per-analysis summary tables and the status of every output."""
from pathlib import Path

import polars as pl

from colocate import insufficient, logs
from colocate.report import summary

log = logs.to_file(snakemake.log[0])
status = {p: insufficient.read_status(p) for p in [*snakemake.input.parts, *snakemake.input.outputs]}
statuses = [s for s in status.values() if s]
parts = [pl.read_csv(p, schema=summary.COLUMNS) for p in snakemake.input.parts if not status[p]]
skipped = pl.DataFrame([s.__dict__ for s in statuses], schema={k: pl.String for k in ("analysis", "reason", "needs", "origin")})
Path(snakemake.output[0]).write_text(summary.render(parts, run=snakemake.params.run, skipped=skipped))
log.info("%d parts, %d analyses lacked data", len(parts), skipped.height)
