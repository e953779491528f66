"""Figure of Beaumont et al. §8.2: machines used and overload of the three packing policies."""
import polars as pl

from colocate import insufficient, logs
from colocate.figures import periodicity as fig

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Beaumont §8.2, periodic packing figure", log):
    i = snakemake.input
    figure = fig.periodic_packing(pl.read_csv(i.table), pl.read_parquet(i.loads))
    figure.savefig(snakemake.output[0])
    log.info("wrote %s", snakemake.output[0])
