"""Classify each dominant job's memory vs CPU as Flat, multi-cluster Flat, Slope or BadlyFitted (Beaumont et al. §4.2)."""
import polars as pl

from colocate import io, rulescript
from colocate.analysis import cpumem

ANALYSIS = "Beaumont §4.2, memory vs CPU per dominant job"


def main(inputs, outputs, params, log):
    p = params
    settings = cpumem.Settings(**p.settings)
    dominant = pl.read_parquet(inputs.dominant, columns=["job_id"])
    sampled = {path: pl.scan_parquet(path) for path in inputs.sampled}
    out = cpumem.classify_sampled(sampled, dominant["job_id"], p.max_points_per_job, p.seed, settings)
    log.info("%d dominant jobs, %d points after the cap of %d per job, in %d group(s) of jobs", dominant.height,
             out["n_points"], p.max_points_per_job, out["groups"])
    io.write_parquet(out["fits"], outputs.fits)
    io.write_parquet(out["classes"], outputs.classes)
    io.write_parquet(out["examples"], outputs.examples)
    log.info("categories:\n%s", out["classes"].group_by("category").len().sort("category"))


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
