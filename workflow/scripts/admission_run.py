"""The Beta admission controller (Unuvar §IV-F): Table VIII over sets of the trace's tasks (or replicate streams), the utilisation."""
import numpy as np
import polars as pl

from colocate import insufficient, io, measure, rulescript
from colocate.analysis import aggregate
from colocate.scheduling import admission

ANALYSIS = "Unuvar Table VIII, Beta admission controller"


def main(inputs, outputs, params, log):
    p = params
    parts = [pl.scan_parquet(f) for f in inputs.series]  # one scan per bucket
    records, lo, hi = aggregate.task_records(parts) if p.source != "realizations" else (None, 0, -1)
    source, note = admission.choose_source(p.source, records, lo, hi, p.mean_running)
    common = {"replicates": p.replicates, "seed": p.seed, "mean_running": p.mean_running, "threshold": p.threshold,
              "peak_utilisation": p.peak_utilisation, "peak_quantile": p.peak_quantile, "estimator": p.estimator,
              "history": p.history}
    if source == "trace":
        first = pl.concat([part.group_by("job_id", "task_index").agg(pl.col("start_time").min()).collect() for part in parts])
        insufficient.require(first["start_time"].n_unique() > 1, "every long task's first record is in the same "
                             "window: they all arrive at once, so there is no arrival process to admit",
                             "tasks that start during the trace (not only before it began)")
        res, each = admission.run_trace_replicates(parts, records, lo, hi, p.eps, job_cap=p.job_cap, column=p.usage, **common)
    else:
        lifetimes = pl.read_parquet(inputs.tasks).sort("row")["n_records"].to_numpy()
        res, each = admission.run_replicates(np.load(inputs.inst, mmap_mode="r"), lifetimes, p.eps, n_arrivals=p.arrivals, **common)
    log.info("source %s %s; capacity (replicate 0) %.4g; %s", source, note, res.capacity, res.table.to_dicts())
    io.write_parquet(res.utilisation, outputs.utilisation)
    res.table.with_columns(source=pl.lit(source), note=pl.lit(note)).write_csv(outputs.table)
    each.write_csv(outputs.replicates)
    measure.measurements(admission.headline_measurements(res.table, source, p.estimator)).write_csv(outputs.summary)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
