"""Beaumont Table 2 and Fig 2: log mean CPU and memory of dominant jobs, one Gaussian vs a mixture of two."""
import polars as pl

from colocate import rulescript
from colocate.analysis import jobs
from colocate.figures import jobs as figs


def main(inputs, outputs, params, log):
    p = params
    dominant = pl.read_parquet(inputs.dominant)
    table2 = jobs.usage_mixtures(dominant, n_init=p.n_init, seed=p.seed)
    table2.write_csv(outputs.table2)
    figs.beaumont_fig2_usage(dominant, table2).savefig(outputs.fig2, dpi=150)
    log.info("Table 2:\n%s", table2)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
