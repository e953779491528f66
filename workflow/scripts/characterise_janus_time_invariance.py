"""§3.4 time invariance (Janus & Rzadca): K-S test of two random windows of Δ records per long task."""
import polars as pl

from colocate import io, rulescript, trace
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Janus §3.4, time invariance (K-S)"


def main(inputs, outputs, params, log):
    p = params
    # a Δ that two windows of no trace can hold is a bad setting; one this trace is too short for, too little data
    impossible = [d for d in p.windows if 2 * d > trace.TRACE_WINDOWS]
    if impossible:
        raise ValueError(f"characterise.janus.windows: Δ (delta) {impossible} records: two windows exceed the "
                         f"trace's {trace.TRACE_WINDOWS} five-minute windows")
    parts = []
    for b, path in enumerate(inputs.series):
        s = ch.series_blocks(pl.read_parquet(path, columns=["job_id", "task_index", "start_time", "inst", "avg"]))
        rng = ch.stream(p.seed, f"janus_s34/{b}")
        for delta in p.windows:
            if s.keys.height:
                t = ch.window_ks(s.inst, s.offsets, delta, rng, require=False)
                parts.append(ch.with_keys(t, s.keys).select(pl.lit(delta, pl.Int64).alias("delta"), pl.all()))
        log.info("bucket %d: %d long tasks", b, s.keys.height)
    tests = pl.concat(parts)
    shares = ch.rejection_shares(tests, p.alpha, expected=p.windows)
    io.write_parquet(tests, outputs.tests)
    shares.write_csv(outputs.table)
    figs.janus_s34_time_invariance(tests, shares, p.alpha).savefig(outputs.figure, dpi=150)
    log.info("rejected shares:\n%s", shares)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
