"""The Beta admission controller on a stream of long tasks (Unuvar §IV-F): Table VIII and the utilisation."""
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
    res = admission.run(inst, lifetimes, p.eps, n_arrivals=p.arrivals, mean_running=p.mean_running,
                        threshold=p.threshold, peak_utilisation=p.peak_utilisation,
                        peak_quantile=p.peak_quantile, seed=p.seed)
    log.info("capacity %.4g; %s", res.capacity, res.table.to_dicts())
    io.write_parquet(res.utilisation, outputs.utilisation)
    res.table.write_csv(outputs.table)
    summary.rows("Stochastic admission controller (Unuvar §IV-F)", admission.headline_numbers(res.table)).write_csv(outputs.summary)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
