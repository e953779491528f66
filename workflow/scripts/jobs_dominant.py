"""Dominant jobs D = ∪ D_i (Beaumont §3): their job × window rows, per-window totals, one row per job."""
import polars as pl

from colocate import io, rulescript
from colocate.analysis import jobs


def main(inputs, outputs, params, log):
    p = params
    scan = pl.scan_parquet(list(inputs.job_windows))
    # a day of windows at a time: row-group statistics keep each read to the shards holding it
    load = lambda lo, hi: scan.filter(pl.col("window").is_between(lo, hi - 1)).collect()  # noqa: E731
    windows, totals = jobs.dominant_by_chunks(load, p.n_windows, p.cpu_share, p.chunk_windows)
    io.write_parquet(windows, outputs.windows)
    io.write_parquet(totals, outputs.totals)
    dominant = jobs.dominant_jobs(windows, pl.read_parquet(inputs.jobs), p.n_windows)
    io.write_parquet(dominant, outputs.dominant)
    log.info("%d job x window rows, %d dominant jobs; by class:\n%s", totals["jobs"].sum(), dominant.height, dominant.group_by("class").len().sort("class"))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
