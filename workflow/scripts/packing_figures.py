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
        if params.note:  # what the figure's words mean on another trace, below the figure (kept by the tight box)
            fig.text(0.5, -0.01, params.note, ha="center", va="top", fontsize=7, color="0.3")
        fig.savefig(path, **({"bbox_inches": "tight"} if params.note else {}))
        plt.close(fig)
        log.info("%s: %s", name, path)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
