"""The run's capabilities record (colocate.sources.contract.Capabilities): what its trace records, its units, its
span, which of its files this run reads out of how many, and the rows and windows of the contract's tables read."""
import json
from pathlib import Path

from colocate import io, rulescript
from colocate.sources.contract import ORIGIN_US, WINDOW_US


def read_of(paths, time=None):
    """Rows of some of the contract's tables, and the windows their ``time`` spans, from the map outputs' footers."""
    rows, lo, hi = io.footer_rows(paths, time)
    window = lambda t: None if t is None else int((t - ORIGIN_US) // WINDOW_US)  # noqa: E731
    return {"rows": rows, **({"first_window": window(lo), "last_window": window(hi)} if time else {})}


def main(inputs, outputs, params, log):
    record = json.loads(params.record)
    record["read"] = {"usage_records": read_of(inputs.records, "start_time"), "entity_pieces": read_of(inputs.pieces)}
    Path(outputs[0]).write_text(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    log.info("%s: has %s; lacks %s; read %s", record["trace"], ", ".join(record["has"]), ", ".join(record["lacks"]) or "nothing",
             record["read"])


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
