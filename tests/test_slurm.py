"""The pipeline on a real Slurm cluster: the one-node cluster of ``cluster/one-node-slurm`` (``.ci/run`` installs and
starts it), driven by snakemake-executor-plugin-slurm through ``profiles/slurm`` as a user would run it, with only
the partition set.

* the DAG up to the first maps through sbatch gives the local tiny run's bytes (timing files excepted, as in the
  determinism test); the whole tiny DAG too, with ``COLOCATE_SLURM_FULL=1`` (too slow for CI so far);
* every job's request in ``sacct`` is its rule's threads, mem_mb (plus the cluster's per-job overhead) and runtime;
* a job that exceeds its memory fails, and the run's error names the rule and the limit;
* faults: a job cancelled mid-run (scancel) is retried; a node drained mid-run leaves the jobs pending until it is
  resumed; a killed Snakemake is resumed by the same command, no job lost or submitted twice. Each run is bounded
  by a timeout that kills Snakemake and cancels its jobs, so a hang fails the test.

Where no cluster answers, the tests skip saying why, unless ``COLOCATE_REQUIRE_SLURM=1`` (``.ci/run``): then they fail.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from test_workflow_determinism import digests, is_timing
from wfutil import REPO, write_config

pytestmark = [pytest.mark.slurm, pytest.mark.workflow]

CLUSTER = REPO / "cluster/one-node-slurm"
#: Beyond these a run through Slurm is a hang: the whole tiny DAG (89 jobs), and the runs up to the first maps
#: (the trace's synthesis and two map jobs) that the other tests make.
TIMEOUT_TINY, TIMEOUT = 2400, 900
#: The DAG up to the task_usage maps: the trace's synthesis, then two map jobs.
UNTIL = ("--until", "map_task_usage", "--config", "scale=tiny")


def _run(*cmd: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=timeout)


def cluster_unavailable() -> str | None:
    """Why no Slurm cluster answers here, or None. Starts the one-node cluster where its packages are installed."""
    if shutil.which("sbatch") is None:
        return f"Slurm is not installed ({CLUSTER.relative_to(REPO)} install)"
    if _run("scontrol", "ping", check=False).returncode != 0:
        if os.geteuid() != 0:
            return f"no Slurm controller answers, and starting one needs root ({CLUSTER.relative_to(REPO)} up)"
        up = _run(str(CLUSTER), "up", check=False, timeout=300)
        if up.returncode != 0:
            return f"{CLUSTER.relative_to(REPO)} up failed: {up.stderr.strip()[-2000:]}"
    return None


@pytest.fixture(scope="session")
def partition() -> str:
    """The cluster's default partition."""
    why = cluster_unavailable()
    if why:
        if os.environ.get("COLOCATE_REQUIRE_SLURM") == "1":
            pytest.fail(f"COLOCATE_REQUIRE_SLURM=1, but {why}")
        pytest.skip(why)
    (default,) = [p.rstrip("*") for p in _run("sinfo", "-h", "-o", "%P").stdout.split() if p.endswith("*")]
    return default


def user_profile(directory: Path, partition: str) -> Path:
    """profiles/slurm as a user sets it up: a copy with the site's partition, nothing else changed."""
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())
    profile["default-resources"]["slurm_partition"] = partition
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.yaml").write_text(yaml.safe_dump(profile))
    return directory


def jobs_of(workdir: Path) -> list[str]:
    """Slurm job ids of the jobs still queued or running that Snakemake submitted from ``workdir``."""
    out = _run("squeue", "-h", "-o", "%i|%Z").stdout.split()
    return [line.split("|")[0] for line in out if Path(line.split("|", 1)[1]) == workdir]


