"""The packing results of all settings: one tidy table, its per-cell summary, and the headline numbers."""
import polars as pl

from colocate import insufficient, io, logs
from colocate.report import summary
from colocate.scheduling import packing_grid as pg

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Janus §5, packing table", log):
    results = pl.concat([pl.read_parquet(path) for path in snakemake.input]).sort("instance", *pg.CELL_SCHEMA)
    io.write_parquet(results, snakemake.output.table)
    pg.summarise(results).write_csv(snakemake.output.csv)
    summary.rows("Stochastic packing (Janus & Rzadca §5)", pg.headline_numbers(results)).write_csv(snakemake.output.summary)
    log.info("%d rows from %d settings", results.height, len(snakemake.input))
