"""Benchmark: Janus Fig 4's k-means (`janus_clusters`) on every long task of the full trace.

Janus & Rzadca §3.5 cluster the 100-bin inst histograms of about 800,000 long tasks. This writes a
long_tasks.parquet of that many tasks with the rule's schema (``inst_hist`` an Array[f32, 100]; each
histogram a Dirichlet draw on a few bins, as a task's usage spans few), then, each in its own process so that
each peak RSS is its own:

* reference: the whole frame read, its float32 matrix, a float64 copy for KMeans and KMeans' own centred copy
  (the rule before);
* ours: the rule's code: the keys and the matrix read apart, ``characterise.kmeans_histograms`` (one float64
  matrix centred in place, ``copy_x=False``).

Both fit the same k-means (k = 16, ``--n-init`` restarts) and must give the same partition. Prints time, peak
RSS, peak bytes per task (the interpreter's ~250 MB included), and the ratios ours / reference.

    python bench/janus_clusters.py [--tasks 800000] [--n-init 10]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile

from timing import parse_args, reference_and_ours

BUILD = r"""
import sys
import numpy as np
import polars as pl
n, path = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
hist = np.zeros((n, 100), dtype=np.float32)
centre = np.clip(rng.beta(1.2, 6, n) * 100, 0, 97).astype(np.int64)
for j in range(4):  # four neighbouring bins around each task's level
    hist[np.arange(n), np.minimum(centre + j, 99)] += rng.gamma(1.0, 1.0, n).astype(np.float32)
hist /= hist.sum(axis=1, keepdims=True)
pl.DataFrame({"job_id": np.repeat(np.arange(n // 8 + 1), 8)[:n], "task_index": np.tile(np.arange(8), n // 8 + 1)[:n],
              "inst_hist": hist}).write_parquet(path)
"""

CHILD = r"""
import resource, sys, time
import numpy as np
import polars as pl
from sklearn.cluster import KMeans
from colocate.analysis import characterise as ch
path, n_init, which = sys.argv[1], int(sys.argv[2]), sys.argv[3]
t = time.perf_counter()
if which == "reference":
    long = pl.read_parquet(path, columns=["job_id", "task_index", "inst_hist"])
    hist = long["inst_hist"].to_numpy().astype(np.float32)
    labels = KMeans(n_clusters=16, n_init=n_init, random_state=1).fit(hist.astype(np.float64)).labels_
else:
    keys = pl.read_parquet(path, columns=["job_id", "task_index"])  # as the rule's script reads them
    labels = ch.kmeans_histograms(ch.hist_matrix(pl.read_parquet(path, columns=["inst_hist"])), 16, 1, n_init)[0]
np.save(path + "." + which + ".npy", labels)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=int, default=800_000)
    ap.add_argument("--n-init", type=int, default=10)
    args = parse_args(ap)
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/long_tasks.parquet"
        subprocess.run([sys.executable, "-c", BUILD, str(args.tasks), path], check=True)
        (_, rm), (_, om), line = reference_and_ours(CHILD, path, args.n_init)
        from sklearn.metrics import adjusted_rand_score

        # the library renumbers clusters by their mean usage: the same partition is what must hold
        same = adjusted_rand_score(np.load(path + ".reference.npy"), np.load(path + ".ours.npy")) == 1.0
        per = 1024 * 1024 / args.tasks
        print(f"{args.tasks:,} long tasks × 100 bins, k = 16, n_init = {args.n_init}")
        print(f"{line}; peak per task {rm * per:.0f} B → {om * per:.0f} B; same partition: {same}")


if __name__ == "__main__":
    main()
