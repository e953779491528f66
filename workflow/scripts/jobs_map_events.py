"""Map one job_events shard to job pieces: first SUBMIT/SCHEDULE, last terminal event (Beaumont §5.1)."""
from colocate import io, rulescript, trace
from colocate.analysis import jobs


def main(inputs, outputs, params, log):
    events = trace.read_table(inputs.shard, "job_events", ["time", "job_id", "event_type"])
    pieces = jobs.map_job_events(events)
    io.write_parquet(pieces, outputs[0])
    log.info("%d job events of %d jobs from %s", events.height, pieces.height, inputs.shard)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
