"""The Beta admission controller on a stream of long tasks (Unuvar §IV-F): Table VIII and the utilisation."""
import numpy as np
import polars as pl

from colocate import insufficient, io, logs
from colocate.report import summary
from colocate.scheduling import admission

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Unuvar Table VIII, Beta admission controller", log):
    p = snakemake.params
    inst = np.load(snakemake.input.inst, mmap_mode="r")
    lifetimes = pl.read_parquet(snakemake.input.tasks).sort("row")["n_records"].to_numpy()
    res = admission.run(inst, lifetimes, p.eps, n_arrivals=p.arrivals, mean_running=p.mean_running,
                        threshold=p.threshold, peak_utilisation=p.peak_utilisation,
                        peak_quantile=p.peak_quantile, seed=p.seed)
    log.info("capacity %.4g; %s", res.capacity, res.table.to_dicts())
    io.write_parquet(res.utilisation, snakemake.output.utilisation)
    res.table.write_csv(snakemake.output.table)
    summary.rows("Stochastic admission controller (Unuvar §IV-F)", admission.headline_numbers(res.table)).write_csv(snakemake.output.summary)
