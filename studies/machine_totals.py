"""Study: Unuvar §IV-B's 18-task aggregate read as the paper reads it, one machine's tasks, on a finished run.

The paper's 18 tasks are "the average of 17 jobs involving 18 tasks running on machine ID 351618647": the whole
usage of one machine, short tasks included, normalised so that its 29-day maximum is 90% (§IV-C). The pipeline's
``unuvar_aggregates`` counts only long tasks per machine, and on the synthetic trace no machine runs 18 of them, so
it draws random sets of the trace's tasks instead (``source: trace``). This study reads every task's records of a
run (``results/<run>/map/task_usage/*/records.parquet``), counts each machine's concurrent tasks with the
pipeline's ``aggregate.machine_concurrency``, and for the densest machines prints, with the pipeline's
``machine_aggregate`` and ``normalise_to_peak``, the utilisation's mean, std and P(U ≥ 0.8):

* ``raw``: the machine's total as the trace records it;
* ``capped``: the total bounded by the machine's CPU capacity (machine_events), as a real machine's is: its tasks
  cannot use more CPU than it has.

It also prints the share of the machine's windows whose total exceeds its capacity. The measured cause
``workflow/papers/causes/unuvar.tail.md`` quotes its output on the default run.

    python studies/machine_totals.py results/synthetic-default [TRACE_DIR] [--machines 6]

TRACE_DIR, the run's trace in the bucket's layout, defaults to the one the run's map_task_usage logs read (e.g.
``resources/trace/synthetic-<digest>``, or the shipped sample); a trace that knows none of the run's machines is
refused by name.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # finished_run, shared with the benchmarks
from colocate.analysis import aggregate  # noqa: E402
from colocate.report import claims  # noqa: E402
from colocate.trace import TRACE_START_US, WINDOW_US  # noqa: E402
from finished_run import capacities, run_trace  # noqa: E402

PAPERS = Path(__file__).resolve().parents[1] / "workflow/papers"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path, help="a finished run's directory, results/<run> (its map/task_usage records)")
    ap.add_argument("trace", type=Path, nargs="?", default=None,
                    help="the run's trace in the bucket's layout, for its machine_events (default: the one its logs name)")
    ap.add_argument("--machines", type=int, default=6, help="the densest machines to read (default 6)")
    ap.add_argument("--observations", type=int, default=500, help="observations per machine (Unuvar: 500)")
    ap.add_argument("--threshold", type=float, default=0.8, help="over-utilisation threshold U* (Unuvar: 0.8)")
    args = ap.parse_args()
    if not args.run.is_dir():
        sys.exit(f"{args.run}: no such directory (give a finished run's directory, results/<run>)")
    trace = args.trace if args.trace is not None else run_trace(args.run, ": give TRACE_DIR")
    files = sorted(args.run.glob("map/task_usage/*/records.parquet"))
    if not files:
        sys.exit(f"{args.run}: no map/task_usage/*/records.parquet")
    records = pl.scan_parquet(files).select("machine_id", "start_time", "cpu_rate")
    conc = aggregate.machine_concurrency(records).join(capacities(trace), on="machine_id", how="left")
    if conc["capacity"].is_null().all():
        sys.exit(f"{trace}: its machine_events name none of the {conc.height:,} machines of {args.run}: not the run's trace")
    spanned = conc.filter(pl.col("span") >= args.observations)
    print(f"{conc.height:,} machines with records; {spanned.height:,} span at least {args.observations} windows; "
          f"mean concurrent tasks (all tasks) median {conc['mean_tasks'].median():.1f}, max {conc['mean_tasks'].max():.1f}")
    if spanned.height == 0:  # too little data: said, not a traceback
        most = int(conc["span"].max() or 0)
        print(f"no machine spans {args.observations} windows: nothing to read (the run's task_usage covers "
              f"{most} window{'' if most == 1 else 's'} at most)")
        return
    window = ((pl.col("start_time") - TRACE_START_US) // WINDOW_US).alias("w")
    totals = (records.group_by("machine_id", window).agg(pl.col("cpu_rate").sum().alias("total")).collect()
              .join(conc.select("machine_id", "capacity"), on="machine_id").drop_nulls("capacity"))
    print(f"machine-windows whose total CPU exceeds the machine's capacity: "
          f"{(totals['total'] > totals['capacity']).mean():.2%} of {totals.height:,} "
          f"(above 1.2 × capacity: {(totals['total'] > 1.2 * totals['capacity']).mean():.2%})")
    paper = claims.printed(sorted(PAPERS.glob("*.tsv")))  # Unuvar Tables II and VII, as the summary judges them
    print(f"paper, machine 351618647 (18 tasks): mean {paper['unuvar.t2.mean.18']}, std {paper['unuvar.t2.std.18']}, "
          f"P(U ≥ 0.8) {paper['unuvar.t7.actual.18']}")
    print(f"{'machine':>12} {'tasks':>6} {'capacity':>8} {'windows over':>12}   {'raw: mean  std  P':>22}   {'capped: mean  std  P':>24}")
    for row in spanned.sort("mean_tasks", "machine_id", descending=[True, False]).head(args.machines).iter_rows(named=True):
        per_window = totals.filter(pl.col("machine_id") == row["machine_id"])["total"].to_numpy()
        obs = aggregate.machine_aggregate(records, row["machine_id"], "cpu_rate", args.observations)["usage"].to_numpy()
        cap = np.nan if row["capacity"] is None else row["capacity"]  # a machine machine_events never sized
        out = []
        for total in (obs, obs if np.isnan(cap) else np.minimum(obs, cap)):
            u = aggregate.normalise_to_peak(total)
            out.append(f"{u.mean():.3f} {u.std(ddof=1):.3f} {(u >= args.threshold).mean():.3f}")
        over = np.nan if np.isnan(cap) else float((per_window > cap).mean())
        print(f"{row['machine_id']:>12} {row['mean_tasks']:>6.1f} {cap:>8.3g} {over:>12.3f}   {out[0]:>22}   {out[1]:>24}")


if __name__ == "__main__":
    main()
