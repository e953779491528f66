"""Shares of the CPU vs memory categories, overall and per priority class, beside the paper's (Beaumont et al. §4.2)."""
import polars as pl

from colocate import measure, rulescript
from colocate.analysis import cpumem

ANALYSIS = "Beaumont §4.2, category shares"


def main(inputs, outputs, params, log):
    settings = cpumem.Settings(**params.settings)
    classes = pl.read_parquet(inputs.classes)
    dominant = pl.read_parquet(inputs.dominant, columns=["job_id", "class"])
    paper = dict(pl.read_csv(inputs.paper_shares, separator="\t").select("category", "share").iter_rows())
    table = cpumem.shares(classes, dominant, paper)
    table.write_csv(outputs.table)
    measure.measurements(cpumem.measurements(table, classes, settings)).write_csv(outputs.summary)
    log.info("shares:\n%s", table.filter(pl.col("scope") == "all"))


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
