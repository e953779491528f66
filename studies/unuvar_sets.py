"""Study: Unuvar §IV-C/D statistics over many trace sets of a finished run (the evidence behind the causes).

The pipeline's ``unuvar_aggregates`` draws one set of the trace's long tasks per size (Tables II–VII). How much
do its numbers depend on that draw? This draws ``--sets`` sets per size with the same library code
(``aggregate.draw_trace_set``, ``set_aggregate``, §IV-C's 90% normalisation and eqs 7–8's Beta), and prints per
size the median, p10–p90 and min–max over the sets of: mean and std of utilisation, skewness, lag-1
autocorrelation, the K-S D against the fitted Beta, P(U ≥ 0.8) actual and Beta-estimated, beside the paper's
value, the ratio of the median to it, and whether it lies inside the sets' range (is the paper's one set a
likely draw of ours?). The measured causes ``workflow/papers/causes/unuvar.tail.md``, ``unuvar.ks_d.md`` and
``unuvar.ks_test.md`` quote its output on the default run.

Readings the pipeline does not take, to measure what they would change (issue 13's tail above 0.8):

* ``--observation file``: an observation is the mean of the set's total over each 1/500 of the span (about 17
  windows), reading §IV-A's "29 days … collected in 500 time points" as the trace's 500 files, instead of one
  5-minute window every 1/500 (``window``, §IV-C's "at every data measurement point", the pipeline's reading).
* ``--weekend-drop F``: a what-if, the set's total lowered by a further share F on the weekly pattern's low days
  (Beaumont §5.2: synchronised, 5 high days and 2 low; Table 4's mean weekly ratio 0.148 is the fundamental of a
  drop of about 0.3), on top of the weekly pattern the production jobs already carry (the printed "low days /
  other days").
* ``--clip-quantile Q`` and ``--smooth K``, two what-ifs on where the peak that sets the 90% normalisation comes
  from: each task's records capped at its own Q-quantile (bounded task peaks), or the set's total averaged over K
  windows (less 5-minute noise at the set's level).
* ``--divide daily-profile`` and ``--divide running``: two more what-ifs, the set's total with its average daily
  cycle, or its number of tasks running, divided out.
* ``--offsets K``: each set observed on K grids of 500 windows, shifted by equal steps within one spacing (about 17
  windows); the statistics are over sets × grids, and a line gives one set's lowest and highest P(U ≥ 0.8) over its
  grids: how much the share owes to where the 500 windows fall.
* ``--peak``: what makes each set's peak on the pipeline's grid: the rise over the set's mean split into who runs
  then (their own means) and how far they run above their own means, the production tasks' part (priority ≥ 9, from
  the run's tasks/task_stats.parquet) and the heaviest task's.
* ``--throttle proportional`` and ``--throttle batch-first``: each machine's total CPU bounded by its capacity
  (machine_events of the run's trace), as a real machine bounds it and the synthetic trace does not: in every window
  where a machine's tasks (all of them, from the map's records) sum above its capacity, every task is scaled down
  alike, or, as Borg shares a full machine, the non-production tasks first (production tasks, priority ≥ 9, keep
  theirs up to the capacity; the rest share what remains). Needs the run's map records and, for batch-first, its
  tasks/task_stats.parquet.
* ``--tasks all``: the sets drawn from every task of the trace (the map's records), not only the long ones (≥ 2 h).
  §IV-F offers the controller "30,000 task arrivals randomly selected … 154 tasks on average running": a mean life of
  154 × 29 days / 30,000 = 3.6 h, about the real trace's mean over all its tasks (133 k running at its start, task_events
  part 0, over some 25 M tasks in 29 days, Reiss et al. 2012: 3.7 h), so the paper's sets may hold short tasks too.

    python studies/unuvar_sets.py results/synthetic-default [--sets 30] [--job-cap N] [--observation file]
                                [--weekend-drop 0.3] [--tasks all] [--clip-quantile 0.9] [--smooth 36]
                                [--offsets 8] [--peak] [--throttle batch-first]
                                [--divide daily-profile]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # finished_run, shared with the benchmarks
import finished_run  # noqa: E402
from colocate.analysis import aggregate, betafit  # noqa: E402
from colocate.report import claims  # noqa: E402
from colocate.sources.contract import WINDOW_US, window_of  # noqa: E402

DAY_US = 86_400_000_000

PAPERS = Path(__file__).resolve().parents[1] / "workflow/papers"


def _paper() -> dict[int, tuple[float, ...]]:
    """Unuvar Tables II, IV, VI and VII per size (mean, std, K-S D, P actual, P Beta; §IV-C prints D for 18 tasks),
    from the claims the summary judges (``workflow/papers/unuvar.tsv``)."""
    printed = claims.printed(sorted(PAPERS.glob("*.tsv")))
    return {n: tuple(float(printed[betafit.claim_id(m, n)]) for m in ("mean", "std", "ks_d", "actual", "estimated"))
            for n in betafit.CLAIMED_SIZES}


PAPER = _paper()
NAMES = ("mean", "std", "skewness", "lag-1 autocorrelation", "K-S D", "P(U ≥ 0.8) actual", "P(U ≥ 0.8) Beta",
         "days of the top 25", "P(U ≥ 0.8), top 5 days", "CV within the top 5 days", "low days / other days", "tasks drawn", "K-S p")
PAPER_INDEX = {"mean": 0, "std": 1, "K-S D": 2, "P(U ≥ 0.8) actual": 3, "P(U ≥ 0.8) Beta": 4}


def statistics(u: np.ndarray, day: np.ndarray, low_days: list[int], threshold: float = 0.8) -> list[float]:
    """:data:`NAMES` (but the tasks drawn) of the utilisation ``u``; ``day`` is each observation's day since the trace start. Where the
    observations above the threshold lie: on how many days the 25 highest fall, and on the 5 days of highest mean,
    the share at or above the threshold and the coefficient of variation; and the mean on the weekly pattern's
    ``low_days`` over the mean on the other days."""
    m, s = float(u.mean()), float(u.std(ddof=1))
    a, b = betafit.beta_parameters(m, s**2)
    ks = stats.kstest(u, "beta", (a, b))
    days, at = np.unique(day, return_inverse=True)
    top_days = np.argsort(np.bincount(at, weights=u) / np.bincount(at))[::-1][:5]
    on = np.isin(at, top_days)
    low = np.isin(day % 7, low_days)
    return [m, s, float(stats.skew(u)), float(np.corrcoef(u[:-1], u[1:])[0, 1]),
            float(ks.statistic), float((u >= threshold).mean()), float(stats.beta.sf(threshold, a, b)),
            float(np.unique(day[np.argsort(u)[::-1][:25]]).size), float((u[on] >= threshold).mean()),
            float(u[on].std() / u[on].mean()), float(u[low].mean() / u[~low].mean()), float(ks.pvalue)]


def set_total(parts, drawn, column: str, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The set's total usage and its number of tasks running in every window lo..hi (zero where none of its tasks
    has a record): the pipeline's ``set_aggregate`` with one observation per window."""
    per = aggregate.set_aggregate(parts, drawn, column, lo, hi, hi - lo + 1)
    return per["usage"].to_numpy(), per["n_tasks"].to_numpy().astype(float)


