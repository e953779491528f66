"""Beaumont Table 3: durations of dominant jobs per priority class, from job_events."""
import polars as pl

from colocate import rulescript
from colocate.analysis import jobs


def main(inputs, outputs, params, log):
    table3 = jobs.duration_table(pl.read_parquet(inputs.dominant))
    table3.write_csv(outputs.table3)
    log.info("Table 3 (minutes):\n%s", table3)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
