"""Dominant jobs D = ∪ D_i (Beaumont §3): their job × window rows, per-window totals, one row per job."""
import polars as pl

from colocate import io, logs
from colocate.analysis import jobs

log = logs.to_file(snakemake.log[0])
p = snakemake.params
scan = pl.scan_parquet(list(snakemake.input.job_windows))
# a day of windows at a time: row-group statistics keep each read to the shards holding it
load = lambda lo, hi: scan.filter(pl.col("window").is_between(lo, hi - 1)).collect()  # noqa: E731
windows, totals = jobs.dominant_by_chunks(load, p.n_windows, p.cpu_share, p.chunk_windows)
io.write_parquet(windows, snakemake.output.windows)
io.write_parquet(totals, snakemake.output.totals)
dominant = jobs.dominant_jobs(windows, pl.read_parquet(snakemake.input.jobs), p.n_windows)
io.write_parquet(dominant, snakemake.output.dominant)
log.info("%d job x window rows, %d dominant jobs; by class:\n%s", totals["jobs"].sum(), dominant.height, dominant.group_by("class").len().sort("class"))
