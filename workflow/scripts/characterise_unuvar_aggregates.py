"""Unuvar §IV-B aggregates: the summed usage of co-located tasks (machines, else realizations), normalised to 90%."""
import numpy as np
import polars as pl

from colocate import insufficient, io, logs
from colocate.analysis import aggregate, characterise as ch

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Unuvar §IV, aggregated utilisation", log):
    p = snakemake.params
    series = None if p.source == "realizations" else pl.scan_parquet(snakemake.input.series)
    matrix = np.load(snakemake.input[p.usage], mmap_mode="r")
    aggs, sources = aggregate.build_aggregates(series, matrix, p.sizes, p.source, p.tolerance, p.observations, p.usage,
                                               ch.stream(p.seed, "unuvar_aggregates"))
    io.write_parquet(aggregate.utilisation(aggs, ["size", "rep"], p.peak), snakemake.output.aggregates)
    sources.write_csv(snakemake.output.sources)
    log.info("aggregates:\n%s", sources)
