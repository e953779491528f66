"""Fig 4, typical distributions of inst usage (Janus & Rzadca §3.5): k-means on the 100-bin histograms."""
import numpy as np
import polars as pl
from threadpoolctl import threadpool_limits

from colocate import insufficient, io, rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Janus Fig 4, k-means of usage histograms (§3.5)"


def main(inputs, outputs, params, log, threads=1):
    p = params
    keys = pl.read_parquet(inputs.long, columns=["job_id", "task_index"])
    # Janus clusters ~800,000 tasks into 16: clusters of a few tasks each are the tasks, not typical distributions
    # (fewer tasks than k: k-means says so itself)
    insufficient.require(keys.height < p.k or keys.height >= p.min_tasks * p.k,
                         f"{keys.height} long tasks for k = {p.k} clusters",
                         f"at least {p.min_tasks} tasks a cluster ({p.min_tasks * p.k} long tasks; characterise.janus.kmeans_min_tasks)")
    hist = ch.hist_matrix(pl.read_parquet(inputs.long, columns=["inst_hist"]))  # no frame kept beside the matrix
    with threadpool_limits(threads):
        labels, centroids, inertia = ch.kmeans_histograms(hist, p.k, p.seed, p.n_init)
    shares = ch.cluster_shares(labels, p.k)
    io.write_parquet(keys.with_columns(cluster=labels), outputs.clusters)
    shares.write_csv(outputs.shares)
    k, bins = centroids.shape
    pl.DataFrame({"cluster": np.repeat(np.arange(k), bins), "bin_low": np.tile(np.arange(bins) / bins, k),
                  "share": centroids.ravel()}).write_csv(outputs.centroids)
    figs.janus_fig4_centroids(centroids, shares).savefig(outputs.figure, dpi=150)
    log.info("%d tasks, k=%d, inertia %.4g; shares %s", hist.shape[0], p.k, inertia, shares["share"].round(4).to_list())


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
