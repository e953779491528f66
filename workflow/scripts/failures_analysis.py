"""Windows per removal count against Poisson (Fig 6), dispersion tests, failure rate and removal durations (Fig 7), Beaumont et al. §6."""
import polars as pl

from colocate import measure, rulescript
from colocate.analysis import failures
from colocate.figures import failures as figures


def main(inputs, outputs, params, log):
    p, o = params, outputs
    rem, counts, episodes = pl.read_parquet(inputs.removals), pl.read_parquet(inputs.windows), pl.read_parquet(inputs.episodes)
    facts = pl.read_csv(inputs.facts)
    sets = failures.count_sets(counts)
    stats = failures.set_statistics(sets, int(facts["machines"][0]), p.maintenance_min_removals, p.tail_more_than)
    dispersion = failures.dispersion_table(sets, alpha=p.alpha)
    fig6 = failures.poisson_table(sets["without_maintenance"])
    tail = failures.poisson_table(sets["without_outstanding"])
    failures.histogram(sets).write_csv(o.histogram)
    fig6.write_csv(o.poisson)
    stats.write_csv(o.stats)
    dispersion.write_csv(o.dispersion)
    failures.duration_table(rem, p.duration_marks_min).write_csv(o.durations)
    figures.fig6_poisson(fig6, tail, p.maintenance_min_removals).savefig(o.fig6)
    figures.fig7_removal_durations(rem, p.back_within_minutes, p.trace_minutes).savefig(o.fig7)
    measured = failures.measurements(stats, dispersion, episodes, rem, p.back_within_minutes, p.maintenance_min_removals, p.tail_more_than)
    measure.measurements(measured).write_csv(o.summary)
    log.info("%s", stats.select("set", "windows", "mean", "dispersion_index", "rate_per_window", "mtbf_hours"))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
