"""Per-task data: the preprocessing of Janus & Rzadca §3.1 and per-task statistics.

Notation (Janus & Rzadca §3): ``T_i`` is the number of usage records of task
``i``; ``x_i(t)`` its instantaneous ("inst", the trace's *sampled CPU usage*)
and ``y_i(t)`` its 5-minute average ("avg", the trace's *CPU rate*) usage.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from colocate.insufficient import InsufficientData
from colocate.trace import FAILING_EVENTS

#: Tasks with at least this many 5-minute records (2 hours) are *long* (Janus §3.1).
LONG_MIN_RECORDS = 24
#: Histogram of inst usage: 100 bins of width 0.01 on [0, 1] (Janus §3.5).
HIST_BINS = 100

TASK_KEY = ["job_id", "task_index"]


def failing_expr() -> pl.Expr:
    """True for an event that makes its task *failing*: EVICT, FAIL, KILL or LOST (Janus §3.1)."""
    return pl.col("event_type").is_in([int(e) for e in FAILING_EVENTS])


def fix_avg_above_one(records: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Replace 5-minute averages above 1 by the same record's inst value (Janus §3.1).

    CPU is normalised to the largest machine, so avg > 1 is a measurement error.
    Returns the fixed records and the number of records replaced.
    """
    n = int(records.select(avg_above_one().sum()).item() or 0)
    return records.with_columns(fixed_avg()), n


def avg_above_one() -> pl.Expr:
    """True for a record whose 5-minute average exceeds 1, a measurement error (Janus §3.1)."""
    return pl.col("cpu_rate") > 1


def fixed_avg() -> pl.Expr:
    """``cpu_rate`` with the averages above 1 replaced by the record's inst (Janus §3.1)."""
    return pl.when(avg_above_one()).then(pl.col("sampled_cpu_usage")).otherwise(pl.col("cpu_rate")).alias("cpu_rate")


def any_nonzero_inst() -> pl.Expr:
    """Per task (in an aggregation): False iff its inst usage is zero or missing in every record (Janus §3.1)."""
    return (pl.col("sampled_cpu_usage").fill_null(0) != 0).any()


def all_zero_tasks(records: pl.DataFrame) -> pl.DataFrame:
    """Keys of tasks whose inst usage is zero (or missing) for their whole duration (Janus §3.1)."""
    return (
        records.group_by(TASK_KEY)
        .agg(any_nonzero_inst().alias("_nonzero"))
        .filter(~pl.col("_nonzero"))
        .select(TASK_KEY)
    )


def task_statistics(records: pl.DataFrame, long_min_records: int = LONG_MIN_RECORDS,
                    extra: Sequence[pl.Expr] = ()) -> pl.DataFrame:
    """Per-task statistics of usage records (one row per task, sorted by key).

    ``records`` has one row per task and 5-minute window with ``job_id``,
    ``task_index``, ``cpu_rate`` (avg) and ``sampled_cpu_usage`` (inst).
    Returns ``n_records`` (T_i), ``inst_mean``, ``inst_std``, ``avg_mean``,
    ``avg_std`` (population std, ddof=0: the std of the empirical
    distribution X_i that realizations are drawn from), ``inst_max`` and
    ``is_long`` (T_i ≥ ``long_min_records``), then the ``extra`` aggregations, computed in the same pass.
    Accumulates in float64 whatever the input dtype.
    """
    x, y = pl.col("sampled_cpu_usage").cast(pl.Float64), pl.col("cpu_rate").cast(pl.Float64)
    return (
        records.group_by(TASK_KEY)
        .agg(
            pl.len().alias("n_records"),
            x.mean().alias("inst_mean"),
            x.std(ddof=0).alias("inst_std"),
            y.mean().alias("avg_mean"),
            y.std(ddof=0).alias("avg_std"),
            x.max().alias("inst_max"),
            *extra,
        )
        .with_columns((pl.col("n_records") >= long_min_records).alias("is_long"))
        .sort(TASK_KEY)
    )


