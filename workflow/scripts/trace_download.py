"""Snakemake script: download one file of the trace bucket, SHA-256 verified and resumable."""

from pathlib import Path

from colocate import rulescript
from colocate.trace.download import check_url, download, lookup_sha256, progress_logger


def main(inputs, outputs, params, log):
    # the log ("colocate") also receives colocate.trace.download's retry warnings
    relpath = params.relpath
    try:
        # https only (plain http to loopback for the tests): the SHA256SUM fetched here is what every shard
        # is verified against, so it must not come over an unauthenticated channel
        check_url(str(params.url))
        manifest = getattr(inputs, "manifest", None)  # absent for the SHA256SUM download itself
        sha256 = lookup_sha256(manifest, relpath) if manifest else None
        url = f"{str(params.url).rstrip('/')}/{relpath}"
        log.info("%s -> %s (sha256 %s)", url, outputs[0], sha256 or "not checked")
        download(url, Path(outputs[0]), sha256, retries=int(params.retries),
                 backoff=float(params.backoff), progress=progress_logger(relpath, log))
    except Exception:
        log.exception("download of %s failed", relpath)
        raise


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
