"""Elbow plot for Fig 4's k (Janus & Rzadca §3.5): k-means inertia of the inst histograms for a range of k."""
import polars as pl
from threadpoolctl import threadpool_limits

from colocate import insufficient, logs
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Janus Fig 4, elbow of k-means (§3.5)", log):
    p = snakemake.params
    hist = ch.hist_matrix(pl.read_parquet(snakemake.input.long, columns=["inst_hist"]))
    with threadpool_limits(snakemake.threads):
        table = ch.elbow(hist, range(p.k_range[0], p.k_range[1] + 1), p.seed, ch.stream(p.seed, "janus_elbow"), p.max_tasks)
    table.write_csv(snakemake.output.table)
    figs.janus_fig4_elbow(table, p.k).savefig(snakemake.output.figure, dpi=150)
    log.info("elbow:\n%s", table)
