"""§3.4 time invariance (Janus & Rzadca): the parts' K-S tests joined, the share rejected per Δ and its figure."""
import polars as pl

from colocate import io, rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Janus §3.4, time invariance (K-S)"


def main(inputs, outputs, params, log):
    p = params
    tests = pl.concat([pl.read_parquet(f) for f in inputs.tests])  # in bucket order
    shares = ch.rejection_shares(tests, p.alpha, expected=p.windows)
    io.write_parquet(tests, outputs.tests)
    shares.write_csv(outputs.table)
    figs.janus_s34_time_invariance(tests, shares, p.alpha).savefig(outputs.figure, dpi=150)
    log.info("rejected shares:\n%s", shares)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
