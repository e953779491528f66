"""Map one task_events shard to task table pieces, bucketed by task."""
import polars as pl

from colocate import io, logs, trace
from colocate.prep import mapreduce

log = logs.to_file(snakemake.log[0])
events = trace.read_table(snakemake.input.shard, "task_events", mapreduce.TASK_EVENT_COLUMNS, float_dtype=pl.Float32)
log.info("read %d events from %s", events.height, snakemake.input.shard)
pieces = mapreduce.map_task_events(events, snakemake.params.buckets)
io.write_bucketed(pieces, snakemake.output[0], snakemake.params.buckets)
log.info("wrote %d task pieces in %d buckets", pieces.height, snakemake.params.buckets)
