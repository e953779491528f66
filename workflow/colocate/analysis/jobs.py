"""Jobs of the trace: dominant jobs, job sizes, task balance and durations (Beaumont et al. §3, §4.1, §4.3, §5.1).

Everything here works on the map's job × 5-minute-window aggregates
(:func:`colocate.prep.mapreduce.map_task_usage`: ``job_id``, ``window``,
``n_tasks``, ``n_records``, ``cpu_sum``, ``mem_sum``, ``cpu_p10``,
``cpu_p90``) and on the job table built from task_events and job_events
pieces, never on raw records, so the full trace's 8352 windows fit in memory.

* **Dominant jobs** (§3): D_i is the smallest set of jobs accounting for at
  least 90% of window i's CPU; D = ∪ D_i (:func:`flag_dominant`).
  Table 1 (:func:`dominant_table`) describes, per window, the jobs of D alive
  in it and their share of jobs, CPU and memory; Fig 1 (:func:`class_shares`)
  stacks D's tasks, CPU and memory by priority class.
* **Job usage distributions** (§4.1, Table 2, Fig 2): the log of each dominant
  job's mean CPU and memory per class, fitted with a Gaussian and a two-component
  Gaussian mixture, chosen by BIC (:func:`usage_mixtures`).
* **Task balance** (§4.3, Figs 4–5): the interdecile ratio of a job's task
  count over time (:func:`task_count_dispersion`) and the 80% threshold of the
  per-window interdecile ratio of task CPU (:func:`balance_thresholds`).
* **Durations** (§5.1, Table 3): :func:`job_lifetimes` from job_events,
  :func:`duration_table` per class.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

import numpy as np
import polars as pl

from colocate.measure import measurement
from colocate.sources.contract import CLASSES, ORIGIN_US, WINDOW_US, WINDOWS_PER_DAY, EventType, class_expr

#: Classes in the paper's tables (Beaumont Tables 2-3, Fig 5): the three with many dominant jobs.
MAIN_CLASSES = ("production", "gratis", "other")
#: Job events that end a job (schema v2.1): EVICT, FAIL, FINISH, KILL, LOST.
TERMINAL_EVENTS = (EventType.EVICT, EventType.FAIL, EventType.FINISH, EventType.KILL, EventType.LOST)
JOB_WINDOW_COLUMNS = ["job_id", "window", "n_tasks", "n_records", "cpu_sum", "mem_sum", "cpu_p10", "cpu_p90"]
#: Rows of Beaumont Tables 1 and 4.
TABLE_STATS = ("mean", "std", "min", "25%", "50%", "75%", "max")


# ----------------------------------------------------------------------------- job table


def map_job_events(events: pl.DataFrame) -> pl.DataFrame:
    """One job_events shard → job pieces: first SUBMIT and SCHEDULE, last terminal event and its type.

    Times are µs as in the trace (0 = before the trace). A job whose events
    span several shards has a piece in each; :func:`combine_job_pieces` merges them.
    """
    terminal = pl.col("event_type").is_in([int(e) for e in TERMINAL_EVENTS])
    t = pl.col("time")
    return (
        events.group_by("job_id")
        .agg(
            t.filter(pl.col("event_type") == int(EventType.SUBMIT)).min().alias("submit_us"),
            t.filter(pl.col("event_type") == int(EventType.SCHEDULE)).min().alias("schedule_us"),
            t.filter(terminal).max().alias("end_us"),
            pl.col("event_type").filter(terminal).sort_by(t.filter(terminal)).last().alias("end_event"),
        )
        .sort("job_id")
    )


def combine_job_pieces(pieces: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Merge job pieces of several job_events shards into one row per job.

    A LazyFrame (``pl.scan_parquet`` of the pieces) is aggregated by polars' streaming engine: memory grows
    with the jobs, not with the pieces.
    """
    return (
        pieces.lazy().group_by("job_id")
        .agg(
            pl.col("submit_us").min(),
            pl.col("schedule_us").min(),
            pl.col("end_us").max(),
            pl.col("end_event").sort_by("end_us", nulls_last=False).last(),
        )
        .sort("job_id")
        .collect(engine="streaming")
    )