def clipped_total(parts, drawn, column: str, lo: int, hi: int, quantile: float) -> np.ndarray:
    """The set's total with each task's records capped at the task's own ``quantile`` (a what-if: tasks whose peaks are
    bounded, as by a limit), in every window lo..hi."""
    rec = aggregate.set_series(parts, drawn, column)
    cap = rec.group_by("job_id", "task_index").agg(pl.col("usage").quantile(quantile, "linear").alias("cap"))
    rec = rec.join(cap, on=["job_id", "task_index"]).sort("job_id", "task_index", "window")
    usage = np.minimum(rec["usage"].to_numpy(), rec["cap"].to_numpy())
    return np.bincount(rec["window"].to_numpy() - lo, weights=usage, minlength=hi - lo + 1)


def peak_parts(parts, drawn, column: str, lo: int, window: int, mean: float, peak: float,
               production: pl.DataFrame | None = None) -> list[float]:
    """What makes the peak that sets the 90% normalisation: the set's rise ``peak`` − ``mean`` at ``window`` (counted
    from ``lo``) split into who runs there (its tasks' own means, over the set's mean) and how far they run above
    their own means (the two add up to 1), the part of the latter from ``production`` tasks (job_id, task_index;
    NaN without), and of the task with the largest usage there: its rise's share, its usage over its own mean and
    its hours of records."""
    rec = aggregate.set_series(parts, drawn, column)
    own = rec.group_by("job_id", "task_index").agg(pl.col("usage").mean().alias("own"), pl.len().alias("records"))
    at = (rec.filter(pl.col("window") == lo + window).join(own, on=["job_id", "task_index"])
          .sort("usage", "job_id", "task_index", descending=True))
    rise = peak - mean
    if at.height == 0 or not rise > 0:  # no task runs at the peak, or no peak: nothing to split
        return [float("nan")] * len(PEAK_NAMES)
    above = at.with_columns(above=pl.col("usage") - pl.col("own"))
    prod = (float("nan") if production is None else
            float(above.join(production, on=["job_id", "task_index"])["above"].sum()) / rise)
    top = at.row(0, named=True)
    return [(float(at["own"].sum()) - mean) / rise, float(above["above"].sum()) / rise, prod,
            (top["usage"] - top["own"]) / rise, top["usage"] / top["own"], top["records"] / 12]


