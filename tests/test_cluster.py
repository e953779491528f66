"""colocate.cluster: Slurm's memory kill read from a job's log, named with its rule and limit (constructed logs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from colocate.cluster import memory_kill_message, memory_kills

#: What slurmstepd writes into a job's log when it kills a step over --mem (seen on the one-node cluster).
KILLED = """localrule map_task_usage:
slurmstepd-vm: error: StepId=145.0 exceeded memory limit (465403904 > 419430400), being killed
srun: Job step aborted: Waiting up to 32 seconds for job step to finish.
slurmstepd-vm: error: Exceeded job memory limit
"""


@pytest.mark.parametrize("path, rule", [
    (".snakemake/slurm_logs/rule_map_task_usage/part-00002-of-00003/145.log", "map_task_usage"),
    (".snakemake/slurm_logs/rule_summary/145.log", "summary"),
])
def test_a_memory_kill_is_read_with_its_rule_and_sizes(path, rule):
    (kill,) = memory_kills([(Path(path), KILLED)])
    assert kill == {"rule": rule, "job": "145", "used_mb": 443, "limit_mb": 400, "log": path}


def test_the_batch_steps_kill_counts_too_and_other_logs_do_not():
    batch = "slurmstepd-vm: error: StepId=20.batch exceeded memory limit (255709184 > 230686720), being killed\n"
    logs = [(Path("slurm_logs/rule_placement_run/0/20.log"), batch),
            (Path("slurm_logs/rule_summary/21.log"), "Finished job 0.\n"),  # a job that ran through
            (Path("elsewhere/22.log"), KILLED)]  # not a job log of the plug-in's: no rule to name
    assert [(k["rule"], k["used_mb"], k["limit_mb"]) for k in memory_kills(logs)] == [("placement_run", 243, 220)]


def test_the_message_names_the_rule_the_sizes_and_what_to_raise():
    (kill,) = memory_kills([(Path("slurm_logs/rule_summary/145.log"), KILLED)])
    text = memory_kill_message(kill, overhead_mb=600)
    assert text.startswith("colocate: rule summary: Slurm job 145 was killed over its memory limit (443 MB used > 400 MB")
    assert "cluster.job_overhead_mb = 600" in text and "--set-resources summary:mem_mb=" in text
