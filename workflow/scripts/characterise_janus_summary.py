"""Headline numbers of Janus & Rzadca §3 beside the paper's (a part of results/summary.md)."""
import polars as pl

from colocate import insufficient, logs
from colocate.analysis import characterise as ch
from colocate.report import summary

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Janus & Rzadca §3, headline numbers", log):
    i = snakemake.input
    tables = (pl.read_csv(path) for path in (i.fig1, i.fig2, i.fig3, i.s34, i.shares, i.table1, i.fig6))
    rows = ch.janus_summary(*tables, n_realizations=snakemake.params.n_realizations)
    summary.rows("Task characterisation (Janus & Rzadca §3)", rows).write_csv(snakemake.output[0])
    log.info("%d summary rows", len(rows))
