"""The workflow end to end at the tiny scale, through `python -m snakemake` in a temporary directory."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from loopback import serve

from colocate import trace
from wfutil import assert_config_rejected, planned_rules, snakemake, write_config, synthetic_trace

pytestmark = pytest.mark.workflow


def test_full_dag_produces_the_outputs(tiny_run):
    counts = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/task_counts.csv")
    c = dict(zip(counts["quantity"], counts["count"]))
    assert c["tasks_with_usage"] > 0 and c["long"] >= 200 and c["short"] > c["long"]
    assert c["failing_dropped"] > 0 and c["all_zero_dropped"] > 0
    assert c["long"] + c["short"] + c["failing_dropped"] + c["all_zero_dropped"] + c["no_task_events"] == c["tasks_with_usage"]
    inst = np.load(tiny_run / "results/synthetic-tiny/realizations/inst.npy", mmap_mode="r")
    avg = np.load(tiny_run / "results/synthetic-tiny/realizations/avg.npy", mmap_mode="r")
    assert inst.shape == avg.shape == (200, 500) and inst.dtype == np.float32
    tasks = pl.read_parquet(tiny_run / "results/synthetic-tiny/realizations/tasks.parquet")
    assert tasks.height == 200 and tasks["row"].to_list() == list(range(200))
    assert (tasks["n_records"] >= 24).all()
    nb = (tiny_run / "results/synthetic-tiny/notebooks/01_trace_and_tasks.ipynb").read_text()
    assert '"output_type"' in nb  # the executed copy has outputs
    manifest = (synthetic_trace(tiny_run) / "SHA256SUM").read_text().splitlines()
    assert len(manifest) == 3 + 2 + 1 + 1  # tiny: task_usage 3, task_events 2, job_events 1, machine_events 1


def test_every_contract_table_the_2011_source_writes_has_the_contracts_columns(tiny_run):
    """The 2011 source's maps write the contract's tables (colocate.sources.contract.TABLES) with their columns and
    types, and the shared rules read them there; machine events are the trace's, in its order."""
    from colocate import io
    from colocate.sources.contract import TABLES

    run = tiny_run / "results/synthetic-tiny"
    layout = {"usage_records": "map/task_usage/*/records.parquet", "entity_pieces": "map/task_events/*.parquet",
              "group_windows": "map/task_usage/*/job_windows.parquet", "sampled_windows": "map/task_usage/*/sampled_windows.parquet",
              "group_events": "map/job_events/*.parquet", "machine_events": "map/machine_events.parquet",
              "placement_events": "map/placement_events.parquet"}
    # every table but the window moments, whose distributions the 2011 trace does not record
    assert set(layout) == set(TABLES) - {"window_moments"}
    for table, pattern in layout.items():
        files = sorted(run.glob(pattern))
        assert files, table
        frame = io.read_contract(files, table)
        assert frame.height > 0 and list(frame.columns) == list(TABLES[table].columns)
    raw = trace.read_table(synthetic_trace(tiny_run) / "machine_events/part-00000-of-00001.csv.gz", "machine_events",
                           ["time", "machine_id", "event_type"])
    assert io.read_contract([run / "map/machine_events.parquet"], "machine_events").equals(raw)


def test_each_job_runs_the_polars_threads_its_rule_declares(tiny_run):
    """At --cores 2 a one-thread reducer or map runs one polars thread and the two-thread dominant_jobs two: the
    Snakefile's shell prefix passes Snakemake's OMP_NUM_THREADS on as POLARS_MAX_THREADS (before, every job ran one
    polars thread per core)."""
    if "POLARS_MAX_THREADS" in os.environ:
        pytest.skip("POLARS_MAX_THREADS is set in the environment, and it wins")
    logs = tiny_run / "results/synthetic-tiny/logs"
    one_thread = sorted((logs / "reduce_bucket").glob("*.log")) + sorted((logs / "map_task_usage").glob("*.log"))
    assert len(one_thread) >= 5
    for path in one_thread:
        assert "threads 1, polars pool 1" in path.read_text(), path.name
    assert "threads 2, polars pool 2" in (logs / "jobs/dominant_jobs.log").read_text()


