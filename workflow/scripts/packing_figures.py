"""Figs 7–13 of Janus & Rzadca and the m–q Pareto figure of all fit tests, from the tidy packing table."""
import matplotlib.pyplot as plt
import polars as pl

from colocate import insufficient, logs
from colocate.figures import packing as figs

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Janus Figs 7-13, packing figures", log):
    results = pl.read_parquet(snakemake.input.table)
    for name, draw in figs.FIGURES.items():
        fig = draw(results)
        fig.savefig(snakemake.output[name])
        plt.close(fig)
        log.info("%s: %s", name, snakemake.output[name])
