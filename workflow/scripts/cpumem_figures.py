"""Fig 3 (four example jobs, dots coloured by DBSCAN cluster, one line per cluster) and the category shares (Beaumont et al. §4.2)."""
import polars as pl

from colocate import rulescript
from colocate.figures import cpumem as figures

ANALYSIS = "Beaumont Fig 3, memory vs CPU"


def main(inputs, outputs, params, log):
    examples = pl.read_parquet(inputs.examples)
    figures.fig3_cpu_memory(examples, pl.read_parquet(inputs.fits)).savefig(outputs.fig3)
    figures.shares(pl.read_csv(inputs.table)).savefig(outputs.shares)
    log.info("examples: %s", dict(examples.group_by("category").agg(pl.col("job_id").first()).iter_rows()))


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
