# Resuming a run that was killed (kill -9, a lost session, an OOM kill of Snakemake itself).
#
# Such a run leaves Snakemake's lock behind, and Snakemake cannot tell a dead run's lock from a live
# one's: the next start stops with "Directory cannot be locked". So each run records its process
# (host and pid) while it holds the lock. At the next start, if every recorded process on this host is
# gone and none is recorded from another host, the lock is stale and is removed, and the same command
# resumes the run (the profile's rerun-incomplete redoes the jobs that were cut). A live run's lock is
# never touched: a second start while it runs still gets Snakemake's lock message.
import os
import socket
import threading

_OWNERS = Path(".snakemake") / "colocate-lock-owners"
_LOCKS = Path(".snakemake") / "locks"


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process we may not signal exists
        return True
    return True


def _remove_stale_lock():
    owners = sorted(_OWNERS.glob("*")) if _OWNERS.is_dir() else []
    locks = sorted(_LOCKS.glob("*.lock")) if _LOCKS.is_dir() else []
    if not owners or not locks:
        return
    host = socket.gethostname()
    recorded = [p.name.rsplit("-", 1) for p in owners]
    if any(h != host or not pid.isdigit() or _alive(int(pid)) for h, pid in recorded):
        return
    for path in locks + owners:
        path.unlink(missing_ok=True)
    logger.warning(
        "colocate: removed the lock left by a run that was killed (pid "
        + ", ".join(pid for _, pid in recorded)
        + f" on {host}, no longer running); resuming"
    )
    _wait_for_cluster_jobs_of_the_killed_run()


def _wait_for_cluster_jobs_of_the_killed_run():
    """Jobs the killed run submitted to Slurm run on: wait for them before planning. A job that completes records its
    outputs itself (its own Snakemake, inside the job), so the resumed run neither submits it again nor loses it; one
    that fails leaves its outputs incomplete, and rerun-incomplete redoes it. (Snakemake notes each submitted job's
    Slurm id in the output's incomplete marker.)"""
    import json
    import shutil
    import subprocess
    import time

    markers = Path(".snakemake") / "incomplete"
    ids = set()
    for marker in markers.glob("*") if markers.is_dir() else []:
        try:
            ids.add(str(json.loads(marker.read_text() or "{}").get("external_jobid") or ""))
        except (OSError, ValueError):
            continue
    ids.discard("")
    if not ids or shutil.which("squeue") is None:
        return
    told = 0.0
    while True:
        live = subprocess.run(["squeue", "-h", "--me", "-t", "PD,R,CG,CF,S", "-o", "%i"], capture_output=True, text=True)
        waiting = sorted(ids & set(live.stdout.split())) if live.returncode == 0 else []
        if not waiting:
            return
        if time.monotonic() - told > 60:
            logger.warning(f"colocate: waiting for the Slurm jobs the killed run submitted ({', '.join(waiting)}) to "
                           "end, so that none is submitted twice")
            told = time.monotonic()
        time.sleep(2)


def _owner_file():
    return _OWNERS / f"{socket.gethostname()}-{os.getpid()}"


if workflow.is_main_process and workflow.workflow_settings.persistence_backend.name == "FILE":
    _remove_stale_lock()


def _cancel_rescheduling_timers():
    """Cancel the scheduler's pending re-run timers (its ``threading.Timer`` threads), so that Snakemake exits at once.

    The default profile sets a job rate limit over 10 minutes: each scheduler pass that finds a job to run leaves a
    timer that wakes the scheduler one timespan later, and Snakemake does not cancel them (snakemake/snakemake#3744).
    They are not daemon threads, so the finished process would wait for the last of them. Once the run is over
    none is needed. Only the scheduler's own are cancelled (tests/test_cli.py times the exit)."""
    for thread in threading.enumerate():
        function = getattr(thread, "function", None)
        if isinstance(thread, threading.Timer) and getattr(function, "__module__", "").startswith("snakemake.scheduling"):
            thread.cancel()


onstart:
    _OWNERS.mkdir(parents=True, exist_ok=True)
    _owner_file().touch()


def _end_of_run():
    """Done or failed alike: no timer left to wait for, and this run no longer holds the lock."""
    _cancel_rescheduling_timers()
    _owner_file().unlink(missing_ok=True)


onsuccess:
    _end_of_run()


def _report_memory_kills():
    """On a cluster, name each rule whose job Slurm killed over its memory, with the limit (colocate.cluster)."""
    from colocate.cluster import memory_kill_message, memory_kills

    logs = Path(".snakemake") / "slurm_logs"
    if not workflow.non_local_exec or not logs.is_dir():
        return
    started = _owner_file().stat().st_mtime if _owner_file().exists() else 0.0  # this run's start (onstart)
    recent = [(p, p.read_text(errors="replace")) for p in logs.rglob("*.log") if p.stat().st_mtime >= started]
    for kill in memory_kills(recent):
        logger.error(memory_kill_message(kill, config["cluster"]["job_overhead_mb"]))


onerror:
    _report_memory_kills()
    _end_of_run()
