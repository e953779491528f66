"""Figs 2 and 3, variability of inst and avg usage (Janus & Rzadca §3.3): std CDFs, heatmaps and OLS trend lines."""
import numpy as np
import polars as pl

from colocate import insufficient, logs
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Janus Figs 2-3, variability of inst and avg (§3.3)", log):
    p = snakemake.params
    long = pl.read_parquet(snakemake.input.long, columns=["inst_mean", "inst_std", "avg_mean", "avg_std"])
    ch.std_summary(long).write_csv(snakemake.output.fig2_table)
    figs.janus_fig2_std_cdf(long).savefig(snakemake.output.fig2, dpi=150)
    lines = ch.std_trend_lines(long, p.alpha)
    lines.write_csv(snakemake.output.fig3_table)
    mean_edges, std_edges = ch.heatmap_edges(long, p.bins, p.quantile)
    bands = ch.trend_bands(long, np.linspace(0, mean_edges[-1], 100), p.alpha)
    maps = ch.std_heatmaps(long, mean_edges, std_edges)
    figs.janus_fig3_std_vs_mean(maps, mean_edges, std_edges, bands, lines).savefig(snakemake.output.fig3, dpi=150)
    log.info("trend lines:\n%s", lines)