def test_every_executed_notebook_shows_its_figures_inline(tiny_run):
    """The executed copies a person opens carry their figures (the inline backend), not only Text(...) reprs."""
    import json

    paths = sorted((tiny_run / "results/synthetic-tiny/notebooks").glob("*.ipynb"))
    assert [p.name[:2] for p in paths] == ["01", "02", "03", "04", "05"]
    for path in paths:
        outputs = [o for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
        images = [o for o in outputs if "image/png" in o.get("data", {})]
        assert images, f"{path.name} shows no figure"
        assert not any(o.get("output_type") == "error" for o in outputs), path.name


def test_second_invocation_has_nothing_to_do(tiny_run):
    assert planned_rules(tiny_run) == set()


def test_changing_the_trace_seed_reruns_synthesis_and_downstream(tiny_run, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    write_config(work, trace={"seed": 99})
    rules = planned_rules(work)
    assert {"synthesize_trace", "map_task_usage", "reduce_bucket", "sample_realizations"} <= rules


def test_changing_a_realization_setting_reruns_only_realizations(tiny_run, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    write_config(work, realizations={"n_realizations": 300})
    rules = planned_rules(work)
    assert "sample_realizations" in rules
    # nothing upstream of the realizations reruns (what reads them downstream may)
    assert not rules & {"synthesize_trace", "map_task_events", "map_task_usage", "reduce_bucket", "collect_tasks"}
    assert not any(r.startswith("placement") for r in rules)  # the placement simulator does not read them


@pytest.mark.parametrize(
    ("sections", "key"),
    [
        ({"realizations": {"n_tasks": -5}}, "n_tasks"),
        ({"scale": "huge"}, "scale"),
        ({"mapreduce": {"buckets": 0}}, "buckets"),
        ({"trace": {"source": "s3"}}, "source"),
        ({"realizations": {"n_task": 10}}, "n_task"),
        ({"trace": {"source": "local"}}, "trace.path"),
        ({"trace": {"source": "local", "path": "/nonexistent/trace"}}, "trace.path"),
        # beyond JSON schema: SynthParams' own checks run at start-up too
        ({"synthetic": {"inst_shape_shares": {"gamma": 0.5, "zero_inflated": 0.2, "bimodal": 0.2}}},
         "synthetic.inst_shape_shares: shares must sum to 1"),
    ],
)
def test_invalid_config_is_rejected_naming_the_key(tmp_path, sections, key):
    assert_config_rejected(tmp_path, key, **sections)


# ----------------------------------------------------------------------------- other trace sources


def copy_bucket(src: Path, dest: Path, rename_to_500: bool) -> None:
    """The tiny synthetic trace as a bucket; optionally with the real bucket's part-NNNNN-of-00500 names."""
    lines = []
    for table in ("task_events", "task_usage", "machine_events"):
        for shard in sorted((src / table).glob("part-*.csv.gz")):
            name = shard.name
            if rename_to_500 and table != "machine_events":
                name = re.sub(r"-of-\d{5}", "-of-00500", name)
            (dest / table).mkdir(parents=True, exist_ok=True)
            shutil.copy(shard, dest / table / name)
            lines.append(f"{hashlib.sha256(shard.read_bytes()).hexdigest()}  {table}/{name}\n")
    (dest / "SHA256SUM").write_text("".join(lines))


def test_local_source_verifies_and_runs(tiny_run, tmp_path):
    copy_bucket(synthetic_trace(tiny_run), tmp_path / "copy", rename_to_500=False)
    work = tmp_path / "w"
    work.mkdir()
    write_config(
        work,
        trace={"source": "local", "path": str(tmp_path / "copy")},
        realizations={"n_tasks": 50},
        packing={"tasks_per_instance": 40},
    )
    # the shards are verified and mapped to the same per-task table (the whole DAG on a local layout: test_workflow_sample)
    snakemake(work, "results/local-copy/tasks/task_stats.parquet")
    verified = pl.read_csv(work / "results/local-copy/trace/verified.tsv", separator="\t")
    # 2 task_events + 3 task_usage shards and the machine_events file (copy_bucket leaves job_events out)
    assert verified.height == 6 and (verified["status"] == "ok").all()
    # same trace, same per-task statistics as the synthetic run
    a = pl.read_parquet(work / "results/local-copy/tasks/task_stats.parquet")
    b = pl.read_parquet(tiny_run / "results/synthetic-tiny/tasks/task_stats.parquet")
    assert a.equals(b)


def test_local_source_with_a_corrupt_shard_fails_naming_it(tiny_run, tmp_path):
    copy_bucket(synthetic_trace(tiny_run), tmp_path / "copy", rename_to_500=False)
    bad = tmp_path / "copy/task_usage/part-00001-of-00003.csv.gz"
    bad.write_bytes(bad.read_bytes()[:-100] + b"\0" * 100)
    work = tmp_path / "w"
    work.mkdir()
    write_config(work, trace={"source": "local", "path": str(tmp_path / "copy")})
    res = snakemake(work, check=False)
    assert res.returncode != 0
    assert "task_usage/part-00001-of-00003.csv.gz" in (work / "results/local-copy/logs/verify_local_trace.log").read_text() + res.stderr
    assert not (work / "results/local-copy/tasks").exists()


def test_local_source_without_task_usage_skips_with_a_message(tiny_run, tmp_path):
    copy_bucket(synthetic_trace(tiny_run), tmp_path / "copy", rename_to_500=False)
    shutil.rmtree(tmp_path / "copy/task_usage")
    work = tmp_path / "w"
    work.mkdir()
    write_config(work, trace={"source": "local", "path": str(tmp_path / "copy")})
    res = snakemake(work, "-n")
    assert "no shards of task_usage" in res.stdout + res.stderr
    planned = planned_rules(work)
    # nothing that reads task_usage is planned; analyses that need no trace (the placement experiment) still run
    assert not planned & {"synthesize_trace", "map_task_usage", "map_task_events", "reduce_bucket", "collect_tasks", "sample_realizations", "placement_trace_run"}


@pytest.fixture
def http_bucket(tiny_run, tmp_path):
    """The tiny trace served as the public bucket from 127.0.0.1 (shut down after the test)."""
    root = tmp_path / "bucket"
    copy_bucket(synthetic_trace(tiny_run), root, rename_to_500=True)
    with serve(root) as bucket:  # the download tests' loopback server (tests/loopback.py)
        yield bucket.url


def test_google_source_downloads_verified_shards(tiny_run, http_bucket, tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    write_config(
        work,
        trace={
            "source": "google",
            "url": http_bucket,
            "shards": [0, 1],
            "retries": 2,
            "backoff": 0.01,
            # the test bucket has no job_events: what reads them (Beaumont Table 3) is skipped
            "tables": ["task_events", "task_usage", "machine_events"],
        },
        realizations={"n_tasks": 50},
        packing={"tasks_per_instance": 40},
    )
    # what reads the downloaded shards; the whole DAG on a real layout runs in test_workflow_sample
    res = snakemake(work, *(f"results/google-tiny/{f}" for f in ("tables/beaumont_table1_dominant.csv", "realizations/inst.npy",
                                                                  "tables/beaumont_failures_histogram.csv")))
    assert "lacks group_events (config key trace.tables leaves out job_events)" in res.stdout + res.stderr
    assert "jobs_durations" not in planned_rules(work)  # Table 3 reads job_events: not in the DAG
    assert (work / "results/google-tiny/tables/beaumont_table1_dominant.csv").exists()
    got = sorted(p.relative_to(work / "resources/trace/google").as_posix() for p in (work / "resources/trace/google").rglob("*.csv.gz"))
    assert got == [
        "machine_events/part-00000-of-00001.csv.gz",  # single-file table, always whole
        "task_events/part-00000-of-00500.csv.gz",
        "task_events/part-00001-of-00500.csv.gz",
        "task_usage/part-00000-of-00500.csv.gz",
        "task_usage/part-00001-of-00500.csv.gz",
    ]
    assert not list((work / "resources/trace/google").rglob("*.part"))
    assert np.load(work / "results/google-tiny/realizations/inst.npy", mmap_mode="r").shape == (50, 500)
