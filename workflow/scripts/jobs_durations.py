"""Beaumont Table 3: durations of dominant jobs per priority class, from job_events."""
import polars as pl

from colocate import logs
from colocate.analysis import jobs

log = logs.to_file(snakemake.log[0])
table3 = jobs.duration_table(pl.read_parquet(snakemake.input.dominant))
table3.write_csv(snakemake.output.table3)
log.info("Table 3 (minutes):\n%s", table3)
