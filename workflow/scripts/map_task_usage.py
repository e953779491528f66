"""Map one task_usage shard to bucketed records, job × window aggregates and sampled-window records."""
import polars as pl

from colocate import io, logs, trace
from colocate.prep import mapreduce

log = logs.to_file(snakemake.log[0])
usage = trace.read_table(snakemake.input.shard, "task_usage", mapreduce.USAGE_COLUMNS, float_dtype=pl.Float32)
log.info("read %d records from %s", usage.height, snakemake.input.shard)
p = snakemake.params
windows = mapreduce.sampled_windows(trace.TRACE_WINDOWS, p.windows_per_day, p.seed)
records, job_windows, sampled = mapreduce.map_task_usage(usage, p.buckets, windows)
io.write_bucketed(records, snakemake.output.records, p.buckets)
io.write_parquet(job_windows, snakemake.output.job_windows)
io.write_parquet(sampled, snakemake.output.sampled)
log.info("wrote %d records, %d job-windows, %d sampled records", records.height, job_windows.height, sampled.height)
