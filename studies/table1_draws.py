"""Study: Janus Table 1's A-D rejection rates over independent draws of a finished run's sets.

The pipeline's ``janus_total_usage`` draws ``repetitions`` samples per N once (nested: each repetition's sets of
every N are the starts of one ordered sample of the largest N). How much does a rate move from one draw to
another? This realizes the run's long tasks again with R realizations (as the rule does for Table 1, same
stream and seed), draws the sets first with the rule's own stream (the run's draw) and then ``--draws`` times
with independent seeds, with the library's ``total_usage_samples`` and ``normality_table``, and prints per N
each draw's rate, their mean, min and max, the run's draw and the paper's. The defaults are the default run's
settings (4,000 repetitions, R = 10,000, characterise.seed 2017); the causes of N = 250's and 500's rates
(workflow/papers/causes/janus.t1.ad_rejection_n250.md, _n500.md) quote its output on the default run; the
paper's rates are read from its claims (workflow/papers/janus.tsv).

    python studies/table1_draws.py results/synthetic-default [--draws 8] [--repetitions 4000] [--realizations 10000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from colocate import insufficient  # noqa: E402
from colocate.analysis import characterise as ch  # noqa: E402
from colocate.prep import realizations as rz  # noqa: E402
from colocate.prep.tasks import TASK_KEY  # noqa: E402
from colocate.report.claims import printed as claims_printed  # noqa: E402

JANUS = Path(__file__).resolve().parents[1] / "workflow/papers/janus.tsv"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path, help="a finished run (results/<run>)")
    ap.add_argument("--draws", type=int, default=8)
    ap.add_argument("--repetitions", type=int, default=4000, help="samples S_j per N and draw (the default run's)")
    ap.add_argument("--realizations", type=int, default=10_000, help="R per task (Table 1's, the paper's)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 50, 100, 250, 500])
    ap.add_argument("--seed", type=int, default=2017, help="the seed of the realizations (characterise.seed)")
    args = ap.parse_args()
    run = args.run_dir
    files = sorted(run.glob("reduce/bucket-*/series.parquet"))
    needed = [run / "realizations/tasks.parquet", run / "tasks/long_tasks.parquet"]
    if not files or not all(f.is_file() for f in needed):
        sys.exit(f"{run}: not a finished run (no reduce/bucket-*/series.parquet, realizations/tasks.parquet or "
                 "tasks/long_tasks.parquet)")
    for f in needed:  # too little data: the run's own table says why, and so does this
        if (status := insufficient.read_status(f)) is not None:
            sys.exit(f"{run}: {f.name} is a status, not data ({status.status}: {status.reason}); Table 1 needs {status.needs}")
    tasks = pl.read_parquet(run / "realizations/tasks.parquet").sort("row")
    series = pl.scan_parquet(files).join(tasks.lazy().select(TASK_KEY), on=TASK_KEY, how="semi").collect()
    inst = rz.realize(series, tasks, args.realizations, args.seed, stream="janus_table1_realizations")
    long = pl.read_parquet(run / "tasks/long_tasks.parquet", columns=[*TASK_KEY, "inst_mean", "inst_std"])
    mu, sigma = ch.task_moments(tasks, long)
    sizes = [n for n in args.sizes if n <= inst.shape[0]]
    print(f"{inst.shape[0]:,} tasks × R = {inst.shape[1]:,}; {args.draws} draws of {args.repetitions:,} samples per N")
    def rates(rng: np.random.Generator) -> np.ndarray:
        return ch.normality_table(ch.total_usage_samples(inst, mu, sigma, sizes, args.repetitions, rng))["ad_rejection"].to_numpy()

    own = rates(ch.stream(args.seed, "janus_total_usage"))  # the rule's stream: the run's own draw
    print("  the run's draw: " + " / ".join(f"{r:.3f}" for r in own), flush=True)
    drawn = []
    for draw in range(args.draws):
        drawn.append(rates(np.random.default_rng(draw)))
        print(f"  draw {draw}: " + " / ".join(f"{r:.3f}" for r in drawn[-1]), flush=True)
    r = np.array(drawn)
    printed = claims_printed([JANUS])
    print(f"\n{'N':>5} {'mean':>6} {'min':>6} {'max':>6} {'run':>6} {'paper':>6}")
    for i, n in enumerate(sizes):
        paper = float(printed.get(f"janus.t1.ad_rejection_n{n}") or "nan")
        print(f"{n:>5} {r[:, i].mean():6.3f} {r[:, i].min():6.3f} {r[:, i].max():6.3f} {own[i]:6.3f} {paper:6.3f}")


if __name__ == "__main__":
    main()
