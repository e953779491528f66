"""Running tasks per machine at the configured instants, from the task_events shards read in order."""
import polars as pl

from colocate import rulescript, trace
from colocate.analysis import colocation
from colocate.report import summary

COLUMNS = ["time", "job_id", "task_index", "machine_id", "event_type"]


def main(inputs, outputs, params, log):
    last_at = trace.TRACE_START_US + int(max(params.days) * 86_400e6)
    frames = []
    for path in inputs.events:  # shards are in time order: stop at the first one past the last instant
        events = trace.read_table(path, "task_events", COLUMNS)
        frames.append(events.filter(pl.col("time") <= last_at))
        if events.height and events["time"].max() > last_at:
            break
    events = pl.concat(frames)
    end = events["time"].max() if events.height else 0
    days = [d for d in params.days if trace.TRACE_START_US + d * 86_400e6 <= end or d == 0]
    if len(days) < len(params.days):
        log.warning("instants after the last event read (%.3f days) left out: %s", (end - trace.TRACE_START_US) / 86_400e6,
                    sorted(set(params.days) - set(days)))
    table = colocation.density_over_time(events, days)
    table.write_csv(outputs.table)
    summary.rows("Co-location (the real 2011 trace at its start)", colocation.summary_rows(table)).write_csv(outputs.summary)
    log.info("running tasks per machine:\n%s", table)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
