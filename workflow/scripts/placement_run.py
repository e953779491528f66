"""One replicate of Tantawi & Steinder §IV: every policy on the same Table I request stream."""
from colocate import io, rulescript
from colocate.scheduling.placement_runs import run_replicate
from colocate.scheduling.placement_workload import Experiment


def main(inputs, outputs, params, log):
    p = params
    exp = Experiment.from_config(p.experiment)
    requests, snapshot = run_replicate(
        exp, p.specs, seed=p.seed, replicate=p.replicate, alpha=p.alpha, optimiser=p.optimiser, tie_break=p.tie_break, bsa=p.bsa
    )
    io.write_parquet(requests, outputs.requests)
    io.write_parquet(snapshot, outputs.snapshot)
    for (policy,), g in requests.filter(requests["request"] >= exp.warmup).group_by("policy", maintain_order=True):
        log.info("replicate %d %s: %d of %d rejected", p.replicate, policy, (~g["accepted"]).sum(), g.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
