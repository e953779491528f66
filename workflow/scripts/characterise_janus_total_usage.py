"""Table 1 and Fig 6 (Janus & Rzadca §3.6): normality and Gaussian percentiles of the total usage of N tasks."""
import numpy as np
import polars as pl

from colocate import insufficient, io, rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs
from colocate.prep import realizations as rz
from colocate.prep.tasks import TASK_KEY

ANALYSIS = "Janus Table 1 and Fig 6, normality of sums (§3.6)"


def main(inputs, outputs, params, log):
    p = params
    inst, tasks = np.load(inputs.inst, mmap_mode="r"), pl.read_parquet(inputs.tasks).sort("row")
    if p.table1_realizations > inst.shape[1]:  # the A-D test's power grows with R: Table 1 uses the paper's
        series = pl.scan_parquet(inputs.series).join(tasks.lazy().select(TASK_KEY), on=TASK_KEY, how="semi").collect()
        inst = rz.realize(series, tasks, p.table1_realizations, p.seed, stream="janus_table1_realizations")
        log.info("Table 1: %d tasks drawn again with R = %d", inst.shape[0], inst.shape[1])
    mu, sigma = ch.task_moments(tasks, pl.read_parquet(inputs.long, columns=["job_id", "task_index", "inst_mean", "inst_std"]))
    # the sizes whose random sets are (nearly) all distinct among this trace's tasks; none is too little data
    (table1_sizes, skipped1), (fig6_sizes, skipped6) = (ch.distinct_sizes(inst.shape[0], sizes, p.repetitions)
                                                        for sizes in (p.table1_sizes, p.fig6_sizes))
    insufficient.require(bool(table1_sizes and fig6_sizes), f"{inst.shape[0]} tasks with realizations, too few for "
                         "distinct random sets of the sizes asked", f"enough tasks for N = {min(p.table1_sizes)}")
    sizes = sorted(set(table1_sizes) | set(fig6_sizes))
    samples = ch.total_usage_samples(inst, mu, sigma, sizes, p.repetitions, ch.stream(p.seed, "janus_total_usage"), p.percentiles)
    table1 = ch.normality_table(samples.filter(pl.col("N").is_in(table1_sizes)), p.alpha)
    diffs = ch.percentile_differences(samples, fig6_sizes)
    io.write_parquet(samples, outputs.samples)
    table1.write_csv(outputs.table1)
    ch.percentile_difference_table(diffs).write_csv(outputs.fig6_table)
    figs.janus_fig6_percentiles(diffs).savefig(outputs.fig6, dpi=150)
    log.info("Table 1 (sizes skipped, too few tasks for distinct sets: %s, %s):\n%s", skipped1, skipped6, table1)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
