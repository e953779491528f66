"""Concatenate per-bucket statistics; the counts table of Janus & Rzadca §3.1."""
import polars as pl

from colocate import insufficient, io, measure, rulescript
from colocate.prep import mapreduce
from colocate.prep.tasks import TASK_KEY, long_tasks_status


def main(inputs, outputs, params, log):
    # one row per task of the whole trace: sorted a range of jobs at a time, never held whole
    io.write_sorted(inputs.stats, outputs.stats, TASK_KEY)
    stats = pl.scan_parquet(outputs.stats)
    lengths = stats.select("n_records", "is_long").collect()
    counts = mapreduce.total_counts(pl.concat([pl.read_parquet(p) for p in inputs.counts]))
    if lengths.height == 0:  # what reads the task table says why it has none
        insufficient.write_status([outputs.stats], insufficient.Status(
            "Task table (Janus §3.1)", "no task was kept: none has both usage records and an entity with its events "
            "(or every one failed or used nothing)", "usage records of the trace's entities"))
        log.warning("no task was kept")
    if (lacking := long_tasks_status(lengths, params.long_min_records)) is None:
        hist = pl.concat([pl.read_parquet(p) for p in inputs.hist])
        io.write_parquet(stats.filter("is_long").collect().join(hist, on=TASK_KEY, how="left"), outputs.long)
    else:  # what reads long tasks says why it has none
        insufficient.write_status([outputs.long], insufficient.Status.of(lacking, lacking.analysis))
        log.warning("%s", lacking.reason)
    counts.write_csv(outputs.counts)
    measure.measurements(mapreduce.counts_measurements(counts)).write_csv(outputs.summary)
    log.info("%d tasks kept, %d long", lengths.height, int(lengths["is_long"].sum()))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
