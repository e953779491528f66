"""Janus §3 on Azure VMs: Figs 2-3 (variability of avg and of max, the high-frequency bound) and Fig 4 (k-means of
the VMs' avg histograms), by the functions used for Google's long tasks."""
import numpy as np
import polars as pl
from threadpoolctl import threadpool_limits

from colocate import insufficient, rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs
from colocate.report import cross_trace, summary

ANALYSIS = "Janus §3 on Azure VMs, variability and usage clusters"
MIN_PER_CLUSTER = 10  # Janus clusters ~800,000 tasks into 16; fewer than 10 VMs a cluster is no typical shape
INST = "inst: the 5-minute max of each VM (Azure records no instantaneous sample; the max bounds it)"


def main(inputs, outputs, params, log, threads=1):
    p, o = params, outputs
    vms = pl.concat([pl.read_parquet(f) for f in inputs.vms]).filter(pl.col("readings") >= p.long_min_records)
    fig2 = ch.std_summary(vms)
    fig2.write_csv(o.fig2_table)
    figs.janus_fig2_std_cdf(vms).suptitle(INST, fontsize=8).figure.savefig(o.fig2, dpi=150)
    lines = ch.std_trend_lines(vms, p.alpha)
    lines.write_csv(o.fig3_table)
    mean_edges, std_edges = ch.heatmap_edges(vms, p.bins, p.quantile)
    bands = ch.trend_bands(vms, np.linspace(0, mean_edges[-1], 100), p.alpha)
    fig3 = figs.janus_fig3_std_vs_mean(ch.std_heatmaps(vms, mean_edges, std_edges), mean_edges, std_edges, bands, lines)
    fig3.suptitle(INST, fontsize=8).figure.savefig(o.fig3, dpi=150)
    rows = ch.variability_rows(fig2, lines)
    if vms.height >= MIN_PER_CLUSTER * p.k:
        with threadpool_limits(threads):
            labels, centroids, _ = ch.kmeans_histograms(ch.hist_matrix(vms, "avg_hist"), p.k, p.seed, p.n_init)
        shares = ch.cluster_shares(labels, p.k)
        shares.write_csv(o.shares)
        figs.janus_fig4_centroids(centroids, shares).suptitle("Azure VMs: clusters of avg histograms", fontsize=9).figure.savefig(o.fig4, dpi=150)
        rows += ch.cluster_rows(shares)
    else:  # k clusters of a few VMs each are the VMs themselves, not typical distributions
        insufficient.write_status([o.shares, o.fig4], insufficient.Status(
            "Janus Fig 4 on Azure VMs, k-means of avg histograms", f"{vms.height} VMs for k = {p.k} clusters",
            f"at least {MIN_PER_CLUSTER} VMs a cluster ({MIN_PER_CLUSTER * p.k} VMs)"))
    part = summary.rows("Task characterisation of Azure VMs (Janus & Rzadca §3 on another trace)", rows)
    part = part.with_columns(pl.col("quantity").map_elements(cross_trace.vm_quantity, return_dtype=pl.String))
    summary.another_trace(part, p.trace).write_csv(o.summary)
    log.info("%d VMs with >= %d readings; lines:\n%s\n%d summary rows", vms.height, p.long_min_records, lines, len(rows))


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
