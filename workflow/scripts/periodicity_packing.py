"""Packing periodic jobs (Beaumont et al. §8.2): First Fit under the phasor, peak and mean constraints."""
import polars as pl

from colocate import io, rulescript
from colocate.analysis import periodicity as pe
from colocate.scheduling import periodic_packing as pp

ANALYSIS = "Beaumont §8.2, periodic packing"


def main(inputs, outputs, params, log):
    p, i, o = params, inputs, outputs
    comps = pl.read_parquet(i.components)
    windows = pl.read_parquet(i.windows, columns=pe.WINDOW_COLUMNS)  # checked by periodicity_components
    series, _ = pe.job_series(windows, comps["job_id"].to_list(), p.n_windows)
    table, loads = pp.pack(comps, series, p.capacities, p.sample_points)
    table.write_csv(o.table)
    io.write_parquet(loads, o.loads)
    log.info("packing of %d jobs:\n%s", comps.height, table)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