class SlurmRun:
    """``snakemake --workflow-profile PROFILE ...`` in ``workdir`` in the background, bounded by ``TIMEOUT``: past
    it, Snakemake is killed and its jobs cancelled, and the test fails."""

    def __init__(self, workdir: Path, profile: Path, *args: str, timeout: float = TIMEOUT):
        self.workdir, self.timeout = workdir, timeout
        self.log = workdir / "snakemake-slurm.log"
        env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--workflow-profile", str(profile), *args],
            cwd=workdir, stdout=self.log.open("w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.started = time.monotonic()

    def wait(self) -> str:
        try:
            self.proc.wait(timeout=max(1.0, self.timeout - (time.monotonic() - self.started)))
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"Snakemake through Slurm ran past {self.timeout} s: killed, its jobs cancelled\n{self.text()[-4000:]}")
        return self.text()

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for job in jobs_of(self.workdir):
            _run("scancel", job, check=False)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def until(self, what: str, condition, timeout: float = 600):
        """Poll ``condition()`` until it returns something true, while Snakemake runs; that value."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            got = condition()
            if got:
                return got
            if self.proc.poll() is not None:
                pytest.fail(f"Snakemake ended (rc {self.proc.returncode}) before {what}\n{self.text()[-4000:]}")
            time.sleep(0.5)
        self.kill()
        pytest.fail(f"{what} did not happen within {timeout} s: killed\n{self.text()[-4000:]}")


def running_job(workdir: Path, rule: str) -> str | None:
    """The Slurm id of a running job of ``rule`` submitted from ``workdir``."""
    for line in _run("squeue", "-h", "-t", "R", "-o", "%i|%Z|%k").stdout.split("\n"):
        if line.count("|") == 2:
            job, cwd, comment = line.split("|")
            if Path(cwd) == workdir and comment.startswith(f"rule_{rule}"):
                return job
    return None


def same_bytes(local: Path, slurm: Path, subset: bool = False) -> None:
    """The Slurm run's results/ equal the local run's, file by file, timing files excepted; ``subset``: the Slurm run
    made only some of them."""
    a, b = digests(local), digests(slurm)
    if subset:
        assert set(b) <= set(a), sorted(set(b) - set(a))
        a = {p: a[p] for p in b}
    assert sorted(a) == sorted(b), (sorted(set(a) - set(b)), sorted(set(b) - set(a)))
    differ = [p for p in a if not is_timing(p.split("/", 1)[1]) and a[p] != b[p]]
    assert differ == [], f"files that differ between the local and the Slurm run: {differ}"


@pytest.fixture(scope="module")
def slurm_maps(partition, tmp_path_factory) -> tuple[Path, str]:
    """The DAG up to the task_usage maps through Slurm, from clean: the working directory and Snakemake's output."""
    work = tmp_path_factory.mktemp("slurm-maps")
    write_config(work)
    run = SlurmRun(work, user_profile(work / "profile", partition), *UNTIL)
    out = run.wait()
    assert run.proc.returncode == 0, out[-6000:]
    return work, out


def test_the_maps_through_slurm_give_the_local_runs_bytes(tiny_run, slurm_maps):
    work, out = slurm_maps
    assert len(re.findall(r"submitted with SLURM jobid", out)) == 3, out[-3000:]  # synthesis, two maps
    same_bytes(tiny_run, work, subset=True)


@pytest.mark.skipif(os.environ.get("COLOCATE_SLURM_FULL") != "1",
                    reason="the whole tiny DAG through Slurm (89 jobs, each starting Snakemake twice) took 21 min on a "
                           "loaded 2-core machine: set COLOCATE_SLURM_FULL=1 to run it")
def test_the_tiny_run_through_slurm_gives_the_local_runs_bytes(tiny_run, partition, tmp_path_factory):
    work = tmp_path_factory.mktemp("slurm-tiny")
    write_config(work)
    run = SlurmRun(work, user_profile(work / "profile", partition), "--config", "scale=tiny", timeout=TIMEOUT_TINY)
    out = run.wait()
    assert run.proc.returncode == 0, out[-6000:]
    assert len(set(re.findall(r"submitted with SLURM jobid (\d+)", out))) >= 80
    same_bytes(tiny_run, work)
    check_requests(work, out)


