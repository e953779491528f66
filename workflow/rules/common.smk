# Shared plumbing: scale presets, shard lists, code digests, resources.
import functools
import hashlib
import os
import re
from pathlib import Path

import jsonschema
from snakemake.iocontainers import InputFiles as _InputFiles
import yaml

from colocate import sources as _sources
from colocate.sources import contract as _contract
from colocate.trace import download as _download
from colocate.report import notebooks as _notebooks
from colocate.configtypes import changed_settings, cli_text, coerce_config, config_schema, fill_defaults


# The notebook rules call jupyter-nbconvert, installed beside this Snakemake: `.venv/bin/snakemake`, run without
# activating the venv, must find it.
_notebooks.interpreter_bin_first(os.environ)
# ... and runs the notebooks' kernels over IPC, not TCP on localhost (workflow/jupyter/jupyter_nbconvert_config.py)
_notebooks.jupyter_config_first(os.environ, Path(workflow.basedir) / "workflow" / "jupyter")


def _merge(preset, explicit):
    """Preset values, overridden key by key by what the user set explicitly."""
    out = dict(preset)
    for key, value in explicit.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


_SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"
with open(_SCHEMAS / "scales.yaml") as _fh:
    _PRESETS = yaml.safe_load(_fh)
CONFIG_SCHEMA = config_schema(_SCHEMAS)  # config.schema.yaml plus one section per <stage>.schema.yaml


def _check_config(instance):
    """Raise ValueError naming the key of the most relevant schema violation, if any."""
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(CONFIG_SCHEMA).iter_errors(instance))
    if error is not None:
        key = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ValueError(f"config key {key}: {error.message}")


# Snakemake's --config leaves every value nested in a dict a string ('realizations={"n_tasks": 1000}'
# gives {"n_tasks": "1000"}): type what the user set by the schema, then check its types and enums
# before the preset fills the sizes, and the whole config again after.
_typed = coerce_config(config, CONFIG_SCHEMA, cli_text(workflow.config_settings.config_args))
config.clear()
config.update(_typed)
_check_config(config)
# the scale's preset, then the source's own defaults (colocate.sources), then what the user set
_resolved = _merge(_merge(_PRESETS[config.get("scale", "default")], _sources.config_defaults(config.get("trace", {}))), config)
fill_defaults(_resolved, CONFIG_SCHEMA)
_check_config(_resolved)
_download.check_url(_resolved["trace"]["url"], what="config key trace.url")
config.clear()
config.update(_resolved)
#: What this run's config changes from the defaults (the schema's, its scale's preset, its source's): the summary
#: says so, so that an edited config.yaml or a --config leaves a trace in the results.
_defaults = fill_defaults(_merge(_PRESETS[config["scale"]], _sources.config_defaults(config["trace"])), CONFIG_SCHEMA)
_defaults["scale"] = CONFIG_SCHEMA["properties"]["scale"].get("default")
CONFIG_CHANGES = changed_settings({k: v for k, v in config.items() if k != "run"}, _defaults)

#: The run's trace source (colocate.sources): where its files are, which of them this run reads, what the trace
#: records. Rules ask it; none branches on the source's name.
SRC = _sources.resolve(_sources.Setting(config["trace"], config["scale"], workflow.basedir, config.get("synthetic")))
#: The sources' families: each has its rules file, workflow/rules/<family>.smk, included only for its own runs.
SOURCE_FAMILIES = _sources.families()
TRACE_ROOT = SRC.root
CAPABILITIES = SRC.capabilities()
#: Job priorities (`priority:`; Snakemake does not pass one on to a job's inputs, so each rule on the path carries
#: its own). The trace (synthesis, download, check) first, then the rest of the path to the trace's analyses (maps,
#: reducers, collect_tasks, sample_realizations), both before jobs that need no trace; then the long jobs, so that
#: short ones fill the cores at the end (docs/performance.md, "Paper scale": 11:05 -> 10:42 on the 2-shard slice).
PRIORITY_TRACE, PRIORITY_CRITICAL_PATH, PRIORITY_LONG_JOB = 40, 30, 20

#: This run's name and directory: every output, log and benchmark lives under results/<run>/.
RUN = config["run"] or SRC.run
RESULTS = f"results/{RUN}"
_named_run = config["run"]
config["run"] = RUN  # the report names the run it shows


