"""Map one Azure readings file to per-VM records bucketed by vmid (as task_usage is by task)."""
from colocate import io, rulescript
from colocate.trace import azure


def main(inputs, outputs, params, log):
    readings = azure.read_readings(inputs.readings)
    records = azure.map_readings(readings, params.buckets)
    io.write_parquet(records, outputs[0])
    log.info("%d readings of %d VMs from %s", readings.height, readings["vmid"].n_unique(), inputs.readings)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