def planned_jobs(workdir: Path, *args: str) -> dict[str, dict[str, int]]:
    """rule[_wildcards] → threads, mem_mb and runtime, from a local dry run's job list (``args``: which part of the
    DAG, as the run was asked; a memory that depends on inputs not made yet reads <TBD>)."""
    out = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-n", "--cores", "2",
                          "--forceall", *(args or ("--config", "scale=tiny"))], cwd=workdir, capture_output=True,
                         text=True, check=True).stdout
    planned = {}
    for block in re.split(r"\n(?=\[[^\]]+\]\n(?:local)?rule )", out):
        rule = re.search(r"^(?:local)?rule (\w+):", block, re.M)
        res = re.search(r"^\s+resources: (.*)$", block, re.M)
        if not rule or not res:
            continue
        values = dict(kv.split("=", 1) for kv in res.group(1).split(", "))
        if "mem_mb" not in values:  # the target rule `all`, which runs no job
            continue
        wildcards = re.search(r"^\s+wildcards: (.*)$", block, re.M)
        threads = re.search(r"^\s+threads: (\d+)$", block, re.M)
        # the plug-in's job comment: rule_<rule>[_wildcards_<value>_<value>...]
        values_only = "_".join(w.split("=", 1)[1] for w in wildcards.group(1).split(", ")) if wildcards else ""
        key = rule.group(1) + (f"_wildcards_{values_only}" if wildcards else "")
        planned[key] = {"threads": int(threads.group(1)) if threads else 1, "mem_mb": int(values["mem_mb"]),
                        "runtime": int(values["runtime"])}
    return planned


def check_requests(work: Path, out: str, *args: str) -> int:
    """Each job Snakemake submitted: its request in sacct is its rule's threads, mem_mb plus the per-job overhead,
    and runtime, as a local dry run plans them. The number of jobs checked."""
    overhead = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())[
        "properties"]["cluster"]["properties"]["job_overhead_mb"]["default"]
    ids = sorted(set(re.findall(r"submitted with SLURM jobid (\d+)", out)), key=int)
    rows = _run("sacct", "-X", "-n", "-P", "-j", ",".join(ids), "-o", "JobID,Comment,ReqCPUS,ReqMem,Timelimit").stdout
    planned = planned_jobs(work, *args)
    checked = 0
    for row in rows.strip().split("\n"):
        job, comment, cpus, mem, limit = row.split("|")
        key = comment.removeprefix("rule_")
        assert key in planned, f"Slurm job {job} ({comment}) is not a job of the dry run"
        want = planned[key]
        hours, minutes, _ = (int(x) for x in limit.split(":"))
        assert (int(cpus), mem, 60 * hours + minutes) == (want["threads"], f"{want['mem_mb'] + overhead}M",
                                                         want["runtime"]), (job, comment)
        checked += 1
    assert checked == len(ids)
    return checked


def test_every_jobs_request_in_sacct_is_its_rules_threads_memory_and_runtime(slurm_maps):
    work, out = slurm_maps
    assert check_requests(work, out, *UNTIL) == 3
    # the trace's synthesis asks for 2 threads, a map for 1, and a map's memory grows with its shard: all reach Slurm
    planned = planned_jobs(work, *UNTIL)
    assert planned["synthesize_trace"]["threads"] == 2
    assert {k: v["threads"] for k, v in planned.items() if k.startswith("map_task_usage")} == {
        "map_task_usage_wildcards_batch-00000-00001-of-00003": 1, "map_task_usage_wildcards_part-00002-of-00003": 1}


def test_a_job_over_its_memory_fails_naming_the_rule_and_the_limit(partition, tmp_path):
    """The trace's synthesis given 50 MB and no per-job overhead: Slurm kills it, and the run's error names the rule,
    what it used against its limit, and the setting to raise."""
    write_config(tmp_path)
    profile = user_profile(tmp_path / "profile", partition)
    run = SlurmRun(tmp_path, profile, "--until", "synthesize_trace", "--retries", "0",
                   "--set-resources", "synthesize_trace:mem_mb=50", "--config", "cluster={'job_overhead_mb': 0}")
    out = run.wait()
    assert run.proc.returncode != 0 and "Error in rule synthesize_trace" in out, out[-3000:]
    found = re.search(r"colocate: rule synthesize_trace: Slurm job \d+ was killed over its memory limit "
                      r"\((\d+) MB used > 50 MB: the rule's mem_mb plus cluster.job_overhead_mb = 0\)", out)
    assert found and int(found.group(1)) > 50, out[-3000:]


# ----------------------------------------------------------------------------------------------------- faults
def node() -> str:
    return _run("sinfo", "-h", "-N", "-o", "%N").stdout.split()[0]


