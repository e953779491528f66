"""Fig 1, sampling validation (Janus & Rzadca §3.2) of one part's buckets, one bucket's long tasks at a time."""
import polars as pl

from colocate import io, rulescript
from colocate.analysis import characterise as ch

ANALYSIS = "Janus Fig 1, sampling validation (§3.2)"
COLUMNS = ["job_id", "task_index", "start_time", "inst", "avg"]


def main(inputs, outputs, params, log):
    p = params
    # each bucket its own stream: the parts are independent, whatever buckets_per_job
    parts = [ch.bucket_sampling_differences(records, p.ks, ch.stream(p.seed, f"janus_fig1/{b}"))
             for b, records in io.bucket_frames(inputs.series, p.buckets, COLUMNS)]
    log.info("differences per bucket: %s", dict(zip(p.buckets, (d.height for d in parts))))
    io.write_parquet(pl.concat(parts), outputs.values)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
