"""N long tasks × R realizations of inst and avg, written in chunks to memory-mapped .npy files."""
import numpy as np
import polars as pl

from colocate import insufficient, io, logs
from colocate.prep import realizations as rz
from colocate.prep.tasks import TASK_KEY

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Janus §3.1, realizations of long tasks", log):
    p = snakemake.params
    choose, inst_rng, avg_rng = rz.streams(p.seed)
    chosen = rz.choose_tasks(pl.read_parquet(snakemake.input.long), p.n_tasks, choose)
    series = (
        pl.scan_parquet(snakemake.input.series)
        .select(*TASK_KEY, "start_time", "inst", "avg")
        .join(chosen.lazy(), on=TASK_KEY, how="semi")
        .collect()
    )
    inst, avg, offsets = rz.series_arrays(series, chosen)
    for name, values, rng in (("inst", inst, inst_rng), ("avg", avg, avg_rng)):
        out = np.lib.format.open_memmap(snakemake.output[name], mode="w+", dtype=np.float32, shape=(chosen.height, p.n_realizations))
        for start, block in rz.draw(values, offsets, p.n_realizations, rng, p.chunk_tasks):
            out[start : start + block.shape[0]] = block
            log.info("%s: %d/%d tasks", name, start + block.shape[0], chosen.height)
        out.flush()
    io.write_parquet(chosen.with_row_index("row").with_columns(n_records=np.diff(offsets)), snakemake.output.tasks)
