"""Map an instance_usage shard of the Google 2019 trace to the contract's bucketed usage records, job × window
aggregates and sampled-window records (the shared map, colocate.prep.mapreduce, on its 2011-shaped columns), and the
mean and variance of each window's 1-s samples (the contract's window moments).

A real shard is ~3 GB of JSON: it is read in blocks (``g19.iter_instance_usage``), each cut to its slim columns at
once, so that only those of the whole shard are held."""
import polars as pl

from colocate import io, rulescript
from colocate.prep import mapreduce
from colocate.sources import google2019 as g19


def main(inputs, outputs, params, log):
    n, usage, moments = 0, [], []
    for raw in g19.iter_instance_usage(inputs.shard):
        n += raw.height
        usage.append(g19.task_usage(raw))
        moments.append(g19.window_moments(raw))
        del raw
    usage, moments = pl.concat(usage), pl.concat(moments, rechunk=True)
    log.info("%s: %d records, %d of jobs' instances (alloc sets' left out), %d with both distributions", inputs.shard,
             n, usage.height, moments.height)
    io.write_parquet(moments, outputs.moments)
    del moments
    windows = mapreduce.sampled_windows(params.n_windows, params.windows_per_day, params.seed)
    records, job_windows, sampled = mapreduce.map_task_usage(usage, params.buckets, windows, consume=True)
    io.write_bucketed(records, outputs.records, params.buckets)
    io.write_parquet(job_windows, outputs.job_windows)
    io.write_parquet(sampled, outputs.sampled)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
