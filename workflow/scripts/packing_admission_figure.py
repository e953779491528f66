"""Unuvar Fig 9: utilisation with and without the admission controller."""
import polars as pl

from colocate import insufficient, logs
from colocate.figures import packing as figs

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Unuvar Fig 9, admission controller", log):
    figs.unuvar_fig9_utilisation(pl.read_parquet(snakemake.input[0]), snakemake.params.eps, snakemake.params.threshold).savefig(snakemake.output[0])
    log.info("wrote %s", snakemake.output[0])
