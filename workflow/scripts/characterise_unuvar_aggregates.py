"""Unuvar §IV-B to §IV-D aggregates: the summed usage of co-located tasks (a machine, a set of the trace's tasks, or realizations), normalised to 90%."""
import numpy as np
import polars as pl

from colocate import io, rulescript
from colocate.analysis import aggregate
from colocate.analysis import characterise as ch

ANALYSIS = "Unuvar §IV, aggregated utilisation"


def main(inputs, outputs, params, log):
    p = params
    # one scan per bucket: machines' windows are counted a bucket at a time
    series = None if p.source == "realizations" else [pl.scan_parquet(f) for f in inputs.series]
    matrix = np.load(getattr(inputs, p.usage), mmap_mode="r")  # p.usage names the input: inst or avg
    aggs, sources = aggregate.build_aggregates(series, matrix, p.sizes, p.source, p.tolerance, p.observations, p.usage,
                                               ch.stream(p.seed, "unuvar_aggregates"), p.job_cap)
    io.write_parquet(aggregate.utilisation(aggs, ["size", "rep"], p.peak), outputs.aggregates)
    sources.write_csv(outputs.sources)
    log.info("aggregates:\n%s", sources)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
