"""Running tasks per machine at the configured instants, from the contract's placement events."""
from colocate import io, measure, rulescript
from colocate.analysis import colocation
from colocate.sources.contract import ORIGIN_US


def main(inputs, outputs, params, log):
    events = io.read_contract(inputs.events, "placement_events")
    end = events["time"].max() if events.height else 0
    days = [d for d in params.days if ORIGIN_US + d * 86_400e6 <= end or d == 0]
    if len(days) < len(params.days):
        log.warning("instants after the last event read (%.3f days) left out: %s", (end - ORIGIN_US) / 86_400e6,
                    sorted(set(params.days) - set(days)))
    table = colocation.density_over_time(events, days)
    table.write_csv(outputs.table)
    measure.measurements(colocation.measurements(table)).write_csv(outputs.summary)
    log.info("running tasks per machine:\n%s", table)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
