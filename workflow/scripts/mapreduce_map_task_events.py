"""Map a task_events shard, or a batch of shards (mapreduce.shards_per_map), to task table pieces, bucketed by task."""
import polars as pl

from colocate import io, rulescript, trace
from colocate.prep import mapreduce


def pieces_of(path, buckets, log):
    events = trace.read_table(path, "task_events", mapreduce.TASK_EVENT_COLUMNS, float_dtype=pl.Float32)
    log.info("read %d events from %s", events.height, path)
    return mapreduce.map_task_events(events, buckets)


def main(inputs, outputs, params, log):
    # a shard at a time; the pieces in shard order, as the reducers would read the shards' own outputs
    pieces = pl.concat([pieces_of(path, params.buckets, log) for path in inputs.shards])
    io.write_bucketed(pieces, outputs[0], params.buckets)
    log.info("wrote %d task pieces of %d shard(s) in %d buckets", pieces.height, len(inputs.shards), params.buckets)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
