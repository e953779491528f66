"""The packing results of all settings: one tidy table, its per-cell summary, and what §5 prints, measured."""
import polars as pl

from colocate import io, measure, rulescript
from colocate.scheduling import packing_grid as pg

ANALYSIS = "Janus §5, packing table"


def main(inputs, outputs, params, log):
    results = pl.concat([pl.read_parquet(path) for path in inputs]).sort("instance", *pg.CELL_SCHEMA)
    io.write_parquet(results, outputs.table)
    pg.summarise(results).write_csv(outputs.csv)
    measure.measurements(pg.headline_measurements(results)).write_csv(outputs.summary)
    log.info("%d rows from %d settings", results.height, len(inputs))


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
