"""Packing periodic jobs (Beaumont et al. §8.2): First Fit under the phasor, peak and mean constraints."""
import polars as pl

from colocate import insufficient, io, logs
from colocate.analysis import periodicity as pe
from colocate.scheduling import periodic_packing as pp

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Beaumont §8.2, periodic packing", log):
    p = snakemake.params
    i, o = snakemake.input, snakemake.output
    comps = pl.read_parquet(i.components)
    windows = pl.read_parquet(i.windows, columns=pe.WINDOW_COLUMNS)  # checked by periodicity_components
    series, _ = pe.job_series(windows, comps["job_id"].to_list(), p.n_windows)
    table, loads = pp.pack(comps, series, p.capacities, p.sample_points)
    table.write_csv(o.table)
    io.write_parquet(loads, o.loads)
    log.info("packing of %d jobs:\n%s", comps.height, table)
