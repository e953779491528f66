"""Classify each dominant job's memory vs CPU as Flat, multi-cluster Flat, Slope or BadlyFitted (Beaumont et al. §4.2)."""
import polars as pl

from colocate import insufficient, io, logs
from colocate.analysis import cpumem

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Beaumont §4.2, memory vs CPU per dominant job", log):
    p = snakemake.params
    settings = cpumem.Settings(**p.settings)
    dominant = pl.read_parquet(snakemake.input.dominant, columns=["job_id"])
    sampled = {path: pl.scan_parquet(path) for path in snakemake.input.sampled}
    points = cpumem.sample_points(sampled, dominant["job_id"], p.max_points_per_job, p.seed)
    log.info("%d dominant jobs, %d points after the cap of %d per job", dominant.height, points.height, p.max_points_per_job)
    out = cpumem.classify_jobs(points, settings, dominant["job_id"])
    io.write_parquet(out["fits"], snakemake.output.fits)
    io.write_parquet(out["classes"], snakemake.output.classes)
    io.write_parquet(cpumem.example_points(out["points"], out["classes"]), snakemake.output.examples)
    log.info("categories:\n%s", out["classes"].group_by("category").len().sort("category"))
