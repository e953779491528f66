"""Headline numbers of Janus & Rzadca §3 beside the paper's (a part of results/summary.md)."""
import polars as pl

from colocate import rulescript
from colocate.analysis import characterise as ch
from colocate.report import summary

ANALYSIS = "Janus & Rzadca §3, headline numbers"


def main(inputs, outputs, params, log):
    i = inputs
    tables = (pl.read_csv(path) for path in (i.fig1, i.fig2, i.fig3, i.s34, i.shares, i.table1, i.fig6))
    rows = ch.janus_summary(*tables, n_realizations=params.n_realizations)
    summary.rows("Task characterisation (Janus & Rzadca §3)", rows).write_csv(outputs[0])
    log.info("%d summary rows", len(rows))


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
