"""Fig 5 (Janus & Rzadca §3.6): total inst usage of one random sample per N, with its fitted Gaussian."""
import numpy as np
import polars as pl

from colocate import insufficient, rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Janus Fig 5, totals of N tasks (§3.6)"


def main(inputs, outputs, params, log):
    p = params
    inst = np.load(inputs.inst, mmap_mode="r")
    mu, sigma = ch.task_moments(pl.read_parquet(inputs.tasks), pl.read_parquet(inputs.long, columns=["job_id", "task_index", "inst_mean", "inst_std"]))
    sizes = [n for n in p.sizes if n <= inst.shape[0]]  # one set of each size: up to every task with realizations
    insufficient.require(bool(sizes), f"{inst.shape[0]} tasks with realizations, fewer than N = {min(p.sizes)}",
                         f"at least {min(p.sizes)} long tasks")
    totals, gaussians = ch.example_totals(inst, mu, sigma, sizes, ch.stream(p.seed, "janus_fig5"))
    gaussians.write_csv(outputs.table)
    figs.janus_fig5_totals(totals, gaussians).savefig(outputs.figure, dpi=150)
    log.info("Fig 5 samples:\n%s", gaussians)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
