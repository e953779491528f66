"""Beaumont Table 2 and Fig 2: log mean CPU and memory of dominant jobs, one Gaussian vs a mixture of two."""
import polars as pl

from colocate import logs
from colocate.analysis import jobs
from colocate.figures import jobs as figs

log = logs.to_file(snakemake.log[0])
p = snakemake.params
dominant = pl.read_parquet(snakemake.input.dominant)
table2 = jobs.usage_mixtures(dominant, n_init=p.n_init, seed=p.seed)
table2.write_csv(snakemake.output.table2)
figs.beaumont_fig2_usage(dominant, table2).savefig(snakemake.output.fig2, dpi=150)
log.info("Table 2:\n%s", table2)
