"""The run's capabilities record (colocate.sources.contract.Capabilities): what its trace records, its units, its
span, which of its files this run reads out of how many, and the rows and windows of the contract's tables read."""
import json
from pathlib import Path

from colocate import rulescript
from colocate.sources.contract import rows_read


def main(inputs, outputs, params, log):
    record = json.loads(params.record)
    record["read"] = {"usage_records": rows_read(inputs.records, "start_time"), "entity_pieces": rows_read(inputs.pieces)}
    Path(outputs[0]).write_text(json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    log.info("%s: has %s; lacks %s; read %s", record["trace"], ", ".join(record["has"]), ", ".join(record["lacks"]) or "nothing",
             record["read"])


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
