"""Beaumont Table 1 (dominant jobs per window) and Fig 1 (their tasks, CPU and memory by priority class)."""
import polars as pl

from colocate import rulescript
from colocate.analysis import jobs
from colocate.figures import jobs as figs


def main(inputs, outputs, params, log):
    totals = pl.read_parquet(inputs.totals)
    table1 = jobs.dominant_table(totals)
    table1.write_csv(outputs.table1)
    shares = jobs.class_shares(pl.read_parquet(inputs.windows), pl.read_parquet(inputs.dominant), totals)
    shares.write_csv(outputs.shares)
    figs.beaumont_fig1_classes(shares).savefig(outputs.fig1, dpi=150)
    log.info("Table 1:\n%s\nFig 1:\n%s", table1, shares)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
