"""Beyond Unuvar §IV-D: Gaussian (GPA) vs Beta on many random co-located sets per number of tasks."""
import numpy as np

from colocate import rulescript
from colocate.analysis import aggregate, betafit
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Unuvar, Gaussian vs Beta by N"


def main(inputs, outputs, params, log):
    p = params
    matrix = np.load(getattr(inputs, p.usage), mmap_mode="r")  # p.usage names the input: inst or avg
    sets = aggregate.colocated_sets(matrix, p.sizes, p.observations, p.repetitions, ch.stream(p.seed, "unuvar_sweep"))
    sweep = betafit.model_sweep(aggregate.utilisation(sets, ["size", "rep"], p.peak), sorted({*p.tail_thresholds, p.threshold}))
    table = betafit.sweep_summary(sweep, p.alpha)
    table.write_csv(outputs.table)
    figs.unuvar_gaussian_vs_beta(sweep, p.threshold).savefig(outputs.figure, dpi=150)
    log.info("sweep:\n%s", table)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
