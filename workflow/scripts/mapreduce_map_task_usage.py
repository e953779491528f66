"""Map a task_usage shard, or a batch of shards (mapreduce.shards_per_map), to bucketed records, job × window
aggregates and sampled-window records."""
import polars as pl

from colocate import io, rulescript, trace
from colocate.prep import mapreduce


def main(inputs, outputs, params, log):
    p = params
    windows = mapreduce.sampled_windows(trace.TRACE_WINDOWS, p.windows_per_day, p.seed)
    parts = []
    for path in inputs.shards:  # a shard at a time, its outputs kept in shard order
        usage = trace.read_table(path, "task_usage", mapreduce.USAGE_COLUMNS, float_dtype=pl.Float32)
        log.info("read %d records from %s", usage.height, path)
        parts.append(mapreduce.map_task_usage(usage, p.buckets, windows, consume=True))
        del usage
    records, job_windows, sampled = (pl.concat(kind) if len(kind) > 1 else kind[0] for kind in zip(*parts))
    del parts
    io.write_bucketed(records, outputs.records, p.buckets)
    io.write_parquet(job_windows, outputs.job_windows)
    io.write_parquet(sampled, outputs.sampled)
    log.info("wrote %d records, %d job-windows, %d sampled records", records.height, job_windows.height, sampled.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