# `snakemake --report results/<X>/report.html` reports the run this config names: a report written into another
# run's directory would show this run's results under that run's name. Snakemake hands the report's path to
# Workflow.create_report only after this file is read, so the check wraps that call (colocate.report.which_run).
def _report_of_this_run(create_report):
    @functools.wraps(create_report)
    def checked(report_plugin, report_settings, *args, **kwargs):
        from snakemake.exceptions import WorkflowError
        from colocate.report import which_run

        why = which_run.mismatch(getattr(report_settings, "path", None), RUN,
                                 {"trace": config["trace"], "scale": config["scale"], "run": _named_run},
                                 _sources.SOURCES.names(), _PRESETS)
        if why:
            raise WorkflowError(why)
        return create_report(report_plugin, report_settings, *args, **kwargs)

    return checked


workflow.create_report = _report_of_this_run(workflow.create_report)
BUCKETS = list(range(config["mapreduce"]["buckets"]))
# 5-minute windows in the trace: the synthetic model's days, or the real trace's 8352.
N_WINDOWS = SRC.span_windows
# the windows that hold records: a synthetic slice renders only its first slice_days (memory estimates)
RENDERED_WINDOWS = SRC.rendered_windows
LIB = Path(workflow.basedir) / "workflow" / "colocate"


_IMPORT_RE = re.compile(r"^[ \t]*from colocate(\.[\w.]+)? import (\([^)]*\)|[^\n]+)", re.M)


def _module(name):
    """A module name below colocate as a file stem: a package is its __init__ ("trace" → "trace.__init__")."""
    return f"{name}.__init__" if (LIB / name.replace(".", "/")).is_dir() else name


def _library_imports(module):
    """Library modules that ``module`` (a name below colocate, e.g. "figures.jobs") imports."""
    found = set()
    for sub, names in _IMPORT_RE.findall((LIB / f"{module.replace('.', '/')}.py").read_text()):
        base = sub.lstrip(".")
        if base:
            found.add(_module(base))
        for name in re.findall(r"\w+", names.replace(" as ", " ")):
            candidate = _module(f"{base}.{name}" if base else name)
            if (LIB / f"{candidate.replace('.', '/')}.py").exists():
                found.add(candidate)
    return found


def code_digest(*modules):
    """Digest of the library modules a job runs (a param), so that editing the science reruns what it feeds.

    Modules are named as imported below colocate, e.g. "prep.mapreduce", "trace" or "figures.placement";
    the library modules they import (transitively) are included, so a rule lists only what its script calls.
    """
    todo, seen = [_module(m) for m in modules], set()
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(_library_imports(m) - seen)
    h = hashlib.sha256()
    for m in sorted(seen):
        h.update((LIB / f"{m.replace('.', '/')}.py").read_bytes())
    return h.hexdigest()[:16]


def plugin_digest(*specs):
    """Digest of the source files of the plug-ins (module:Class) among ``specs``, empty without any.

    Appended to a job's code digest, so that editing a plug-in reruns the jobs that use it.
    """
    import importlib
    import inspect

    from colocate.registry import is_plugin

    plugins = sorted({s for s in specs if is_plugin(s)})
    h = hashlib.sha256()
    for spec in plugins:
        h.update(Path(inspect.getsourcefile(importlib.import_module(spec.partition(":")[0]))).read_bytes())
    return f"+{h.hexdigest()[:16]}" if plugins else ""


def shard_stems(table):
    """Stems of the files of ``table`` that this run reads (none where the source has no such table)."""
    return SRC.stems(table)


def contract_table_whole(name):
    """Whether the run reads every file of the trace's tables mapped to the contract's table ``name`` (usage_records:
    the 2011 task_usage, Azure's readings), so that what is found in it is found over the whole trace."""
    mapped = [c for c in CAPABILITIES.coverage if name in c.maps_to]
    return bool(mapped) and all(c.whole for c in mapped)


def contract_tables_read():
    """The files of each of the contract's tables the run's source writes and has what it serves for: {table: files}
    (a table the analyses read; no map runs only for the capabilities record)."""
    files = {name: globals()[table.variable] for name, table in _contract.TABLES.items()}
    serves = {name: table.serves for name, table in _contract.TABLES.items()}
    # the shared reduce reads usage records and entity pieces together
    serves["usage_records"] = serves["entity_pieces"] = ("entities", "usage_series")
    return {name: paths for name, paths in files.items() if paths and CAPABILITIES.supports(serves[name])}


def trace_file(table, stem):
    return SRC.file(table, stem)


