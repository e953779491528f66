"""Requests (task events + task table) and nodes (machine events) of the trace-driven placement run."""
import polars as pl

from colocate import io, rulescript, trace
from colocate.scheduling.placement import stream
from colocate.scheduling.placement_workload import (
    task_arrivals,
    trace_nodes,
    trace_requests,
)

ANALYSIS = "Trace-driven placement run (Tantawi & Steinder)"


def table(path, name, columns=None):
    """A 2011 trace file of table ``name``, or another source's map of its trace to those columns (Parquet)."""
    return pl.read_parquet(path, columns=columns) if str(path).endswith(".parquet") else trace.read_table(path, name, columns)


def main(inputs, outputs, params, log):
    p = params
    cols = ["time", "job_id", "task_index", "event_type", "cpu_request", "memory_request"]
    events = pl.concat([table(f, "task_events", cols) for f in inputs.events])
    nodes = trace_nodes(table(inputs.machines, "machine_events"), p.machines, stream(p.seed, 0, "trace:nodes"))
    requests, facts = trace_requests(
        task_arrivals(events), pl.read_parquet(inputs.stats, columns=["job_id", "task_index", "n_records"]), nodes,
        n_requests=p.requests,
        offered_load=p.offered_cpu_load, lifetime=p.lifetime, rng=stream(p.seed, 0, "trace:requests"),
    )
    io.write_parquet(requests, outputs.requests)
    io.write_parquet(nodes, outputs.nodes)
    pl.DataFrame({"quantity": list(facts), "value": list(facts.values())}).write_csv(outputs.facts)
    log.info("%d task events in %d shards -> %s", events.height, len(inputs.events), facts)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
