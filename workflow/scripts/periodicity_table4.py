"""Beaumont et al. Table 4 (§5.2): the Fourier ratios' statistics over the long-running jobs, beside the paper's."""
import polars as pl

from colocate import rulescript
from colocate.analysis import periodicity as pe

ANALYSIS = "Beaumont Table 4, Fourier periodicity (§5.2)"


def main(inputs, outputs, params, log):
    table = pe.table4(pl.read_parquet(inputs.components), pl.read_csv(inputs.paper_table4, separator="\t"))
    table.write_csv(outputs[0])
    log.info("Table 4:\n%s", table)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
