"""The whole DAG on the real sample shipped with the project, and runs kept apart (issue: real data first)."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from colocate import insufficient
from wfutil import REPO, SAMPLE, planned_rules, snakemake, write_config

pytestmark = pytest.mark.workflow

RUN = "results/sample-tiny"


def _mtimes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory) -> Path:
    """The full DAG on the shipped real sample (tiny sizes for the experiments that need no trace)."""
    work = tmp_path_factory.mktemp("sample")
    write_config(work, trace={"source": "sample"})
    snakemake(work)
    return work


def test_the_sample_run_completes_and_names_what_it_cannot_do(sample_run):
    run = sample_run / RUN
    page = (run / "summary.md").read_text()
    assert "Run: `sample-tiny`" in page
    # 5 minutes of task_usage: no long task, and the summary says so with what would be needed
    skipped = page.split("## Analyses this trace cannot support")[1]
    assert "| Long tasks (Janus §3.1) | no long task: the longest of the" in skipped
    assert "task_usage covering at least 2 h" in skipped
    for analysis in ("Janus Fig 4, k-means of usage histograms (§3.5)", "Unuvar Tables II-VII, Beta fit",
                     "Janus §5, packing table"):
        assert analysis in skipped, analysis
    # the trace-driven placement replays the 4.3 h of submissions of the 3 task_events shards, not the 5 minutes
    # of task_usage: most lifetimes come from the tasks' events
    assert "Trace-driven placement run" not in skipped
    facts = dict(pl.read_csv(run / "tables/placement_trace_workload.csv").iter_rows())
    assert facts["submit_span_h"] == pytest.approx(4.34, abs=0.01)
    assert facts["lifetimes_from_events"] > 10 * facts["lifetimes_from_usage"] > 0
    # the page begins with what was read: 3 of 500 task_events shards, one window of task_usage
    assert page.index("## What this run read") < page.index("## Agreement")
    assert "| task_events | 3 of 500 | 0–2 |  | 267,374 |" in page and "task_usage spans windows 0–0" in page
    # a skipped figure shows the reason, and carries it
    fig = insufficient.read_status(run / "figures/janus_fig4_centroids.png")
    assert fig is not None and fig.origin == "Long tasks (Janus §3.1)" and "no long task" in fig.reason
    table = pl.read_csv(run / "tables/janus_table1_normality.csv")
    assert table["status"].to_list() == ["insufficient data"]
    # what the sample does support is computed: the whole real machine_events table (Beaumont §6)
    facts = pl.read_csv(run / "failures/machine_events_counts.csv").row(0, named=True)
    assert facts["machines"] == 12583
    assert insufficient.read_status(run / "tables/beaumont_failures_histogram.csv") is None
    # its 2 job_events shards end 2.8 h in: Table 3 says so instead of judging durations censored there
    jobs_rows = {r["quantity"]: r for r in pl.read_csv(run / "summary.csv").iter_rows(named=True)}
    prod = jobs_rows["Table 3: median duration of production jobs (min)"]
    assert prod["within"] is None and "too little data" in prod["note"] and "2.8 h into the trace" in prod["note"]
    assert jobs_rows["Table 3: production jobs running the whole trace"]["within"] is None
    # the share of failing tasks depends on how many task_events shards were read, and its row says so
    failing = jobs_rows["failing tasks dropped (share of tasks)"]
    assert failing["note"].endswith("depends on how much of the trace was read: 3 of 500 task_events files")
    verified = pl.read_csv(run / "trace/verified.tsv", separator="\t")
    assert verified.height == 7 and (verified["status"] == "ok").all()
    # the sample is read where it ships, never copied or written
    assert not (sample_run / "resources").exists()


def test_the_sample_run_is_complete_and_its_notebooks_say_why(sample_run):
    res = snakemake(sample_run, "-n")
    assert "Nothing to be done" in res.stdout + res.stderr
    nb = (sample_run / RUN / "notebooks/02_characterisation.ipynb").read_text()
    assert "insufficient data" in nb and "The notebook stops here" in nb
    # a stop for too little data is not an error: no traceback, no exit warning, in the notebooks or their HTML
    for kept in sorted((sample_run / RUN / "notebooks").glob("*.*")):
        text = kept.read_text()
        assert not any(s in text for s in ("SystemExit", "Traceback", "To exit: use")), kept.name


def test_the_studies_say_the_real_sample_is_too_short(sample_run):
    """The Table 1, Unuvar, admission and machine-total studies on the real sample (no task lives 2 h): each
    states why it has nothing to measure, naming what is missing, instead of a traceback."""
    import subprocess
    import sys

    def study(name: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(REPO / "studies" / name), *args], capture_output=True, text=True)

    run = sample_run / RUN
    t1 = study("table1_draws.py", str(run), "--draws", "1")
    assert t1.returncode != 0 and "Traceback" not in t1.stderr
    assert "is a status, not data" in t1.stderr and "no long task" in t1.stderr
    sets = study("unuvar_sets.py", str(sample_run), "--sets", "1")
    assert sets.returncode == 0 and "sizes 18, 49, 88, 154 skipped: the long tasks run 0.0 at a time" in sets.stdout
    adm = study("admission_windows.py", str(run), "--windows", "12")
    assert adm.returncode != 0 and "Traceback" not in adm.stderr and "fewer than --mean-running 154" in adm.stderr
    machines = study("machine_totals.py", str(run))  # its trace from the map logs: the sample, one 5-minute window
    assert machines.returncode == 0 and "Traceback" not in machines.stderr
    assert "no machine spans 500 windows: nothing to read (the run's task_usage covers 1 window at most)" in machines.stdout


def test_runs_are_kept_apart(sample_run):
    """Another run in the same directory, a failed one, then back: the first run is untouched and complete."""
    before = _mtimes(sample_run / RUN)
    write_config(sample_run, trace={"source": "sample"}, run="second")
    snakemake(sample_run, "results/second/tables/beaumont_failures_histogram.csv")
    assert (sample_run / "results/second/logs/failures/removals.log").exists()
    # a failing run (a corrupt local copy) touches no other run's files
    bad = sample_run / "corrupt"
    shutil.copytree(SAMPLE, bad)
    (bad / "SHA256SUM").unlink()
    shard = bad / "task_usage/part-00000-of-00500.csv.gz"
    shard.chmod(0o644)
    shard.write_bytes(shard.read_bytes()[:-100] + b"\0" * 100)
    write_config(sample_run, trace={"source": "local", "path": str(bad)})
    assert snakemake(sample_run, check=False).returncode != 0
    assert (sample_run / "results/local-corrupt").is_dir()
    assert not list((sample_run / "results").rglob("*.tmp"))
    # back to the first run: nothing to do, nothing rewritten
    write_config(sample_run, trace={"source": "sample"})
    res = snakemake(sample_run, "-n")
    assert "Nothing to be done" in res.stdout + res.stderr
    assert _mtimes(sample_run / RUN) == before


def test_runs_share_the_cached_synthetic_trace(tiny_run, tmp_path):
    """Same model, another run: the cached trace is reused; another model gets its own copy; back: nothing to do."""
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    write_config(work, run="again")
    planned = planned_rules(work)
    assert "synthesize_trace" not in planned and {"map_task_usage", "summary"} <= planned
    write_config(work, trace={"seed": 5})
    assert "synthesize_trace" in planned_rules(work)
    write_config(work)
    assert planned_rules(work) == set()


def test_an_empty_local_directory_is_an_error_naming_it(tmp_path):
    (tmp_path / "empty").mkdir()
    work = tmp_path / "w"
    work.mkdir()
    write_config(work, trace={"source": "local", "path": str(tmp_path / "empty")})
    res = snakemake(work, "-n", check=False)
    assert res.returncode != 0
    out = res.stdout + res.stderr
    assert f"no trace table found under '{tmp_path / 'empty'}'" in out and "task_usage/part-NNNNN-of-MMMMM.csv.gz" in out
    assert not (work / "results").exists()


def test_the_paper_scale_on_the_synthetic_source_is_a_clear_error(tmp_path):
    write_config(tmp_path, scale="paper")
    res = snakemake(tmp_path, "-n", check=False)
    assert res.returncode != 0 and "config key trace.source: the 'paper' scale sizes the real trace" in res.stdout + res.stderr


def test_a_manifest_added_later_re_verifies_the_local_copy(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(SAMPLE / "machine_events", copy / "machine_events")
    work = tmp_path / "w"
    work.mkdir()
    write_config(work, trace={"source": "local", "path": str(copy)})
    target = "results/local-copy/trace/verified.tsv"
    snakemake(work, target)
    assert pl.read_csv(work / target, separator="\t")["status"].to_list() == ["no manifest"]
    (copy / "SHA256SUM").write_text(
        next(line for line in (SAMPLE / "SHA256SUM").read_text().splitlines(keepends=True) if "machine_events" in line)
    )
    snakemake(work, target)
    assert pl.read_csv(work / target, separator="\t")["status"].to_list() == ["ok"]
