"""Requests (task_events + task table) and nodes (machine_events) of the trace-driven placement run."""
import polars as pl

from colocate import insufficient, io, logs, trace
from colocate.scheduling.placement import stream
from colocate.scheduling.placement_workload import task_arrivals, trace_nodes, trace_requests

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Trace-driven placement run (Tantawi & Steinder)", log):
    p = snakemake.params
    cols = ["time", "job_id", "task_index", "event_type", "cpu_request", "memory_request"]
    events = pl.concat([trace.read_table(f, "task_events", cols) for f in snakemake.input.events])
    nodes = trace_nodes(trace.read_table(snakemake.input.machines, "machine_events"), p.machines, stream(p.seed, 0, "trace:nodes"))
    requests, facts = trace_requests(
        task_arrivals(events), pl.read_parquet(snakemake.input.stats), nodes, n_requests=p.requests,
        offered_load=p.offered_cpu_load, lifetime=p.lifetime, rng=stream(p.seed, 0, "trace:requests"),
    )
    io.write_parquet(requests, snakemake.output.requests)
    io.write_parquet(nodes, snakemake.output.nodes)
    pl.DataFrame({"quantity": list(facts), "value": list(facts.values())}).write_csv(snakemake.output.facts)
    log.info("%d task events in %d shards -> %s", events.height, len(snakemake.input.events), facts)
