"""Map / reduce of trace shards to per-task data.

*Map* runs once per shard and never needs another shard: task_events shards
become pieces of the task table, task_usage shards become slim records, job ×
window aggregates and the records of the sampled windows. Records and task
pieces carry a ``bucket`` — a stable function of (job, task) — so that *reduce*
runs once per bucket and sees every record and event of its tasks, whichever
shards they came from. Memory per job is bounded by a shard or a bucket.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from colocate.prep.tasks import (
    LONG_MIN_RECORDS,
    TASK_KEY,
    any_nonzero_inst,
    avg_above_one,
    failing_expr,
    fixed_avg,
    inst_histograms,
    task_statistics,
)
from colocate.sources.contract import TABLES
from colocate.trace import TRACE_START_US, WINDOW_US, EventType

#: Multiplier of the bucket hash; prime, and job IDs (< 2**33) times it stay below 2**63.
_BUCKET_MULTIPLIER = 1_000_003

#: Columns of task_usage kept by the map (Janus §3 and Beaumont §3–4 need no others): the contract's usage records.
USAGE_COLUMNS = [c for c in TABLES["usage_records"].columns if c != "bucket"]
TASK_EVENT_COLUMNS = [
    "time",
    "job_id",
    "task_index",
    "machine_id",
    "event_type",
    "scheduling_class",
    "priority",
    "cpu_request",
    "memory_request",
]

_EVENT_COUNT_COLUMNS = {e: f"n_{e.name.lower()}" for e in EventType}


def bucket_expr(n_buckets: int) -> pl.Expr:
    """Stable bucket of a task: ``(job_id · 1000003 + task_index) mod B``.

    Plain integer arithmetic, so the assignment is the same in every polars
    version and on every machine (unlike ``hash()``).
    """
    if n_buckets < 1:
        raise ValueError(f"n_buckets must be ≥ 1, got {n_buckets}")
    return ((pl.col("job_id") * _BUCKET_MULTIPLIER + pl.col("task_index")) % n_buckets).cast(pl.Int32).alias(
        "bucket"
    )


def window_expr(time_col: str = "start_time") -> pl.Expr:
    """Index of the 5-minute window containing ``time_col`` (window 0 starts at 600 s)."""
    return ((pl.col(time_col) - TRACE_START_US) // WINDOW_US).cast(pl.Int32).alias("window")


# ----------------------------------------------------------------------------- task events


def map_task_events(events: pl.DataFrame, n_buckets: int) -> pl.DataFrame:
    """One shard of task_events → task table pieces, one row per task seen in the shard.

    Columns: key, ``bucket``, ``priority`` and ``scheduling_class`` (at the
    task's first event), latest non-null ``cpu_request``/``memory_request``,
    ``first_time``, ``first_schedule``, ``last_event``, ``failing`` (any EVICT,
    FAIL, KILL or LOST: Janus §3.1) and one count column per event type.
    """
    by_time = pl.col("time")
    counts = [(pl.col("event_type") == int(e)).sum().cast(pl.Int32).alias(name) for e, name in _EVENT_COUNT_COLUMNS.items()]
    return (
        events.group_by(TASK_KEY)
        .agg(
            by_time.min().alias("first_time"),
            pl.col("priority").sort_by(by_time).first(),
            pl.col("scheduling_class").sort_by(by_time).first(),
            pl.col("cpu_request").sort_by(by_time).drop_nulls().last(),
            pl.col("memory_request").sort_by(by_time).drop_nulls().last(),
            by_time.filter(pl.col("event_type") == int(EventType.SCHEDULE)).min().alias("first_schedule"),
            by_time.max().alias("last_event"),
            failing_expr().any().alias("failing"),
            *counts,
        )
        .with_columns(bucket_expr(n_buckets))
        .sort("bucket", *TASK_KEY)
    )


def combine_task_pieces(pieces: pl.DataFrame) -> pl.DataFrame:
    """Merge task table pieces of several shards into one row per task."""
    count_cols = list(_EVENT_COUNT_COLUMNS.values())
    return (
        pieces.group_by(TASK_KEY)
        .agg(
            pl.col("first_time").min(),
            pl.col("priority").sort_by("first_time").first(),
            pl.col("scheduling_class").sort_by("first_time").first(),
            pl.col("cpu_request").sort_by("last_event").drop_nulls().last(),
            pl.col("memory_request").sort_by("last_event").drop_nulls().last(),
            pl.col("first_schedule").min(),
            pl.col("last_event").max(),
            pl.col("failing").any(),
            *[pl.col(c).sum() for c in count_cols],
        )
        .sort(TASK_KEY)
    )


# ----------------------------------------------------------------------------- task usage


def sampled_windows(n_windows: int, per_day: int, seed: int) -> np.ndarray:
    """Windows sampled for the CPU–memory analysis: ``per_day`` random windows per day (Beaumont §4.2).

    Drawn independently for each day of 288 windows, sorted; the same seed gives the same windows.
    """
    per_day_windows = 24 * 60 // 5
    rng = np.random.default_rng(seed)
    chosen = []
    for start in range(0, n_windows, per_day_windows):
        size = min(per_day_windows, n_windows - start)
        chosen.append(start + rng.choice(size, size=min(per_day, size), replace=False))
    return np.sort(np.concatenate(chosen)).astype(np.int32) if chosen else np.empty(0, np.int32)


#: The columns of a usage record the job × window aggregates are computed from (:func:`job_window_aggregates`).
WINDOW_RECORD_COLUMNS = ["job_id", "task_index", "window", "cpu_rate", "canonical_memory_usage"]


def job_window_aggregates(lf: pl.LazyFrame) -> pl.LazyFrame:
    """Job × 5-minute-window aggregates of usage records (Beaumont §3, §4.3, §5), one row per (job, window), sorted
    by window and job: ``n_tasks`` (distinct tasks), ``n_records``, ``cpu_sum``, ``mem_sum`` and the 10th/90th
    percentiles of the records' CPU (linear interpolation).

    ``lf`` holds :data:`WINDOW_RECORD_COLUMNS` (others are ignored). The aggregates of a (job, window) are exact
    only if ``lf`` holds all its records: the 2011 map aggregates a shard (a stretch of time), the 2019 source's
    reduce a range of windows read from every shard (:func:`window_records`).
    """
    return (
        lf.group_by("job_id", "window")
        .agg(
            pl.col("task_index").n_unique().cast(pl.Int32).alias("n_tasks"),
            pl.len().cast(pl.Int32).alias("n_records"),
            pl.col("cpu_rate").cast(pl.Float64).sum().alias("cpu_sum"),
            pl.col("canonical_memory_usage").cast(pl.Float64).sum().alias("mem_sum"),
            pl.col("cpu_rate").cast(pl.Float64).quantile(0.1, "linear").alias("cpu_p10"),
            pl.col("cpu_rate").cast(pl.Float64).quantile(0.9, "linear").alias("cpu_p90"),
        )
        .sort("window", "job_id")
    )


def window_records(lf: pl.LazyFrame) -> pl.LazyFrame:
    """The columns of usage records :func:`job_window_aggregates` reads (:data:`WINDOW_RECORD_COLUMNS`), sorted by
    window (then job and task, the records' order kept within one): written so, a file's row groups each cover a
    few windows, and a reduce reading a range of windows skips the rest by their statistics."""
    return lf.select(WINDOW_RECORD_COLUMNS).sort("window", "job_id", "task_index", maintain_order=True)


def _usage_lazy(usage: pl.DataFrame) -> pl.LazyFrame:
    return usage.lazy().select(USAGE_COLUMNS).with_columns(window_expr())


def _sampled_records(lf: pl.LazyFrame, windows_to_sample: np.ndarray) -> pl.LazyFrame:
    return (
        lf.filter(pl.col("window").is_in(pl.Series(windows_to_sample, dtype=pl.Int32).implode()))
        .select("window", *TASK_KEY, "machine_id", "cpu_rate", "canonical_memory_usage")
        .sort("window", *TASK_KEY)
    )


def map_task_usage(
    usage: pl.DataFrame, n_buckets: int, windows_to_sample: np.ndarray, *, consume: bool = False
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """One shard of task_usage → (bucketed records, job × window aggregates, sampled-window records).

    * records: the slim columns of :data:`USAGE_COLUMNS` plus ``bucket``, grouped by bucket (file order within);
    * job × 5-minute-window aggregates (:func:`job_window_aggregates`, Beaumont §3, §4.3, §5): ``n_tasks``,
      ``n_records``, ``cpu_sum``, ``mem_sum`` and the 10th/90th percentiles of task CPU;
    * the records of the windows in ``windows_to_sample`` (Beaumont §4.2).

    With ``consume`` the records take ``usage``'s columns, which leave it one by one as they are reordered, so
    the shard is held once rather than twice (the map's peak; ``usage`` is left without them).
    """
    lf = _usage_lazy(usage)
    job_windows, sampled = pl.collect_all([job_window_aggregates(lf), _sampled_records(lf, windows_to_sample)])
    return bucket_records(usage, n_buckets, consume=consume), job_windows, sampled


def usage_window_rows(usage: pl.DataFrame, windows_to_sample: np.ndarray) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One shard of task usage → (the records the job × window aggregates are computed from, :func:`window_records`;
    the sampled-window records, as :func:`map_task_usage`'s): for a trace whose shards are not time-ordered (Google
    2019), where every (job, window) has records in many shards and only a reduce over all of them is exact
    (:func:`reduce_job_windows`). The bucketed records are :func:`bucket_records`'s, taken after these are written."""
    lf = _usage_lazy(usage)
    rows, sampled = pl.collect_all([window_records(lf), _sampled_records(lf, windows_to_sample)])
    return rows, sampled


def reduce_job_windows(rows: pl.LazyFrame, lo: int, hi: int) -> pl.DataFrame:
    """The exact job × window aggregates (:func:`job_window_aggregates`) of windows ``lo ≤ w < hi`` from
    :func:`window_records` of every shard (``rows``, e.g. a scan of their files: the window filter is pushed down,
    so a file sorted by window is read only where it holds the range). Memory is bounded by the range's records."""
    if hi <= lo:
        raise ValueError(f"an empty range of windows: {lo}-{hi}")
    return job_window_aggregates(rows.filter(pl.col("window").is_between(lo, hi - 1))).collect()


def bucket_records(usage: pl.DataFrame, n_buckets: int, *, consume: bool = False) -> pl.DataFrame:
    """The columns of :data:`USAGE_COLUMNS` and ``bucket``, grouped by bucket, file order kept within one (the
    reducer orders each series itself).

    One stable permutation gathers three columns at a time; with ``consume`` they leave ``usage`` as they are
    gathered (``DataFrame.drop_in_place``), so at most three columns are held twice: on a real-size shard the map
    peaks ~90 MB lower than with a sort of the whole frame, in about the same time (bench/map_shard.py).
    """
    bucket = usage.select(bucket_expr(n_buckets)).to_series()
    keys = bucket.to_numpy()
    # a radix sort where the buckets fit 16 bits (numpy's stable sort of ≤ 16-bit integers): 3× an int32 one
    order = pl.Series(np.argsort(keys.astype(np.uint16) if n_buckets <= 1 << 16 else keys, kind="stable").astype(np.uint32))
    parts = []
    for at in range(0, len(USAGE_COLUMNS), 3):
        names = USAGE_COLUMNS[at : at + 3]
        part = pl.DataFrame([usage.drop_in_place(c) for c in names]) if consume else usage.select(names)
        part = part.rechunk()  # one chunk (the parse's chunks freed): a gather across a CSV parse's is 5× slower
        parts.append(part[order])
        del part
    return pl.concat([*parts, bucket.gather(order).to_frame()], how="horizontal")


# ----------------------------------------------------------------------------- reduce


def reduce_bucket(
    records: pl.DataFrame, task_pieces: pl.DataFrame, long_min_records: int = LONG_MIN_RECORDS
) -> dict[str, pl.DataFrame]:
    """All records and task pieces of one bucket → per-task data (Janus & Rzadca §3.1).

    Drops tasks with no task_events (their failing status is unknown), failing
    tasks and all-zero tasks; replaces avg > 1 by inst. Returns:

    * ``stats``: per-task statistics of the kept tasks (:func:`task_statistics`) with
      priority, scheduling class and requests;
    * ``series``: time-ordered records (``start_time``, ``inst``, ``avg``,
      ``machine_id``, ``memory``) of the kept *long* tasks;
    * ``hist``: the 100-bin inst histograms of the kept long tasks (column ``inst_hist``);
    * ``counts``: one row — tasks, no events, failing, all-zero dropped, avg>1 replaced, long, short.
    """
    tasks = combine_task_pieces(task_pieces)
    # one pass over the records: each task's statistics (avg > 1 fixed first), zero test and fixes; its status
    # joins the per-task rows, not the records (a tenth of the rows)
    fixed = records.with_columns(avg_above_one().alias("_above_one"), fixed_avg())
    per_task = task_statistics(fixed, long_min_records, extra=[
        any_nonzero_inst().alias("_nonzero"), pl.col("_above_one").sum().alias("_fixed")]).join(
        tasks.select(*TASK_KEY, "failing"), on=TASK_KEY, how="left", maintain_order="left")
    n_no_events = per_task["failing"].null_count()
    n_failing = per_task.filter(pl.col("failing") == True).height  # noqa: E712 (polars expression)
    kept = per_task.filter(pl.col("failing") == False)  # noqa: E712
    n_zero = kept.filter(~pl.col("_nonzero")).height
    kept = kept.filter("_nonzero")
    n_fixed = int(kept["_fixed"].sum())
    stats = kept.drop("failing", "_nonzero", "_fixed").join(
        tasks.select(*TASK_KEY, "priority", "scheduling_class", "cpu_request", "memory_request"),
        on=TASK_KEY,
        how="left",
    )
    long_keys = stats.filter("is_long").select(TASK_KEY)
    long_records = fixed.join(long_keys, on=TASK_KEY, how="semi").sort(*TASK_KEY, "start_time")
    series = long_records.select(
        *TASK_KEY,
        "start_time",
        pl.col("sampled_cpu_usage").alias("inst"),
        pl.col("cpu_rate").alias("avg"),
        "machine_id",
        pl.col("canonical_memory_usage").alias("memory"),
    )
    keys, hist = inst_histograms(long_records)
    hist_frame = keys.with_columns(pl.Series("inst_hist", hist, dtype=pl.Array(pl.Float32, hist.shape[1])))
    n_long = long_keys.height
    counts = pl.DataFrame(
        {
            "tasks_with_usage": [per_task.height],
            "no_task_events": [n_no_events],
            "failing_dropped": [n_failing],
            "all_zero_dropped": [n_zero],
            "avg_above_one_replaced": [n_fixed],
            "long": [n_long],
            "short": [stats.height - n_long],
        }
    )
    return {"stats": stats, "series": series, "hist": hist_frame, "counts": counts}


COUNT_COLUMNS = [
    "tasks_with_usage",
    "no_task_events",
    "failing_dropped",
    "all_zero_dropped",
    "avg_above_one_replaced",
    "long",
    "short",
]


def total_counts(per_bucket: pl.DataFrame) -> pl.DataFrame:
    """Sum per-bucket counts into the Janus §3.1 table (one row per quantity, with shares)."""
    sums = per_bucket.select([pl.col(c).sum() for c in COUNT_COLUMNS]).row(0, named=True)
    total = max(sums["tasks_with_usage"], 1)
    rows = [
        {"quantity": k, "count": int(v), "share_of_tasks": (None if k == "avg_above_one_replaced" else v / total)}
        for k, v in sums.items()
    ]
    return pl.DataFrame(rows, schema={"quantity": pl.String, "count": pl.Int64, "share_of_tasks": pl.Float64})


def counts_measurements(counts: pl.DataFrame) -> list[dict]:
    """What the Janus & Rzadca §3.1 preprocessing reports, as measured here, by the claim it answers
    (``workflow/papers/janus.tsv``): shares of the tasks with usage, counts, and no judgement of the shares
    where no task has 2 h of records (the shipped sample's 5 minutes are not the paper's 29 days)."""
    from colocate.measure import measurement

    c = dict(zip(counts["quantity"], counts["count"]))
    total = max(c["tasks_with_usage"], 1)
    kept = max(c["long"] + c["short"], 1)
    short = "" if c["long"] else "no task has 2 h of task_usage records"
    return [
        measurement("janus.s31.failing_dropped", c["failing_dropped"] / total, "any EVICT, FAIL, KILL or LOST", short),
        measurement("janus.s31.all_zero_dropped", c["all_zero_dropped"] / total, "", short),
        measurement("janus.s31.avg_above_one", c["avg_above_one_replaced"], "", short),
        measurement("janus.s31.short_tasks", c["short"] / kept, "of kept tasks", short),
        measurement("janus.s35.long_tasks", c["long"], "", short),
    ]