def job_table(task_pieces: pl.DataFrame | pl.LazyFrame, priority_classes: Mapping[str, Iterable[int]]) -> pl.DataFrame:
    """Jobs from task_events pieces (:func:`colocate.prep.mapreduce.map_task_events`): priority, class, tasks.

    ``class`` is the contract's class of the priority, by the source's ``priority_classes`` (class → priorities).

    A job's priority is its earliest task event's (job_events carry none; of simultaneous ones, the lowest);
    ``n_tasks`` counts distinct task indices. A LazyFrame (``pl.scan_parquet`` of every shard's pieces) is
    aggregated by polars' streaming engine, so memory grows with the jobs rather than with the pieces.
    """
    return (
        task_pieces.lazy().group_by("job_id")
        .agg(
            pl.col("priority").sort_by("first_time", "priority").first(),  # ties: the lowest, whatever the engine
            pl.col("task_index").n_unique().cast(pl.Int32).alias("n_tasks"),
            pl.col("first_time").min().alias("first_task_event_us"),
            pl.col("last_event").max().alias("last_task_event_us"),
        )
        .with_columns(class_expr(priority_classes))
        .sort("job_id")
        .collect(engine="streaming")
    )


def job_lifetimes(job_pieces: pl.DataFrame | pl.LazyFrame, n_windows: int, whole_table: bool = True) -> pl.DataFrame:
    """Start, end and duration of each job from its job_events (Beaumont §5.1).

    Start: the first SCHEDULE (else SUBMIT), clipped to the trace start (events
    at time 0 happened before the trace); end: the last terminal event, or, for
    jobs still running, the end of what the job_events read cover (``ended`` is
    False: their duration is censored, as the paper's "29 days"). A
    ``whole_table`` (every shard) covers the trace; a part of its shards (the
    shipped sample's 2 of 500) covers up to the 5-minute window of its last
    event (2.8 h), where a job still running is ``censored_early``: it was only
    seen that long. ``duration_min`` is in minutes.
    """
    trace_end = ORIGIN_US + n_windows * WINDOW_US
    jobs = combine_job_pieces(job_pieces)
    observed_end = trace_end
    if not whole_table:
        last = jobs.select(pl.max_horizontal(pl.col("submit_us").max(), pl.col("schedule_us").max(),
                                             pl.col("end_us").max())).item()
        covered = max((last or 0) - ORIGIN_US, 0) // WINDOW_US + 1  # windows up to the last event's
        observed_end = min(trace_end, ORIGIN_US + covered * WINDOW_US)
    start = pl.coalesce("schedule_us", "submit_us").clip(ORIGIN_US, trace_end)
    end = pl.col("end_us").fill_null(observed_end).clip(ORIGIN_US, trace_end)
    return jobs.with_columns(
        start.alias("start_us"),
        end.alias("end_us"),
        pl.col("end_us").is_not_null().alias("ended"),
    ).with_columns(
        ((pl.col("end_us") - pl.col("start_us")).clip(0) / 60e6).alias("duration_min"),
        (~pl.col("ended") & pl.lit(observed_end < trace_end)).alias("censored_early"),
    )


# ----------------------------------------------------------------------------- dominant jobs (§3)


def flag_dominant(job_windows: pl.DataFrame, cpu_share: float = 0.9) -> pl.DataFrame:
    """Add ``in_Di``: whether the job belongs to D_i, the dominant jobs of its window (Beaumont §3).

    D_i is the smallest set of jobs whose CPU adds up to at least ``cpu_share``
    of window i's CPU: the largest jobs first, until the share is reached.
    Ties in CPU are broken by job ID, so the set is unique. A window with no
    CPU has an empty D_i.
    """
    if not 0 < cpu_share <= 1:
        raise ValueError(f"cpu_share must be in (0, 1], got {cpu_share}")
    before = pl.col("cpu_sum").cum_sum().over("window") - pl.col("cpu_sum")
    # a relative slack so that a set reaching the share exactly is not spoilt by rounding in the cumulative sum
    need = cpu_share * pl.col("cpu_sum").sum().over("window") * (1 - 1e-12)
    return (
        job_windows.sort(["window", "cpu_sum", "job_id"], descending=[False, True, False])
        .with_columns(
            ((before < need) & (pl.col("cpu_sum") > 0)).alias("in_Di")
        )
        .sort("window", "job_id")
    )


