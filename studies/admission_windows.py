"""Study: Unuvar Table VIII under each reading of the controller's μ and σ (the window table of docs/fidelity.md).

Unuvar §III's σ_k is "the standard deviation of the measured utilization … at the request arrival time"; the
paper does not say over how long. On a finished run this runs Table VIII's sets of the trace's long tasks
(``admission.run_trace_replicates``, the pipeline's own code and seed) with σ measured over each window of
``--windows`` and with the running tasks' own Σσᵢ² (``independent``), and prints per ε the mean rejected share and
P(U > 0.8) with the controller, with the range over the sets, beside the paper's.

    python studies/admission_windows.py RUN_DIR [--windows 12 36 288 100000] [--replicates 7] [--seed 2014]

RUN_DIR is a finished run's results directory (``results/synthetic-default``). A window longer than the trace is
its whole history.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # finished_run, shared with the benchmarks
import finished_run  # noqa: E402
from colocate.analysis import aggregate  # noqa: E402 (finished_run puts workflow/ on the path)
from colocate.report import claims  # noqa: E402
from colocate.scheduling import admission  # noqa: E402

EPS = [0.005, 0.01, 0.02]
PAPERS = Path(__file__).resolve().parents[1] / "workflow/papers"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path, help="a finished run's results directory, with reduce/bucket-*/series.parquet")
    ap.add_argument("--windows", type=int, nargs="+", default=[12, 36, 288, 100_000])
    ap.add_argument("--replicates", type=int, default=7)
    ap.add_argument("--seed", type=int, default=2014)
    ap.add_argument("--mean-running", type=float, default=154.0)
    args = ap.parse_args()
    parts, records, lo, hi = finished_run.task_series(args.run_dir, "reduce/bucket-*/series.parquet")
    kept, _, running = aggregate.feasible_sizes(records, lo, hi, [args.mean_running])
    if not kept:  # too little data: said, as the rule says it (admission.choose_source)
        sys.exit(f"{args.run_dir}: the long tasks run {running:.1f} at a time on average, fewer than "
                 f"--mean-running {args.mean_running:g}: no set of the trace's tasks to offer the controller")
    claimed = claims.printed(sorted(PAPERS.glob("*.tsv")))  # Table VIII, as the summary judges it (any reading's claim)
    paper = {e: (claimed[f"unuvar.t8.with.eps{e:g}.trace.measured"], claimed[f"unuvar.t8.rejected.eps{e:g}.trace.measured"])
             for e in EPS}
    print(f"{records.height:,} long tasks over windows {lo}..{hi}; {args.replicates} sets of {args.mean_running:g} running")
    print("| μ and σ | rejected, ε = " + " / ".join(f"{e:g}" for e in EPS) + " | P(U > 0.8) with the controller | s |")
    print("|---|---|---|---|")
    readings = [("measured", w) for w in args.windows] + [("independent", 2)]
    for estimator, window in readings:
        t = time.perf_counter()
        res, _ = admission.run_trace_replicates(parts, records, lo, hi, EPS, replicates=args.replicates, seed=args.seed,
                                                mean_running=args.mean_running, estimator=estimator, history=window)
        r = res.table.sort("eps")
        name = f"σ over {window} windows" if estimator == "measured" else "Σσᵢ² (independent)"
        rejected = " / ".join(f"{100 * m:.1f} [{100 * a:.1f}–{100 * b:.1f}]%"
                              for m, a, b in zip(r["rejection"], r["rejection_min"], r["rejection_max"]))
        with_ = " / ".join(f"{m:.4f}" for m in r["p_over_with"])
        print(f"| {name} | {rejected} | {with_} | {time.perf_counter() - t:.0f} |")
    print("| the paper | " + " / ".join(paper[e][1] for e in EPS) + " | " + " / ".join(paper[e][0] for e in EPS) + " | |")


if __name__ == "__main__":
    main()
