"""Dominant jobs D = ∪ D_i (Beaumont §3): their job × window rows, per-window totals, one row per job."""
import polars as pl

from colocate import io, jobs, logs

log = logs.to_file(snakemake.log[0])
p = snakemake.params
job_windows = jobs.merge_job_windows(pl.concat([pl.read_parquet(f) for f in snakemake.input.job_windows]))
flagged = jobs.flag_dominant(job_windows, p.cpu_share)
dominant_ids = flagged.filter("in_Di")["job_id"].unique().sort()
windows = flagged.filter(pl.col("job_id").is_in(dominant_ids.implode())).drop("in_Di").sort("job_id", "window")
io.write_parquet(windows, snakemake.output.windows)
io.write_parquet(jobs.window_totals(flagged, dominant_ids), snakemake.output.totals)
dominant = jobs.dominant_jobs(windows, pl.read_parquet(snakemake.input.jobs), p.n_windows)
io.write_parquet(dominant, snakemake.output.dominant)
log.info("%d jobs, %d dominant; by class:\n%s", job_windows["job_id"].n_unique(), dominant.height, dominant.group_by("class").len())