def inst_histograms(records: pl.DataFrame, bins: int = HIST_BINS) -> tuple[pl.DataFrame, np.ndarray]:
    """Histogram h_i of each task's inst usage, bins of width 1/bins on [0, 1] (Janus §3.5).

    ``h_i[k] = |{t : k/bins ≤ x_i(t) < (k+1)/bins}| / T_i``; a value of exactly 1
    falls in the last bin. Returns the task keys (sorted) and a float32 matrix
    with one row per task.
    """
    binned = records.select(
        *TASK_KEY,
        (pl.col("sampled_cpu_usage").fill_null(0).clip(0, 1) * bins)
        .floor()
        .cast(pl.Int64)
        .clip(0, bins - 1)
        .alias("_bin"),
    )
    job, task = binned["job_id"].to_numpy(), binned["task_index"].to_numpy()
    if ((job[1:] < job[:-1]) | ((job[1:] == job[:-1]) & (task[1:] < task[:-1]))).any():
        binned = binned.sort(TASK_KEY, maintain_order=True)
        job, task = binned["job_id"].to_numpy(), binned["task_index"].to_numpy()
    # records sorted by task: a task's row is the number of key changes before it (one bincount, no join)
    first = np.r_[True, (job[1:] != job[:-1]) | (task[1:] != task[:-1])] if job.size else np.zeros(0, dtype=bool)
    row = np.cumsum(first) - 1
    n = int(first.sum())
    counts = np.bincount(row * bins + binned["_bin"].to_numpy(), minlength=n * bins).reshape(n, bins)
    hist = counts / counts.sum(axis=1, keepdims=True)  # every task has a record
    return binned.filter(pl.Series(first)).select(TASK_KEY), hist.astype(np.float32)


def long_tasks_status(stats: pl.DataFrame, long_min_records: int = LONG_MIN_RECORDS) -> InsufficientData | None:
    """Why the trace has no long task (Janus §3.1: ≥ 2 h of 5-minute records), or None when it has one."""
    if stats.filter("is_long").height:
        return None
    longest = int(stats["n_records"].max() or 0)
    return InsufficientData(
        f"no long task: the longest of the {stats.height} tasks has {longest} five-minute record(s) "
        f"({longest * 5} min), fewer than {long_min_records} ({long_min_records * 5} min)",
        f"task_usage covering at least {long_min_records * 5 // 60} h of some task's life "
        f"(mapreduce.long_min_records = {long_min_records} windows)",
        analysis="Long tasks (Janus §3.1)",
    )


def series_coverage(series: pl.DataFrame | pl.LazyFrame, window_us: int) -> pl.DataFrame:
    """Per task, how much of its series is there: its records, the windows from its first record's to its last's
    (``spanned``), the distinct windows with a record (``present``) and their share (``share``), sorted by task.

    A trace read whole, or in a stretch of time, gives shares near 1 (the real 2011 trace misses a few windows);
    a part of a trace whose files each hold rows from across its span (the 2019 trace's shards) gives every series
    holes, which the analyses that need whole series (the realizations of Janus §3.6, Beaumont §5.2's spectra)
    must state. ``series`` has the task key and ``start_time`` (µs); ``window_us`` is the window's length.
    """
    window = pl.col("start_time") // window_us
    return (
        series.lazy()
        .group_by(TASK_KEY)
        .agg(pl.len().alias("records"), (window.max() - window.min() + 1).alias("spanned"),
             window.n_unique().cast(pl.Int64).alias("present"))
        .with_columns((pl.col("present") / pl.col("spanned")).alias("share"))
        .sort(TASK_KEY)
        .collect()
    )


def coverage_summary(per_task: pl.DataFrame) -> pl.DataFrame:
    """One row over :func:`series_coverage`'s tasks: how many, the windows spanned and present in all, the pooled
    share present, the median and 10th percentile of the tasks' shares, and the share of tasks with every window."""
    return per_task.select(
        pl.len().alias("tasks"),
        pl.col("spanned").sum().alias("windows_spanned"),
        pl.col("present").sum().alias("windows_present"),
        (pl.col("present").sum() / pl.col("spanned").sum()).alias("share_pooled"),
        pl.col("share").median().alias("share_median"),
        pl.col("share").quantile(0.1, "linear").alias("share_p10"),
        (pl.col("share") == 1).mean().alias("complete"),
    )
