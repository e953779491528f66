"""Map one task_usage shard to bucketed records, job × window aggregates and sampled-window records."""
import polars as pl

from colocate import io, rulescript, trace
from colocate.prep import mapreduce


def main(inputs, outputs, params, log):
    usage = trace.read_table(inputs.shard, "task_usage", mapreduce.USAGE_COLUMNS, float_dtype=pl.Float32)
    log.info("read %d records from %s", usage.height, inputs.shard)
    p = params
    windows = mapreduce.sampled_windows(trace.TRACE_WINDOWS, p.windows_per_day, p.seed)
    records, job_windows, sampled = mapreduce.map_task_usage(usage, p.buckets, windows)
    io.write_bucketed(records, outputs.records, p.buckets)
    io.write_parquet(job_windows, outputs.job_windows)
    io.write_parquet(sampled, outputs.sampled)
    log.info("wrote %d records, %d job-windows, %d sampled records", records.height, job_windows.height, sampled.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
