"""Figure of Beaumont et al. §5.2: spectra, Table 4 ratios, weekly shape and daily phases."""
import polars as pl

from colocate import insufficient, logs
from colocate.figures import periodicity as fig

log = logs.to_file(snakemake.log[0])
with insufficient.outputs_or_reason(snakemake.input, snakemake.output, "Beaumont §5.2, spectra and phases", log):
    p = snakemake.params
    i = snakemake.input
    weekly = pl.read_csv(i.weekly, schema_overrides={"low_days": pl.String})
    figure = fig.fourier_spectra(pl.read_parquet(i.spectra), pl.read_parquet(i.components), weekly, pl.read_csv(i.phases),
                                 p.significance_ratio, p.phase_limits_deg)
    figure.savefig(snakemake.output[0])
    log.info("wrote %s", snakemake.output[0])
