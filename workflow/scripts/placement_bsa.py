"""Biased sampling (BSA) against the exact argmin: agreement, rejections and time per decision."""
from colocate import rulescript
from colocate.scheduling.placement_runs import compare_optimisers, rounded
from colocate.scheduling.placement_workload import Experiment


def main(inputs, outputs, params, log):
    p = params
    exp = Experiment.from_config(p.experiment)
    table, timing = compare_optimisers(exp, p.specs, seed=p.seed, replicate=0, alpha=p.alpha, tie_break=p.tie_break, bsa=p.bsa)
    rounded(table).write_csv(outputs.table)
    rounded(timing, 2).write_csv(outputs.timing)
    for row in table.iter_rows(named=True):
        log.info("%s: BSA agrees on %d of %d decisions", row["policy"], row["agreements"], row["decisions"])


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
