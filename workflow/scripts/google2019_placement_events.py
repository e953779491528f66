"""The Google 2019 trace's instance events up to the co-location analysis's last instant, in time order, as the
contract's placement events: its shards are not time-ordered, so every one is read."""
import polars as pl

from colocate import io, rulescript
from colocate.sources.contract import ORIGIN_US, TABLES


def main(inputs, outputs, params, log):
    last_at = ORIGIN_US + int(params.until_day * 86_400e6)
    columns = list(TABLES["placement_events"].columns)
    events = pl.concat([pl.read_parquet(f, columns=columns).filter(pl.col("time") <= last_at) for f in inputs.events])
    io.write_parquet(events.sort("time", maintain_order=True), outputs[0])
    log.info("%d instance events up to day %g from %d shards", events.height, params.until_day, len(inputs.events))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
