"""Snakemake script: download one object of the Google 2019 trace, resumable, verified against the CRC32C (and MD5)
that Google Cloud Storage sends with it in ``x-goog-hash`` (no SHA256SUM is published)."""

from pathlib import Path
from urllib.parse import urlsplit

from colocate import rulescript
from colocate.trace.download import download, progress_logger


def main(inputs, outputs, params, log):
    # the log ("colocate") also receives colocate.trace.download's retry warnings
    url = str(params.url)
    try:
        name = urlsplit(url).path.lstrip("/")  # clusterdata_2019_<cell>/<table>-<shard>.json.gz
        log.info("%s -> %s (checked against the server's x-goog-hash)", url, outputs[0])
        download(url, Path(outputs[0]), None, server_hashes=True, retries=int(params.retries),
                 backoff=float(params.backoff), progress=progress_logger(name, log))
    except Exception:
        log.exception("download of %s failed", url)
        raise


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