def size_mb(files):
    """MB of some of a job's input files (one or a list), as ``input.size_mb`` measures all of them: local files by
    ``os.stat``, a storage (remote, e.g. S3) input through Snakemake's sizes; a missing one leaves the resource to be
    decided once it exists."""
    files = [files] if isinstance(files, str) else list(files)
    if any(getattr(f, "is_storage", False) for f in files):
        return _InputFiles(toclone=files).size / 2**20
    # local files by os.stat: Snakemake's per-file asyncio sizes took 24 s of a 3,348-job paper-scale dry run
    return sum(os.stat(f).st_size for f in files) / 2**20  # a missing one: FileNotFoundError, the resource is <TBD>


def add_memory(rules, mb, applies):
    """Add ``mb`` to the ``mem_mb`` of every rule that declares one, where ``applies()`` is true when a job's
    resources are evaluated (the executor is chosen after the Snakefile is read)."""

    def plus(declared):
        def mem_mb(*args, **kwargs):  # Snakemake passes every argument to a function taking **kwargs
            value = declared.evaluate(*args, **kwargs).value
            return value + mb if applies() and isinstance(value, int) else value  # an unknown input size stays TBD

        return mem_mb

    for each in rules:
        if "mem_mb" in each.resources:
            each.resources["mem_mb"] = plus(each.resources["mem_mb"])


def fitted_mem(base, per_mb=0.0, share=1.0):
    """``resources.mem_mb`` from the job's input size: ``base`` MB plus ``per_mb`` per MB of its input files, times
    ``share`` (the part one job reads, e.g. 1 / B of every map output).

    Each rule's pair is fitted to its peak RSS measured on the default run and the paper-scale slice (and, where
    named, at the real trace's size), with a margin, so that declared / measured stays within 1–2
    (``bench/memory.py`` checks it)."""

    def mem_mb(wildcards, input):
        if not per_mb:
            return int(base)
        return int(base + per_mb * share * size_mb(input))

    return mem_mb


def largest_input_mem(base, per_mb):
    """``resources.mem_mb`` of a job that holds one of its ``input.series`` files at a time: ``base`` MB plus
    ``per_mb`` per MB of the largest. Fitted like :func:`fitted_mem`."""
    return lambda wildcards, input: int(base + per_mb * max((size_mb(f) for f in input.series), default=0.0))


def bucket_parts(per_job):
    """The reduce buckets in consecutive groups of ``per_job`` (the last may hold fewer), one job's part each:
    name → buckets. A part is named ``buckets-FIRST-LAST`` by the buckets it holds, so that a new
    ``buckets_per_job`` names new files and a part file never stands for other buckets than its own."""
    groups = [BUCKETS[i : i + per_job] for i in range(0, len(BUCKETS), per_job)]
    return {f"buckets-{g[0]}-{g[-1]}": g for g in groups}


def bucket_series(buckets):
    """The long tasks' series files of some reduce buckets."""
    return [f"{RESULTS}/reduce/bucket-{b}/series.parquet" for b in buckets]


def batch_mem(base, per_mb, per_extra_mb):
    """``resources.mem_mb`` of a map job of one shard or a batch (``map_batches``): ``base`` MB, ``per_mb`` per MB
    of its largest shard (read and mapped one at a time) and ``per_extra_mb`` per MB of the others, whose outputs
    are held until the batch is written. Fitted like :func:`fitted_mem`; ``bench/map_batches.py`` measures
    batches."""

    def mem_mb(wildcards, input):
        sizes = [size_mb(f) for f in input.shards]  # a missing one: the resource is decided once it exists
        largest = max(sizes, default=0.0)
        return int(base + per_mb * largest + per_extra_mb * (sum(sizes) - largest))

    return mem_mb


def parquet_rows(files):
    """Rows of Parquet files (one or a list), from their footers: for a rule whose memory follows its rows, not its
    bytes on disk (compression varies with the data)."""
    import errno

    import pyarrow.parquet as pq

    rows = 0
    for f in [files] if isinstance(files, str) else files:
        if not os.path.exists(f):  # not yet written: Snakemake leaves the resource to be decided (<TBD>)
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), f)
        rows += pq.read_metadata(f).num_rows
    return rows


def dominant_jobs_mem_mb(rows):
    """dominant_jobs' memory for ``rows`` job × window rows over the rendered windows: one day's chunk of them at
    ~170 B per row, and ~95 B per row kept."""
    chunk = rows * min(1.0, 288 / RENDERED_WINDOWS)
    return 250 + (170 * chunk + 95 * rows) / 2**20

