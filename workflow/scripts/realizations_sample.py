"""N long tasks × R realizations of inst and avg, written in chunks to memory-mapped .npy files."""
import numpy as np
import polars as pl

from colocate import io, rulescript
from colocate.prep import realizations as rz
from colocate.prep.tasks import TASK_KEY

ANALYSIS = "Janus §3.1, realizations of long tasks"


def main(inputs, outputs, params, log):
    p = params
    choose, inst_rng, avg_rng = rz.streams(p.seed)
    chosen = rz.choose_tasks(pl.read_parquet(inputs.long), p.n_tasks, choose, allow_fewer=True)
    if chosen.height < p.n_tasks:
        log.warning("the trace has %d long tasks, fewer than realizations.n_tasks = %d: every one is used",
                    chosen.height, p.n_tasks)
    series = (
        pl.scan_parquet(inputs.series)
        .select(*TASK_KEY, "start_time", "inst", "avg")
        .join(chosen.lazy(), on=TASK_KEY, how="semi")
        .collect()
    )
    inst, avg, offsets = rz.series_arrays(series, chosen)
    for name, values, rng in (("inst", inst, inst_rng), ("avg", avg, avg_rng)):
        out = np.lib.format.open_memmap(getattr(outputs, name), mode="w+", dtype=np.float32, shape=(chosen.height, p.n_realizations))
        for start, block in rz.draw(values, offsets, p.n_realizations, rng, p.chunk_tasks):
            out[start : start + block.shape[0]] = block
            log.info("%s: %d/%d tasks", name, start + block.shape[0], chosen.height)
        out.flush()
    io.write_parquet(chosen.with_row_index("row").with_columns(n_records=np.diff(offsets)), outputs.tasks)
    rz.realizations_summary(chosen.height, p.n_tasks, p.n_realizations).write_csv(outputs.summary)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
