"""Inst (one random 1-s sample per window) against each window's distribution of 1-s samples: per task and in GPA's
packing (colocate.analysis.sampling; beyond the papers)."""
import polars as pl

from colocate import io, measure, rulescript
from colocate.analysis import sampling
from colocate.figures import sampling as figures


def main(inputs, outputs, params, log):
    p = params
    moments = io.read_contract(inputs.moments, "window_moments")
    tasks = pl.read_parquet(inputs.long, columns=["job_id", "task_index"])
    per_task = sampling.task_variability(moments, tasks, p.min_windows)
    packing = sampling.gpa_variance_sources(moments, per_task, p.rhos, n_tasks=p.n_tasks, instances=p.instances,
                                            realizations=p.realizations, capacity=p.capacity, seed=p.seed)
    per_task.write_csv(outputs.tasks)
    packing.write_csv(outputs.packing)
    figures.inst_vs_distribution(per_task, packing, p.trace).savefig(outputs.figure)
    measure.measurements(sampling.sampling_measurements(per_task, packing)).write_csv(outputs.summary)
    log.info("%d tasks compared; GPA:\n%s", per_task.height, packing)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
