"""Check a local copy of the trace against its SHA256SUM, when it has one."""
from pathlib import Path

import polars as pl

from colocate import rulescript
from colocate.trace import download


def main(inputs, outputs, params, log):
    root = Path(params.root)
    manifest_path = root / "SHA256SUM"
    rel = [str(Path(s).relative_to(root)) for s in inputs.shards]
    if manifest_path.exists():
        manifest = download.parse_sha256sum(manifest_path.read_text())
        bad = download.verify_tree(root, {r: manifest[r] for r in rel if r in manifest})
        if bad:
            raise SystemExit(f"{manifest_path}: checksum mismatch for {', '.join(bad)}")
        status = ["ok" if r in manifest else "not in manifest" for r in rel]
    else:
        log.warning("%s not found: shards not verified", manifest_path)
        status = ["no manifest"] * len(rel)
    pl.DataFrame({"shard": rel, "status": status}).write_csv(outputs[0], separator="\t")


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821 (injected by Snakemake)
