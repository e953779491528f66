"""N long tasks × R realizations of inst and avg, drawn a bucket at a time into memory-mapped .npy files."""
import numpy as np
import polars as pl

from colocate import io, measure, rulescript
from colocate.prep import realizations as rz
from colocate.prep.tasks import TASK_KEY

ANALYSIS = "Janus §3.1, realizations of long tasks"


def main(inputs, outputs, params, log):
    p = params
    chosen = rz.choose_tasks(pl.read_parquet(inputs.long), p.n_tasks, rz.choose_stream(p.seed), allow_fewer=True)
    if chosen.height < p.n_tasks:
        log.warning("the trace has %d long tasks, fewer than realizations.n_tasks = %d: every one is used",
                    chosen.height, p.n_tasks)
    chosen = chosen.with_row_index("row")
    matrices = {k: np.lib.format.open_memmap(getattr(outputs, k), mode="w+", dtype=np.float32,
                                             shape=(chosen.height, p.n_realizations)) for k in rz.KINDS}
    buckets = (pl.scan_parquet(path).select(*TASK_KEY, "start_time", *rz.KINDS)
               .join(chosen.lazy().select(TASK_KEY), on=TASK_KEY, how="semi").collect() for path in inputs.series)
    n_records = rz.fill(matrices, buckets, chosen, p.n_realizations, p.seed, p.chunk_tasks)
    log.info("%d tasks × %d realizations drawn from %d buckets", chosen.height, p.n_realizations, len(inputs.series))
    for matrix in matrices.values():
        matrix.flush()
    io.write_parquet(chosen.with_columns(n_records=n_records), outputs.tasks)
    measure.measurements(rz.realizations_measurements(chosen.height, p.n_tasks, p.n_realizations)).write_csv(outputs.summary)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
