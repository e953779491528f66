"""Figs 2 and 3, variability of inst and avg usage (Janus & Rzadca §3.3): std CDFs, heatmaps and OLS trend lines."""
import numpy as np
import polars as pl

from colocate import rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Janus Figs 2-3, variability of inst and avg (§3.3)"


def main(inputs, outputs, params, log):
    p = params
    long = pl.read_parquet(inputs.long, columns=["inst_mean", "inst_std", "avg_mean", "avg_std"])
    ch.std_summary(long).write_csv(outputs.fig2_table)
    figs.janus_fig2_std_cdf(long).savefig(outputs.fig2, dpi=150)
    lines = ch.std_trend_lines(long, p.alpha)
    lines.write_csv(outputs.fig3_table)
    mean_edges, std_edges = ch.heatmap_edges(long, p.bins, p.quantile)
    bands = ch.trend_bands(long, np.linspace(0, mean_edges[-1], 100), p.alpha)
    maps = ch.std_heatmaps(long, mean_edges, std_edges)
    figs.janus_fig3_std_vs_mean(maps, mean_edges, std_edges, bands, lines).savefig(outputs.fig3, dpi=150)
    log.info("trend lines:\n%s", lines)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
