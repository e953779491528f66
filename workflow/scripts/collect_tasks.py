"""Concatenate per-bucket statistics; the counts table of Janus & Rzadca §3.1."""
import polars as pl

from colocate import insufficient, io, logs
from colocate.prep import mapreduce
from colocate.prep.tasks import TASK_KEY, long_tasks_status

log = logs.to_file(snakemake.log[0])
stats = pl.concat([pl.read_parquet(p) for p in snakemake.input.stats]).sort(TASK_KEY)
hist = pl.concat([pl.read_parquet(p) for p in snakemake.input.hist]).sort(TASK_KEY)
counts = mapreduce.total_counts(pl.concat([pl.read_parquet(p) for p in snakemake.input.counts]))
io.write_parquet(stats, snakemake.output.stats)
if (lacking := long_tasks_status(stats, snakemake.params.long_min_records)) is None:
    io.write_parquet(stats.filter("is_long").join(hist, on=TASK_KEY, how="left"), snakemake.output.long)
else:  # what reads long tasks says why it has none
    insufficient.write_status([snakemake.output.long], insufficient.Status.of(lacking, lacking.analysis))
    log.warning("%s", lacking.reason)
counts.write_csv(snakemake.output.counts)
mapreduce.counts_summary(counts).write_csv(snakemake.output.summary)
log.info("%d tasks kept, %d long", stats.height, hist.height)
