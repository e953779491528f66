"""One setting (data, clairvoyance, capacity) of the packing grid on every instance (Janus & Rzadca §5)."""
import numpy as np
import polars as pl

from colocate import insufficient, io, rulescript
from colocate.prep.tasks import TASK_KEY
from colocate.scheduling import packing_grid as pg

ANALYSIS = "Janus §5, stochastic packing grid"


def main(inputs, outputs, params, log):
    p = params
    inst = np.load(inputs.inst, mmap_mode="r")
    avg = np.load(inputs.avg, mmap_mode="r")
    tasks = pl.read_parquet(inputs.tasks).sort("row")
    insufficient.require(tasks.height >= p.tasks_per_instance, f"{tasks.height} tasks have realizations, fewer than "
                         f"packing.tasks_per_instance = {p.tasks_per_instance}", f"at least {p.tasks_per_instance} such tasks")
    requests = tasks.join(pl.read_parquet(inputs.stats, columns=[*TASK_KEY, "cpu_request"]), on=TASK_KEY, how="left")
    rows = pg.instances(inst.shape[0], p.instances, p.tasks_per_instance, p.seed)
    cells = pl.DataFrame(p.cells, schema=pg.CELL_SCHEMA)
    log.info("setting %s: %d cells × %d instances of %d tasks", p.setting, cells.height, len(rows), p.tasks_per_instance)
    result = pg.run_setting(
        inst, avg, rows, cells, requests.sort("row")["cpu_request"].to_numpy(allow_copy=True).astype(np.float64),
        max_failures=p.max_failures, log=log.info, estimator_options=p.estimator_options,
        **p.fit_options,  # each fit test's grid-wide options, by config key (FIT_OPTIONS)
    )
    io.write_parquet(result, outputs[0])


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
