"""The job table: priority class and task count from task_events, lifetimes from job_events."""
import polars as pl

from colocate import io, logs
from colocate.analysis import jobs

log = logs.to_file(snakemake.log[0])
cols = ["job_id", "task_index", "priority", "first_time", "last_event"]
table = jobs.job_table(pl.concat([pl.read_parquet(p, columns=cols) for p in snakemake.input.task_pieces]))
if snakemake.input.job_pieces:
    lifetimes = jobs.job_lifetimes(pl.concat([pl.read_parquet(p) for p in snakemake.input.job_pieces]), snakemake.params.n_windows)
    table = table.join(lifetimes, on="job_id", how="left")
io.write_parquet(table, snakemake.output[0])
log.info("%d jobs; by class:\n%s", table.height, table.group_by("class").len().sort("class"))
