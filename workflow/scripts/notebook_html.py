"""An executed notebook as HTML for the report (colocate.report.notebooks.to_html)."""
import json
from pathlib import Path

from colocate import rulescript
from colocate.report import notebooks


def main(inputs, outputs, params, log):
    html = notebooks.to_html(json.loads(Path(inputs[0]).read_text(encoding="utf-8")))
    Path(outputs[0]).write_text(html, encoding="utf-8")
    log.info("%s: %d characters", outputs[0], len(html))


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
