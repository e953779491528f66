"""Headline numbers of Beaumont et al. §5.2 and §8.2 beside the paper's (a part of results/summary.md)."""
import polars as pl

from colocate import rulescript
from colocate.analysis import periodicity as pe
from colocate.report import summary
from colocate.scheduling import periodic_packing as pp

ANALYSIS = "Beaumont §5.2 and §8.2, headline numbers"


def main(inputs, outputs, params, log):
    p, i = params, inputs
    rows = pe.summary_rows(
        pl.read_parquet(i.components), pl.read_csv(i.weekly, schema_overrides={"low_days": pl.String}), pl.read_csv(i.phases),
        n_windows=p.n_windows, significance_ratio=p.significance_ratio, strong_ratio=p.strong_ratio,
        phase_min_ratio=p.phase_min_ratio, phase_limits_deg=p.phase_limits_deg, **({"groups": p.groups} if p.groups else {}),
    )
    rows += pp.summary_rows(pl.read_csv(i.packing))
    summary.rows("Periodicity and periodic packing (Beaumont et al. §5.2, §8.2)", rows).write_csv(outputs[0])
    log.info("%d summary rows", len(rows))


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
