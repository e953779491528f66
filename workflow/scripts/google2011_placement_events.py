"""The 2011 trace's task_events, in its order, up to the co-location analysis's last instant, as the contract's
placement events: shards are in time order, so reading stops at the first one past that instant."""
import polars as pl

from colocate import io, rulescript, trace
from colocate.sources.contract import ORIGIN_US, TABLES


def main(inputs, outputs, params, log):
    last_at = ORIGIN_US + int(params.until_day * 86_400e6)
    frames = []
    for path in inputs.events:
        events = trace.read_table(path, "task_events", list(TABLES["placement_events"].columns))
        frames.append(events.filter(pl.col("time") <= last_at))
        if events.height and events["time"].max() > last_at:
            break
    events = pl.concat(frames)
    io.write_parquet(events, outputs[0])
    log.info("%d task events up to day %g from %d of %d shards", events.height, params.until_day, len(frames), len(inputs.events))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
