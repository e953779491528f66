"""One replicate of Tantawi & Steinder §IV: every policy on the same Table I request stream."""
from colocate import io, logs
from colocate.scheduling.placement_runs import run_replicate
from colocate.scheduling.placement_workload import Experiment

log = logs.to_file(snakemake.log[0])
p = snakemake.params
exp = Experiment.from_config(p.experiment)
replicate = int(snakemake.wildcards.replicate)
requests, snapshot = run_replicate(
    exp, p.specs, seed=p.seed, replicate=replicate, alpha=p.alpha, optimiser=p.optimiser, tie_break=p.tie_break, bsa=p.bsa
)
io.write_parquet(requests, snakemake.output.requests)
io.write_parquet(snapshot, snakemake.output.snapshot)
for (policy,), g in requests.filter(requests["request"] >= exp.warmup).group_by("policy", maintain_order=True):
    log.info("replicate %d %s: %d of %d rejected", replicate, policy, (~g["accepted"]).sum(), g.height)
