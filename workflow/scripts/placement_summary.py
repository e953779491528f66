"""What the experiment at Table I's loads measured for Tantawi & Steinder's tables (a part of results/summary.md,
judged against workflow/papers/tantawi.tsv by the summary rule)."""
import polars as pl

from colocate import measure, rulescript
from colocate.scheduling.placement_analysis import measurements


def main(inputs, outputs, params, log):
    tables = {k: pl.read_csv(getattr(inputs, k)) for k in ("table2", "table3", "table8", "replicates", "tests", "bsa")}
    frame = measure.measurements(measurements(**tables))
    frame.write_csv(outputs[0])
    log.info("%d measurements", frame.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
