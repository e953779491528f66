"""Fig 5 (Janus & Rzadca §3.6): total inst usage of one random sample per N, with its fitted Gaussian."""
import numpy as np
import polars as pl

from colocate import rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Janus Fig 5, totals of N tasks (§3.6)"


def main(inputs, outputs, params, log):
    p = params
    inst = np.load(inputs.inst, mmap_mode="r")
    mu, sigma = ch.task_moments(pl.read_parquet(inputs.tasks), pl.read_parquet(inputs.long, columns=["job_id", "task_index", "inst_mean", "inst_std"]))
    totals, gaussians = ch.example_totals(inst, mu, sigma, p.sizes, ch.stream(p.seed, "janus_fig5"))
    gaussians.write_csv(outputs.table)
    figs.janus_fig5_totals(totals, gaussians).savefig(outputs.figure, dpi=150)
    log.info("Fig 5 samples:\n%s", gaussians)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
