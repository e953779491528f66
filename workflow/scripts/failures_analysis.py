"""Windows per removal count against Poisson (Fig 6), dispersion tests, failure rate and removal durations (Fig 7), Beaumont et al. §6."""
import polars as pl

from colocate import logs
from colocate.analysis import failures
from colocate.report import summary
from colocate.figures import failures as figures

log = logs.to_file(snakemake.log[0])
p, i, o = snakemake.params, snakemake.input, snakemake.output
rem, counts, episodes = pl.read_parquet(i.removals), pl.read_parquet(i.windows), pl.read_parquet(i.episodes)
facts = pl.read_csv(i.facts)
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
rows = failures.summary_rows(stats, dispersion, episodes, rem, p.back_within_minutes, p.maintenance_min_removals, p.tail_more_than)
summary.rows("Machine failures (Beaumont et al. §6)", rows).write_csv(o.summary)
log.info("%s", stats.select("set", "windows", "mean", "dispersion_index", "rate_per_window", "mtbf_hours"))
