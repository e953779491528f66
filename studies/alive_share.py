"""Study: Beaumont Table 1's share of alive jobs is a scale effect at the default scale (its cause's evidence).

In a window, let a job of D run T_D tasks and another alive job t_N. If D holds a share f of the running tasks
(Fig 1: 65%) and s of the alive jobs (Table 1: 5.8%), then t_N = T_D · (1 − f)/f · s/(1 − s) = 0.033 T_D at the
paper's pair, at least one task only where T_D ≥ 30.2. The default scale's jobs are small (job_size_scale 0.03, at
most 60 tasks), so its T_D is about 11 and the paper's pair is out of reach however the small jobs are drawn.

Per finished run (results/<run>) it prints, over the windows of jobs/window_totals.parquet, T_D, t_N, s (the mean
over windows, as Table 1's row), f (over task-windows, as Fig 1's) and the t_N that the paper's pair would need. On
the real trace's start (``--sample``: a trace directory with task_events part 0 and job_events shards, by default
the shipped sample) it prints the same row for the jobs running at the trace start (``colocation.running_tasks``),
with the fewest of them that together request 90% of the running tasks' CPU for D (one instant's D_i, by request
rather than usage: Beaumont's D is the union over the windows, ``jobs.flag_dominant``), and the share of the other
jobs that end (a terminal job event) within the job_events shards' span. Then the peak memory.

    python studies/alive_share.py results/synthetic-default [RUN ...] [--sample workflow/data/google-2011-sample]
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from colocate.analysis.colocation import running_tasks  # noqa: E402
from colocate.analysis.jobs import TERMINAL_EVENTS, alive_share_identity, flag_dominant  # noqa: E402
from colocate.report.claims import printed as claims_printed  # noqa: E402
from colocate.report.compare import parse_number  # noqa: E402
from colocate.trace import TRACE_START_US, EventType, read_table  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: The claims giving Beaumont's pair: D's share of the running tasks (Fig 1) and of the alive jobs (Table 1).
PAIR_CLAIMS = {"task_share": "beaumont.fig1.d_tasks", "alive_share": "beaumont.t1.share_alive_mean"}


def paper_pair(papers: Path = REPO / "workflow" / "papers" / "beaumont.tsv") -> dict[str, float]:
    """Beaumont's pair of shares as its claims table prints them (65% → 0.65, 0.058)."""
    printed = claims_printed([papers])
    out = {}
    for name, claim in PAIR_CLAIMS.items():
        p = parse_number(printed[claim])
        out[name] = p.value / 100 if p.unit == "%" else p.value
    return out


def needed_other_tasks(tasks_per_d_job: float, task_share: float, alive_share: float) -> float:
    """t_N = T_D · (1 − f)/f · s/(1 − s): the tasks every other alive job must run in a window, where a job of D
    runs T_D, for D to be ``task_share`` (f) of the running tasks and ``alive_share`` (s) of the alive jobs. At
    Beaumont's pair (Fig 1's 65%, Table 1's 5.8%) it is 0.033 T_D: at least one task only where T_D ≥ 30.2."""
    return tasks_per_d_job * (1 - task_share) / task_share * alive_share / (1 - alive_share)


def with_needed(identity: dict[str, float], pair: dict[str, float]) -> dict[str, float]:
    """``identity`` (``jobs.alive_share_identity``) with the t_N the paper's ``pair`` needs at its T_D."""
    return {**identity, "needed": needed_other_tasks(identity["T_D"], **pair)}


def run_shares(run: Path) -> dict[str, float]:
    """T_D, t_N, s, f and the needed t_N (at the paper's pair) of a finished run (``jobs.alive_share_identity`` of
    its jobs/window_totals.parquet); exits naming the file where it is missing or has no job of D."""
    path = run / "jobs" / "window_totals.parquet"
    if not path.is_file():
        sys.exit(f"{path}: missing (is {run} a finished run?)")
    identity = alive_share_identity(pl.read_parquet(path))
    if identity is None:
        sys.exit(f"{path}: no window with a job of D: too little data for Table 1")
    return with_needed(identity, paper_pair())


