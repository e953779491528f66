"""§3.4 time invariance (Janus & Rzadca): K-S test of two random windows of Δ records per long task."""
import polars as pl

from colocate import insufficient, io, logs
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Janus §3.4, time invariance (K-S)", log):
    p = snakemake.params
    parts = []
    for b, path in enumerate(snakemake.input.series):
        s = ch.series_blocks(pl.read_parquet(path, columns=["job_id", "task_index", "start_time", "inst", "avg"]))
        rng = ch.stream(p.seed, f"janus_s34/{b}")
        for delta in p.windows:
            if s.keys.height:
                t = ch.window_ks(s.inst, s.offsets, delta, rng, require=False)
                parts.append(ch.with_keys(t, s.keys).select(pl.lit(delta, pl.Int64).alias("delta"), pl.all()))
        log.info("bucket %d: %d long tasks", b, s.keys.height)
    tests = pl.concat(parts)
    shares = ch.rejection_shares(tests, p.alpha, expected=p.windows)
    io.write_parquet(tests, snakemake.output.tests)
    shares.write_csv(snakemake.output.table)
    figs.janus_s34_time_invariance(tests, shares, p.alpha).savefig(snakemake.output.figure, dpi=150)
    log.info("rejected shares:\n%s", shares)