PEAK_NAMES = ("who runs (their own means)", "tasks above their own means", "of which production tasks",
              "the heaviest task's rise", "the heaviest task over its own mean", "the heaviest task's hours")


def production_tasks(root: Path) -> pl.DataFrame | None:
    """The run's production tasks (priority ≥ 9, Beaumont's Normal Production and above) from tasks/task_stats.parquet
    (none there: an empty frame), or None where the run has no such file."""
    tasks = finished_run.run_subdir(root, "tasks", required=False)
    path = None if tasks is None else tasks / "task_stats.parquet"
    if path is None or not path.is_file():
        return None
    return pl.read_parquet(path, columns=["job_id", "task_index", "priority"]).filter(pl.col("priority") >= 9).drop("priority")


def _production_keys(production: pl.DataFrame | None) -> pl.LazyFrame:
    """The production tasks' keys (none: an empty frame), once each, flagged ``production``."""
    keys = (pl.DataFrame(schema={"job_id": pl.Int64, "task_index": pl.Int64}) if production is None else
            production.select("job_id", "task_index").unique())
    return keys.with_columns(production=pl.lit(True)).lazy()


def throttle_factors(records: pl.LazyFrame, capacity: pl.DataFrame, production: pl.DataFrame | None,
                     how: str) -> pl.DataFrame:
    """Per machine and window (``machine_id``, ``window``), the factors ``f_production`` and ``f_other`` that bring
    the CPU of the machine's tasks (``records``: every task's, with ``job_id``, ``task_index``, ``machine_id``,
    ``start_time``, ``cpu_rate``) down to its ``capacity`` (``machine_id``, ``capacity``) where they sum above it,
    and ``over``, whether they do.

    ``proportional``: every task alike, capacity / total. ``batch-first``, as Borg shares a full machine: the
    ``production`` tasks (``job_id``, ``task_index``) keep theirs up to the capacity, the others share what remains
    (nothing where production alone fills it). Machines of unknown capacity keep their records (factors 1)."""
    totals = (records.select("job_id", "task_index", "machine_id", window_of(), "cpu_rate")
              .join(_production_keys(production), on=["job_id", "task_index"], how="left")
              .group_by("machine_id", "window")
              .agg(pl.col("cpu_rate").filter(pl.col("production").is_not_null()).sum().alias("p"),
                   pl.col("cpu_rate").filter(pl.col("production").is_null()).sum().alias("o"))
              .collect().join(capacity, on="machine_id", how="inner"))
    c, p, o = pl.col("capacity"), pl.col("p"), pl.col("o")
    over = (p + o > c).alias("over")
    if how == "proportional":
        f = pl.when(p + o > c).then(c / (p + o)).otherwise(1.0)
        return totals.select("machine_id", "window", f.alias("f_production"), f.alias("f_other"), over)
    rest = pl.when(o > 0).then(((c - p).clip(0) / o).clip(0, 1)).otherwise(0.0)  # no other task's CPU: 0, not 0/0
    return totals.select("machine_id", "window",
                         pl.when(p > c).then(c / p).otherwise(1.0).alias("f_production"),
                         pl.when(p + o > c).then(rest).otherwise(1.0).alias("f_other"), over)


