"""bench/paper_scale.py's and bench/memory.py's arithmetic: the Snakemake log they parse, the peak they read,
the projection, the critical path and the memory verdict.

The benchmark itself runs for minutes and is not part of the tests; what it computes from its measurements is.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("paper_scale", REPO / "bench" / "paper_scale.py")
ps = importlib.util.module_from_spec(_spec)
sys.modules["paper_scale"] = ps  # dataclasses resolve their annotations through it
_spec.loader.exec_module(ps)
_spec = importlib.util.spec_from_file_location("bench_memory", REPO / "bench" / "memory.py")
memory = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(memory)

LOG = """
[Tue Nov 24 16:39:58 2026]
localrule map_task_usage:
    input: resources/trace/t/task_usage/part-00000-of-00008.csv.gz
    output: results/r/map/task_usage/part-00000-of-00008/records.parquet
    log: results/r/logs/map_task_usage/part-00000-of-00008.log
    jobid: 7
    benchmark: results/r/benchmarks/map_task_usage/part-00000-of-00008.tsv
    reason: Missing output files
    wildcards: shard=part-00000-of-00008
    threads: 2
    resources: tmpdir=/tmp, runtime=15, mem_mb=1696, mem=1.70 GB, mem_mib=1618
Shell command: None
[Tue Nov 24 16:40:01 2026]
rule summary:
    input: results/r/summary/a.csv, results/r/realizations/inst.npy
    jobid: 0
    benchmark: results/r/benchmarks/summary.tsv
    resources: tmpdir=/tmp, mem_mb=500
"""


def test_parse_jobs_reads_rule_benchmark_memory_and_inputs():
    jobs = ps.parse_jobs(LOG)
    assert [(j.rule, j.mem_mb) for j in jobs] == [("map_task_usage", 1696), ("summary", 500)]
    assert jobs[0].benchmark == "results/r/benchmarks/map_task_usage/part-00000-of-00008.tsv"
    assert jobs[1].inputs.endswith("realizations/inst.npy")
    assert jobs[0].outputs == "results/r/map/task_usage/part-00000-of-00008/records.parquet"


def test_shards_a_map_job_mapped_come_from_the_log_before_the_config(tmp_path):
    """A slice run under another ``shards_per_map`` is projected by what its map jobs read: the most shards a job
    of the rule had; a table with no map job in the log, or one job for all of the slice's shards (a batch the
    slice cut short), keeps the run's config over the schema's default."""
    (tmp_path / "config.yaml").write_text("mapreduce:\n  shards_per_map:\n    job_events: 7\n    task_usage: 1\n")
    batch = LOG.replace("input: resources/trace/t/task_usage/part-00000-of-00008.csv.gz",
                        "input: resources/trace/t/task_usage/part-00000-of-00008.csv.gz, "
                        "resources/trace/t/task_usage/part-00001-of-00008.csv.gz, resources/trace/t/task_usage/part-00002-of-00008.csv.gz")
    block = batch[batch.index("localrule map_task_usage"):batch.index("rule summary")]
    one = block.replace("part-00000-of-00008.csv.gz, ", "").replace("part-00001-of-00008.csv.gz, ", "")
    for log, mapped in ((LOG, 1), (batch, 3), (batch + one, 3), (block + block, 3), (one + one, 1)):
        rules = {}
        for job in ps.parse_jobs(log):
            rules.setdefault(job.rule, ps.Rule(job.rule)).jobs.append(job)
        per_map = ps.shards_per_map(tmp_path, rules)
        assert per_map["task_usage"] == mapped and per_map["job_events"] == 7, log
    (tmp_path / "config.yaml").write_text("mapreduce:\n  shards_per_map:\n    task_usage: 5\n")
    assert ps.shards_per_map(tmp_path, rules)["task_usage"] == 1  # two jobs of one: the slice ran one a job
    rules = {"map_task_usage": ps.Rule("map_task_usage", ps.parse_jobs(batch)[:1])}
    assert ps.shards_per_map(tmp_path, rules)["task_usage"] == 5  # one job of all 3 shards: a batch of 5 cut short


def test_peak_is_the_larger_of_the_benchmark_and_the_logged_high_water_mark(tmp_path):
    """Snakemake's benchmark samples RSS at intervals (it read 3 MB for a 0.5 s job); the rule script logs the
    kernel's VmHWM at exit. A job's peak is the larger, and a job without the log line keeps its benchmark's."""
    (tmp_path / "b.tsv").write_text("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
                                    "0.5\t0:00:00\t3.1\t5\t1\t1\t0.1\t0.2\t0\t0.4\n")
    (tmp_path / "a.log").write_text("2026-11-24 INFO wrote x\n2026-11-24 INFO peak RSS 291 MB (anonymous 120 MB)\n")
    job = ps.Job("r", "b.tsv", 500, "", log="a.log")
    ps.read_benchmark(tmp_path, job)
    assert (job.seconds, job.rss, job.cpu, job.anon) == (0.5, 291.0, 0.4, 120.0)
    bare = ps.Job("r", "b.tsv", 500, "")
    ps.read_benchmark(tmp_path, bare)
    assert bare.rss == 3.1


