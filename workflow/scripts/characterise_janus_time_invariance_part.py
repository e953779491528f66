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
    # each bucket its own stream: the parts are independent, whatever buckets_per_job
    parts = [ch.bucket_window_ks(records, p.windows, ch.stream(p.seed, f"janus_s34/{b}"))
             for b, records in io.bucket_frames(inputs.series, p.buckets, COLUMNS)]
    log.info("tests per bucket: %s", dict(zip(p.buckets, (t.height for t in parts))))
    io.write_parquet(pl.concat(parts), outputs.tests)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
