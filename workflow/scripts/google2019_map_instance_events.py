"""Map an instance_events shard of the Google 2019 trace to the contract's entity pieces (the shared map,
colocate.prep.mapreduce) and its events in 2011's task_events columns (for the placement events and requests)."""
from colocate import io, rulescript
from colocate.prep import mapreduce
from colocate.sources import google2019 as g19


def main(inputs, outputs, params, log):
    raw = g19.read_instance_events(inputs.shard)
    events = g19.task_events(raw)
    log.info("%s: %d events, %d of jobs' instances in the contract's types", inputs.shard, raw.height, events.height)
    io.write_bucketed(mapreduce.map_task_events(events, params.buckets), outputs.pieces, params.buckets)
    io.write_parquet(events, outputs.events)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
