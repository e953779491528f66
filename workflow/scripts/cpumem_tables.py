"""Shares of the CPU vs memory categories, overall and per priority class, beside the paper's (Beaumont et al. §4.2)."""
import polars as pl

from colocate import insufficient, logs
from colocate.analysis import cpumem

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Beaumont §4.2, category shares", log):
    settings = cpumem.Settings(**snakemake.params.settings)
    classes = pl.read_parquet(snakemake.input.classes)
    dominant = pl.read_parquet(snakemake.input.dominant, columns=["job_id", "class"])
    table = cpumem.shares(classes, dominant)
    table.write_csv(snakemake.output.table)
    cpumem.summary_rows(table, classes, settings).write_csv(snakemake.output.summary)
    log.info("shares:\n%s", table.filter(pl.col("scope") == "all"))
