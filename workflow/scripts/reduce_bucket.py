"""Reduce one bucket: drop failing and all-zero tasks, fix avg > 1, per-task series and statistics."""
from colocate import io, logs
from colocate.prep import mapreduce

log = logs.to_file(snakemake.log[0])
bucket = int(snakemake.wildcards.bucket)
records = io.read_bucket(snakemake.input.records, bucket)
pieces = io.read_bucket(snakemake.input.pieces, bucket)
log.info("bucket %d: %d records, %d task pieces", bucket, records.height, pieces.height)
out = mapreduce.reduce_bucket(records, pieces, snakemake.params.long_min_records)
for name, frame in out.items():
    io.write_parquet(frame, snakemake.output[name])
log.info("counts: %s", out["counts"].row(0, named=True))
