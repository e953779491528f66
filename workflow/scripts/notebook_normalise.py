"""Keep an executed notebook (the notebook rule's log) under results/<run>/notebooks/ without run times and
absolute paths (colocate.report.notebooks): two runs of the same inputs keep the same bytes."""
import json
import os
from pathlib import Path

from colocate import rulescript
from colocate.report import notebooks


def main(inputs, outputs, params, log):
    nb = json.loads(Path(inputs[0]).read_text(encoding="utf-8"))
    # the working directory last: where it is the workflow's directory too, "." wins
    kept = notebooks.normalise(nb, {params.basedir: "<workflow>", os.getcwd(): "."})
    Path(outputs[0]).write_text(notebooks.dumps(kept), encoding="utf-8")
    log.info("%s: %d cells", outputs[0], len(kept["cells"]))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
