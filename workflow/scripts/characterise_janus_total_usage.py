"""Table 1 and Fig 6 (Janus & Rzadca §3.6): normality and Gaussian percentiles of the total usage of N tasks."""
import numpy as np
import polars as pl

from colocate import io, rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Janus Table 1 and Fig 6, normality of sums (§3.6)"


def main(inputs, outputs, params, log):
    p = params
    inst = np.load(inputs.inst, mmap_mode="r")
    mu, sigma = ch.task_moments(pl.read_parquet(inputs.tasks), pl.read_parquet(inputs.long, columns=["job_id", "task_index", "inst_mean", "inst_std"]))
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
