"""The Beta admission controller on streams of long tasks (Unuvar §IV-F): Table VIII over replicate streams, the utilisation."""
import numpy as np
import polars as pl

from colocate import io, rulescript
from colocate.report import summary
from colocate.scheduling import admission

ANALYSIS = "Unuvar Table VIII, Beta admission controller"


def main(inputs, outputs, params, log):
    p = params
    inst = np.load(inputs.inst, mmap_mode="r")
    lifetimes = pl.read_parquet(inputs.tasks).sort("row")["n_records"].to_numpy()
    res, each = admission.run_replicates(inst, lifetimes, p.eps, replicates=p.replicates, n_arrivals=p.arrivals,
                                         mean_running=p.mean_running, threshold=p.threshold,
                                         peak_utilisation=p.peak_utilisation, peak_quantile=p.peak_quantile, seed=p.seed)
    log.info("capacity (replicate 0) %.4g; %s", res.capacity, res.table.to_dicts())
    io.write_parquet(res.utilisation, outputs.utilisation)
    res.table.write_csv(outputs.table)
    each.write_csv(outputs.replicates)
    summary.rows("Stochastic admission controller (Unuvar §IV-F)", admission.headline_numbers(res.table)).write_csv(outputs.summary)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