def dominant_by_chunks(
    load: Callable[[int, int], pl.DataFrame], n_windows: int, cpu_share: float = 0.9, chunk: int = 288
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """D and its job × window rows, ``chunk`` windows at a time (Beaumont §3), in memory bounded by a chunk.

    ``load(lo, hi)`` returns the job × window aggregates of windows lo ≤ w < hi
    (pieces of a window cut by a shard boundary are merged here). Two passes:
    the first finds D = ∪ D_i, the second keeps D's rows and the per-window
    totals (:func:`window_totals`). Returns (D's rows sorted by job and window, totals).
    """
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1 window, got {chunk}")
    bounds = [(lo, min(lo + chunk, n_windows)) for lo in range(0, n_windows, chunk)]
    ids = [flag_dominant(merge_job_windows(load(lo, hi)), cpu_share).filter("in_Di")["job_id"].unique() for lo, hi in bounds]
    dominant_ids = pl.concat(ids).unique().sort() if ids else pl.Series("job_id", [], dtype=pl.Int64)
    rows, totals = [], []
    for lo, hi in bounds:
        flagged = flag_dominant(merge_job_windows(load(lo, hi)), cpu_share)
        totals.append(window_totals(flagged, dominant_ids))
        rows.append(flagged.filter(pl.col("job_id").is_in(dominant_ids.implode())).drop("in_Di"))
    return pl.concat(rows).sort("job_id", "window"), pl.concat(totals).sort("window")


def window_totals(flagged: pl.DataFrame, dominant_ids: pl.Series) -> pl.DataFrame:
    """Per window: all alive jobs and their usage, |D_i|, and the jobs of D alive and their usage.

    ``flagged`` is :func:`flag_dominant`'s output for some windows; a job is
    alive in a window when it has a usage record in it.
    """
    in_d = pl.col("job_id").is_in(dominant_ids.implode())
    return (
        flagged.group_by("window")
        .agg(
            pl.len().cast(pl.Int32).alias("jobs"),
            pl.col("in_Di").sum().cast(pl.Int32).alias("jobs_Di"),
            in_d.sum().cast(pl.Int32).alias("jobs_D"),
            pl.col("n_tasks").sum().alias("tasks"),
            pl.col("n_tasks").filter(in_d).sum().alias("tasks_D"),
            pl.col("cpu_sum").sum().alias("cpu"),
            pl.col("cpu_sum").filter(in_d).sum().alias("cpu_D"),
            pl.col("cpu_sum").filter("in_Di").sum().alias("cpu_Di"),
            pl.col("mem_sum").sum().alias("mem"),
            pl.col("mem_sum").filter(in_d).sum().alias("mem_D"),
        )
        .sort("window")
    )


def describe(v: np.ndarray) -> list[float | None]:
    """The rows of Beaumont's Tables 1 and 4 (:data:`TABLE_STATS`: mean, std, min, quartiles, max) of the finite values."""
    v = np.asarray(v, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return [None] * len(TABLE_STATS)
    q = np.quantile(v, [0.25, 0.5, 0.75])
    return [float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0, float(v.min()), *map(float, q), float(v.max())]


def _describe(values: dict[str, np.ndarray]) -> pl.DataFrame:
    cols = {name: describe(v) for name, v in values.items()}
    return pl.DataFrame(
        {"statistic": list(TABLE_STATS), **cols}, schema={"statistic": pl.String, **{k: pl.Float64 for k in cols}}
    )


def dominant_table(totals: pl.DataFrame) -> pl.DataFrame:
    """Beaumont Table 1: per window, the jobs of D alive and their shares of jobs, CPU and memory.

    Columns as the paper's (``jobs_D``, ``share_jobs``, ``R_cpu``, ``R_mem``;
    rows mean, std, min, quartiles, max over windows), plus |D_i| and its CPU
    share (at least ``cpu_share`` by construction) for comparison. Windows
    without jobs are left out.
    """
    t = totals.filter(pl.col("jobs") > 0)
    return _describe(
        {
            "jobs_D": t["jobs_D"].to_numpy(),
            "share_jobs": (t["jobs_D"] / t["jobs"]).to_numpy(),
            "R_cpu": (t["cpu_D"] / t["cpu"]).to_numpy(),
            "R_mem": (t["mem_D"] / t["mem"]).to_numpy(),
            "jobs_Di": t["jobs_Di"].to_numpy(),
            "share_jobs_Di": (t["jobs_Di"] / t["jobs"]).to_numpy(),
            "R_cpu_Di": (t["cpu_Di"] / t["cpu"]).to_numpy(),
        }
    )


def dominant_jobs(dominant_windows: pl.DataFrame, jobs: pl.DataFrame, n_windows: int) -> pl.DataFrame:
    """One row per job of D: class, alive windows, mean usage (§4.1) and task-count spread (§4.3).

    ``cpu_mean``/``mem_mean`` average the job's total CPU/memory over the
    windows it is alive in. ``runs_whole_trace`` is True when the job is alive
    in every window of the trace.
    """
    per_job = (
        dominant_windows.group_by("job_id")
        .agg(
            pl.len().cast(pl.Int32).alias("n_windows"),
            pl.col("window").min().alias("first_window"),
            pl.col("window").max().alias("last_window"),
            pl.col("cpu_sum").mean().alias("cpu_mean"),
            pl.col("mem_sum").mean().alias("mem_mean"),
            pl.col("n_tasks").mean().alias("tasks_mean"),
            pl.col("n_tasks").max().alias("tasks_max"),
            pl.col("n_tasks").cast(pl.Float64).quantile(0.1, "linear").alias("tasks_p10"),
            pl.col("n_tasks").cast(pl.Float64).quantile(0.9, "linear").alias("tasks_p90"),
        )
        .with_columns((pl.col("n_windows") == n_windows).alias("runs_whole_trace"))
    )
    cols = [c for c in ("priority", "class", "n_tasks", "duration_min", "ended", "end_us", "censored_early") if c in jobs.columns]
    return (
        per_job.join(jobs.select("job_id", *cols).rename({"n_tasks": "n_tasks_total"}, strict=False), on="job_id", how="left")
        .with_columns(pl.col("class").fill_null("unknown"))
        .sort("job_id")
    )


def class_shares(dominant_windows: pl.DataFrame, dominant: pl.DataFrame, totals: pl.DataFrame) -> pl.DataFrame:
    """Beaumont Fig 1: tasks, CPU and memory of D per priority class, as shares of the whole cluster's.

    Summed over all windows (the average share per window, weighted by the
    window's total), so the three columns add up to D's share of everything.
    """
    joined = dominant_windows.join(dominant.select("job_id", "class"), on="job_id", how="left")
    total = totals.select(pl.col("tasks").sum(), pl.col("cpu").sum(), pl.col("mem").sum()).row(0, named=True)
    out = (
        joined.group_by("class")
        .agg(
            (pl.col("n_tasks").sum() / max(total["tasks"], 1)).alias("tasks"),
            (pl.col("cpu_sum").sum() / max(total["cpu"], 1e-300)).alias("cpu"),
            (pl.col("mem_sum").sum() / max(total["mem"], 1e-300)).alias("memory"),
        )
    )
    order = {c: i for i, c in enumerate(CLASSES)}
    return out.sort(pl.col("class").replace_strict(order, default=len(order), return_dtype=pl.Int32))


def merge_job_windows(job_windows: pl.DataFrame) -> pl.DataFrame:
    """Job × window aggregates of all shards, one row per (job, window).

    A window cut by a shard boundary has a piece in each shard: sums add up;
    the CPU percentiles are taken from the piece with most records (an
    approximation only there; synthetic shards end on window boundaries).
    """
    key = ["job_id", "window"]
    dup = job_windows.select(pl.struct(key).is_duplicated()).to_series()
    if not dup.any():
        return job_windows.select(JOB_WINDOW_COLUMNS).sort("window", "job_id")
    merged = (
        job_windows.filter(dup)
        # every column in the sort: pieces tying on n_records give the same first() and sums in every run
        .sort("n_records", "cpu_p90", "cpu_p10", "n_tasks", "cpu_sum", "mem_sum", descending=True)
        .group_by(key)
        .agg(
            pl.col("n_tasks").sum(),
            pl.col("n_records").sum(),
            pl.col("cpu_sum").sum(),
            pl.col("mem_sum").sum(),
            pl.col("cpu_p10").first(),
            pl.col("cpu_p90").first(),
        )
    )
    return pl.concat([job_windows.filter(~dup).select(JOB_WINDOW_COLUMNS), merged.select(JOB_WINDOW_COLUMNS)]).sort(
        "window", "job_id"
    )


# ----------------------------------------------------------------------------- job usage distributions (§4.1)


def usage_mixtures(
    dominant: pl.DataFrame, classes: tuple[str, ...] = MAIN_CLASSES, n_init: int = 5, seed: int = 0
) -> pl.DataFrame:
    """Beaumont Table 2: the log of dominant jobs' mean CPU and memory, per class, as 1 and 2 Gaussians.

    Fits scikit-learn GaussianMixture with one component (a log-normal) and
    with two (a mixture of two log-normals), each from ``n_init`` seeded
    starts, and keeps the one with the lower BIC. Logs are natural. One row per
    (resource, class): ``mu``/``sigma`` of the single Gaussian, the mixture's
    ``lambda1, mu1, sigma1, lambda2, mu2, sigma2`` (components ordered by
    weight, largest first), both BICs and ``chosen`` (1 or 2). A class with
    fewer than 4 jobs gets nulls (a two-component fit needs more points than
    parameters).
    """
    from sklearn.mixture import GaussianMixture

    rows = []
    for resource, col in (("cpu", "cpu_mean"), ("memory", "mem_mean")):
        for cls in classes:
            x = dominant.filter((pl.col("class") == cls) & (pl.col(col) > 0))[col].to_numpy()
            row: dict = {"resource": resource, "class": cls, "n_jobs": int(x.size)}
            if x.size >= 4:
                z = np.log(x).reshape(-1, 1)
                fits = [GaussianMixture(k, n_init=n_init, random_state=seed).fit(z) for k in (1, 2)]
                one, two = fits
                order = np.argsort(-two.weights_, kind="stable")
                row |= {"mu": float(one.means_[0, 0]), "sigma": float(np.sqrt(one.covariances_[0, 0, 0]))}
                for i, c in enumerate(order, start=1):
                    row |= {
                        f"lambda{i}": float(two.weights_[c]),
                        f"mu{i}": float(two.means_[c, 0]),
                        f"sigma{i}": float(np.sqrt(two.covariances_[c, 0, 0])),
                    }
                row |= {"bic1": float(one.bic(z)), "bic2": float(two.bic(z))}
                row["chosen"] = 1 if row["bic1"] <= row["bic2"] else 2
            rows.append(row)
    schema = {"resource": pl.String, "class": pl.String, "n_jobs": pl.Int64}
    schema |= {k: pl.Float64 for k in ("mu", "sigma", "lambda1", "mu1", "sigma1", "lambda2", "mu2", "sigma2", "bic1", "bic2")}
    schema |= {"chosen": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


# ----------------------------------------------------------------------------- task balance (§4.3)


def task_count_dispersion(dominant: pl.DataFrame) -> pl.DataFrame:
    """Interdecile ratio (p90/p10) of each dominant job's task count over its windows (Beaumont §4.3).

    Needs ``tasks_p10``/``tasks_p90`` (:func:`dominant_jobs`). Returns job_id,
    class and ``task_count_idr`` (≥ 1; 1 when the number of tasks never varies
    beyond the deciles).
    """
    return dominant.select(
        "job_id", "class", (pl.col("tasks_p90") / pl.col("tasks_p10")).alias("task_count_idr")
    ).sort("job_id")


def balance_thresholds(dominant_windows: pl.DataFrame, dominant: pl.DataFrame, quantile: float = 0.8) -> pl.DataFrame:
    """Beaumont Fig 5: per job, the ``quantile`` (80%) threshold of its per-window interdecile ratio of task CPU.

    The per-window ratio is p90/p10 of the CPU rate of the job's tasks in that
    window (a narrow distribution: a well balanced load). A job's threshold
    r is such that in 80% of its windows the ratio is below r. Windows whose
    p10 is 0 have an infinite ratio (some tasks idle): they count as
    unbalanced. Only windows with at least 2 tasks are used (one task is
    trivially balanced); jobs with none get a null threshold.
    """
    ratio = (
        pl.when(pl.col("cpu_p10") > 0)
        .then(pl.col("cpu_p90") / pl.col("cpu_p10"))
        .when(pl.col("cpu_p90") > 0)
        .then(float("inf"))
        .otherwise(1.0)
    )
    per_job = (
        dominant_windows.filter(pl.col("n_tasks") >= 2)
        .with_columns(ratio.alias("ratio"))
        .group_by("job_id")
        .agg(
            # the empirical quantile (inverse CDF): the smallest r with share(ratio ≤ r) ≥ quantile
            pl.col("ratio").sort().get(((pl.len() * quantile) - 1e-9).ceil().cast(pl.Int64) - 1).alias("threshold"),
            pl.len().alias("windows_used"),
        )
    )
    return dominant.select("job_id", "class").join(per_job, on="job_id", how="left").sort("job_id")


def share_below(values: pl.Series | np.ndarray, limit: float, inclusive: bool = True) -> float:
    """Share of finite-or-infinite non-null values at most (or below) ``limit``."""
    v = np.asarray(pl.Series(values).drop_nulls().to_numpy(), dtype=np.float64)
    if v.size == 0:
        return float("nan")
    return float(np.mean(v <= limit) if inclusive else np.mean(v < limit))


def balance_table(dispersion: pl.DataFrame, thresholds: pl.DataFrame) -> pl.DataFrame:
    """Beaumont §4.3 per class (and all jobs): task-count interdecile ratio = 1 and ≤ 2, Fig 5 threshold < 2.

    Shares are over jobs with a value (``jobs``, ``jobs_with_threshold``).
    """
    rows = []
    for cls in ("all", *MAIN_CLASSES):
        d = dispersion if cls == "all" else dispersion.filter(pl.col("class") == cls)
        t = thresholds if cls == "all" else thresholds.filter(pl.col("class") == cls)
        thr = t["threshold"].drop_nulls()
        rows.append(
            {
                "class": cls,
                "jobs": d.height,
                "task_count_idr_1": share_below(d["task_count_idr"], 1.0),
                "task_count_idr_le_2": share_below(d["task_count_idr"], 2.0),
                "jobs_with_threshold": thr.len(),
                "threshold_below_2": share_below(thr, 2.0, inclusive=False),
                "threshold_median": float(thr.median()) if thr.len() else None,
            }
        )
    return pl.DataFrame(rows)


def example_jobs(dominant: pl.DataFrame, dispersion: pl.DataFrame) -> dict[str, int]:
    """Beaumont Fig 4's two examples: a long job with a constant task count and one whose count varies most.

    Chosen deterministically among jobs alive in at least half the longest
    job's windows: (a) the one with interdecile ratio 1 and the most tasks,
    (b) the one with the largest ratio. Either may be missing.
    """
    d = dominant.join(dispersion.select("job_id", "task_count_idr"), on="job_id").filter(pl.col("tasks_max") >= 2)
    if d.height == 0:
        return {}
    long = d.filter(pl.col("n_windows") >= 0.5 * d["n_windows"].max())
    out = {}
    constant = long.filter(pl.col("task_count_idr") == 1).sort(["tasks_mean", "job_id"], descending=[True, False])
    if constant.height:
        out["constant"] = int(constant["job_id"][0])
    variable = long.filter(pl.col("task_count_idr") > 1).sort(["task_count_idr", "job_id"], descending=[True, False])
    if variable.height:
        out["variable"] = int(variable["job_id"][0])
    return out


# ----------------------------------------------------------------------------- durations (§5.1)

_DURATION_QUANTILES = (0.25, 0.5, 0.75, 0.9, 0.95, 0.99)


def duration_table(dominant: pl.DataFrame, classes: tuple[str, ...] = ("gratis", "production", "other")) -> pl.DataFrame:
    """Beaumont Table 3: mean, std and percentiles of dominant jobs' durations (minutes) per class.

    Durations come from job_events (:func:`job_lifetimes`); jobs running at
    the trace end count with the time they were seen (the paper's "29 days").
    Jobs without job events are left out (``jobs_without_events``).

    Where the job_events read end before the trace does (``censored_early``
    jobs, counted in that row; ``events_end_min`` says when, in minutes since
    the trace start), a duration is only known to exceed the time seen, which
    differs by job (each is censored at the end less its own start). The q-th
    percentile is kept only where every duration its interpolation reads is an
    ended job's, below the shortest censored one (then the true percentile is
    the same); the mean and std only without such jobs. Too little data: the
    statistic is empty, not biased.
    """
    rows = []
    stats = ("n", "mean", "std", *(f"{int(q * 100)}%" for q in _DURATION_QUANTILES), "jobs_without_events",
             "censored_early", "events_end_min")
    for stat in stats:
        row: dict = {"statistic": stat}
        for cls in classes:
            sub = dominant.filter(pl.col("class") == cls)
            seen = sub.filter(pl.col("duration_min").is_not_null()) if "duration_min" in sub.columns else sub.clear()
            d = seen["duration_min"].to_numpy() if "duration_min" in seen.columns else np.empty(0)
            early = seen["censored_early"].to_numpy() if "censored_early" in seen.columns else np.zeros(d.size, bool)
            if stat == "n":
                row[cls] = float(d.size)
            elif stat == "jobs_without_events":
                row[cls] = float(sub.height - d.size)
            elif stat == "censored_early":
                row[cls] = float(early.sum())
            elif stat == "events_end_min":
                row[cls] = float((seen["end_us"].filter(seen["censored_early"]).max() - ORIGIN_US) / 60e6) if early.any() else None
            elif d.size == 0:
                row[cls] = None
            elif stat == "mean":
                row[cls] = float(d.mean()) if not early.any() else None
            elif stat == "std":
                row[cls] = (float(d.std(ddof=1)) if d.size > 1 else 0.0) if not early.any() else None
            else:
                q = int(stat[:-1]) / 100
                # ended durations below the shortest censored one: their order statistics are the true ones
                known = int((d < d[early].min()).sum()) if early.any() else d.size
                row[cls] = float(np.quantile(d, q)) if math.ceil(q * (d.size - 1)) < known else None
        rows.append(row)
    return pl.DataFrame(rows, schema={"statistic": pl.String, **{c: pl.Float64 for c in classes}})


# ----------------------------------------------------------------------------- summary


def alive_share_identity(totals: pl.DataFrame) -> dict[str, float] | None:
    """Over the windows of :func:`window_totals` with a job: the tasks a job of D runs (``T_D``) and another alive
    job (``t_N``), D's share of the alive jobs (``s``, the mean over windows, as Table 1's row) and of the running
    tasks (``f``, over task-windows, as Fig 1's). None where no window has a job of D (too little data).

    If D holds f of the running tasks and s of the alive jobs, t_N = T_D · (1 − f)/f · s/(1 − s): what the share
    of alive jobs asks of the other jobs at a given T_D (studies/alive_share.py, and the cause of Table 1's row)."""
    t = totals.filter(pl.col("jobs") > 0)
    if t.height == 0 or t["jobs_D"].sum() == 0:
        return None
    other_jobs = t["jobs"].sum() - t["jobs_D"].sum()
    return {"T_D": t["tasks_D"].sum() / t["jobs_D"].sum(),
            "t_N": (t["tasks"].sum() - t["tasks_D"].sum()) / other_jobs if other_jobs else float("nan"),
            "s": float((t["jobs_D"] / t["jobs"]).mean()), "f": t["tasks_D"].sum() / t["tasks"].sum()}


def _undefined(x: object) -> bool:
    """No value measured: None, or NaN (a share of no values)."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def measurements(
    table1: pl.DataFrame,
    shares: pl.DataFrame,
    n_jobs: int,
    n_dominant: int,
    tasks_per_job: pl.Series,
    mixtures: pl.DataFrame,
    dispersion: pl.DataFrame,
    thresholds: pl.DataFrame,
    durations: pl.DataFrame | None,
    whole_trace_production: float | None,
    window_totals: pl.DataFrame,
    size_scale: float = 1.0,
    usage_windows: int | None = None,
    usage_whole: bool = True,
) -> list[dict]:
    """What Beaumont §3, §4.1, §4.3 and §5.1 report, as measured here, by the claim it answers
    (``workflow/papers/beaumont.tsv``).

    ``size_scale`` is the synthetic model's factor on job sizes (1 on the real trace): Table 2's means shift by its
    log, which the note says. Too little data (a measurement's status, shown and not judged): where task_usage
    spans fewer than a day's windows (``usage_windows``, from the first to the last; the shipped sample's 1), every
    row it feeds, as the paper's are statistics over 29 days; where task_usage is read only in part
    (``usage_whole`` False), Table 3's, as D is found in part of the trace and the jobs alive in part of it are the
    long ones (length-biased); a median of durations censored where the job_events read end; a value with nothing
    to measure (no job of a class). ``window_totals`` (:func:`window_totals`) gives the tasks a job of D and another
    alive job run (:func:`alive_share_identity`), which the cause of Table 1's share of alive jobs names.
    """
    t1 = {r["statistic"]: r for r in table1.iter_rows(named=True)}
    sh = {r["class"]: r for r in shares.iter_rows(named=True)}
    total = {k: sum(r[k] for r in sh.values()) for k in ("tasks", "cpu", "memory")}
    top = max(sh, key=lambda c: sh[c]["cpu"]) if sh else None
    identity = alive_share_identity(window_totals)
    out: list[tuple[str, object, str, list[str], dict]] = []  # (claim, ours, note, why too little data, values)

    def add(claim: str, ours: object, note: str = "", empty: str = "", **values) -> None:
        out.append((claim, ours, note, [empty] if empty and _undefined(ours) else [], values))

    no_window = "no window with a running job"
    add("beaumont.t1.dominant_alive_mean", t1["mean"]["jobs_D"])
    out.append(("beaumont.t1.share_alive_mean", t1["mean"]["share_jobs"], "",
                [no_window] if _undefined(t1["mean"]["share_jobs"]) else [] if identity else ["no window with a job of D"],
                {k: identity[k] if identity else float("nan") for k in ("T_D", "t_N")}))
    add("beaumont.t1.r_cpu_mean", t1["mean"]["R_cpu"], empty=no_window)
    add("beaumont.t1.r_mem_mean", t1["mean"]["R_mem"], empty=no_window)
    add("beaumont.t1.r_cpu_min", t1["min"]["R_cpu"], empty=no_window)
    add("beaumont.t1.r_cpu_max", t1["max"]["R_cpu"], empty=no_window)
    add("beaumont.s3.dominant_jobs", n_dominant)
    add("beaumont.s3.dominant_share", n_dominant / max(n_jobs, 1), f"of {n_jobs:,} jobs")
    add("beaumont.s3.tasks_per_job_mean", tasks_per_job.mean())
    add("beaumont.s3.tasks_per_job_max", tasks_per_job.max())
    add("beaumont.fig1.d_tasks", total["tasks"])
    add("beaumont.fig1.production_tasks", sh.get("production", {}).get("tasks", 0))
    add("beaumont.fig1.gratis_tasks", sh.get("gratis", {}).get("tasks", 0))
    add("beaumont.fig1.top_cpu_class", top,
        f"'unknown': {sh['unknown']['cpu']:.1%} of the CPU is jobs without task_events in the shards read" if "unknown" in sh else "",
        empty="no job of D")
    shift = float(np.log(size_scale))
    for r in mixtures.iter_rows(named=True):
        if r["sigma"] is None:
            continue
        key = f"{r['resource']}_{r['class']}"
        add(f"beaumont.t2.sigma_{key}", r["sigma"],
            f"µ = {r['mu'] - shift:.2f}" + (f" after removing ln(size scale) = {shift:.2f}" if shift else ""))
        add(f"beaumont.t2.components_{key}", f"{r['chosen']} component(s)", f"λ1 = {r['lambda1']:.2f}")
    idr = dispersion["task_count_idr"]
    add("beaumont.s43.task_count_idr_1", share_below(idr, 1.0), empty="no job of D")
    add("beaumont.s43.task_count_idr_le_2", share_below(idr, 2.0), empty="no job of D")
    for cls in ("production", "gratis"):
        sub = thresholds.filter(pl.col("class") == cls)["threshold"]
        add(f"beaumont.fig5.balanced_{cls}", share_below(sub, 2.0, inclusive=False), f"{sub.drop_nulls().len()} jobs",
            empty=f"no {cls} job of D with 2 tasks in a window")
    d = {r["statistic"]: r for r in durations.iter_rows(named=True)} if durations is not None else {}
    # job_events that end before the trace (a part of its shards): a median censored there is said, not judged
    events_end = next((v for v in d.get("events_end_min", {}).values() if isinstance(v, float)), None) if d else None
    table3 = []
    for cls in ("gratis", "production", "other"):
        if d:
            n, early = d["n"].get(cls) or 0, d.get("censored_early", {}).get(cls) or 0
            median = d["50%"].get(cls)
            censored = f"the job_events read end {events_end / 60:.1f} h into the trace" if median is None and early else ""
            add(f"beaumont.t3.median_{cls}", median,
                f"{n:.0f} job{'' if n == 1 else 's'}" + (f", {early:.0f} still running" if early else ""),
                empty=censored or f"no {cls} job of D with job events")
            table3.append(out[-1])
    # from task_usage: whether a job is alive in every window
    add("beaumont.t3.whole_trace_production", whole_trace_production, empty="no production job in D")
    table3.append(out[-1])
    if usage_windows is not None and usage_windows < WINDOWS_PER_DAY:
        span = f"task_usage spans {usage_windows} window{'' if usage_windows == 1 else 's'} ({usage_windows * 5} min)"
        # Table 3 too: its durations come from job_events, but of the dominant jobs D found in those windows
        for m in out:
            m[3].append(span)
    elif not usage_whole:
        span = f"{usage_windows:,} windows of task_usage" if usage_windows is not None else "a part of task_usage"
        for m in table3:
            m[3].append(f"D found in {span}, not the whole trace: the jobs alive in a part of it are the long ones")
    return [measurement(claim, ours, note, "; ".join(why), **values) for claim, ours, note, why, values in out]
