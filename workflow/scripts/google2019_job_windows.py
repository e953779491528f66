"""Job × window aggregates of a range of windows of the Google 2019 trace, exact: every instance_usage shard's records
of the range (their row groups' statistics skip the rest), aggregated at once (colocate.prep.mapreduce)."""
import polars as pl

from colocate import io, rulescript
from colocate.prep import mapreduce


def main(inputs, outputs, params, log):
    lo, hi = params.lo, params.hi
    aggregates = mapreduce.reduce_job_windows(pl.scan_parquet(list(inputs.rows)), lo, hi)
    log.info("windows %d-%d of %d shards: %d job x window rows, %d records", lo, hi - 1, len(inputs.rows),
             aggregates.height, aggregates["n_records"].sum())
    io.write_parquet(aggregates, outputs[0])


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
