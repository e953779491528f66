"""Janus §3.1 on Azure VMs: N long-running VMs × R realizations of inst (the 5-minute max, in cores) and avg, drawn a
bucket at a time into memory-mapped .npy files, by the function that draws Google's long tasks."""
import numpy as np
import polars as pl

from colocate import insufficient, io, rulescript
from colocate.prep import realizations as rz
from colocate.trace import azure

ANALYSIS = "Janus §3.1 on Azure VMs, realizations"


def main(inputs, outputs, params, log):
    p = params
    tasks = azure.vm_tasks(pl.read_parquet(inputs.vmtable))
    columns = ["vmid", "readings", "inst_mean", "inst_std", "avg_mean", "avg_std"]  # not the histograms
    long = azure.long_vm_tasks(pl.concat([pl.read_parquet(f, columns=columns) for f in inputs.vms]), tasks, p.long_min_records)
    insufficient.require(long.height > 0, f"no VM has >= {p.long_min_records} readings", "a VM read over most of the trace")
    chosen = rz.choose_tasks(long, p.n_tasks, rz.choose_stream(p.seed), allow_fewer=True).with_row_index("row")
    matrices = {k: np.lib.format.open_memmap(getattr(outputs, k), mode="w+", dtype=np.float32,
                                             shape=(chosen.height, p.n_realizations)) for k in rz.KINDS}
    buckets = (azure.chosen_series(pl.scan_parquet(f), tasks, chosen) for f in inputs.series)  # a bucket at a time
    n_records = rz.fill(matrices, buckets, chosen, p.n_realizations, p.seed, p.chunk_tasks)
    for matrix in matrices.values():
        matrix.flush()
    io.write_parquet(chosen.join(long.drop("n_records"), on=["job_id", "task_index"]).sort("row")
                     .with_columns(n_records=n_records), outputs.tasks)
    log.info("%d of %d VMs with >= %d readings × %d realizations", chosen.height, long.height, p.long_min_records, p.n_realizations)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
