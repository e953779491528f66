"""Map one job_events shard to job pieces: first SUBMIT/SCHEDULE, last terminal event (Beaumont §5.1)."""
from colocate import io, logs, trace
from colocate.analysis import jobs

log = logs.to_file(snakemake.log[0])
events = trace.read_table(snakemake.input.shard, "job_events", ["time", "job_id", "event_type"])
pieces = jobs.map_job_events(events)
io.write_parquet(pieces, snakemake.output[0])
log.info("%d job events of %d jobs from %s", events.height, pieces.height, snakemake.input.shard)
