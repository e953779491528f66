"""Unuvar §IV-C to §IV-E: Beta fit by moments, Tables II-VII, Figs 4/7, and Gaussian vs Beta."""
import polars as pl

from colocate import measure, rulescript
from colocate.analysis import betafit
from colocate.figures import characterise as figs

ANALYSIS = "Unuvar Tables II-VII, Beta fit"


def main(inputs, outputs, params, log):
    p, o = params, outputs
    aggs = pl.read_parquet(inputs.aggregates)
    t = betafit.fit_tables(aggs, p.threshold, sorted({*p.tail_thresholds, p.threshold}), p.alpha)
    for name in ("statistics", "moments", "ks", "overutilisation", "models"):
        t[name].write_csv(getattr(o, name))
    sizes = aggs["size"].unique(maintain_order=True).to_list()
    per = {n: aggs.filter(pl.col("size") == n) for n in sizes}
    first, rest = sizes[:1], sizes[1:] or sizes[:1]
    fits = t["fits"]
    figs.unuvar_beta_fit({n: per[n] for n in first}, fits, p.threshold, f"Figs 4-6: CPU utilisation of {first[0]} tasks fit to a Beta distribution").savefig(o.fig4, dpi=150)
    figs.unuvar_beta_fit({n: per[n] for n in rest}, fits, p.threshold, "Fig 7: Q-Q plot, CPU utilisation & Beta fit, observed & theoretical utilisation").savefig(o.fig7, dpi=150)
    measure.measurements(betafit.unuvar_measurements(t, p.alpha, p.threshold)).write_csv(o.summary)
    log.info("fits:\n%s", t["fits"])


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
