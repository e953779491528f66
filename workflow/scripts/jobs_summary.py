"""What Beaumont §3, §4.1, §4.3 and §5.1 report, as measured here (the summary judges it against the paper's)."""
import polars as pl

from colocate import measure, rulescript
from colocate.analysis import jobs


def main(inputs, outputs, params, log):
    i = inputs
    dominant = pl.read_parquet(i.dominant)
    production = dominant.filter(pl.col("class") == "production")
    totals = pl.read_parquet(i.windows)
    rows = measure.measurements(jobs.measurements(
        table1=pl.read_csv(i.table1),
        shares=pl.read_csv(i.shares),
        n_jobs=pl.scan_parquet(i.jobs).select(pl.len()).collect().item(),
        n_dominant=dominant.height,
        tasks_per_job=dominant["n_tasks_total"],
        mixtures=pl.read_csv(i.table2),
        dispersion=pl.read_parquet(i.dispersion),
        thresholds=pl.read_parquet(i.thresholds),
        durations=pl.read_csv(i.table3) if i.table3 else None,
        whole_trace_production=production["runs_whole_trace"].mean() if production.height else None,
        size_scale=params.size_scale,
        usage_windows=totals.select(pl.col("window").max() - pl.col("window").min() + 1).item(),
        usage_whole=params.usage_whole,
        window_totals=totals,
    ))
    rows.write_csv(outputs[0])
    log.info("measured:\n%s", rows)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
