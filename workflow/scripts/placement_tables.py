"""Tables II–VIII of Tantawi & Steinder (replicate 0) and the statistics over all replicates."""
import polars as pl

from colocate import rulescript
from colocate.scheduling import placement_analysis as pa
from colocate.scheduling.placement_runs import rounded
from colocate.scheduling.placement_workload import Experiment


def main(inputs, outputs, params, log):
    p = params
    exp = Experiment.from_config(p.experiment)
    requests = pl.concat([pl.read_parquet(f) for f in inputs.requests])
    snapshots = pl.concat([pl.read_parquet(f) for f in inputs.snapshots])
    tables = pa.experiment_tables(exp, requests, snapshots, alpha=p.alpha, resource=p.prime_resource, target=p.target)
    for name, table in tables.items():
        rounded(table).write_csv(getattr(outputs, name))
        log.info("%s: %d rows", name, table.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
