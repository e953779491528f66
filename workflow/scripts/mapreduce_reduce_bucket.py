"""Reduce one bucket: drop failing and all-zero tasks, fix avg > 1, per-task series and statistics."""
from colocate import io, rulescript
from colocate.prep import mapreduce


def main(inputs, outputs, params, log):
    bucket = params.bucket
    records = io.read_bucket(inputs.records, bucket)
    pieces = io.read_bucket(inputs.pieces, bucket)
    log.info("bucket %d: %d records, %d task pieces", bucket, records.height, pieces.height)
    out = mapreduce.reduce_bucket(records, pieces, params.long_min_records)
    for name, frame in out.items():
        io.write_parquet(frame, getattr(outputs, name))
    log.info("counts: %s", out["counts"].row(0, named=True))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
