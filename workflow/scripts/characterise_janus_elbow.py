"""Elbow plot for Fig 4's k (Janus & Rzadca §3.5): k-means inertia of the inst histograms for a range of k."""
import polars as pl
from threadpoolctl import threadpool_limits

from colocate import rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Janus Fig 4, elbow of k-means (§3.5)"


def main(inputs, outputs, params, log, threads=1):
    p = params
    hist = ch.hist_matrix(pl.read_parquet(inputs.long, columns=["inst_hist"]))
    with threadpool_limits(threads):
        table = ch.elbow(hist, range(p.k_range[0], p.k_range[1] + 1), p.seed, ch.stream(p.seed, "janus_elbow"), p.max_tasks)
    table.write_csv(outputs.table)
    figs.janus_fig4_elbow(table, p.k).savefig(outputs.figure, dpi=150)
    log.info("elbow:\n%s", table)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
