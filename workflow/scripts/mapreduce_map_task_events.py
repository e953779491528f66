"""Map one task_events shard to task table pieces, bucketed by task."""
import polars as pl

from colocate import io, rulescript, trace
from colocate.prep import mapreduce


def main(inputs, outputs, params, log):
    events = trace.read_table(inputs.shard, "task_events", mapreduce.TASK_EVENT_COLUMNS, float_dtype=pl.Float32)
    log.info("read %d events from %s", events.height, inputs.shard)
    pieces = mapreduce.map_task_events(events, params.buckets)
    io.write_bucketed(pieces, outputs[0], params.buckets)
    log.info("wrote %d task pieces in %d buckets", pieces.height, params.buckets)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
