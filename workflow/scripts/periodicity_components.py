"""Fourier components of long-running production jobs: Beaumont et al. §5.2, Table 4, weekly shape, daily phases."""
import polars as pl

from colocate import io, rulescript
from colocate.analysis import periodicity as pe

ANALYSIS = "Beaumont Table 4, Fourier periodicity (§5.2)"


def main(inputs, outputs, params, log):
    p, i, o = params, inputs, outputs
    pe.check_columns(pl.read_parquet_schema(i.dominant), pe.DOMINANT_COLUMNS, i.dominant)
    pe.check_columns(pl.read_parquet_schema(i.windows), pe.WINDOW_COLUMNS, i.windows)
    dominant = pl.read_parquet(i.dominant)
    windows = pl.read_parquet(i.windows, columns=pe.WINDOW_COLUMNS)
    res = pe.analyse(dominant, windows, p.n_windows, classes=p.classes, min_coverage=p.min_coverage,
                     significance_ratio=p.significance_ratio, strong_ratio=p.strong_ratio,
                     phase_min_ratio=p.phase_min_ratio, spectra_jobs=p.spectra_jobs)
    io.write_parquet(res["components"], o.components)
    io.write_parquet(res["spectra"], o.spectra)
    res["weekly"].write_csv(o.weekly)
    res["phases"].write_csv(o.phases)
    log.info("%d jobs analysed (classes %s, coverage >= %g); Table 4:\n%s", res["components"].height, p.classes,
             p.min_coverage, res["table4"])


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
