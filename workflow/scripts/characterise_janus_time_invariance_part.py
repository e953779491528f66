"""§3.4 time invariance (Janus & Rzadca) of one part's buckets: K-S test of two random windows of Δ records per long task."""
import polars as pl

from colocate import io, rulescript, trace
from colocate.analysis import characterise as ch

ANALYSIS = "Janus §3.4, time invariance (K-S)"
COLUMNS = ["job_id", "task_index", "start_time", "inst", "avg"]


def main(inputs, outputs, params, log):
    p = params
    # a Δ that two windows of no trace can hold is a bad setting; one this trace is too short for, too little data
    impossible = [d for d in p.windows if 2 * d > trace.TRACE_WINDOWS]
    if impossible:
        raise ValueError(f"characterise.janus.windows: Δ (delta) {impossible} records: two windows exceed the "
                         f"trace's {trace.TRACE_WINDOWS} five-minute windows")
    parts = []
    for b, path in zip(p.buckets, inputs.series, strict=True):
        # each bucket its own stream: the parts are independent, whatever buckets_per_job
        parts.append(ch.bucket_window_ks(pl.read_parquet(path, columns=COLUMNS), p.windows, ch.stream(p.seed, f"janus_s34/{b}")))
        log.info("bucket %d: %d tests", b, parts[-1].height)
    io.write_parquet(pl.concat(parts), outputs.tests)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
