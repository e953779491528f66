"""Concatenate per-bucket statistics; the counts table of Janus & Rzadca §3.1."""
import polars as pl

from colocate import insufficient, io, rulescript
from colocate.prep import mapreduce
from colocate.prep.tasks import TASK_KEY, long_tasks_status


def main(inputs, outputs, params, log):
    stats = pl.concat([pl.read_parquet(p) for p in inputs.stats]).sort(TASK_KEY)
    hist = pl.concat([pl.read_parquet(p) for p in inputs.hist]).sort(TASK_KEY)
    counts = mapreduce.total_counts(pl.concat([pl.read_parquet(p) for p in inputs.counts]))
    io.write_parquet(stats, outputs.stats)
    if (lacking := long_tasks_status(stats, params.long_min_records)) is None:
        io.write_parquet(stats.filter("is_long").join(hist, on=TASK_KEY, how="left"), outputs.long)
    else:  # what reads long tasks says why it has none
        insufficient.write_status([outputs.long], insufficient.Status.of(lacking, lacking.analysis))
        log.warning("%s", lacking.reason)
    counts.write_csv(outputs.counts)
    mapreduce.counts_summary(counts).write_csv(outputs.summary)
    log.info("%d tasks kept, %d long", stats.height, hist.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
