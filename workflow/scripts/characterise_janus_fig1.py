"""Fig 1, sampling validation (Janus & Rzadca §3.2): the parts' differences joined, their box statistics and figure."""
import polars as pl

from colocate import io, rulescript
from colocate.analysis import characterise as ch
from colocate.figures import characterise as figs

ANALYSIS = "Janus Fig 1, sampling validation (§3.2)"


def main(inputs, outputs, params, log):
    values = pl.concat([pl.read_parquet(f) for f in inputs.values])  # in bucket order
    box = ch.box_statistics(values)
    io.write_parquet(values, outputs.values)
    box.write_csv(outputs.table)
    figs.janus_fig1_sampling(box).savefig(outputs.figure, dpi=150)
    log.info("IQR per k:\n%s", box)


if __name__ == "__main__":
    rulescript.run(main, snakemake, ANALYSIS)  # noqa: F821 (injected by Snakemake)
