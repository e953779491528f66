# Shared plumbing: scale presets, shard lists, code digests, resources.
import glob
import hashlib
from pathlib import Path

import yaml
from snakemake.utils import validate

from colocate import trace as _trace


def _merge(preset, explicit):
    """Preset values, overridden key by key by what the user set explicitly."""
    out = dict(preset)
    for key, value in explicit.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


with open(Path(workflow.basedir) / "workflow" / "schemas" / "scales.yaml") as _fh:
    _PRESETS = yaml.safe_load(_fh)
_resolved = _merge(_PRESETS[config.get("scale", "default")], config)
config.clear()
config.update(_resolved)
validate(config, "../schemas/config.schema.yaml", set_default=True)

SOURCE = config["trace"]["source"]
if SOURCE == "local" and not config["trace"]["path"]:
    raise ValueError("config key trace.path: required when trace.source is 'local'")
if SOURCE == "local" and not Path(config["trace"]["path"]).is_dir():
    raise ValueError(f"config key trace.path: {config['trace']['path']!r} is not a directory")
TRACE_ROOT = config["trace"]["path"] if SOURCE == "local" else f"resources/trace/{SOURCE}"
BUCKETS = list(range(config["mapreduce"]["buckets"]))
LIB = Path(workflow.basedir) / "workflow" / "colocate"


def code_digest(*modules):
    """Digest of the library modules a job runs (a param), so that editing the science reruns what it feeds.

    Modules are named as imported below colocate, e.g. "mapreduce" or "figures.placement".
    """
    h = hashlib.sha256()
    for m in modules:
        h.update((LIB / f"{m.replace('.', '/')}.py").read_bytes())
    return h.hexdigest()[:16]


def synthetic_shard_counts():
    counts = dict(config["synthetic"]["shards"])
    counts["machine_events"] = 1
    return counts


def shard_stems(table):
    """Shard file stems (part-NNNNN-of-MMMMM) of ``table`` that this run reads."""
    if SOURCE == "synthetic":
        n = synthetic_shard_counts()[table]
        return [_trace.shard_name(i, n).removesuffix(".csv.gz") for i in range(n)]
    if SOURCE == "google":
        from colocate.download import select_shards

        rel = select_shards(table, config["trace"]["shards"], 500)
        return [Path(r).name.removesuffix(".csv.gz") for r in rel]
    found = sorted(Path(p).name.removesuffix(".csv.gz") for p in glob.glob(f"{TRACE_ROOT}/{table}/part-*.csv.gz"))
    sel = config["trace"]["shards"]
    if table in _trace.SINGLE_FILE_TABLES or sel == "all":
        return found
    if isinstance(sel, int):
        return found[:sel]
    return [s for s in found if int(s.split("-")[1]) in set(sel)]


def trace_file(table, stem):
    return f"{TRACE_ROOT}/{table}/{stem}.csv.gz"


# `rule all` and results/summary.md are built from what each stage registers, with the trace
# tables it reads: TARGETS.append((tables, [paths])) and SUMMARY_PARTS.append((tables, path)).
TARGETS = []
SUMMARY_PARTS = []
_WARNED = set()


def have_tables(*tables):
    """True when every table has at least one shard; otherwise say (once) what is skipped."""
    missing = [t for t in tables if not shard_stems(t)]
    for t in missing:
        if t not in _WARNED:
            _WARNED.add(t)
            logger.warning(f"colocate: no shards of {t} under {TRACE_ROOT}; skipping what reads them")
    return not missing


TABLE_RE = "job_events|task_events|task_usage|machine_events|machine_attributes|task_constraints"
STEM_RE = r"part-\d{5}-of-\d{5}"


def synthetic_outputs():
    return [
        trace_file(table, stem)
        for table in synthetic_shard_counts()
        for stem in shard_stems(table)
    ]


def verified():
    """Map jobs on a local copy wait for its SHA256SUM check; synthetic and downloaded shards are checked already."""
    return {"verified": "results/trace/verified.tsv"} if SOURCE == "local" else {}


def summary_parts():
    return [path for tables, path in SUMMARY_PARTS if have_tables(*tables)]


def all_targets():
    targets = [path for tables, paths in TARGETS if have_tables(*tables) for path in paths]
    if summary_parts():
        targets.append("results/summary.md")
    return targets
