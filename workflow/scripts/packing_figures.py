"""Figs 7–13 of Janus & Rzadca and the m–q Pareto figure of all fit tests, from the tidy packing table."""
import matplotlib.pyplot as plt
import polars as pl

from colocate import rulescript
from colocate.figures import packing as figs

ANALYSIS = "Janus Figs 7-13, packing figures"


def main(inputs, outputs, params, log):
    results = pl.read_parquet(inputs.table)
    for name, draw in figs.FIGURES.items():
        path = getattr(outputs, name)
        fig = draw(results)
        fig.savefig(path)
        plt.close(fig)
        log.info("%s: %s", name, path)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
