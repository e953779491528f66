"""Headline numbers of Tantawi & Steinder beside the paper's (a part of results/summary.md)."""
import polars as pl

from colocate import rulescript
from colocate.scheduling.placement_analysis import summary_rows


def main(inputs, outputs, params, log):
    tables = {k: pl.read_csv(getattr(inputs, k)) for k in ("table2", "table3", "table8", "replicates", "tests", "bsa")}
    frame = summary_rows(**tables, load_factor=params.load_factor)
    frame.write_csv(outputs[0])
    log.info("%d summary rows", frame.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
