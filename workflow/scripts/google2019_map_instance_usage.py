"""Map an instance_usage shard of the Google 2019 trace to the contract's bucketed usage records and sampled-window
records (the shared map, colocate.prep.mapreduce, on its 2011-shaped columns), the records the job × window aggregates
are computed from, sorted by window (reduced over every shard by google2019_job_windows.py: a shard holds rows from
the whole month), and the mean and variance of each window's 1-s samples (the contract's window moments).

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
    rows, sampled = mapreduce.usage_window_rows(usage, windows)
    # row groups of a few windows each: a reduce of a range of windows reads only those holding it
    io.write_parquet(rows, outputs.window_records, row_group_size=io.WINDOW_ROW_GROUP_ROWS)
    io.write_parquet(sampled, outputs.sampled)
    del rows, sampled  # written before the records are bucketed: not held at the map's peak
    records = mapreduce.bucket_records(usage, params.buckets, consume=True)
    io.write_bucketed(records, outputs.records, params.buckets)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
