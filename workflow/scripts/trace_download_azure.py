"""Snakemake script: download one file of the Azure VM trace, resumable; pinned in the lock file on first download."""
from pathlib import Path

from colocate import rulescript
from colocate.sources import azure
from colocate.trace import lock
from colocate.trace.download import progress_logger

READERS = {"vm_cpu_readings": azure.read_readings, "vmtable": azure.read_vmtable}


def main(inputs, outputs, params, log):
    p = params
    try:
        # no published checksums: a first download must read whole (gzip integrity, every row's schema)
        outcome = lock.fetch_locked(str(p.url), Path(outputs[0]), Path(p.lock), p.relpath, READERS[p.table],
                                    retries=int(p.retries), backoff=float(p.backoff),
                                    progress=progress_logger(p.relpath, log))
        log.info("%s -> %s: %s (lock %s)", p.url, outputs[0], outcome, p.lock)
    except Exception:
        log.exception("download of %s failed", p.relpath)
        raise


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