def throttled(parts, factors: pl.DataFrame, production: pl.DataFrame | None, column: str) -> list[pl.LazyFrame]:
    """The series ``parts`` with each record's ``column`` scaled by its machine's and window's factor
    (:func:`throttle_factors`): the production tasks' or the others'."""
    f = pl.when(pl.col("production").is_not_null()).then(pl.col("f_production")).otherwise(pl.col("f_other"))
    keys = _production_keys(production)
    return [part.with_columns(window_of()).join(keys, on=["job_id", "task_index"], how="left", maintain_order="left")
            .join(factors.lazy().drop("over"), on=["machine_id", "window"], how="left", maintain_order="left")
            .with_columns(pl.col(column) * f.fill_null(1.0))
            .drop("window", "production", "f_production", "f_other") for part in parts]


def smoothed(total: np.ndarray, windows: int) -> np.ndarray:
    """The centred moving average of the total over ``windows`` 5-minute windows (1: the total itself); at the ends,
    over the windows there are."""
    if windows <= 1:
        return total
    kernel = np.ones(windows)
    return np.convolve(total, kernel, mode="same") / np.convolve(np.ones(total.size), kernel, mode="same")


def divided(total: np.ndarray, running: np.ndarray, by: str) -> np.ndarray:
    """A what-if on where the set's excursions come from: the total with one source divided out, at its mean level.

    ``daily-profile``: the set's own average day (per 5-minute time of day, over the hour around it), the daily
    cycle its tasks share; ``running``: the number of its tasks running in the window, its arrivals and departures.
    """
    if by == "none":
        return total
    if by == "running":
        return np.where(running > 0, total / np.maximum(running, 1) * running[running > 0].mean(), 0.0)
    per_day = DAY_US // WINDOW_US
    slot = np.arange(total.size) % per_day
    profile = np.bincount(slot, weights=total, minlength=per_day) / np.maximum(np.bincount(slot, minlength=per_day), 1)
    hour = per_day // 24
    profile = np.convolve(np.r_[profile[-(hour // 2):], profile, profile[:hour // 2]], np.ones(hour + 1) / (hour + 1), "valid")
    return total / np.maximum(profile[slot], 1e-12) * profile.mean()


def observe(total: np.ndarray, observations: int, reading: str, offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``observations`` values of the total: evenly spaced windows (``set_aggregate``'s, shifted ``offset`` windows
    later; the last stays the last), or the mean over each 1/n; and the (first) window of each, counted from the
    total's first."""
    if reading == "window":
        at = np.unique(np.minimum(np.linspace(0, total.size - 1, observations).round().astype(np.int64) + offset,
                                  total.size - 1))
        return total[at], at
    part = np.minimum(np.arange(total.size) * observations // total.size, observations - 1)
    return np.bincount(part, weights=total) / np.bincount(part), np.searchsorted(part, np.arange(observations))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workdir", type=Path, help="a finished run: its working directory (with one results/<run>) or results/<run> itself")
    ap.add_argument("--sets", type=int, default=30)
    ap.add_argument("--job-cap", type=int, default=None, help="tasks per job at most (default: the smallest that reaches n)")
    ap.add_argument("--observations", type=int, default=500)
    ap.add_argument("--column", default="avg")
    ap.add_argument("--observation", choices=("window", "file"), default="window",
                    help="one 5-minute window every 1/500 of the span (the pipeline's), or the mean over each 1/500")
    ap.add_argument("--offsets", type=int, default=1,
                    help="observe each set on this many grids, shifted by equal steps within one spacing (1: the pipeline's)")
    ap.add_argument("--peak", action="store_true",
                    help="also print what makes each set's peak (the pipeline's grid): who runs, how far above their own means")
    ap.add_argument("--clip-quantile", type=float, default=1.0,
                    help="cap each task's records at its own quantile before summing (1: no cap)")
    ap.add_argument("--smooth", type=int, default=1, help="moving average of the set's total over this many windows")
    ap.add_argument("--divide", choices=("none", "daily-profile", "running"), default="none",
                    help="divide the set's total by its average daily profile or by its tasks running (a what-if)")
    ap.add_argument("--tasks", choices=("long", "all"), default="long",
                    help="draw the sets from the long tasks (the pipeline's) or from every task (§IV-F's 30,000 arrivals)")
    ap.add_argument("--throttle", choices=("none", "proportional", "batch-first"), default="none",
                    help="bound each machine's total CPU by its capacity: every task alike, or the non-production tasks first")
    ap.add_argument("--weekend-drop", type=float, default=0.0, help="lower the total by this share on the low days")
    ap.add_argument("--weekend-days", type=int, nargs="+", default=[5, 6],
                    help="the low days, as days since the trace start modulo 7 (synthetic.weekend_days)")
    args = ap.parse_args()
    if not 0 <= args.weekend_drop < 1:
        sys.exit(f"--weekend-drop must be in [0, 1), got {args.weekend_drop}")
    if args.offsets < 1 or (args.offsets > 1 and args.observation != "window"):
        sys.exit(f"--offsets must be ≥ 1, and 1 with --observation file, got {args.offsets}")
    if args.peak and (args.smooth > 1 or args.clip_quantile < 1 or args.divide != "none" or args.weekend_drop > 0):
        sys.exit("--peak splits the recorded total: it cannot follow --smooth, --clip-quantile, --divide or --weekend-drop")
    if not 0 < args.clip_quantile <= 1 or args.smooth < 1:
        sys.exit(f"--clip-quantile must be in (0, 1] and --smooth ≥ 1, got {args.clip_quantile} and {args.smooth}")
    if args.tasks == "long":
        parts, records, lo, hi = finished_run.task_series(args.workdir, "results/*/reduce/bucket-*/series.parquet")
    else:  # every task's map records; their 5-minute mean CPU rate is the reduce's avg before its fixes
        parts, records, lo, hi = finished_run.task_series(args.workdir, "results/*/map/task_usage/*/records.parquet",
                                                               {"cpu_rate": "avg"})
    production = production_tasks(args.workdir) if args.peak or args.throttle != "none" else None
    if args.throttle != "none":  # every task's records set the machine totals, long or short
        run = finished_run.run_subdir(args.workdir, "map").parent
        if args.throttle == "batch-first" and production is None:
            sys.exit(f"{run}: --throttle batch-first needs the run's tasks/task_stats.parquet (its production tasks)")
        factors = throttle_factors(pl.scan_parquet(sorted(run.glob("map/task_usage/*/records.parquet"))),
                                   finished_run.capacities(finished_run.run_trace(
                                       run, " (its machine_events give --throttle the capacities)")),
                                   production, args.throttle)
        parts = throttled(parts, factors, production, args.column)
        print(f"throttle {args.throttle}: {factors['over'].mean():.2%} of {factors.height:,} machine-windows "
              f"above their machine's capacity; production tasks throttled in {(factors['f_production'] < 1).mean():.2%}")
    kind = "long tasks" if args.tasks == "long" else "tasks"
    print(f"{records.height:,} {kind} of {records['job_id'].n_unique():,} jobs over windows {lo}..{hi}; {args.sets} sets per size; "
          f"observation {args.observation}, weekend drop {args.weekend_drop:g}, "
          f"tasks clipped at their {args.clip_quantile:g}-quantile, total smoothed over {args.smooth} window(s), "
          f"{args.offsets} grid offset(s)")
    sizes, skipped, running = aggregate.feasible_sizes(records, lo, hi, list(PAPER))
    if skipped:  # too little data: the sizes the long tasks cannot reach on average are said, not drawn
        print(f"sizes {', '.join(map(str, skipped))} skipped: the {kind} run {running:.1f} at a time on average")
    if sizes and hi - lo + 1 < args.observations:  # too little data: said, not a page of NaN
        print(f"too little data: the {kind}' series cover {hi - lo + 1} window(s), fewer than the "
              f"{args.observations} observations of a set")
        return
    step = max(hi - lo, 0) / max(args.observations - 1, 1)  # the grid's spacing, in windows (none: no windows)
    grids = sorted({int(step * i / args.offsets) for i in range(args.offsets)})  # distinct offsets; 0 the pipeline's
    windows = np.arange(lo, hi + 1)
    factor = np.where(np.isin((windows * WINDOW_US // DAY_US) % 7, args.weekend_days), 1 - args.weekend_drop, 1.0)
    for n in sizes:
        paper = PAPER[n]
        rows, spread, peaks = [], [], []
        for seed in range(args.sets):
            drawn, cap = aggregate.draw_trace_set(records, n, hi - lo + 1, np.random.default_rng(seed), args.job_cap)
            total, alive = set_total(parts, drawn, args.column, lo, hi)
            if args.clip_quantile < 1:
                total = clipped_total(parts, drawn, args.column, lo, hi, args.clip_quantile)
            total = divided(total, alive, args.divide)
            total = smoothed(total * factor, args.smooth)
            p_set = []
            for offset in grids:
                values, at = observe(total, args.observations, args.observation, offset)
                st = statistics(aggregate.normalise_to_peak(values), (lo + at) * WINDOW_US // DAY_US, args.weekend_days)
                rows.append([*st[:-1], float(drawn.height), st[-1]])
                p_set.append(st[NAMES.index("P(U ≥ 0.8) actual")])
                if args.peak and offset == 0:  # the pipeline's grid
                    peaks.append(peak_parts(parts, drawn, args.column, lo, int(at[np.argmax(values)]),
                                            float(values.mean()), float(values.max()), production))
            spread.append((min(p_set), max(p_set)))
        r = np.array(rows)
        print(f"\n{n} tasks (cap {cap} per job)")
        for i, name in enumerate(NAMES):
            med, p10, p90 = np.median(r[:, i]), np.quantile(r[:, i], 0.1), np.quantile(r[:, i], 0.9)
            lo_, hi_ = r[:, i].min(), r[:, i].max()
            ref = paper[PAPER_INDEX[name]] if name in PAPER_INDEX else None
            # the paper's one set within the range of ours: an (n − 1)/(n + 1) prediction interval of one more draw
            # (over sets × grids the rows are not independent draws: the range verdict is left out)
            vs = (f"  paper {ref:g}, ratio {med / ref:.2f}"
                  + (f", {'inside' if lo_ <= ref <= hi_ else 'outside'} the range" if len(grids) == 1 else "")
                  if ref else "")
            print(f"  {name:24s} median {med:.3f}  p10–p90 {p10:.3f}–{p90:.3f}  min–max {lo_:.3f}–{hi_:.3f}{vs}")
        print(f"  K-S test at 0.05 rejects the Beta in {int((r[:, -1] < 0.05).sum())} of {len(rows)} sets"
              + (" × grids" if len(grids) > 1 else ""))
        if peaks:  # shares of the peak's rise over the set's mean, then the heaviest task's ratio and hours
            pk = [np.median(c) if not np.isnan(c).all() else np.nan for c in np.array(peaks).T]
            print("  the peak's rise over the mean (medians over the sets): "
                  + ", ".join(f"{name} {round(v, 2) + 0.0:.2f}" for name, v in zip(PEAK_NAMES, pk)))
        if len(grids) > 1:  # how much one set's P(U ≥ 0.8) owes to where its 500 windows fall
            s = np.array(spread)
            print(f"  P(U ≥ 0.8) actual of one set over its {len(grids)} grids: lowest {np.median(s[:, 0]):.3f}, "
                  f"highest {np.median(s[:, 1]):.3f} (medians over the sets)")


if __name__ == "__main__":
    main()