def submissions(text: str) -> list[str]:
    """The job log of each submission in Snakemake's output: rule_<rule>/<wildcards>/<slurm id>.log."""
    return re.findall(r"slurm_logs/(rule_\w+(?:/[^/\s]+)?)/\d+\.log\)", text)


@pytest.fixture
def fault_run(partition, tmp_path):
    write_config(tmp_path)
    profile = user_profile(tmp_path / "profile", partition)
    return lambda: SlurmRun(tmp_path, profile, *UNTIL)


def test_a_job_cancelled_mid_run_is_retried_and_the_run_completes(tiny_run, fault_run):
    run = fault_run()
    job = run.until("a map job running", lambda: running_job(run.workdir, "map_task_usage"))
    _run("scancel", job)
    out = run.wait()
    assert run.proc.returncode == 0, out[-4000:]
    assert f"SLURM-job '{job}' failed, SLURM status is: 'CANCELLED'" in out and "Trying to restart job" in out, out[-4000:]
    same_bytes(tiny_run, run.workdir, subset=True)


def test_a_node_drained_mid_run_holds_the_jobs_until_it_is_resumed(tiny_run, fault_run):
    run = fault_run()
    run.until("the trace's synthesis running", lambda: running_job(run.workdir, "synthesize_trace"))
    name = node()
    _run("scontrol", "update", f"nodename={name}", "state=drain", "reason=colocate-test")
    try:
        def held() -> bool:  # nothing of the run runs any more, and something waits
            states = _run("squeue", "-h", "-o", "%Z|%T").stdout.split()
            mine = [s.split("|")[1] for s in states if Path(s.split("|")[0]) == run.workdir]
            return "PENDING" in mine and "RUNNING" not in mine
        run.until("the run's jobs held pending", held)
        assert "drain" in _run("sinfo", "-h", "-n", name, "-o", "%T").stdout
        time.sleep(10)
        assert run.proc.poll() is None and held()  # still waiting, not failed
    finally:
        _run("scontrol", "update", f"nodename={name}", "state=resume")
    out = run.wait()
    assert run.proc.returncode == 0, out[-4000:]
    same_bytes(tiny_run, run.workdir, subset=True)


def test_a_killed_snakemake_is_resumed_by_the_same_command_without_losing_or_repeating_a_job(tiny_run, fault_run):
    """kill -9 of Snakemake while its jobs run on: the same command removes the dead run's lock, waits for those
    jobs (workflow/rules/resume.smk), and submits only what they did not do."""
    first = fault_run()
    first.until("a map job running", lambda: running_job(first.workdir, "map_task_usage"))
    first.proc.kill()  # Snakemake alone: its Slurm jobs run on
    first.proc.wait()
    assert jobs_of(first.workdir), "no job of the killed run left running: nothing tested"
    killed = first.text()
    second = fault_run()
    out = second.wait()
    assert second.proc.returncode == 0, out[-4000:]
    assert "removed the lock left by a run that was killed" in out and "waiting for the Slurm jobs" in out, out[-4000:]
    submitted = submissions(killed) + submissions(out)
    assert sorted(set(submitted)) == sorted(submitted), f"submitted twice: {submitted}"
    same_bytes(tiny_run, second.workdir, subset=True)


def test_the_documented_cluster_commands_run_as_written(partition):
    """docs/cluster.md's commands for the one-node cluster, verbatim from the repository's root (last in this file:
    its `down` stops the cluster, and `up` brings it back for whatever runs next)."""
    text = (REPO / "docs/cluster.md").read_text()
    commands = re.findall(r"^(cluster/one-node-slurm \w+)$", text, re.M)
    assert commands == [f"cluster/one-node-slurm {verb}" for verb in ("install", "up", "status", "down")]
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=REPO, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
        if command.endswith("status"):
            assert re.search(rf"^\S+ {partition}\* idle", done.stdout, re.M), done.stdout
    assert _run("scontrol", "ping", check=False).returncode != 0  # down means down
    assert subprocess.run([str(CLUSTER), "up"], capture_output=True).returncode == 0
    assert _run("scontrol", "ping").returncode == 0
