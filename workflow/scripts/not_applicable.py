"""An analysis whose needs the run's trace lacks (its source's capabilities): its output states why."""
from colocate import insufficient, rulescript


def main(inputs, outputs, params, log):
    status = insufficient.Status(params.analysis, params.reason, params.needs, status=insufficient.NOT_APPLICABLE)
    insufficient.write_status([outputs[0]], status)
    log.info("%s: %s", params.analysis, params.reason)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
