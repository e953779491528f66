"""Janus §3.6 on Azure VMs: Table 1 and Figs 5-6, the normality of the total usage of N VMs and the Gaussian's
percentiles, by the functions used for Google's long tasks. A VM's usage is in cores, its inst the 5-minute max."""
import numpy as np
import polars as pl

from colocate import insufficient, rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs
from colocate.prep import realizations as rz
from colocate.report import cross_trace, summary
from colocate.trace import azure

ANALYSIS = "Janus §3.6 on Azure VMs, normality of sums"
USAGE = "total CPU, cores (each VM's 5-minute max: Azure has no instantaneous sample)"


def main(inputs, outputs, params, log):
    p, o = params, outputs
    vms = pl.read_parquet(inputs.tasks).sort("row")
    inst = np.load(inputs.inst, mmap_mode="r")
    sizes = {key: ch.distinct_sizes(vms.height, getattr(p, key), p.repetitions)[0] for key in ("table1_sizes", "fig6_sizes")}
    sizes["fig5_sizes"] = [n for n in p.fig5_sizes if n <= vms.height]  # one set each
    smallest = max(min(getattr(p, key)) for key in sizes)  # each figure needs one size
    insufficient.require(all(sizes.values()), f"{vms.height} VMs have realizations", f"enough VMs for N = {smallest}")
    if p.table1_realizations > inst.shape[1]:  # the A-D test's power grows with R: Table 1 uses the paper's
        tasks, stream = azure.vm_tasks(pl.read_parquet(inputs.vmtable)), "janus_table1_realizations"  # its own draws
        inst = np.empty((vms.height, p.table1_realizations), dtype=np.float32)
        buckets = (azure.task_series(pl.scan_parquet(f), tasks).join(vms.lazy().select("job_id", "task_index"),
                   on=["job_id", "task_index"], how="semi").select("job_id", "task_index", "start_time", pl.col("inst").alias(stream))
                   .collect() for f in inputs.series)  # a bucket at a time
        rz.fill({stream: inst}, buckets, vms, p.table1_realizations, p.seed)
    mu, sigma = vms["inst_mean"].to_numpy(), vms["inst_std"].to_numpy()
    samples = ch.total_usage_samples(inst, mu, sigma, sorted(set(sizes["table1_sizes"]) | set(sizes["fig6_sizes"])),
                                     p.repetitions, ch.stream(p.seed, "janus_total_usage"), p.percentiles)
    table1 = ch.normality_table(samples.filter(pl.col("N").is_in(sizes["table1_sizes"])), p.alpha)
    diffs = ch.percentile_differences(samples, sizes["fig6_sizes"])
    fig6 = ch.percentile_difference_table(diffs)
    table1.write_csv(o.table1)
    fig6.write_csv(o.fig6_table)
    figs.janus_fig6_percentiles(diffs, entities="VMs").savefig(o.fig6, dpi=150)
    totals, gaussians = ch.example_totals(inst, mu, sigma, sizes["fig5_sizes"], ch.stream(p.seed, "janus_fig5"))
    gaussians.write_csv(o.fig5_table)
    figs.janus_fig5_totals(totals, gaussians, usage=USAGE, entities="VMs").savefig(o.fig5, dpi=150)
    part = summary.rows("Normality of sums of Azure VMs (Janus & Rzadca §3.6 on another trace)",
                        ch.total_usage_rows(table1, fig6, inst.shape[1], "in cores (paper: normalised CPU)"))
    part = part.with_columns(pl.col("quantity").map_elements(cross_trace.vm_quantity, return_dtype=pl.String))
    summary.another_trace(part, p.trace).write_csv(o.summary)
    log.info("%d VMs × R = %d; sizes %s; Table 1:\n%s", vms.height, inst.shape[1], sizes, table1)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
