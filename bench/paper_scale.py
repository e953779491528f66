"""Benchmark: a real-size slice of the trace through the whole paper-scale pipeline, and the projection.

The slice is the synthetic model of the *whole* 29-day trace at full size (12,583 machines, ~121,000 tasks
running at a time on ~11,400 busy machines, 10.65 per machine) cut to its first hours
(``synthetic.slice_days``), written as K task_usage shards of about the real 2.4 M rows (and K task_events
and job_events shards). The pipeline then runs at the ``paper`` scale: B = 256 buckets, realizations
N = 100,000 × R = 10,000 (or every long task the slice holds, as printed), the Janus characterisation, the
Unuvar fits, the §5 packing grid, placement, the notebooks: every rule of ``snakemake --cores C``.

Printed, from Snakemake's own per-job benchmark files and job log:

* per rule: jobs, wall time (sum and longest job), CPU time, peak RSS, MB read and written, the declared
  ``resources.mem_mb`` against the measured peak (declared ≥ measured, and at most 2× over);
* the map of task_usage against ``gzip -dc`` of the same shards, both again after the run, one at a time;
* the reducers at full-trace size: the slice cut into 256 · K / 500 buckets, each then holding what one of
  the full trace's 256 buckets holds (~4.7 M records), run one at a time;
* ``sample_realizations``' code on those buckets with the full trace's share of long tasks chosen: an upper bound
  on its full-trace time, which the projection takes instead of a line;
* the projection to the full trace (500 shards): per-shard jobs × 500/K in number (batches of
  ``mapreduce.shards_per_map`` shards: 500 / that many jobs, each its shards' cost); the reducers as measured
  at full size, plus the footer of every map output a full-trace reducer opens beyond theirs; rules that read the whole trace (``SCALING``) along the line through this slice and a smaller
  one (``--baseline``), else their cost above a job's start-up × 500/K; the rest as measured.
  On C cores the makespan lies between max(W / C, P) and W / C + P (Graham's bound; W: total job time,
  P: the critical path), and on a 500-node cluster it is the critical path of the rule graph with each
  rule's longest job, named rule by rule.

    python bench/paper_scale.py --shards 2 --workdir /tmp/slice-2
    python bench/paper_scale.py --shards 8 --workdir /tmp/slice-8 --baseline /tmp/slice-2   # the table of docs/performance.md

The trace synthesis is measured but left out of the projection: a real run downloads the shards instead.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FULL_SHARDS = 500  # task_usage, task_events and job_events each have 500 shards in clusterdata-2011-2
# The model writes about 108,000 task_usage records per 5-minute window at full density; a real shard holds
# about 2.4 M rows, so one shard of the slice spans 2.4e6 / 108e3 / 288 ≈ 0.077 days (the real trace's
# shards span 29 / 500 = 0.058 days: it has a few more records per window).
DAYS_PER_SHARD = 0.077
MEMORY_LIMIT_MB = 4096  # the profiles' default mem_mb per job
# Rules whose peak at the real trace's size is measured on inputs of that size (bench/trace_tables.py,
# dominant_jobs.py, janus_clusters.py, cpumem_classify.py, periodicity_scale.py, sample_realizations.py), so the
# projection leaves them out of its rough memory list. (unuvar_aggregates is not: only its machine counts are measured there.)
FULL_SIZE_BENCHED = ("collect_tasks", "job_table", "dominant_jobs", "janus_clusters", "cpumem_classify",
                     "periodicity_components", "periodicity_packing", "sample_realizations")
PAPER_N = 100_000  # realizations.n_tasks at the paper scale
PAPER_R = 10_000  # realizations.n_realizations at the paper scale
FULL_BUCKETS = 256  # mapreduce.buckets at the paper scale
FULL_LONG_TASKS = 800_000  # long tasks (≥ 2 h) of the full trace, Janus & Rzadca §3.5

# How each rule's cost grows from the slice to the full trace. shard: one job per shard, each as measured;
# trace: one job (or one per bucket) whose work is linear in the trace's size (it reads every shard's map
# output, every bucket, every job or every long task); realizations: linear in N (the long tasks drawn, at
# most 100,000); the rest is sized by the paper's fixed settings (R, repetitions, instances, the machine
# table, the first day) and kept as measured.
SCALING = {
    **dict.fromkeys(("map_task_usage", "map_task_events", "map_job_events"), "shard"),
    **dict.fromkeys((
        "reduce_bucket", "collect_tasks",  # every record, every task
        "job_table", "dominant_jobs", "cpumem_classify",  # every shard's job windows and sampled records
        "cpumem_tables", "jobs_dominant_table", "jobs_durations", "jobs_task_balance", "jobs_usage_mixtures",
        "periodicity_components", "periodicity_packing",  # every job, or every production job's 29-day series
        "janus_time_invariance_part", "janus_fig1_sampling_part",  # every long task's records, in parts of buckets
        "unuvar_aggregates", "notebook_trace_and_tasks",  # series of every bucket
    ), "trace"),
    # the first placement.trace.event_shards (10 at the paper scale) task_events shards, whatever the trace's size,
    # and three columns of the task table (0.5 GB at 25 M tasks: docs/performance.md, 'Paper scale, measured')
    "placement_trace_requests": "fixed",
    # one row per long task: linear in their number (the full trace's ~800,000, Janus §3.5), not in its records
    **dict.fromkeys(("janus_clusters", "janus_variability", "janus_time_invariance", "janus_fig1_sampling"), "long"),
    # reads every bucket (one at a time) for the chosen tasks' records, which grow with the trace's length
    "sample_realizations": "trace",
    **dict.fromkeys(("janus_total_usage", "janus_fig5_totals", "admission_control",
                     "unuvar_sweep", "packing_setting", "notebook_packing"), "realizations"),
    "synthesize_trace": "excluded",  # a real run downloads and verifies the shards instead
}
# Trace-sized rules whose cost also grows with N (the realizations drawn): a 2-shard slice holds fewer than 100,000
# long tasks, so the line through two slices would credit the trace with what N added.
ALSO_N = {"sample_realizations"}


@dataclass
class Job:
    rule: str
    benchmark: str | None
    mem_mb: int | None
    inputs: str
    log: str | None = None
    outputs: str = ""
    threads: int = 1
    insufficient: bool = False  # wrote status outputs (too little data in this slice): its cost is not the analysis's
    seconds: float = 0.0
    cpu: float = 0.0
    rss: float = 0.0
    io_in: float = 0.0
    io_out: float = 0.0
    anon: float = 0.0  # the largest anonymous RSS its rule script logged (0: not logged)


@dataclass
class Rule:
    name: str
    jobs: list[Job] = field(default_factory=list)
    kind: str = "fixed"  # shard | bucket | trace | fixed | excluded

    @property
    def wall(self) -> float:
        return sum(j.seconds for j in self.jobs)

    @property
    def longest(self) -> float:
        return max((j.seconds for j in self.jobs), default=0.0)

    @property
    def mean(self) -> float:
        return self.wall / len(self.jobs) if self.jobs else 0.0

    @property
    def rss(self) -> float:
        return max((j.rss for j in self.jobs), default=0.0)

    @property
    def threads(self) -> int:
        return max((j.threads for j in self.jobs), default=1)

    @property
    def insufficient(self) -> bool:
        return any(j.insufficient for j in self.jobs)

    @property
    def notebook(self) -> bool:
        """Snakemake runs a ``notebook:`` job inside its own process: its benchmark is Snakemake's, not the job's."""
        return self.name.startswith("notebook_") and self.name not in ("notebook_html",)

    @property
    def declared(self) -> int:
        return max((j.mem_mb or 0 for j in self.jobs), default=0)


def _shards_per_map_schema() -> dict:
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    return schema["properties"]["mapreduce"]["properties"]["shards_per_map"]["properties"]


def write_config(workdir: Path, shards: int, seed: int) -> str:
    run = f"paper-slice-{shards}"
    config = {
        "scale": "paper",
        "run": run,
        "trace": {"source": "synthetic", "seed": seed},
        "synthetic": {
            "days": 29,
            "slice_days": round(shards * DAYS_PER_SHARD, 6),
            "shards": {"task_usage": shards, "task_events": shards, "job_events": shards},
        },
        # as today's defaults: a later --reuse projects the batches the slice ran with
        "mapreduce": {"shards_per_map": {table: spec["default"] for table, spec in _shards_per_map_schema().items()}},
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return run


def snakemake(workdir: Path, *args: str, log: Path | None = None) -> str:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), *args]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    out = res.stdout + res.stderr
    if log is not None:
        log.write_text(out)
    if res.returncode:
        sys.exit(f"snakemake {' '.join(args)} failed (log: {log}):\n{out[-3000:]}")
    return out


JOB_HEADER = re.compile(r"^(?:local)?rule (\w+):$")


def parse_jobs(log_text: str) -> list[Job]:
    """Every job block of a Snakemake log: its rule, benchmark file, declared mem_mb and inputs."""
    jobs, current = [], None
    for line in log_text.splitlines():
        m = JOB_HEADER.match(line.strip())
        if m:
            current = Job(m.group(1), None, None, "")
            jobs.append(current)
            continue
        if current is None:
            continue
        key, _, value = line.strip().partition(": ")
        if key == "benchmark":
            current.benchmark = value
        elif key == "log":
            current.log = value.split(",")[0].split(" (")[0].strip()
        elif key == "threads":
            current.threads = int(value)
        elif key == "input":
            current.inputs = value
        elif key == "output":
            current.outputs = value
        elif key == "resources":
            mem = re.search(r"\bmem_mb=(\d+)", value)
            current.mem_mb = int(mem.group(1)) if mem else None
    return jobs


PEAK_LINE = re.compile(r"peak RSS (\d+) MB")
ANON_LINE = re.compile(r"peak RSS \d+ MB \(anonymous (\d+) MB\)")


def read_benchmark(workdir: Path, job: Job) -> None:
    """The job's benchmark (wall, CPU, I/O); its peak RSS is the larger of the benchmark's and the one its rule
    script logged (``colocate.rulescript.peak_rss_mb``: the kernel's high-water mark, which Snakemake's
    interval sampling misses in a job shorter than a sample)."""
    logged = 0.0
    if job.log and (workdir / job.log).is_file() and job.log.endswith(".log"):
        text = (workdir / job.log).read_text(errors="replace")
        job.insufficient = "insufficient data" in text
        logged = max((float(m) for m in PEAK_LINE.findall(text)), default=0.0)
        job.anon = max((float(m) for m in ANON_LINE.findall(text)), default=0.0)
    if job.benchmark is None or not (workdir / job.benchmark).exists():
        return
    with open(workdir / job.benchmark) as fh:
        row = next(csv.DictReader(fh, delimiter="\t"))

    def num(key: str) -> float:
        return float(row[key]) if row.get(key) not in (None, "", "NA", "-") else 0.0

    job.seconds, job.cpu, job.rss = num("s"), num("cpu_time"), max(num("max_rss"), logged)
    job.io_in, job.io_out = num("io_in"), num("io_out")


def rule_graph(workdir: Path) -> dict[str, set[str]]:
    """rule → the rules it depends on, from ``snakemake --rulegraph`` (dot)."""
    dot = snakemake(workdir, "--rulegraph")
    label = dict(re.findall(r"^\s*(\d+)\[label = \"([^\"]+)\"", dot, re.MULTILINE))
    deps: dict[str, set[str]] = {name: set() for name in label.values()}
    for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, re.MULTILINE):
        deps[label[b]].add(label[a])
    return deps


def classify(rules: dict[str, Rule]) -> None:
    for r in rules.values():
        r.kind = SCALING.get(r.name, "fixed")


@dataclass(frozen=True)
class Scale:
    trace: float  # full trace / slice (500 / K)
    n: float  # paper N / N in the slice (1 when the slice holds 100,000 long tasks)
    long: float  # the full trace's long tasks / the slice's
    overhead_s: float  # a job's fixed cost (interpreter, imports, Snakemake): the fastest job of the run
    base_rss: float  # the smallest peak RSS of a Python job of the run
    per_map: dict[str, int] = field(default_factory=dict)  # map rule → shards a job maps (mapreduce.shards_per_map)


def projected(r: Rule, k: Scale, base: Rule | None = None, base_shards: int = 0, shards: int = 0) -> tuple[float, float, float]:
    """(number of jobs, seconds per job, peak RSS MB) of rule ``r`` on the full trace.

    With a smaller slice's run of the same rule (``base``, ``base_shards``), a trace-sized rule's time and
    peak RSS are the straight line through the two slices, extended to 500 shards. Without one, only the
    part above a job's fixed cost grows: t' = t₀ + (t − t₀)·f and RSS' = m₀ + (RSS − m₀)·f.
    """
    n = len(r.jobs)
    if r.kind == "shard":  # ceil(500 / per job) jobs, each of that many shards (a slice job may have mapped fewer)
        per_job = k.per_map.get(r.name, 1)
        if per_job == 1:
            return n * k.trace, r.longest, r.rss
        grow = per_job / min(per_job, round(FULL_SHARDS / k.trace))  # a full batch / the slice's largest batch
        return (math.ceil(FULL_SHARDS / per_job), k.overhead_s + max(r.longest - k.overhead_s, 0.0) * grow,
                k.base_rss + max(r.rss - k.base_rss, 0.0) * grow)
    if r.kind == "trace" and base is not None and base.jobs and shards > base_shards and not (r.insufficient or base.insufficient):
        def line(y0: float, y1: float) -> float:
            slope = max(y1 - y0, 0.0) / (shards - base_shards)
            return y1 + slope * (FULL_SHARDS - shards)
        return n, line(base.mean, r.mean), line(base.rss, r.rss)  # the mean job: 256 buckets' walls are noisy
    f = {"trace": k.trace, "realizations": k.n, "long": k.long}.get(r.kind, 1.0)
    t = k.overhead_s + max(r.longest - k.overhead_s, 0.0) * f
    return n, t, k.base_rss + max(r.rss - k.base_rss, 0.0) * f


def critical_path(deps: dict[str, set[str]], weight: dict[str, float]) -> tuple[float, list[str]]:
    memo: dict[str, tuple[float, list[str]]] = {}

    def longest(rule: str) -> tuple[float, list[str]]:
        if rule not in memo:
            best = max((longest(d) for d in deps.get(rule, ())), default=(0.0, []), key=lambda t: t[0])
            memo[rule] = (best[0] + weight.get(rule, 0.0), [*best[1], rule])
        return memo[rule]

    return max((longest(r) for r in deps), key=lambda t: (t[0], len(t[1])))  # ties: the path to the sink


def hms(s: float) -> str:
    s = round(s)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def full_size_bucket_count(shards: int) -> int:
    """Buckets of a K-shard slice that each hold what one of the full trace's buckets holds: 256 · K / 500."""
    return max(1, round(FULL_BUCKETS * shards / FULL_SHARDS))


