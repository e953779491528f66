"""The run's capabilities record (colocate.sources.contract.Capabilities): what its trace records, its units, its
span, and which of its files this run reads out of how many."""
import json
from pathlib import Path

from colocate import rulescript


def main(inputs, outputs, params, log):
    Path(outputs[0]).write_text(params.record)
    record = json.loads(params.record)
    log.info("%s: has %s; lacks %s", record["trace"], ", ".join(record["has"]), ", ".join(record["lacks"]) or "nothing")


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
