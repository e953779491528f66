"""What a cluster's job logs say about a failed job: Slurm's memory kill, named with the rule and its limit."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

#: slurmstepd's line when it kills a step over its --mem (jobacct_gather OverMemoryKill and cgroup alike).
_KILLED = re.compile(r"StepId=(?P<job>\d+)\.\S+ exceeded memory limit \((?P<used>\d+) > (?P<limit>\d+)\)")
#: The plug-in's log of one job: .snakemake/slurm_logs/rule_<rule>[/<wildcards>]/<jobid>.log
_RULE = re.compile(r"^rule_(?P<rule>\w+?)$")


def memory_kills(logs: Iterable[tuple[Path, str]]) -> list[dict]:
    """One record per Slurm job killed over its memory: rule, job id, used and limit (MB), and the log's path.

    ``logs`` pairs each job log's path (under ``slurm_logs/``) with its text; the rule is the ``rule_<name>`` part
    of the path, as snakemake-executor-plugin-slurm names them."""
    kills = []
    for path, text in logs:
        found = _KILLED.search(text)
        rule = next((m.group("rule") for part in Path(path).parts if (m := _RULE.match(part))), None)
        if found and rule:
            kills.append({"rule": rule, "job": found.group("job"), "used_mb": int(found.group("used")) // 2**20,
                          "limit_mb": int(found.group("limit")) // 2**20, "log": str(path)})
    return kills


def memory_kill_message(kill: dict, overhead_mb: int) -> str:
    """The line a user reads: the rule, what it used against its limit, and what to raise."""
    return (f"colocate: rule {kill['rule']}: Slurm job {kill['job']} was killed over its memory limit "
            f"({kill['used_mb']} MB used > {kill['limit_mb']} MB: the rule's mem_mb plus cluster.job_overhead_mb = "
            f"{overhead_mb}); raise cluster.job_overhead_mb or the rule's mem_mb (--set-resources "
            f"{kill['rule']}:mem_mb=...). Log: {kill['log']}")
