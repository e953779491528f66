"""Assemble results/summary.md from the per-analysis summary tables."""
from pathlib import Path

import polars as pl

from colocate import logs, summary

log = logs.to_file(snakemake.log[0])
page = summary.render(pl.read_csv(p, schema=summary.COLUMNS) for p in snakemake.input.parts)
Path(snakemake.output[0]).write_text(page)
log.info("%d parts", len(snakemake.input.parts))