def full_size_dir(wd: Path, shards: int) -> Path:
    """The workdir of the slice cut into :func:`full_size_bucket_count` buckets (:func:`full_size_buckets`)."""
    return wd / f"full-size-buckets-{full_size_bucket_count(shards)}"


def full_size_buckets(wd: Path, shards: int) -> Rule:
    """The reducers at their full-trace size: the slice again with 256 · K / 500 buckets, so that each holds
    what one of the full trace's 256 buckets holds; one reducer at a time (--cores 1), each alone."""
    fb, buckets = full_size_dir(wd, shards), full_size_bucket_count(shards)
    if not (fb / "paper_scale.log").exists():
        fb.mkdir(exist_ok=True)
        config = yaml.safe_load((wd / "config.yaml").read_text())
        config["run"] = f"{config['run']}-b{buckets}"
        config.setdefault("mapreduce", {})["buckets"] = buckets
        (fb / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        if not (fb / "resources").exists():
            (fb / "resources").symlink_to(wd / "resources")  # the same synthesized trace
        snakemake(fb, "--cores", "1", "--until", "reduce_bucket", log=fb / "paper_scale.log")
    rule = Rule("reduce_bucket", kind="trace")
    for j in parse_jobs((fb / "paper_scale.log").read_text()):
        if j.rule == "reduce_bucket":
            read_benchmark(fb, j)
            rule.jobs.append(j)
    return rule


def full_size_realizations(wd: Path, results: str, reduce_dir: Path, chosen: int) -> tuple[float, float]:
    """``sample_realizations``' code (``bench/sample_realizations.py``) on the full-size buckets, with ``chosen``
    of the slice's long tasks drawn (the paper's R): seconds and anonymous peak MB, its own process.

    Chosen as the full trace chooses (N = 100,000 of its 800,000 long tasks), each bucket holds a full-trace
    bucket's records and chosen records, but more chosen tasks (8× on the 8-shard slice): the slice's long tasks
    are about as many but shorter. So 256 / b times this is an upper bound on the full trace's job: its reads as
    they are, its draws and writes over."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from sample_realizations import CHILD
    from timing import child

    out = wd / "full-size-realizations"
    out.mkdir(exist_ok=True)
    try:
        return child(CHILD, wd / results / "tasks" / "long_tasks.parquet", reduce_dir, chosen, PAPER_R,
                     out / "matrix", "ours")
    finally:
        shutil.rmtree(out)


def fan_in_seconds(wd: Path, results: str) -> dict[str, float]:
    """A reducer's cost per map output it opens, by table: the best of three reads of a bucket no row holds from
    500 hard links of the slice's first output (each file's footer is read and all its row groups pruned). On the
    full trace every reducer opens every task_usage output and every task_events one, which the reducers at full
    size (a few outputs each) do not pay."""
    out = {}
    for table, pattern in (("task_usage", "map/task_usage/*/records.parquet"), ("task_events", "map/task_events/*.parquet")):
        first = next(iter(sorted((wd / results).glob(pattern))), None)
        if first is None:
            continue
        links = wd / "fan-in" / table
        shutil.rmtree(links, ignore_errors=True)
        links.mkdir(parents=True)
        paths = [links / f"{i:03d}.parquet" for i in range(FULL_SHARDS)]
        for p in paths:
            os.link(first, p)
        code = ("import sys, time; sys.path.insert(0, sys.argv[1]); from colocate import io; paths = sys.argv[2:]; "
                "best = min((lambda t: (io.read_bucket(paths, -1), time.perf_counter() - t)[1])(time.perf_counter()) "
                "for _ in range(3)); print(best)")
        res = subprocess.run([sys.executable, "-c", code, str(REPO / "workflow"), *map(str, paths)],
                             capture_output=True, text=True, check=True)
        out[table] = float(res.stdout.split()[-1]) / FULL_SHARDS
        shutil.rmtree(links)
    return out


def quiet_map_seconds(wd: Path, results: str) -> float:
    """The map of every task_usage shard again, one job at a time with nothing else running and the machine's
    cores to itself (two threads on this machine; the rule declares one, so that the full DAG runs two maps
    at once): the sum of its benchmark walls (the run's own maps shared the cores with other jobs). The run's
    own benchmark files are put back afterwards; the quiet ones are kept in ``map-alone/``."""
    quiet = wd / "map-alone"
    if not quiet.is_dir():
        bench_dir = wd / results / "benchmarks" / "map_task_usage"
        saved = wd / "map-in-run"
        shutil.copytree(bench_dir, saved, dirs_exist_ok=True)
        cores = str(len(os.sched_getaffinity(0)))
        snakemake(wd, "--cores", cores, "--set-threads", f"map_task_usage={cores}", "--forcerun", "map_task_usage",
                  "--until", "map_task_usage", log=wd / "paper_scale_map.log")
        shutil.copytree(bench_dir, quiet)
        shutil.copytree(saved, bench_dir, dirs_exist_ok=True)
    total = 0.0
    for tsv in sorted(quiet.glob("*.tsv")):
        with open(tsv) as fh:
            total += float(next(csv.DictReader(fh, delimiter="\t"))["s"])
    return total


def gzip_seconds(paths: list[Path]) -> float:
    t = time.perf_counter()
    for p in paths:
        subprocess.run(["gzip", "-dc", str(p)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def main() -> None:
    from timing import parse_args

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shards", type=int, default=8, help="task_usage shards of real size in the slice (default 8)")
    ap.add_argument("--workdir", type=Path, required=True)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20110501)
    ap.add_argument("--reuse", action="store_true", help="report on the finished run in --workdir (its own shards)")
    ap.add_argument("--baseline", type=Path, help="the workdir of a smaller slice's run: trace-sized rules are then "
                    "extrapolated along the line through both")
    args = parse_args(ap)
    if args.shards < 1:
        sys.exit("--shards must be ≥ 1")
    wd = args.workdir.resolve()
    if args.reuse:
        if not (wd / "paper_scale.log").is_file():
            sys.exit(f"--reuse: {wd} holds no finished run (no paper_scale.log)")
        config = yaml.safe_load((wd / "config.yaml").read_text())
        args.shards, run = config["synthetic"]["shards"]["task_usage"], config["run"]
    else:
        if wd.exists() and any(wd.iterdir()):
            if not (wd / "config.yaml").is_file() or not str(yaml.safe_load((wd / "config.yaml").read_text()).get("run", "")).startswith("paper-slice-"):
                sys.exit(f"{wd} is not empty and not a paper_scale.py workdir: choose another --workdir")
            shutil.rmtree(wd)  # a previous run of this benchmark
        wd.mkdir(parents=True, exist_ok=True)
        run = write_config(wd, args.shards, args.seed)
    results = f"results/{run}"
    log = wd / "paper_scale.log"
    if not args.reuse:
        t = time.perf_counter()
        snakemake(wd, "--cores", str(args.cores), "all", log=log)
        print(f"pipeline: {hms(time.perf_counter() - t)} wall on {args.cores} cores")
    rules, _ = load_rules(wd)
    report(wd, args, rules, rule_graph(wd), results)


def shards_per_map(wd: Path, rules: dict[str, Rule]) -> dict[str, int]:
    """Shards a map job maps in the run in ``wd``: the most a ``map_TABLE`` job of its log read, so that a slice
    run under another default is judged by what it did; else, or where one job read all of the slice's shards
    (a batch the slice cut short), its config over the schema's defaults."""
    props = _shards_per_map_schema()
    given = (yaml.safe_load((wd / "config.yaml").read_text()).get("mapreduce") or {}).get("shards_per_map") or {}
    per_map = {table: int(given.get(table, spec["default"])) for table, spec in props.items()}
    for table in per_map:
        r = rules.get(f"map_{table}")
        if r is not None and r.jobs:
            most = max(j.inputs.count(".csv.gz") for j in r.jobs)
            per_map[table] = max(most, per_map[table]) if len(r.jobs) == 1 else most or per_map[table]
    return per_map


def load_rules(wd: Path) -> tuple[dict[str, Rule], int]:
    """The jobs of the run in ``wd`` (its log and benchmark files), by rule, and its number of shards."""
    rules: dict[str, Rule] = {}
    for j in parse_jobs((wd / "paper_scale.log").read_text()):
        read_benchmark(wd, j)
        rules.setdefault(j.rule, Rule(j.rule)).jobs.append(j)
    classify(rules)
    shards = yaml.safe_load((wd / "config.yaml").read_text())["synthetic"]["shards"]["task_usage"]
    return rules, shards


def report(wd: Path, args, rules: dict[str, Rule], deps: dict[str, set[str]], results: str) -> None:
    f = FULL_SHARDS / args.shards
    out: list[str] = []
    trace_dir = next((wd / "resources" / "trace").glob("synthetic-*"))
    shards = sorted((trace_dir / "task_usage").glob("*.csv.gz"))
    rows = _synth_rows(trace_dir)
    tasks = _long_tasks(wd / results)
    out.append(f"## Slice: {args.shards} task_usage shards, {rows:,} rows ({rows / args.shards / 1e6:.2f} M per shard; "
               f"real 2.4 M), {tasks:,} long tasks (realizations use min(100,000, that))\n")

    out.append("| rule | kind | jobs | wall sum | longest job | CPU | peak RSS MB | declared mem_mb | declared / peak | read MB | written MB |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    bad, mapped, loose = [], [], []
    for r in sorted(rules.values(), key=lambda r: -r.wall):
        if r.name == "all":
            continue
        ratio = r.declared / r.rss if r.rss else math.nan
        maps_matrix = any(".npy" in j.inputs for j in r.jobs) or r.name == "sample_realizations"
        flag = " ✗" if ratio < 1 or ratio > 2 else ""
        if r.notebook:
            flag = " (Snakemake's process)"
        elif ratio < 1:
            (mapped if maps_matrix else bad).append(r.name)
        elif ratio > 2:
            loose.append(r.name)
        notes = (" (mmap)" if maps_matrix else "") + (" (insufficient data)" if r.insufficient else "")
        out.append(f"| {r.name}{notes} | {r.kind} | {len(r.jobs)} | {r.wall:.1f} s | {r.longest:.1f} s | {sum(j.cpu for j in r.jobs):.1f} s | "
                    f"{r.rss:.0f} | {r.declared} | {ratio:.2f}{flag} | {sum(j.io_in for j in r.jobs):.0f} | {sum(j.io_out for j in r.jobs):.0f} |")
    out.append(f"\nPeak RSS above the declared mem_mb: {', '.join(bad) or 'none'}.")
    out.append(f"Above it only by the clean or written-back pages of a memory-mapped N × R matrix (mmap; page cache "
               f"that the kernel reclaims under a memory limit instead of killing the job): {', '.join(mapped) or 'none'}.")
    out.append(f"Declared more than 2× the peak: {len(loose)} of {len(rules) - 1} rules.")
    out.append("Notebook jobs run inside Snakemake's own process, so their benchmark (RSS, CPU) is Snakemake's and "
               "that of any job running beside it: they are left out of the memory checks.\n")

    if shards:
        quiet = quiet_map_seconds(wd, results)
        gz = gzip_seconds(shards)
        out.append(f"map_task_usage alone (one job at a time with every core, forced again after the run): {quiet:.1f} s for {len(shards)} shards; "
                   f"gzip -dc of the same shards, one at a time: {gz:.1f} s; ratio {quiet / gz:.2f} (target ≤ 1.0)\n")

    timed = [j for r in rules.values() if r.kind != "excluded" for j in r.jobs if j.seconds > 0]
    per_map = shards_per_map(wd, rules)
    k = Scale(f, PAPER_N / tasks if 0 < tasks < PAPER_N else 1.0, FULL_LONG_TASKS / tasks if tasks else 1.0,
              min(j.seconds for j in timed), min(j.rss for j in timed if j.rss > 50),
              {f"map_{table}": n for table, n in per_map.items()})
    out.append("Shards a map job maps (mapreduce.shards_per_map): "
               + ", ".join(f"{table} {n}" for table, n in per_map.items()) + ".\n")
    out.append(f"Projection factors: trace × {k.trace:.1f}, N × {k.n:.2f}, long tasks × {k.long:.1f} (to "
               f"{FULL_LONG_TASKS:,}); a job's fixed cost {k.overhead_s:.2f} s and "
               f"{k.base_rss:.0f} MB (the run's fastest job and smallest Python job) is not scaled.\n")
    base_rules, base_shards = load_rules(args.baseline) if args.baseline else ({}, 0)
    if args.baseline:
        out.append(f"Trace-sized rules: the line through this slice and {args.baseline} ({base_shards} shards).\n")
        base_run = yaml.safe_load((args.baseline / "config.yaml").read_text())["run"]
        base_n = min(_long_tasks(args.baseline / "results" / base_run), PAPER_N)
        if 0 < base_n < min(tasks, PAPER_N):  # the smaller slice drew fewer tasks: its N-sized part scaled up first
            for name in ALSO_N & base_rules.keys():
                for j in base_rules[name].jobs:
                    j.seconds *= min(tasks, PAPER_N) / base_n
            out.append(f"{', '.join(sorted(ALSO_N))}: the smaller slice's time × {min(tasks, PAPER_N) / base_n:.2f} "
                       f"(N = {base_n:,} there, {min(tasks, PAPER_N):,} here) before the line, since it writes N × R "
                       f"matrices as well as reading every bucket.\n")
    proj = {r.name: projected(r, k, base_rules.get(r.name), base_shards, args.shards)
            for r in rules.values() if r.kind != "excluded"}
    full = full_size_buckets(wd, args.shards)
    if full.jobs and "reduce_bucket" in proj:
        rows_per_bucket = rows / len(full.jobs)
        per_file = fan_in_seconds(wd, results)
        # the outputs a full-trace reducer opens beyond those the full-size reducers opened
        more = {table: math.ceil(FULL_SHARDS / per_map[table]) - math.ceil(args.shards / per_map[table]) for table in per_map}
        extra = sum(c * more[table] for table, c in per_file.items())
        proj["reduce_bucket"] = (proj["reduce_bucket"][0], full.mean + extra, full.rss)
        out.append(f"reduce_bucket measured at full-trace size: the slice in {len(full.jobs)} buckets of "
                   f"{rows_per_bucket / 1e6:.1f} M records (the full trace's 256 buckets hold ~4.7 M each): "
                   f"{full.mean:.1f} s and {full.rss:.0f} MB peak per bucket, one at a time. Each map output a reducer "
                   f"opens costs it " + ", ".join(f"{1000 * c:.2f} ms ({t}, {more[t]} more on the full trace)"
                                                  for t, c in per_file.items())
                   + f": {full.mean + extra:.1f} s a bucket on the full trace.\n")
    reduce_dirs = sorted(full_size_dir(wd, args.shards).glob("results/*/reduce"))
    if full.jobs and reduce_dirs and "sample_realizations" in proj and tasks:
        chosen = max(1, round(tasks * PAPER_N / FULL_LONG_TASKS))
        seconds, anon = full_size_realizations(wd, results, reduce_dirs[0], chosen)
        groups = FULL_BUCKETS / len(full.jobs)
        over = chosen / len(full.jobs) / (PAPER_N / FULL_BUCKETS)  # chosen tasks a bucket here / on the full trace
        line = proj["sample_realizations"]
        proj["sample_realizations"] = (line[0], k.overhead_s + seconds * groups, line[2])
        out.append(f"sample_realizations measured on the {len(full.jobs)} full-size buckets, {chosen:,} of the slice's "
                   f"long tasks chosen (the full trace's share, N / {FULL_LONG_TASKS:,}): {seconds:.1f} s, "
                   f"{anon:.0f} MB anonymous; × {groups:.0f} = {hms(seconds * groups)} for the full trace's {FULL_BUCKETS} "
                   f"buckets, an upper bound (each bucket's draws and writes {over:.1f}× the full trace's), taken instead of "
                   f"the line's {hms(line[1])}.\n")
    # core-seconds: a job holds its threads' cores for its wall time (as many as its rule declares)
    work = sum(n * s * rules[name].threads for name, (n, s, _) in proj.items())
    mapreduce = sum(n * s * rules[name].threads for name, (n, s, _) in proj.items()
                    if rules[name].kind == "shard" or name == "reduce_bucket")
    cluster = {name: math.ceil(n / FULL_SHARDS) * s for name, (n, s, _) in proj.items()}
    single = {name: s for name, (_, s, _) in proj.items()}  # one job of each rule at a time: the path's floor
    cp, _ = critical_path({k: v for k, v in deps.items() if k in proj or k == "all"}, single)
    ccp, cpath = critical_path({k: v for k, v in deps.items() if k in proj or k == "all"}, cluster)
    out.append(f"## Projection to the full trace ({FULL_SHARDS} shards, × {f:.1f} the slice)\n")
    out.append("| where | total core time W | critical path P | makespan (Graham: max(W/C, P) … W/C + P) |")
    out.append("|---|---|---|---|")
    for cores in (2, 16):
        out.append(f"| {cores} cores | {hms(work)} | {hms(cp)} | {hms(max(work / cores, cp))} … {hms(work / cores + cp)} |")
    out.append(f"| {FULL_SHARDS}-node cluster | {hms(work)} | {hms(ccp)} | {hms(ccp)} (one wave of jobs per rule) |")
    shares = sorted(((n * s * rules[name].threads, name) for name, (n, s, _) in proj.items()), reverse=True)
    if work > 0:
        out.append("\nW by rule, the largest: " + ", ".join(f"{name} {hms(w)} ({100 * w / work:.0f}%)" for w, name in shares[:8]))
    out.append(f"\nmap + reduce alone: W = {hms(mapreduce)}, on 2 cores ≥ {hms(mapreduce / 2)} (target ≤ 0:30:00)")
    out.append("Critical path on the cluster: " + " → ".join(f"{r} ({hms(cluster[r])})" for r in cpath if r in cluster))
    out.append(f"\nMemory at the full trace's size: the maps as measured (a slice shard has a real shard's rows); "
               f"reduce_bucket as measured above at a full bucket's size. Measured at full size by their own "
               f"benchmarks (docs/performance.md, 'Paper scale, measured'): {', '.join(sorted(FULL_SIZE_BENCHED))}.")
    heavy = [(name, rss) for name, (_, _, rss) in proj.items() if rss > MEMORY_LIMIT_MB and not rules[name].notebook
             and name not in FULL_SIZE_BENCHED and name != "reduce_bucket"]
    out.append("The others above 4 GB on the projection (rough: a trace-sized rule's peak along the line, which "
               "overstates rules that read a bucket or a chunk at a time or cap their points; a realizations rule's "
               "peak × N, mapped matrix pages included): "
               + (", ".join(f"{n} ({r / 1024:.1f} GB)" for n, r in heavy) or "none"))
    text = "\n".join(out)
    print(text)
    (wd / "paper_scale.md").write_text(text + "\n")


def _synth_rows(trace_dir: Path) -> int:
    log = next((trace_dir / "logs").glob("*.log")).read_text()
    m = re.search(r"task_usage: (\d+) rows", log)
    return int(m.group(1)) if m else 0


def _long_tasks(results: Path) -> int:
    import polars as pl

    path = results / "tasks" / "long_tasks.parquet"
    return pl.scan_parquet(path).select(pl.len()).collect().item() if path.exists() else 0


if __name__ == "__main__":
    main()
