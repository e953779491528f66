"""Fig 1, sampling validation (Janus & Rzadca §3.2), bucket by bucket over the long tasks' series."""
import polars as pl

from colocate import io, rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Janus Fig 1, sampling validation (§3.2)"


def main(inputs, outputs, params, log):
    p = params
    parts = []
    for b, path in enumerate(inputs.series):
        s = ch.series_blocks(pl.read_parquet(path, columns=["job_id", "task_index", "start_time", "inst", "avg"]))
        if s.keys.height:
            diffs = ch.sampling_differences(s.inst, s.avg, s.offsets, p.ks, ch.stream(p.seed, f"janus_fig1/{b}"))
            parts.append(ch.with_keys(diffs, s.keys))
        log.info("bucket %d: %d long tasks", b, s.keys.height)
    values = pl.concat(parts)
    box = ch.box_statistics(values)
    io.write_parquet(values, outputs.values)
    box.write_csv(outputs.table)
    figs.janus_fig1_sampling(box).savefig(outputs.figure, dpi=150)
    log.info("IQR per k:\n%s", box)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
