"""The policies of Tantawi & Steinder on requests and machines from the trace (CPU, memory)."""
import polars as pl

from colocate import insufficient, io, measure, rulescript
from colocate.figures.placement import fig_trace
from colocate.scheduling.placement_analysis import trace_measurements, trace_table
from colocate.scheduling.placement_runs import rounded, run_trace

ANALYSIS = "Trace-driven placement run (Tantawi & Steinder)"


def main(inputs, outputs, params, log):
    p, out = params, outputs
    stream = pl.read_parquet(inputs.requests)
    # statistics start after the warm-up (§IV): a trace that gives no more requests has none to show
    insufficient.require(stream.height > p.warmup, f"the trace gives {stream.height} placeable requests, no more "
                         f"than the warm-up of {p.warmup}", f"more than placement.trace.warmup = {p.warmup} requests")
    requests = run_trace(stream, pl.read_parquet(inputs.nodes), p.specs, seed=p.seed, alpha=p.alpha, tie_break=p.tie_break)
    io.write_parquet(requests, out.log)
    table = trace_table(requests, p.warmup, pl.read_csv(inputs.facts))
    rounded(table).write_csv(out.table)
    policies = requests["policy"].unique(maintain_order=True).to_list()
    fig_trace(requests, policies, warmup=p.warmup).savefig(out.figure)
    measure.measurements(trace_measurements(table)).write_csv(out.summary)
    log.info("\n%s", table)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