def window_chunk(wildcards):
    """The windows lo ≤ w < hi of a job's ``chunk`` wildcard, jobs.chunk_windows windows a chunk (the last one
    shorter): for a reduce of the job × window aggregates a range of windows at a time."""
    lo = int(wildcards.chunk) * config["jobs"]["chunk_windows"]
    return lo, min(lo + config["jobs"]["chunk_windows"], N_WINDOWS)


def sample_realizations_mem_mb(wildcards, input):
    """sample_realizations draws a bucket at a time: it holds one bucket's series columns (~40 B per row), the
    chosen tasks' records in it (~145 B each) and one chunk of draws (8 B per draw, inst and avg); the matrices are
    written through a memory map, whose pages the kernel reclaims. Anonymous peaks 117 / 178 MB on the default run
    and the 8-shard slice (13.8 M records in 256 buckets), where the whole series at once had taken 535 / 1,776 MB;
    734-779 MB on buckets of 3.5 M rows with every task chosen (bench/sample_realizations.py; declared 839). On the
    full trace (~0.4-0.8 M chosen records and ~4.7 M rows a bucket) about 500 MB."""
    rz = config["realizations"]
    buckets = max(len(BUCKETS), 1)
    # a status output (too little data) has no n_records: mean_lifetime gives 0
    records = min(rz["n_tasks"], parquet_rows(input.long)) * mean_lifetime(input.long)
    per_bucket = 145 * records / buckets + 40 * parquet_rows(input.series) / buckets
    return int(150 + (per_bucket + rz["chunk_tasks"] * rz["n_realizations"] * 8) / 2**20)


def long_tasks_running(series):
    """admission_control's memory: the long tasks' mean number running per window, from the row counts in the
    series files' Parquet footers (one row per task and window), as ``admission.choose_source`` decides."""
    return parquet_rows(series) / RENDERED_WINDOWS


def admission_mem_mb(wildcards, input):
    """admission_control: on the trace, a bucket's series at a time and the set's records (~100 B per task and
    window); on realizations, one entry per task-step (arrivals × the tasks' mean lifetime × ~70 B), the matrix
    mapped. Measured: 453 MB on the default run's trace sets, 989 MB on its realizations (366 steps), 441 MB beside
    the mapped matrix on the paper-scale slice's realizations (44 steps; bench/memory.py)."""
    adm = config["packing"]["admission"]
    trace = adm["source"] == "trace" or (adm["source"] == "auto" and long_tasks_running(input.series) >= adm["mean_running"])
    if trace:
        return int(1.4 * (300 + adm["mean_running"] * RENDERED_WINDOWS * 100 / 2**20
                          + 3 * size_mb(input.series) / max(len(BUCKETS), 1)))
    return int(600 + adm["arrivals"] * mean_lifetime(input.tasks) * 70 / 2**20)


def cpumem_classify_mem_mb(wildcards, input):
    """Peak 498 MB (2.4 MB in) / 547 MB (3.8 MB in) on the default run / the paper-scale slice (bench/memory.py).
    The points are held a group of jobs at a time (≤ 4 M points): 1,147 MB with 10 M points kept
    (bench/cpumem_classify.py), so the line stops at 1.3 × that whatever the trace's size, with up to 5,000
    points per job (more make each DBSCAN graph larger: no ceiling then)."""
    line = 590 + 49 * size_mb(input.sampled)
    return int(line if config["cpumem"]["max_points_per_job"] > 5000 else min(line, 1500))


def mean_lifetime(tasks):
    """admission_control's and sample_realizations' memory: the mean number of 5-minute records of the tasks of
    ``tasks`` (the realizations' or the long tasks'; 0 for a status output without them)."""
    import errno

    import polars as pl

    if not os.path.exists(tasks):  # not yet written: Snakemake leaves the resource to be decided (<TBD>)
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), tasks)
    frame = pl.scan_parquet(tasks)
    if "n_records" not in frame.collect_schema().names():
        return 0.0
    return float(frame.select(pl.col("n_records").mean()).collect().item() or 0.0)


# `rule all` and results/summary.md are built from what each stage registers, with the capabilities of the
# source it needs (colocate.sources.contract.CAPABILITIES): TARGETS.append((needs, [paths])) and
# SUMMARY_PARTS.append((needs, path)), planned only where the source has them; and, in NEEDS, each of its analyses
# by name: NEEDS[key] = (analysis, needs). An analysis whose needs the source lacks gets
# results/<run>/not_applicable/<key>.csv, which says so.
TARGETS = []
SUMMARY_PARTS = []
NEEDS = {}
# The contract's tables (colocate.sources.contract.TABLES): the source's rules file, included after the stages,
# assigns the files of each it writes (USAGE_RECORDS = [...], ...); one it lacks stays empty. Rules read them
# through input functions, evaluated once every file is included.
USAGE_RECORDS = []
ENTITY_PIECES = []
GROUP_WINDOWS = []
SAMPLED_WINDOWS = []
GROUP_EVENTS = []
MACHINE_EVENTS = []
PLACEMENT_EVENTS = []
WINDOW_MOMENTS = []
_WARNED = set()


