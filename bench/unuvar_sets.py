"""Measurement: Unuvar §IV-C/D statistics over many trace sets of a finished run (the evidence behind the causes).

The pipeline's ``unuvar_aggregates`` draws one set of the trace's long tasks per size (Tables II–VII). How much
do its numbers depend on that draw? This draws ``--sets`` sets per size with the same library code
(``aggregate.draw_trace_set``, ``set_aggregate``, §IV-C's 90% normalisation and eqs 7–8's Beta), and prints per
size the median and p10–p90 over the sets of: mean and std of utilisation, skewness, lag-1 autocorrelation, the
K-S D against the fitted Beta, P(U ≥ 0.8) actual and Beta-estimated, beside the paper's value and the ratio of
the median to it. ``betafit.UNUVAR_CAUSE`` and ``KS_CAUSE`` quote its output on the default run.

    python bench/unuvar_sets.py /tmp/default-run [--sets 30] [--job-cap N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
import finished_run  # noqa: E402
from colocate.analysis import aggregate, betafit  # noqa: E402

# Unuvar Tables II, IV, VI and VII (mean, std, K-S D, P actual, P Beta); §IV-C prints D for 18 tasks.
PAPER = {18: (0.49, 0.14, 0.084, 0.066, 0.011), 49: (0.500, 0.169, 0.055, 0.064, 0.031),
         88: (0.504, 0.151, 0.051, 0.042, 0.016), 154: (0.516, 0.142, 0.048, 0.044, 0.024)}
NAMES = ("mean", "std", "skewness", "lag-1 autocorrelation", "K-S D", "P(U ≥ 0.8) actual", "P(U ≥ 0.8) Beta", "K-S p")
PAPER_INDEX = {"mean": 0, "std": 1, "K-S D": 2, "P(U ≥ 0.8) actual": 3, "P(U ≥ 0.8) Beta": 4}


def statistics(u: np.ndarray, threshold: float = 0.8) -> list[float]:
    m, s = float(u.mean()), float(u.std(ddof=1))
    a, b = betafit.beta_parameters(m, s**2)
    ks = stats.kstest(u, "beta", (a, b))
    return [m, s, float(stats.skew(u)), float(np.corrcoef(u[:-1], u[1:])[0, 1]),
            float(ks.statistic), float((u >= threshold).mean()), float(stats.beta.sf(threshold, a, b)), float(ks.pvalue)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workdir", type=Path, help="a finished run (its results/<run>/reduce/bucket-*/series.parquet)")
    ap.add_argument("--sets", type=int, default=30)
    ap.add_argument("--job-cap", type=int, default=None, help="tasks per job at most (default: the smallest that reaches n)")
    ap.add_argument("--observations", type=int, default=500)
    ap.add_argument("--column", default="avg")
    args = ap.parse_args()
    parts, records, lo, hi = finished_run.long_task_series(args.workdir, "results/*/reduce/bucket-*/series.parquet")
    print(f"{records.height:,} long tasks of {records['job_id'].n_unique():,} jobs over windows {lo}..{hi}; {args.sets} sets per size")
    for n, paper in PAPER.items():
        rows = []
        for seed in range(args.sets):
            drawn, cap = aggregate.draw_trace_set(records, n, hi - lo + 1, np.random.default_rng(seed), args.job_cap)
            a = aggregate.set_aggregate(parts, drawn, args.column, lo, hi, args.observations)
            rows.append(statistics(aggregate.normalise_to_peak(a["usage"].to_numpy())))
        r = np.array(rows)
        print(f"\n{n} tasks (cap {cap} per job)")
        for i, name in enumerate(NAMES):
            med, p10, p90 = np.median(r[:, i]), np.quantile(r[:, i], 0.1), np.quantile(r[:, i], 0.9)
            ref = paper[PAPER_INDEX[name]] if name in PAPER_INDEX else None
            vs = f"  paper {ref:g}, ratio {med / ref:.2f}" if ref else ""
            print(f"  {name:24s} median {med:.3f}  p10–p90 {p10:.3f}–{p90:.3f}{vs}")
        print(f"  K-S test at 0.05 rejects the Beta in {int((r[:, -1] < 0.05).sum())} of {len(rows)} sets")


if __name__ == "__main__":
    main()
