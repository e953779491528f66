"""Janus §3.6 on Azure VMs: Table 1 and Figs 5-6, the normality of the total usage of N VMs and the Gaussian's
percentiles, by the functions used for Google's long tasks. A VM's usage is in cores, its inst the 5-minute max."""
import numpy as np
import polars as pl

from colocate import rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs
from colocate.prep import realizations as rz
from colocate.report import cross_trace, summary
from colocate.trace import azure

ANALYSIS = "Janus §3.6 on Azure VMs, normality of sums"
USAGE = "total CPU, cores (each VM's 5-minute max: Azure has no instantaneous sample)"


def main(inputs, outputs, params, log):
    p, o = params, outputs
    vms, inst = pl.read_parquet(inputs.tasks).sort("row"), np.load(inputs.inst, mmap_mode="r")
    sizes, skipped = ch.total_usage_sizes(vms.height, p.table1_sizes, p.fig6_sizes, p.fig5_sizes, p.repetitions)
    if p.table1_realizations > inst.shape[1]:  # the A-D test's power grows with R: Table 1 uses the paper's, own draws
        tasks, stream = azure.vm_tasks(pl.read_parquet(inputs.vmtable)), "janus_table1_realizations"
        inst = np.empty((vms.height, p.table1_realizations), dtype=np.float32)
        rz.fill({stream: inst}, (azure.chosen_series(pl.scan_parquet(f), tasks, vms, stream) for f in inputs.series),
                vms, p.table1_realizations, p.seed)
    mu, sigma = vms["inst_mean"].to_numpy(), vms["inst_std"].to_numpy()
    samples = ch.total_usage_samples(inst, mu, sigma, sorted(set(sizes["table1"]) | set(sizes["fig6"])), p.repetitions,
                                     ch.stream(p.seed, "janus_total_usage"), p.percentiles)
    table1 = ch.normality_table(samples.filter(pl.col("N").is_in(sizes["table1"])), p.alpha)
    diffs = ch.percentile_differences(samples, sizes["fig6"])
    fig6 = ch.percentile_difference_table(diffs)
    table1.write_csv(o.table1)
    fig6.write_csv(o.fig6_table)
    figs.janus_fig6_percentiles(diffs, entities="VMs").savefig(o.fig6, dpi=150)
    totals, gaussians = ch.example_totals(inst, mu, sigma, sizes["fig5"], ch.stream(p.seed, "janus_fig5"))
    gaussians.write_csv(o.fig5_table)
    figs.janus_fig5_totals(totals, gaussians, usage=USAGE, entities="VMs").savefig(o.fig5, dpi=150)
    part = summary.rows("Normality of sums of Azure VMs (Janus & Rzadca §3.6 on another trace)",
                        ch.total_usage_rows(table1, fig6, inst.shape[1], "in cores (paper: normalised CPU)"))
    part = part.with_columns(pl.col("quantity").map_elements(cross_trace.vm_quantity, return_dtype=pl.String))
    summary.another_trace(part, p.trace).write_csv(o.summary)
    log.info("%d VMs × R = %d; sizes %s; skipped (too few VMs for distinct sets) %s", vms.height, inst.shape[1], sizes, skipped)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
