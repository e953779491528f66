"""Janus §4-5 on Azure VMs: realizations of the VMs' usage (avg, and the 5-minute max for inst), then the packing
grid with every fit test, by the functions that pack Google's long tasks."""
import numpy as np
import polars as pl

from colocate import insufficient, io, rulescript
from colocate.prep import realizations as rz
from colocate.report import summary
from colocate.scheduling import packing_grid as pg
from colocate.trace import azure

ANALYSIS = "Janus §5 on Azure VMs, stochastic packing grid"


def main(inputs, outputs, params, log):
    p = params
    tasks = azure.vm_tasks(pl.read_parquet(inputs.vmtable))
    long = azure.long_vm_tasks(pl.concat([pl.read_parquet(f) for f in inputs.vms]), tasks, p.long_min_records)
    chosen = rz.choose_tasks(long, p.n_tasks, rz.choose_stream(p.seed), allow_fewer=True).with_row_index("row")
    insufficient.require(chosen.height >= p.tasks_per_instance, f"{chosen.height} VMs have ≥ {p.long_min_records} readings, "
                         f"fewer than packing.tasks_per_instance = {p.tasks_per_instance}", f"at least {p.tasks_per_instance} such VMs")
    inst, avg = (np.zeros((chosen.height, p.n_realizations), dtype=np.float32) for _ in range(2))
    parts = (azure.task_series(pl.scan_parquet(f), tasks).join(chosen.lazy().select("job_id", "task_index"),
             on=["job_id", "task_index"], how="semi").collect() for f in inputs.series)  # a bucket at a time
    for block in rz.realize_buckets(parts, chosen, p.n_realizations, p.seed, chunk_rows=p.chunk_tasks):
        inst[block.rows], avg[block.rows] = block.draws["inst"], block.draws["avg"]
    inst, avg = inst / p.host_cores, avg / p.host_cores  # a host is the machine of capacity 1
    requests = chosen.join(long, on=["job_id", "task_index"]).sort("row")["cores"].fill_null(1.0).to_numpy() / p.host_cores
    rows = pg.instances(chosen.height, p.instances, p.tasks_per_instance, p.seed)
    cells = pl.DataFrame(p.cells, schema=pg.CELL_SCHEMA)
    results = pl.concat([pg.run_setting(inst, avg, rows, pl.DataFrame(pg.cells_of(cells, s), schema=pg.CELL_SCHEMA), requests,
                                        max_failures=p.max_failures, estimator_options=p.estimator_options, **p.fit_options)
                         for s in pg.settings(cells).iter_rows(named=True)]).sort("instance", *pg.CELL_SCHEMA)
    io.write_parquet(results, outputs.table)
    pg.summarise(results).write_csv(outputs.csv)
    part = summary.rows("Stochastic packing of Azure VMs (Janus & Rzadca §5 on another trace)", pg.headline_numbers(results))
    summary.another_trace(part, p.trace).write_csv(outputs.summary)
    log.info("%d VMs × %d realizations; %d rows", chosen.height, p.n_realizations, results.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
