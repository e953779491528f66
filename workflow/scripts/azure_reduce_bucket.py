"""Reduce one bucket of Azure VMs: per-VM series and statistics from every readings file."""
from colocate import io, rulescript
from colocate.trace import azure


def main(inputs, outputs, params, log):
    records = io.read_bucket(inputs.records, params.bucket)
    out = azure.reduce_vms(records)
    io.write_parquet(out["series"], outputs.series)
    io.write_parquet(out["vms"], outputs.vms)
    log.info("bucket %d: %d readings of %d VMs", params.bucket, out["series"].height, out["vms"].height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
