"""Co-location: how many tasks share a machine at an instant, from task_events.

Unuvar et al. (2014) §IV-B aggregate the usage of the tasks that share one
machine (18 on average on their machine 351618647), and every packing result
depends on how many tasks a machine carries. On the real 2011 trace, at the
trace start (task_events part 0, whose time-0 events are the tasks already
running), 132,982 tasks run on 12,489 machines: 10.65 per machine, median 10,
p10 7, p90 15, at most 29 (measured by these functions on the shipped sample;
``workflow/papers/real-trace.tsv`` holds them beside the papers' claims). The synthetic trace places its tasks on a
subset of its machines so that they carry that density
(``synthetic.tasks_per_machine``), while machine failures keep every machine.

* :func:`running_tasks` — the tasks running at an instant: those whose last
  event at or before it is SCHEDULE or UPDATE_RUNNING, with their machine;
* :func:`tasks_per_machine` — running tasks per machine;
* :func:`density` — the distribution's mean and quantiles;
* :func:`measurements` — the density at the start, by the claims it answers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from colocate.measure import measurement
from colocate.sources.contract import ORIGIN_US, TABLES, EventType

#: Events after which a task is running on its machine (schema v2.1, "Job and task life cycles").
RUNNING_EVENTS = (int(EventType.SCHEDULE), int(EventType.UPDATE_RUNNING))

DENSITY_QUANTILES = {"p10": 0.1, "median": 0.5, "p90": 0.9, "p99": 0.99}

_EVENT_COLUMNS = tuple(TABLES["placement_events"].columns)  # the contract's placement events


def running_tasks(events: pl.DataFrame | pl.LazyFrame, at_us: int) -> pl.DataFrame:
    """The tasks running at ``at_us`` (µs): their last event at or before it is SCHEDULE or UPDATE_RUNNING.

    ``events`` holds task_events rows (``time``, ``job_id``, ``task_index``,
    ``machine_id``, ``event_type``) in file order; events at the same time keep
    that order, as the trace writes a task's SUBMIT before its SCHEDULE.
    Returns ``job_id``, ``task_index``, ``machine_id``, sorted by task.
    """
    lf = events.lazy()
    missing = [c for c in _EVENT_COLUMNS if c not in lf.collect_schema().names()]
    if missing:
        raise ValueError(f"task_events lack column(s) {missing}")
    return (
        lf.select(_EVENT_COLUMNS)
        .with_row_index("_row")
        .filter(pl.col("time") <= at_us)
        .sort("time", "_row")
        .group_by("job_id", "task_index")
        .agg(pl.col("event_type").last(), pl.col("machine_id").last())
        .filter(pl.col("event_type").is_in(RUNNING_EVENTS) & pl.col("machine_id").is_not_null())
        .select("job_id", "task_index", "machine_id")
        .sort("job_id", "task_index")
        .collect()
    )


def tasks_per_machine(running: pl.DataFrame) -> pl.DataFrame:
    """Running tasks per machine (machines with at least one), sorted by machine: ``machine_id``, ``tasks``."""
    return running.group_by("machine_id").agg(pl.len().cast(pl.Int64).alias("tasks")).sort("machine_id")


def density(per_machine: pl.DataFrame, quantiles: dict[str, float] = DENSITY_QUANTILES) -> pl.DataFrame:
    """One row: running ``tasks``, busy ``machines``, ``mean`` tasks per busy machine, its quantiles and ``max``.

    Quantiles are numpy's default (linear) of the per-machine counts; with
    no running task every statistic is null.
    """
    counts = per_machine["tasks"].to_numpy()
    row: dict[str, float | int | None] = {"tasks": int(counts.sum()), "machines": int(counts.size)}
    row["mean"] = float(counts.mean()) if counts.size else None
    for name, q in quantiles.items():
        row[name] = float(np.quantile(counts, q)) if counts.size else None
    row["max"] = int(counts.max()) if counts.size else None
    return pl.DataFrame([row], schema={"tasks": pl.Int64, "machines": pl.Int64, "mean": pl.Float64,
                                       **{k: pl.Float64 for k in quantiles}, "max": pl.Int64})


def density_over_time(events: pl.DataFrame, days: Sequence[float]) -> pl.DataFrame:
    """:func:`density` at ``days`` after the trace start (0: the trace start), one row per instant (``day``)."""
    rows = []
    for day in days:
        at = ORIGIN_US + round(float(day) * 86_400e6)
        rows.append(density(tasks_per_machine(running_tasks(events, at))).with_columns(pl.lit(float(day)).alias("day")))
    return pl.concat(rows).select("day", pl.exclude("day"))


def measurements(table: pl.DataFrame) -> list[dict]:
    """The density at the trace start, by the claim it answers (``workflow/papers/real-trace.tsv``: the real trace's,
    measured by these functions on the shipped sample); none where the table has no instant at the start."""
    start = table.filter(pl.col("day") == 0)
    if start.height == 0 or start["mean"][0] is None:
        return []
    r = start.row(0, named=True)
    return [measurement(f"real2011.start.{key}", r[key]) for key in ("tasks", "machines", "mean", "p10", "median", "p90")]
