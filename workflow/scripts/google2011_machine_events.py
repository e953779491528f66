"""The 2011 trace's machine_events file as the contract's machine events (time, machine, event type), in its order;
a row the analysis cannot interpret is refused, naming the file and line (Beaumont §6)."""
from colocate import io, rulescript, trace
from colocate.analysis import failures


def main(inputs, outputs, params, log):
    events = trace.read_table(inputs.events, "machine_events", columns=["time", "machine_id", "event_type"])
    failures.check_events(events, inputs.events)
    io.write_parquet(events, outputs[0])
    log.info("%s: %d machine events", inputs.events, events.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
