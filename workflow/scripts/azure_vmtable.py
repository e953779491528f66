"""The Azure vmtable as a VM table (cores, memory, category, created/deleted, lifetime), and its VMs as the contract's
entities, in the shape of the 2011 map's task pieces, bucketed for the shared reduce."""
import polars as pl

from colocate import io, rulescript
from colocate.sources import azure


def main(inputs, outputs, params, log):
    vms = pl.concat([azure.read_vmtable(f) for f in inputs.vmtable])
    io.write_parquet(vms, outputs.table)
    io.write_parquet(azure.entity_pieces(vms, params.host_cores, params.host_memory_gb, params.buckets), outputs.pieces)
    log.info("%d VMs; by category: %s", vms.height, vms["category"].value_counts().sort("category").rows())


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
