"""The run's capabilities record (colocate.sources.contract.Capabilities): what its trace records, its units, its
span, which of its files this run reads out of how many, and the rows and windows of the contract's tables read."""
import json
from pathlib import Path

from colocate import io, rulescript
from colocate.sources.contract import ORIGIN_US, TABLES, WINDOW_US


def read_of(paths, time):
    """Rows of one of the contract's tables, and the span of its ``time`` column (hours from the trace's start;
    windows too, for a window column), from the map outputs' footers."""
    rows, lo, hi = io.footer_rows(paths, time)
    if time is None or lo is None:
        return {"rows": rows}
    hours = (lambda w: w * WINDOW_US / 3.6e9) if time == "window" else (lambda t: (t - ORIGIN_US) / 3.6e9)
    windows = {"first_window": int(lo), "last_window": int(hi)} if time == "window" else {
        "first_window": int((lo - ORIGIN_US) // WINDOW_US), "last_window": int((hi - ORIGIN_US) // WINDOW_US)}
    return {"rows": rows, "first_h": round(hours(lo), 4), "last_h": round(hours(hi), 4), **windows}


def main(inputs, outputs, params, log):
    record = json.loads(params.record)
    record["read"] = {name: read_of(getattr(inputs, name), TABLES[name].time) for name in params.tables}
    Path(outputs[0]).write_text(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    log.info("%s: has %s; lacks %s; read %s", record["trace"], ", ".join(record["has"]), ", ".join(record["lacks"]) or "nothing",
             record["read"])


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
