"""Keep an executed notebook (the notebook rule's log) under results/<run>/notebooks/ without run times and
absolute paths (colocate.report.notebooks): two runs of the same inputs keep the same bytes."""
import json
import os
from pathlib import Path

from colocate import rulescript
from colocate.report import notebooks


def main(inputs, outputs, params, log):
    nb = json.loads(Path(inputs[0]).read_text(encoding="utf-8"))
    # the kept copy re-runs in Jupyter: its first cell gives the job's files and params without Snakemake
    injected = next("".join(c["source"]) for c in nb["cells"] if notebooks.PREAMBLE_TAG in c["metadata"].get("tags", []))
    # the working directory last: where it is the workflow's directory too, "." wins
    paths = {params.basedir: "<workflow>", os.getcwd(): "."}
    kept = notebooks.normalise(nb, paths, notebooks.rerun_preamble(params.run, notebooks.job_of(injected, paths)))
    Path(outputs[0]).write_text(notebooks.dumps(kept), encoding="utf-8")
    log.info("%s: %d cells", outputs[0], len(kept["cells"]))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
