"""The policies of Tantawi & Steinder on requests and machines from the trace (CPU, memory)."""
import polars as pl

from colocate import insufficient, io, logs
from colocate.figures.placement import fig_trace
from colocate.scheduling.placement_analysis import trace_summary, trace_table
from colocate.scheduling.placement_runs import rounded, run_trace

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Trace-driven placement run (Tantawi & Steinder)", log):
    p, out = snakemake.params, snakemake.output
    requests = run_trace(pl.read_parquet(snakemake.input.requests), pl.read_parquet(snakemake.input.nodes), p.specs,
                         seed=p.seed, alpha=p.alpha, tie_break=p.tie_break)
    io.write_parquet(requests, out.log)
    table = trace_table(requests, p.warmup, pl.read_csv(snakemake.input.facts))
    rounded(table).write_csv(out.table)
    policies = requests["policy"].unique(maintain_order=True).to_list()
    fig_trace(requests, policies, warmup=p.warmup).savefig(out.figure)
    trace_summary(table).write_csv(out.summary)
    log.info("\n%s", table)
