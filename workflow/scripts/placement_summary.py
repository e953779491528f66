"""Headline numbers of Tantawi & Steinder beside the paper's (a part of results/summary.md)."""
import polars as pl

from colocate import logs
from colocate.scheduling.placement_analysis import summary_rows

log = logs.to_file(snakemake.log[0])
inp = snakemake.input
frame = summary_rows(**{k: pl.read_csv(inp[k]) for k in ("table2", "table3", "table8", "replicates", "tests", "bsa")})
frame.write_csv(snakemake.output[0])
log.info("%d summary rows", frame.height)
