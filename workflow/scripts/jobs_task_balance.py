"""Beaumont §4.3: task-count interdecile ratios, Fig 4 (two example jobs) and Fig 5 (80% balance thresholds)."""
import polars as pl

from colocate import io, rulescript
from colocate.analysis import jobs
from colocate.figures import jobs as figs


def main(inputs, outputs, params, log):
    dominant = pl.read_parquet(inputs.dominant)
    windows = pl.read_parquet(inputs.windows)
    dispersion = jobs.task_count_dispersion(dominant)
    thresholds = jobs.balance_thresholds(windows, dominant, params.quantile)
    io.write_parquet(dispersion, outputs.dispersion)
    io.write_parquet(thresholds, outputs.thresholds)
    table = jobs.balance_table(dispersion, thresholds)
    table.write_csv(outputs.table)
    examples = jobs.example_jobs(dominant, dispersion)
    figs.beaumont_fig4_examples(windows, examples).savefig(outputs.fig4, dpi=150)
    figs.beaumont_fig5_balance(thresholds).savefig(outputs.fig5, dpi=150)
    log.info("balance:\n%s\nexamples: %s", table, examples)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
