"""The Google 2019 trace's machine_events shards as the contract's machine events, in time order (the shards are
not), with each machine's capacity (Beaumont §6); the reader refuses a row the analysis cannot interpret, naming its
file and line."""
import polars as pl

from colocate import io, rulescript
from colocate.sources import google2019 as g19


def main(inputs, outputs, params, log):
    events = g19.machine_events(pl.concat([g19.read_machine_events(f) for f in inputs.events]))
    io.write_parquet(events, outputs[0])
    log.info("%d machine events from %d shard(s)", events.height, len(inputs.events))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
