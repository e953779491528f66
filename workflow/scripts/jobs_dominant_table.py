"""Beaumont Table 1 (dominant jobs per window) and Fig 1 (their tasks, CPU and memory by priority class)."""
import polars as pl

from colocate import logs
from colocate.analysis import jobs
from colocate.figures import jobs as figs

log = logs.to_file(snakemake.log[0])
totals = pl.read_parquet(snakemake.input.totals)
table1 = jobs.dominant_table(totals)
table1.write_csv(snakemake.output.table1)
shares = jobs.class_shares(pl.read_parquet(snakemake.input.windows), pl.read_parquet(snakemake.input.dominant), totals)
shares.write_csv(snakemake.output.shares)
figs.beaumont_fig1_classes(shares).savefig(snakemake.output.fig1, dpi=150)
log.info("Table 1:\n%s\nFig 1:\n%s", table1, shares)
