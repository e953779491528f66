"""Tables II–VIII of Tantawi & Steinder (replicate 0) and the statistics over all replicates."""
import polars as pl

from colocate import logs
from colocate.scheduling import placement_analysis as pa
from colocate.scheduling.placement_runs import rounded
from colocate.scheduling.placement_workload import Experiment

log = logs.to_file(snakemake.log[0])
p, out = snakemake.params, snakemake.output
exp = Experiment.from_config(p.experiment)
requests = pl.concat([pl.read_parquet(f) for f in snakemake.input.requests])
snapshots = pl.concat([pl.read_parquet(f) for f in snakemake.input.snapshots])
tables = pa.experiment_tables(exp, requests, snapshots, alpha=p.alpha, resource=p.prime_resource, target=p.target)
for name, table in tables.items():
    rounded(table).write_csv(out[name])
    log.info("%s: %d rows", name, table.height)
