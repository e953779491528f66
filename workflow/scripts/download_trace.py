"""Snakemake script: download one file of the trace bucket, SHA-256 verified and resumable."""

import logging
from pathlib import Path

from colocate.trace.download import check_url, download, lookup_sha256, progress_logger

sm = snakemake  # noqa: F821 (injected by Snakemake)
logger = logging.getLogger("colocate")  # also receives colocate.trace.download's retry warnings
handler = logging.FileHandler(sm.log[0])
handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
logger.addHandler(handler)
logger.setLevel(logging.INFO)
try:
    relpath = sm.params.relpath
    # https only (plain http to loopback for the tests): the SHA256SUM fetched here is what every shard
    # is verified against, so it must not come over an unauthenticated channel
    check_url(str(sm.params.url))
    manifest = getattr(sm.input, "manifest", None)  # absent for the SHA256SUM download itself
    sha256 = lookup_sha256(manifest, relpath) if manifest else None
    url = f"{str(sm.params.url).rstrip('/')}/{relpath}"
    logger.info("%s -> %s (sha256 %s)", url, sm.output[0], sha256 or "not checked")
    download(url, Path(sm.output[0]), sha256, retries=int(sm.params.retries),
             backoff=float(sm.params.backoff), progress=progress_logger(relpath, logger))
except Exception:
    logger.exception("download of %s failed", sm.params.relpath)
    raise
finally:
    logger.removeHandler(handler)
    handler.close()