def trace_start(sample: Path, cpu_share: float = 0.9) -> dict[str, float]:
    """At the real trace's start: jobs running, the fewest holding ``cpu_share`` of the CPU requested, and the share
    of the others that end within the job_events shards' span (hours)."""
    events = read_table(sample / "task_events" / "part-00000-of-00500.csv.gz", "task_events",
                        ["time", "job_id", "task_index", "machine_id", "event_type", "cpu_request"])
    running = running_tasks(events, TRACE_START_US)
    requests = (events.filter((pl.col("event_type") == int(EventType.SCHEDULE)) & (pl.col("time") <= TRACE_START_US))
                .group_by("job_id", "task_index").agg(pl.col("cpu_request").last()))  # as scheduled then
    jobs = (running.join(requests, on=["job_id", "task_index"], how="left")
            .group_by("job_id").agg(pl.len().alias("n_tasks"), pl.col("cpu_request").fill_null(0).sum().alias("cpu_sum"))
            .with_columns(window=pl.lit(0, pl.Int32)))
    flagged = flag_dominant(jobs, cpu_share)
    job_events = pl.concat([read_table(f, "job_events", ["time", "job_id", "event_type"])
                            for f in sorted((sample / "job_events").glob("part-*.csv.gz"))])
    ended = job_events.filter(pl.col("event_type").is_in([int(e) for e in TERMINAL_EVENTS])).select("job_id").unique()
    others = flagged.filter(~pl.col("in_Di")).join(ended.with_columns(ended=pl.lit(True)), on="job_id", how="left")
    return {"jobs": flagged.height, "D": int(flagged["in_Di"].sum()), "tasks": running.height,
            "D_tasks": int(flagged.filter("in_Di")["n_tasks"].sum()), "others_ended": others["ended"].fill_null(False).mean(),
            "hours": (job_events["time"].max() - TRACE_START_US) / 3.6e9}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path, nargs="*", help="finished runs (results/<run>)")
    ap.add_argument("--sample", type=Path, default=REPO / "workflow" / "data" / "google-2011-sample",
                    help="a trace directory with task_events part 0 and job_events shards (the real trace's start)")
    args = ap.parse_args(argv)
    print("| run | T_D (tasks of a D job) | t_N (of another job) | s (D of alive jobs) | f (D of tasks) | "
          "t_N the paper's pair needs |\n|---|---|---|---|---|---|")
    for run in args.runs:
        r = run_shares(run)
        print(f"| {run.name} | {r['T_D']:.1f} | {r['t_N']:.2f} | {r['s']:.3f} | {r['f']:.3f} | {r['needed']:.2f} |")
    real = trace_start(args.sample)
    # the start as one window of jobs/window_totals.parquet, so the same identity reads it
    r = with_needed(alive_share_identity(pl.DataFrame({"window": [0], "jobs": [real["jobs"]], "jobs_D": [real["D"]],
                                                       "tasks": [real["tasks"]], "tasks_D": [real["D_tasks"]]})),
                    paper_pair())
    print(f"| the real trace's start (D_i by CPU request) | {r['T_D']:.0f} | {r['t_N']:.1f} | {r['s']:.3f} | "
          f"{r['f']:.3f} | {r['needed']:.1f} |")
    print(f"\nthe real trace's start ({args.sample}): {real['jobs']:,} jobs run {real['tasks']:,} tasks; the "
          f"{real['D']} that together request 90% of the running tasks' CPU are {real['D'] / real['jobs']:.1%} of "
          f"the jobs; {real['others_ended']:.1%} of the other {real['jobs'] - real['D']:,} end within the "
          f"{real['hours']:.1f} h of job_events shards")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
