"""Janus §4-5 on Azure VMs: the packing grid with every fit test on the VMs' realizations (avg, and the 5-minute max
for inst) as shares of a host, by the functions that pack Google's long tasks."""
import numpy as np
import polars as pl

from colocate import insufficient, io, rulescript
from colocate.report import summary
from colocate.scheduling import packing_grid as pg

ANALYSIS = "Janus §5 on Azure VMs, stochastic packing grid"


def main(inputs, outputs, params, log):
    p = params
    vms = pl.read_parquet(inputs.tasks).sort("row")
    insufficient.require(vms.height >= p.tasks_per_instance, f"{vms.height} VMs have realizations, fewer than "
                         f"packing.tasks_per_instance = {p.tasks_per_instance}", f"at least {p.tasks_per_instance} such VMs")
    # a host is the machine of capacity 1
    inst, avg = (np.load(path, mmap_mode="r") / np.float32(p.host_cores) for path in (inputs.inst, inputs.avg))
    requests = vms["cores"].fill_null(1.0).to_numpy() / p.host_cores
    rows = pg.instances(vms.height, p.instances, p.tasks_per_instance, p.seed)
    cells = pl.DataFrame(p.cells, schema=pg.CELL_SCHEMA)
    results = pl.concat([pg.run_setting(inst, avg, rows, pl.DataFrame(pg.cells_of(cells, s), schema=pg.CELL_SCHEMA), requests,
                                        max_failures=p.max_failures, estimator_options=p.estimator_options, **p.fit_options)
                         for s in pg.settings(cells).iter_rows(named=True)]).sort("instance", *pg.CELL_SCHEMA)
    io.write_parquet(results, outputs.table)
    pg.summarise(results).write_csv(outputs.csv)
    part = summary.rows("Stochastic packing of Azure VMs (Janus & Rzadca §5 on another trace)", pg.headline_numbers(results))
    summary.another_trace(part, p.trace).write_csv(outputs.summary)
    log.info("%d VMs × %d realizations; %d rows", vms.height, inst.shape[1], results.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
