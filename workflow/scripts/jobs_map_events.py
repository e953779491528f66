"""Map a job_events shard, or a batch of shards (mapreduce.shards_per_map), to job pieces: first SUBMIT/SCHEDULE,
last terminal event (Beaumont §5.1)."""
import polars as pl

from colocate import io, rulescript, trace
from colocate.analysis import jobs


def pieces_of(path, log):
    events = trace.read_table(path, "job_events", ["time", "job_id", "event_type"])
    pieces = jobs.map_job_events(events)
    log.info("%d job events of %d jobs from %s", events.height, pieces.height, path)
    return pieces


def main(inputs, outputs, params, log):
    io.write_parquet(pl.concat([pieces_of(path, log) for path in inputs.shards]), outputs[0])


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
