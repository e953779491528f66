"""Beyond Unuvar §IV-D: Gaussian (GPA) vs Beta on many random co-located sets per number of tasks."""
import numpy as np

from colocate import insufficient, logs
from colocate.analysis import aggregate, betafit, characterise as ch
from colocate.figures import characterise as figs

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Unuvar, Gaussian vs Beta by N", log):
    p = snakemake.params
    matrix = np.load(snakemake.input[p.usage], mmap_mode="r")
    sets = aggregate.colocated_sets(matrix, p.sizes, p.observations, p.repetitions, ch.stream(p.seed, "unuvar_sweep"))
    sweep = betafit.model_sweep(aggregate.utilisation(sets, ["size", "rep"], p.peak), sorted({*p.tail_thresholds, p.threshold}))
    table = betafit.sweep_summary(sweep, p.alpha)
    table.write_csv(snakemake.output.table)
    figs.unuvar_gaussian_vs_beta(sweep, p.threshold).savefig(snakemake.output.figure, dpi=150)
    log.info("sweep:\n%s", table)
