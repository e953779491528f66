"""The job table: priority class and task count from task_events, lifetimes from job_events."""
import polars as pl

from colocate import io, rulescript
from colocate.analysis import jobs


def main(inputs, outputs, params, log):
    cols = ["job_id", "task_index", "priority", "first_time", "last_event"]
    # scanned, not concatenated: the streaming engine aggregates every shard's pieces by job
    table = jobs.job_table(pl.scan_parquet(list(inputs.task_pieces)).select(cols), params.priority_classes)
    if inputs.job_pieces:
        lifetimes = jobs.job_lifetimes(pl.scan_parquet(list(inputs.job_pieces)), params.n_windows, params.whole_job_events)
        table = table.join(lifetimes, on="job_id", how="left")
    io.write_parquet(table, outputs[0])
    log.info("%d jobs; by class:\n%s", table.height, table.group_by("class").len().sort("class"))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
