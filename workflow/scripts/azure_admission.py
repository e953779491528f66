"""Unuvar §IV-F on Azure VMs: the Beta admission controller offered sets of VMs at their own arrival times."""
import polars as pl

from colocate import insufficient, rulescript
from colocate.analysis import aggregate
from colocate.report import cross_trace, summary
from colocate.scheduling import admission
from colocate.trace import azure

ANALYSIS = "Unuvar Table VIII on Azure VMs, Beta admission controller"


def main(inputs, outputs, params, log):
    p = params
    tasks = azure.vm_tasks(pl.read_parquet(inputs.vmtable))
    parts = [azure.task_series(pl.scan_parquet(f), tasks) for f in inputs.series]  # one scan per bucket
    records, lo, hi = aggregate.task_records(parts)
    _, _, running = aggregate.feasible_sizes(records, lo, hi, [])
    insufficient.require(running >= p.mean_running, f"the trace's VMs run {running:.1f} at a time on average, fewer "
                         f"than azure.admission.mean_running = {p.mean_running:g}",
                         f"VMs running {p.mean_running:g} at a time on average (or a smaller mean_running)")
    first = pl.concat([pl.scan_parquet(f).group_by("vmid").agg(pl.col("slot").min()).collect() for f in inputs.series])
    insufficient.require(first["slot"].n_unique() > 1, f"every VM's first reading is at slot {first['slot'].min()}: "
                         "the VMs all arrive at once, so there is no arrival process to admit",
                         "VMs created during the trace (not only before it began)")
    res, each = admission.run_trace_replicates(
        parts, records, lo, hi, p.eps, replicates=p.replicates, seed=p.seed, mean_running=p.mean_running,
        job_cap=p.job_cap, column="avg", threshold=p.threshold, peak_utilisation=p.peak_utilisation,
        peak_quantile=p.peak_quantile, estimator=p.estimator, history=p.history)
    res.table.write_csv(outputs.table)
    each.write_csv(outputs.replicates)
    part = summary.rows("Admission controller on Azure VMs (Unuvar §IV-F on another trace)",
                        admission.headline_numbers(res.table, "trace", p.estimator))
    summary.another_trace(part.with_columns(pl.col("quantity").map_elements(cross_trace.vm_quantity, return_dtype=pl.String)),
                          p.trace).write_csv(outputs.summary)
    log.info("%.1f VMs running on average; Table VIII:\n%s", running, res.table)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
