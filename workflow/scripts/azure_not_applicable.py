"""A Google analysis whose subject the Azure VM traces do not record: its output states why (issue 16)."""
from colocate import insufficient, rulescript
from colocate.trace import azure


def main(inputs, outputs, params, log):
    name, analysis, reason, needs = next(row for row in azure.NOT_APPLICABLE if row[0] == params.name)
    insufficient.write_status([outputs[0]], insufficient.Status(analysis, reason, needs, status=insufficient.NOT_APPLICABLE))
    log.info("%s: %s: %s", analysis, insufficient.NOT_APPLICABLE, reason)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