@pytest.mark.parametrize(("declared", "peak", "mapped", "anon", "expected"), [
    (300, 200, 0, 0, "ok"), (400, 200, 0, 0, "ok"), (401, 200, 0, 0, "over"), (199, 200, 0, 0, "under"),
    # above the declaration only through mapped file pages: judged by the anonymous peak
    (500, 3300, 2900, 450, "mmap"), (500, 3300, 2900, 501, "under"), (500, 3300, 2900, 0, "under"),
    (500, 3300, 0, 450, "under"), (0, 100, 0, 0, "under"),
])
def test_memory_verdict_by_hand(declared, peak, mapped, anon, expected):
    assert memory.verdict(declared, peak, mapped, anon) == expected


def _rule(name, kind, seconds, rss=200.0, n=1):
    r = ps.Rule(name, kind=kind)
    r.jobs = [ps.Job(name, None, 1000, "", seconds=seconds, rss=rss) for _ in range(n)]
    return r


def test_projection_by_kind_by_hand():
    k = ps.Scale(trace=62.5, n=2.0, long=8.0, overhead_s=0.5, base_rss=100.0)
    # a shard job keeps its cost and multiplies in number
    assert ps.projected(_rule("map_task_usage", "shard", 2.0, n=8), k) == (500.0, 2.0, 200.0)
    # a trace-sized job: only the part above the fixed cost grows, 0.5 + 1.5 × 62.5 s and 100 + 100 × 62.5 MB
    assert ps.projected(_rule("job_table", "trace", 2.0), k) == (1, 0.5 + 1.5 * 62.5, 100 + 100 * 62.5)
    # realizations: linear in N
    assert ps.projected(_rule("packing_setting", "realizations", 10.5), k) == (1, 0.5 + 10.0 * 2, 100 + 100 * 2)
    assert ps.projected(_rule("janus_elbow", "fixed", 9.0), k) == (1, 9.0, 200.0)
    # one row per long task: linear in their number (× 8 here), not in the trace's records
    assert ps.projected(_rule("janus_clusters", "long", 4.5), k) == (1, 0.5 + 4.0 * 8, 100 + 100 * 8)
    assert ps.SCALING["janus_clusters"] == "long" and ps.SCALING["janus_fig1_sampling_part"] == "trace"


def test_a_batched_map_projects_to_its_batches():
    """shards_per_map 10 on an 8-shard slice (one job of 8 shards, 4.5 s, 300 MB; fixed cost 0.5 s, 100 MB): the
    full trace has 50 jobs of 10 shards, each 0.5 + 4.0 × 10/8 s and 100 + 200 × 10/8 MB."""
    k = ps.Scale(trace=62.5, n=1.0, long=8.0, overhead_s=0.5, base_rss=100.0, per_map={"map_task_events": 10})
    assert ps.projected(_rule("map_task_events", "shard", 4.5, 300.0), k) == (50, 0.5 + 4.0 * 1.25, 100 + 200 * 1.25)
    # on a 20-shard slice in two jobs of 10, each job is a full batch already
    k20 = ps.Scale(trace=25.0, n=1.0, long=8.0, overhead_s=0.5, base_rss=100.0, per_map={"map_task_events": 10})
    assert ps.projected(_rule("map_task_events", "shard", 4.5, 300.0, n=2), k20) == (50, 4.5, 300.0)


def test_projection_along_the_line_through_two_slices():
    """2 shards: 3 s, 300 MB; 8 shards: 6 s, 420 MB → 0.5 s and 20 MB per shard → 500 shards: 252 s, 10,260 MB."""
    k = ps.Scale(trace=62.5, n=1.0, long=8.0, overhead_s=0.5, base_rss=100.0)
    small, big = _rule("collect_tasks", "trace", 3.0, 300.0), _rule("collect_tasks", "trace", 6.0, 420.0)
    n, seconds, rss = ps.projected(big, k, small, 2, 8)
    assert (n, seconds, rss) == (1, pytest.approx(252.0), pytest.approx(10_260.0))
    # a cost that did not grow is kept as measured
    assert ps.projected(_rule("x", "trace", 6.0, 420.0), k, _rule("x", "trace", 7.0, 500.0), 2, 8)[1:] == (6.0, 420.0)


def test_critical_path_is_the_heaviest_chain():
    deps = {"map": set(), "reduce": {"map"}, "a": {"reduce"}, "b": {"reduce"}, "c": {"b"}, "all": {"a", "c"}}
    weight = {"map": 2, "reduce": 4, "a": 10, "b": 3, "c": 8, "all": 0}
    assert ps.critical_path(deps, weight) == (17, ["map", "reduce", "b", "c", "all"])


@pytest.mark.parametrize(("shards", "buckets"), [(1, 1), (2, 1), (8, 4), (100, 51), (500, 256)])
def test_full_size_buckets_hold_what_a_full_trace_bucket_holds(shards, buckets):
    """256 · K / 500 buckets (at least one): each then holds 1/256 of the full trace's records, by hand."""
    assert ps.full_size_bucket_count(shards) == buckets
