"""Fig 3 (four example jobs, dots coloured by DBSCAN cluster, one line per cluster) and the category shares (Beaumont et al. §4.2)."""
import polars as pl

from colocate import insufficient, logs
from colocate.figures import cpumem as figures

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Beaumont Fig 3, memory vs CPU", log):
    examples = pl.read_parquet(snakemake.input.examples)
    figures.fig3_cpu_memory(examples, pl.read_parquet(snakemake.input.fits)).savefig(snakemake.output.fig3)
    figures.shares(pl.read_csv(snakemake.input.table)).savefig(snakemake.output.shares)
    log.info("examples: %s", dict(examples.group_by("category").agg(pl.col("job_id").first()).iter_rows()))
