"""Write the synthetic trace (colocate.trace.synth) as the bucket's csv.gz shards, schema.csv and SHA256SUM.

Everything is written into a temporary directory next to the output and moved
into place only when complete, so a failure leaves no partial trace.
"""
import hashlib
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

from colocate import rulescript, trace
from colocate.trace import synth


def write_shard(tmp, job):
    """Write one shard under ``tmp``; its path relative to the trace root and its SHA-256."""
    shard, rel, table = job
    trace.write_table(shard, tmp / rel, table)
    return rel, hashlib.sha256((tmp / rel).read_bytes()).hexdigest()


def main(inputs, outputs, params, log, threads=1):
    root = Path(outputs.manifest).parent
    model = synth.SynthParams.from_dict(params.model)
    counts = {**params.shards, "machine_events": 1}
    log.info("generating %.1f days (writing %.3f), %d machines, seed %d", model.days, model.rendered.days, model.machines,
             params.seed)
    tables = synth.generate(model, params.seed)
    for name, df in tables.items():
        log.info("%s: %d rows", name, df.height)

    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
    try:
        jobs = [
            (shard, f"{table}/{trace.shard_name(i, counts[table])}", table)
            for table in counts
            for i, shard in enumerate(synth.split_shards(tables[table], table, counts[table], model.rendered.end_us))
        ]
        with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
            digests = dict(pool.map(partial(write_shard, tmp), jobs))
        for rel in sorted(digests):
            log.info("wrote %s", rel)
        (tmp / "schema.csv").write_text(trace.schema_csv())
        (tmp / "SHA256SUM").write_text("".join(f"{digests[r]}  {r}\n" for r in sorted(digests)))
        for rel in sorted(digests) + ["schema.csv", "SHA256SUM"]:  # the manifest last
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / rel, root / rel)
        log.info("trace written to %s", root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
