"""What Beaumont et al. §5.2 and §8.2 report, as measured here (a part of results/summary.md, judged against the papers' tables)."""
import polars as pl

from colocate import measure, rulescript
from colocate.analysis import periodicity as pe
from colocate.scheduling import periodic_packing as pp

ANALYSIS = "Beaumont §5.2 and §8.2, headline numbers"


def main(inputs, outputs, params, log):
    p, i = params, inputs
    rows = pe.measurements(
        pl.read_parquet(i.components), pl.read_csv(i.weekly, schema_overrides={"low_days": pl.String}), pl.read_csv(i.phases),
        n_windows=p.n_windows, significance_ratio=p.significance_ratio, strong_ratio=p.strong_ratio,
        phase_min_ratio=p.phase_min_ratio, phase_limits_deg=p.phase_limits_deg, **({"groups": p.groups} if p.groups else {}),
    )
    rows += pp.measurements(pl.read_csv(i.packing))
    measure.measurements(rows).write_csv(outputs[0])
    log.info("%d measurements", len(rows))


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
