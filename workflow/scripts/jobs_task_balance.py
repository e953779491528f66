"""Beaumont §4.3: task-count interdecile ratios, Fig 4 (two example jobs) and Fig 5 (80% balance thresholds)."""
import polars as pl

from colocate import io, logs
from colocate.analysis import jobs
from colocate.figures import jobs as figs

log = logs.to_file(snakemake.log[0])
dominant = pl.read_parquet(snakemake.input.dominant)
windows = pl.read_parquet(snakemake.input.windows)
dispersion = jobs.task_count_dispersion(dominant)
thresholds = jobs.balance_thresholds(windows, dominant, snakemake.params.quantile)
io.write_parquet(dispersion, snakemake.output.dispersion)
io.write_parquet(thresholds, snakemake.output.thresholds)
table = jobs.balance_table(dispersion, thresholds)
table.write_csv(snakemake.output.table)
examples = jobs.example_jobs(dominant, dispersion)
figs.beaumont_fig4_examples(windows, examples).savefig(snakemake.output.fig4, dpi=150)
figs.beaumont_fig5_balance(thresholds).savefig(snakemake.output.fig5, dpi=150)
log.info("balance:\n%s\nexamples: %s", table, examples)
