"""Study: how likely is Tantawi & Steinder's Table II run at a given load (Table I's × a factor)?

The paper's one run averages 0.39 / 0.36 / 0.50 utilisation of CPU / memory / GPU for PACK, XBAL and ABP (Table II);
Table I's offered loads make 0.4167 / 0.3833 / 0.5333 over the arrivals, and the paper's averages lie below all
20 of the pipeline's replicates at those loads. This runs many more replicates of the experiment with the pipeline's
own code (``placement_runs.run_replicate``, ``placement_analysis.run_metrics``) on the schema's placement section
(Table I's loads, ``load_factor`` 1, its seed; not config.yaml's 0.93), PACK alone, each with Table I's loads scaled
by each ``--factor`` and the arrival mix ``--arrival-mix`` (one mix for every factor: docs/fidelity.md's two columns are
two runs, ``--factors 1.0`` and ``--factors 0.93 --arrival-mix load``). Replicates 0–19 at factor 1 with the equal
mix are the stated-load run's (examples/tantawi-stated-load.yaml), at 0.93 with the load mix the default run's.
PACK alone suffices: each policy draws from its own stream, so PACK's runs are the pipeline's, and over its 20
replicates XBAL's averages lie between 0.006 below and 0.0004 above PACK's, ABP's within 0.002 of them, and the
paper prints the same three averages for all three: PACK stands for them. Per factor it prints the median and p1–p99 of the three averages and of % reject, and how
many replicates carry the paper's run, with an exact (Clopper–Pearson) 95% interval: averages that round to the
paper's or below (< 0.395 / 0.365 / 0.505; the tail that measures how unlikely the paper's run is at a load), that
round to exactly the paper's (a run like the paper's at that load), and either with % reject at most the paper's 0.46;
and the medians of the averages weighted by time instead of by arrival (another reading of "measured over the
entire experiment": Table I's phases are counted in arrivals, at different arrival rates). It also reads the
snapshot at pod 3961 (Table VI's μ^sys, PACK: 0.459 / 0.396 / 0.703, another reading of the same run, so not
independent of its averages): the median and p1–p99 of each resource's μ^sys, and how many replicates have CPU and
memory both as low. The evidence behind the default's placement.load_factor (docs/fidelity.md, "The placement load").

    python studies/placement_load.py [--replicates 1000] [--factors 1.0 0.93] [--arrival-mix equal]

It prints the peak memory (resource.getrusage) and the time per replicate, against a full replicate of the four
policies (the pipeline's placement_run job) measured in the same run.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import copy  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from scipy import stats  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
from colocate.configtypes import config_schema, fill_defaults  # noqa: E402
from colocate.scheduling.placement_analysis import run_metrics  # noqa: E402
from colocate.scheduling.placement_runs import run_replicate  # noqa: E402
from colocate.scheduling.placement_workload import Experiment, policy_specs  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: Table II, PACK: the paper's averages (printed to 2 decimals) and % reject.
PAPER = {"mean_cpu": 0.39, "mean_memory": 0.36, "mean_gpu": 0.50, "reject_pct": 0.46}
#: Table VI, PACK: μ^sys, the mean utilisation over the nodes at the placement of pod 3961 (printed to 3 decimals).
PAPER_SNAPSHOT = {"cpu": 0.459, "memory": 0.396, "gpu": 0.703}


def scaled(section: dict[str, Any], factor: float, arrival_mix: str) -> dict[str, Any]:
    """The placement section with its ``load_factor`` × ``factor`` (every pod type's offered load, through the
    library's own key) and the given arrival mix."""
    out = copy.deepcopy(section)
    out["load_factor"] = section.get("load_factor", 1.0) * factor
    out["arrival_mix"] = arrival_mix
    return out


def carries_paper_run(metrics: pl.DataFrame) -> pl.DataFrame:
    """Per replicate (wide): whether its averages round to the paper's or below, whether they round to exactly the
    paper's (2 decimals), and whether its % reject is at most the paper's."""
    wide = metrics.pivot(on="metric", index="replicate", values="value")
    means = ("mean_cpu", "mean_memory", "mean_gpu")
    low = pl.all_horizontal(pl.col(m) < PAPER[m] + 0.005 for m in means)
    alike = pl.all_horizontal((pl.col(m) >= PAPER[m] - 0.005) & (pl.col(m) < PAPER[m] + 0.005) for m in means)
    return wide.with_columns(averages_as_low=low, averages_alike=alike,
                             rejects_as_few=pl.col("reject_pct") <= PAPER["reject_pct"])


def time_weighted_means(requests: pl.DataFrame, resources: list[str], warmup: int) -> dict[str, float]:
    """Average utilisation per resource weighted by time, not by arrival: each post-warm-up arrival's state holds
    until the next arrival (the last one, with nothing after it, is dropped). Table I's phases are counted in
    arrivals, and their arrival rates differ, so this reading weights the phases by their durations instead. The
    log has no departures, so a state is taken to hold while some of its pods may already have left: an
    approximation that reweights the phases (within a phase, Poisson arrivals see time averages)."""
    post = requests.filter(pl.col("request") >= warmup).sort("request")
    held = np.diff(post["time"].to_numpy())
    if not held.sum() > 0:
        raise ValueError("time-weighted means need two post-warm-up arrivals at different times")
    return {f"mean_{r}": float((post[f"mu_{r}"].to_numpy()[:-1] * held).sum() / held.sum()) for r in resources}


def snapshot_means(snapshot: pl.DataFrame, resources: list[str]) -> dict[str, float]:
    """Table VI's μ^sys of one policy's snapshot (node, u_<resource>…): each resource's mean utilisation over the nodes."""
    return {r: float(snapshot[f"u_{r}"].mean()) for r in resources}


def share(k: int, n: int) -> str:
    """k of n, the share and its exact (Clopper–Pearson) 95% interval."""
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return f"{k} of {n} ({k / n:.2%}, 95% CI {ci.low:.2%}–{ci.high:.2%})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--factors", type=float, nargs="+", default=[1.0, 0.93], help="Table I's loads × each factor")
    ap.add_argument("--arrival-mix", choices=("equal", "load"), default="equal",
                    help="pod types arriving at equal rates (the schema default; the stated-load example) or in proportion to their load (the default run)")
    args = ap.parse_args()
    if args.replicates < 1 or any(not 0 < f <= 2 for f in args.factors):
        sys.exit(f"--replicates must be ≥ 1 and every --factors in (0, 2], got {args.replicates} and {args.factors}")
    section = fill_defaults({}, config_schema(REPO / "workflow/schemas")["properties"]["placement"])
    pack = policy_specs(["pack"], section["resources"], section["prime_resource"], section["xbalance_weights"], "placement")
    every = policy_specs(section["policies"], section["resources"], section["prime_resource"], section["xbalance_weights"],
                         "placement")
    kw = {"seed": section["seed"], "alpha": section["alpha"], "optimiser": section["optimiser"],
          "tie_break": section["tie_break"]}
    exp = Experiment.from_config(scaled(section, 1.0, args.arrival_mix))
    t0 = time.perf_counter()
    run_replicate(exp, every, replicate=0, **kw)
    full = time.perf_counter() - t0
    print(f"Table I's experiment, PACK, {args.replicates} replicates per factor (seed {section['seed']}, arrival mix "
          f"{args.arrival_mix}); the paper's run: averages {PAPER['mean_cpu']} / {PAPER['mean_memory']} / "
          f"{PAPER['mean_gpu']}, % reject {PAPER['reject_pct']}")
    for factor in args.factors:
        exp = Experiment.from_config(scaled(section, factor, args.arrival_mix))
        t0 = time.perf_counter()
        metrics, by_time, snaps = [], [], []
        for r in range(args.replicates):  # a replicate's metrics, not its log: memory stays flat
            log, snap = run_replicate(exp, pack, replicate=r, **kw)
            metrics.append(run_metrics(log, exp.resources, exp.warmup))
            by_time.append(time_weighted_means(log, exp.resources, exp.warmup))
            snaps.append(snapshot_means(snap, list(exp.resources)))
        per = (time.perf_counter() - t0) / args.replicates
        table = carries_paper_run(pl.concat(metrics))
        print(f"\nloads × {factor:g} ({per:.2f} s a replicate of PACK; a replicate of the {len(every)} policies "
              f"{full:.2f} s, ratio {full / per:.1f})")
        for m in ("mean_cpu", "mean_memory", "mean_gpu", "reject_pct"):
            v = table[m].to_numpy()
            print(f"  {m:12s} median {np.median(v):.4f}  p1–p99 {np.quantile(v, 0.01):.4f}–{np.quantile(v, 0.99):.4f}  "
                  f"min–max {v.min():.4f}–{v.max():.4f}  paper {PAPER[m]}, ratio {np.median(v) / PAPER[m]:.3f}")
        weighted = {m: np.median([b[m] for b in by_time]) for m in ("mean_cpu", "mean_memory", "mean_gpu")}
        print("  averages weighted by time, not by arrival (medians): "
              + " / ".join(f"{weighted[m]:.4f}" for m in weighted) + f"; paper {PAPER['mean_cpu']} / "
              f"{PAPER['mean_memory']} / {PAPER['mean_gpu']}")
        for label, col in (("round to the paper's or below", "averages_as_low"), ("round to the paper's", "averages_alike")):
            k, few = int(table[col].sum()), int((table[col] & table["rejects_as_few"]).sum())
            print(f"  replicates whose three averages {label}: {share(k, args.replicates)}; "
                  f"of them with % reject ≤ {PAPER['reject_pct']}: {few}")
        for res in PAPER_SNAPSHOT:
            v = np.array([s[res] for s in snaps])
            print(f"  μ^sys {res:6s} at pod {exp.snapshot_pod} median {np.median(v):.4f}  p1–p99 "
                  f"{np.quantile(v, 0.01):.4f}–{np.quantile(v, 0.99):.4f}  paper {PAPER_SNAPSHOT[res]}")
        low = sum(s["cpu"] < PAPER_SNAPSHOT["cpu"] + 0.0005 and s["memory"] < PAPER_SNAPSHOT["memory"] + 0.0005 for s in snaps)
        print(f"  replicates whose snapshot μ^sys of CPU and memory round to the paper's or below: {share(low, args.replicates)}")
    print(f"\npeak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
