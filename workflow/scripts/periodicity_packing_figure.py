"""Figure of Beaumont et al. §8.2: machines used and overload of the three packing policies."""
import polars as pl

from colocate import rulescript
from colocate.figures import periodicity as fig

ANALYSIS = "Beaumont §8.2, periodic packing figure"


def main(inputs, outputs, params, log):
    figure = fig.periodic_packing(pl.read_csv(inputs.table), pl.read_parquet(inputs.loads), params.capacity_unit)
    figure.savefig(outputs[0])
    log.info("wrote %s", outputs[0])


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
