"""Unuvar §IV on Azure VMs: Beta fits of the aggregated utilisation of random sets of VMs (weighted by cores)."""
import polars as pl

from colocate import insufficient, io, rulescript
from colocate.analysis import aggregate, betafit
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs
from colocate.report import cross_trace, summary
from colocate.trace import azure

ANALYSIS = "Unuvar §IV on Azure VMs, Beta fit"


def main(inputs, outputs, params, log):
    p, o = params, outputs
    tasks = azure.vm_tasks(pl.read_parquet(inputs.vmtable))
    parts = [azure.task_series(pl.scan_parquet(f), tasks) for f in inputs.series]  # one scan per bucket
    records, lo, hi = aggregate.task_records(parts)
    insufficient.require(hi - lo + 1 >= p.observations, f"the readings span {hi - lo + 1} slots, fewer than the "
                         f"{p.observations} observations of an aggregate", f"readings over ≥ {p.observations} slots "
                         f"({p.observations / 288:.1f} days; characterise.unuvar.observations)")
    sizes, skipped, running = aggregate.feasible_sizes(records, lo, hi, p.sizes)
    insufficient.require(bool(sizes), f"the trace's VMs run {running:.1f} at a time on average, fewer than any size "
                         f"{p.sizes}", f"VMs running at least {min(p.sizes)} at a time on average")
    aggs, sources = aggregate.build_aggregates(parts, None, sizes, "trace", 0.0, p.observations, "avg",
                                               ch.stream(p.seed, "azure_unuvar"), p.job_cap)
    util = aggregate.utilisation(aggs, ["size", "rep"], p.peak)
    io.write_parquet(util, o.aggregates)
    sources.vstack(pl.DataFrame([{"size": n, "source": "none", "note": f"the VMs run {running:.1f} at a time on average"}
                                 for n in skipped], schema=aggregate.SOURCES_SCHEMA)).write_csv(o.sources)
    t = betafit.fit_tables(util, p.threshold, sorted({*p.tail_thresholds, p.threshold}), p.alpha)
    for name in ("statistics", "ks", "overutilisation", "models"):
        t[name].write_csv(getattr(o, name))
    per = {n: util.filter(pl.col("size") == n) for n in sizes}
    figs.unuvar_beta_fit(per, t["fits"], p.threshold, f"CPU utilisation of sets of {p.trace} VMs fit to a Beta "
                         "distribution (Unuvar Figs 4-7 on another trace)").savefig(o.figure, dpi=150)
    part = summary.rows("Aggregated utilisation of Azure VMs (Unuvar et al. §IV on another trace)",
                        betafit.unuvar_summary(t, p.alpha, p.threshold))
    part = part.with_columns(pl.col("quantity").map_elements(cross_trace.vm_quantity, return_dtype=pl.String))
    summary.another_trace(part, p.trace).write_csv(o.summary)
    log.info("sizes %s (skipped %s: %.1f VMs running on average)\n%s", sizes, skipped, running, sources)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
