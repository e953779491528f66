"""Write the synthetic trace (colocate.trace.synth) as the bucket's csv.gz shards, schema.csv and SHA256SUM.

Everything is written into a temporary directory next to the output and moved
into place only when complete, so a failure leaves no partial trace.
"""
import hashlib
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from colocate import logs, trace
from colocate.trace import synth

log = logs.to_file(snakemake.log[0])
root = Path(snakemake.output.manifest).parent
params = synth.SynthParams.from_dict(snakemake.params.model)
counts = {**snakemake.params.shards, "machine_events": 1}
log.info("generating %.1f days, %d machines, seed %d", params.days, params.machines, snakemake.params.seed)
tables = synth.generate(params, snakemake.params.seed)
for name, df in tables.items():
    log.info("%s: %d rows", name, df.height)

root.parent.mkdir(parents=True, exist_ok=True)
tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
try:
    jobs = [
        (shard, f"{table}/{trace.shard_name(i, counts[table])}", table)
        for table in counts
        for i, shard in enumerate(synth.split_shards(tables[table], table, counts[table], params.end_us))
    ]

    def write(job):
        shard, rel, table = job
        trace.write_table(shard, tmp / rel, table)
        return rel, hashlib.sha256((tmp / rel).read_bytes()).hexdigest()

    with ThreadPoolExecutor(max_workers=max(1, snakemake.threads)) as pool:
        digests = dict(pool.map(write, jobs))
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
