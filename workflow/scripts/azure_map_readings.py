"""Map one Azure readings file to the contract's usage records, bucketed by entity (as task_usage is by task)."""
import polars as pl

from colocate import io, rulescript
from colocate.sources import azure


def main(inputs, outputs, params, log):
    readings = azure.read_readings(inputs.readings)
    records = azure.usage_records(readings, azure.vm_tasks(pl.read_parquet(inputs.vmtable)), params.host_cores,
                                  params.buckets)
    io.write_parquet(records, outputs[0])
    log.info("%d readings of %d VMs from %s; %d of them in the vmtable", readings.height, readings["vmid"].n_unique(),
             inputs.readings, records.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