def supported(*needs):
    """True when the run's source has every capability in ``needs``; otherwise say (once) what is skipped."""
    missing = CAPABILITIES.missing(needs)
    for cap in missing:
        if cap not in _WARNED:
            _WARNED.add(cap)
            why = CAPABILITIES.lacks_why.get(cap, "")
            logger.warning(f"colocate: {CAPABILITIES.trace} lacks {cap}{f' ({why})' if why else ''}; "
                           "skipping what needs it (summary.md says which analyses do not apply)")
    return not missing


TABLE_RE = "job_events|task_events|task_usage|machine_events|machine_attributes|task_constraints"
STEM_RE = r"part-\d{5}-of-\d{5}"
# a map job's name: its shard's stem, or a batch of shards (map_batches)
MAP_RE = rf"{STEM_RE}|batch-\d{{5}}-\d{{5}}(-[0-9a-f]{{8}})?-of-\d{{5}}"


@functools.cache
def map_batches(table):
    """The map jobs of a Google ``table``: name → the shard stems it maps, in order.

    ``mapreduce.shards_per_map[table]`` shards in a row of the run's selection go to one job, so that a job's
    start-up (0.3-0.5 s, most of a small shard's map) and every reducer's opening of a map output (0.5-0.8 ms a
    footer, 1,000 a bucket on the full trace unbatched) are paid once a batch. A batch of consecutive shards is
    named ``batch-FIRST-LAST-of-TOTAL`` by their numbers; one with gaps (a list in ``trace.shards``) gets a digest
    of its shards too, ``batch-FIRST-LAST-DIGEST-of-TOTAL``, so that two selections never share a name. A job of
    one shard is named by its stem. (Cached: the selection is fixed for a run.)"""
    stems = shard_stems(table)
    k = config["mapreduce"]["shards_per_map"][table]
    batches = {}
    for i in range(0, len(stems), k):
        group = stems[i : i + k]
        numbers = [int(s.split("-")[1]) for s in group]
        if len(group) == 1:
            name = group[0]
        elif numbers == list(range(numbers[0], numbers[-1] + 1)):
            name = f"batch-{numbers[0]:05d}-{numbers[-1]:05d}-of-{group[0].split('-of-')[1]}"
        else:
            digest = hashlib.blake2b(" ".join(group).encode(), digest_size=4).hexdigest()
            name = f"batch-{numbers[0]:05d}-{numbers[-1]:05d}-{digest}-of-{group[0].split('-of-')[1]}"
        batches[name] = group
    return batches


def map_shards(table):
    """Input function of ``table``'s map rule: the trace files of the job's batch."""

    def shards(wc):
        batches = map_batches(table)
        if wc.stem not in batches:
            raise ValueError(f"no {table} map job is named {wc.stem}: with mapreduce.shards_per_map.{table} = "
                             f"{config['mapreduce']['shards_per_map'][table]} they are {', '.join(list(batches)[:3])}"
                             f"{', …' if len(batches) > 3 else ''}")
        return [trace_file(table, s) for s in batches[wc.stem]]

    return shards


def verified():
    """Map jobs on a copy nobody has checked (a local one, the shipped sample) wait for its SHA256SUM check."""
    return {"verified": f"{RESULTS}/trace/verified.tsv"} if SRC.verify else {}


def summary_parts():
    return [path for needs, path in SUMMARY_PARTS if supported(*needs)]


def not_applicable():
    """The registered analyses (NEEDS) whose needs this run's source lacks: key → (analysis, needs)."""
    return {key: (analysis, needs) for key, (analysis, needs) in NEEDS.items() if not CAPABILITIES.supports(needs)}


def all_targets():
    targets = [path for needs, paths in TARGETS if supported(*needs) for path in paths]
    targets += [f"{RESULTS}/not_applicable/{key}.csv" for key in not_applicable()]
    targets.append(f"{RESULTS}/trace/capabilities.json")
    if summary_parts():
        targets += [f"{RESULTS}/summary.csv", f"{RESULTS}/summary.md"]
    return targets
