"""Map a collection_events shard of the Google 2019 trace to the contract's group events: the jobs' first
submission and scheduling and last end (Beaumont §5.1); alloc sets are left out."""
from colocate import io, rulescript
from colocate.analysis import jobs
from colocate.sources import google2019 as g19


def main(inputs, outputs, params, log):
    events = g19.job_events(g19.read_collection_events(inputs.shard))
    pieces = jobs.map_job_events(events)
    io.write_parquet(pieces, outputs[0])
    log.info("%s: %d job events of %d jobs", inputs.shard, events.height, pieces.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
