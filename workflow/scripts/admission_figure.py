"""Unuvar Fig 9: utilisation with and without the admission controller."""
import polars as pl

from colocate import rulescript
from colocate.figures import packing as figs

ANALYSIS = "Unuvar Fig 9, admission controller"


def main(inputs, outputs, params, log):
    figs.unuvar_fig9_utilisation(pl.read_parquet(inputs[0]), params.eps, params.threshold).savefig(outputs[0])
    log.info("wrote %s", outputs[0])


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
