"""Fig 5 (Janus & Rzadca §3.6): total inst usage of one random sample per N, with its fitted Gaussian."""
import numpy as np
import polars as pl

from colocate import insufficient, logs
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Janus Fig 5, totals of N tasks (§3.6)", log):
    p = snakemake.params
    inst = np.load(snakemake.input.inst, mmap_mode="r")
    mu, sigma = ch.task_moments(pl.read_parquet(snakemake.input.tasks), pl.read_parquet(snakemake.input.long, columns=["job_id", "task_index", "inst_mean", "inst_std"]))
    totals, gaussians = ch.example_totals(inst, mu, sigma, p.sizes, ch.stream(p.seed, "janus_fig5"))
    gaussians.write_csv(snakemake.output.table)
    figs.janus_fig5_totals(totals, gaussians).savefig(snakemake.output.figure, dpi=150)
    log.info("Fig 5 samples:\n%s", gaussians)
