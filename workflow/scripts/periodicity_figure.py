"""Figure of Beaumont et al. §5.2: spectra, Table 4 ratios, weekly shape and daily phases."""
import polars as pl

from colocate import rulescript
from colocate.figures import periodicity as fig

ANALYSIS = "Beaumont §5.2, spectra and phases"


def main(inputs, outputs, params, log):
    p, i = params, inputs
    weekly = pl.read_csv(i.weekly, schema_overrides={"low_days": pl.String})
    figure = fig.fourier_spectra(pl.read_parquet(i.spectra), pl.read_parquet(i.components), weekly, pl.read_csv(i.phases),
                                 p.significance_ratio, p.phase_limits_deg)
    figure.savefig(outputs[0])
    log.info("wrote %s", outputs[0])


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
