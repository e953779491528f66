"""Table 1 and Fig 6 (Janus & Rzadca §3.6): normality and Gaussian percentiles of the total usage of N tasks."""
import numpy as np
import polars as pl

from colocate import io, rulescript
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
    sizes = sorted(set(p.table1_sizes) | set(p.fig6_sizes))
    samples = ch.total_usage_samples(inst, mu, sigma, sizes, p.repetitions, ch.stream(p.seed, "janus_total_usage"), p.percentiles)
    table1 = ch.normality_table(samples.filter(pl.col("N").is_in(p.table1_sizes)), p.alpha)
    diffs = ch.percentile_differences(samples, p.fig6_sizes)
    io.write_parquet(samples, outputs.samples)
    table1.write_csv(outputs.table1)
    ch.percentile_difference_table(diffs).write_csv(outputs.fig6_table)
    figs.janus_fig6_percentiles(diffs).savefig(outputs.fig6, dpi=150)
    log.info("Table 1:\n%s", table1)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
