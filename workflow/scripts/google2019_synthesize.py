"""Write the synthetic model (colocate.trace.synth) in the Google 2019 trace's format: its JSON-lines shards, not
time-ordered and a window's rows split across them (colocate.sources.google2019.scatter), and a SHA256SUM. Written
into a temporary directory next to the output and moved into place only when complete, so a failure leaves no
partial trace."""
import hashlib
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl

from colocate import rulescript
from colocate.sources import google2019 as g19
from colocate.trace import synth


def main(inputs, outputs, params, log, threads=1):
    root = Path(outputs.manifest).parent
    tables = synth.generate(synth.SynthParams.from_dict(params.model), params.seed)
    priority = tables["task_events"].group_by("job_id").agg(pl.col("priority").sort_by("time").first())
    rng = np.random.default_rng([params.seed, 2019])  # the shards' order, apart from the model's draws
    jobs = []
    for table, n in params.shards.items():
        rows = g19.from_2011(g19.FROM_2011[table], tables.pop(g19.FROM_2011[table]), priority)
        time = "start_time" if table == "instance_usage" else "time"
        jobs += [(shard, f"{table}/{g19.stem(table, i)}.json.gz")
                 for i, shard in enumerate(g19.scatter(rows.with_columns(pl.col(time).cast(pl.Int64).alias("_t")), "_t", n, rng))]
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}.", dir=root.parent))
    try:
        def write(job):
            shard, rel = job
            g19.write_json_lines(shard.drop("_t"), tmp / rel)
            return rel, hashlib.sha256((tmp / rel).read_bytes()).hexdigest()

        with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
            digests = dict(pool.map(write, jobs))
        (tmp / "SHA256SUM").write_text("".join(f"{digests[r]}  {r}\n" for r in sorted(digests)))
        for rel in sorted(digests) + ["SHA256SUM"]:  # the manifest last
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / rel, root / rel)
        log.info("%d shards written to %s", len(digests), root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
