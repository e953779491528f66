"""Aggregated CPU utilisation of co-located tasks: Unuvar et al. (2014) §IV-B to §IV-D.

Unuvar et al. sum the 5-minute CPU usage of the tasks running on one machine
(on average 18, 49, 88 and 154 concurrent tasks, Tables II and IV) and
normalise the sum so that its maximum over the period is 90% utilisation
(10% of a machine is reserved, §IV-C). Three ways to build such aggregates:

* **machines** — :func:`machine_concurrency`, :func:`choose_machines`,
  :func:`machine_aggregate`: the trace's machine IDs; per 5-minute window,
  the sum over the records of the tasks on the machine.
* **trace** — :func:`draw_trace_set`, :func:`set_aggregate`: where no machine
  hosts that many concurrent long tasks (at the ``default`` scale the synthetic
  trace's machines carry the real density, 10.65 running tasks, of which about
  5 are long), §IV-D's "randomly, on average, … 154 tasks over 29 days": long
  tasks drawn at random until n run on average, summed per 5-minute window at
  their own times in the trace (their shared daily load and their arrivals and
  departures included).
* **realizations** — :func:`colocated_sets`: sets of n tasks drawn at random from
  the realization matrix (Janus & Rzadca §3.1), observation r being the sum of
  the tasks' r-th realizations (independent draws: no time structure).

:func:`normalise_to_peak` applies the paper's 90% normalisation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from colocate.analysis.characterise import sample_sets, set_totals
from colocate.insufficient import InsufficientData
from colocate.sources.contract import WINDOW_US, window_of

#: Unuvar et al.'s average numbers of co-located tasks (Tables II and IV).
PAPER_SIZES = (18, 49, 88, 154)


def machine_concurrency(series: pl.LazyFrame | pl.DataFrame | Sequence[pl.LazyFrame]) -> pl.DataFrame:
    """Per machine: records, 5-minute windows with at least one task, mean concurrent tasks per such window,
    and the span (windows from the first to the last record).

    ``series`` has ``machine_id`` and ``start_time`` (µs); records without a
    machine are ignored. Given parts (one scan per bucket), memory is bounded by
    a part plus one byte per machine and window: the distinct windows of every
    machine are marked in a machines × windows table, part by part, instead of
    one hash set of up to 100 M (machine, window) pairs for the whole trace.
    """
    if isinstance(series, Sequence):
        return _machine_concurrency_by_part(series)
    return (
        series.lazy()
        .filter(pl.col("machine_id").is_not_null())
        .select("machine_id", window_of())
        .group_by("machine_id")
        .agg(pl.len().alias("records"), pl.col("window").n_unique().alias("windows"),
             pl.col("window").min().alias("first_window"), pl.col("window").max().alias("last_window"))
        .with_columns((pl.col("records") / pl.col("windows")).alias("mean_tasks"),
                      (pl.col("last_window") - pl.col("first_window") + 1).alias("span"))
        .sort("machine_id")
        .collect(engine="streaming")
    )


def _machine_concurrency_by_part(parts: Sequence[pl.LazyFrame]) -> pl.DataFrame:
    """:func:`machine_concurrency` of the parts together, one part in memory at a time (same table)."""
    pairs = [p.filter(pl.col("machine_id").is_not_null() & pl.col("start_time").is_not_null()).select("machine_id", window_of())
             for p in parts]
    bounds = pl.concat([p.select(pl.col("machine_id").unique().implode(), pl.col("window").min().alias("lo"),
                                 pl.col("window").max().alias("hi")).collect() for p in pairs])
    machines = np.unique(np.concatenate([np.asarray(m, dtype=np.int64) for m in bounds["machine_id"].to_list()] or [[]]))
    schema = {"machine_id": pl.Int64, "records": pl.UInt32, "windows": pl.UInt32, "first_window": pl.Int64,
              "last_window": pl.Int64, "mean_tasks": pl.Float64, "span": pl.Int64}
    if machines.size == 0:
        return pl.DataFrame(schema=schema)
    lo, hi = int(bounds["lo"].min()), int(bounds["hi"].max())
    seen = np.zeros((machines.size, hi - lo + 1), dtype=bool)
    records = np.zeros(machines.size, dtype=np.int64)
    for p in pairs:
        d = p.collect()
        m = np.searchsorted(machines, d["machine_id"].to_numpy())
        records += np.bincount(m, minlength=machines.size)
        seen[m, d["window"].to_numpy() - lo] = True
    windows = seen.sum(axis=1)
    first = lo + seen.argmax(axis=1)
    last = lo + seen.shape[1] - 1 - seen[:, ::-1].argmax(axis=1)
    return pl.DataFrame({"machine_id": machines, "records": records, "windows": windows, "first_window": first,
                         "last_window": last}).with_columns(
        (pl.col("records") / pl.col("windows")).alias("mean_tasks"),
        (pl.col("last_window") - pl.col("first_window") + 1).alias("span"),
    ).cast(schema).sort("machine_id")


def choose_machines(
    concurrency: pl.DataFrame, sizes: Sequence[int], tolerance: float, min_windows: int
) -> pl.DataFrame:
    """For each target size n, the machine whose mean concurrency is closest to n (Unuvar Tables II, IV).

    A machine qualifies if it spans at least ``min_windows`` windows and
    its mean concurrency is within ``tolerance`` (relative) of n; a machine
    is used for one size at most. Returns ``size``, ``machine_id`` (null if
    none qualifies) and ``mean_tasks``.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    used: set[int] = set()
    rows = []
    cand = concurrency.filter(pl.col("span") >= min_windows)
    for n in sizes:
        c = (
            cand.filter(~pl.col("machine_id").is_in(list(used)))
            .with_columns((pl.col("mean_tasks") / n - 1).abs().alias("_dev"))
            .filter(pl.col("_dev") <= tolerance)
            .sort("_dev", "machine_id")
        )
        if c.height:
            m = c.row(0, named=True)
            used.add(m["machine_id"])
            rows.append({"size": int(n), "machine_id": m["machine_id"], "mean_tasks": m["mean_tasks"]})
        else:
            rows.append({"size": int(n), "machine_id": None, "mean_tasks": None})
    return pl.DataFrame(rows, schema={"size": pl.Int64, "machine_id": pl.Int64, "mean_tasks": pl.Float64})


def machine_aggregate(
    series: pl.LazyFrame | pl.DataFrame, machine_id: int, column: str, observations: int
) -> pl.DataFrame:
    """Total ``column`` usage on one machine per 5-minute window (Unuvar §IV-B), at ``observations`` evenly spaced windows.

    Windows between the machine's first and last record with no record count
    as zero usage. Returns ``observation``, ``window``, ``time_days`` (since
    the trace start), ``n_tasks`` and ``usage``.
    """
    per = (
        series.lazy()
        .filter(pl.col("machine_id") == machine_id)
        .select(window_of(), pl.col(column))
        .group_by("window")
        .agg(pl.len().alias("n_tasks"), pl.col(column).sum().alias("usage"))
        .collect(engine="streaming")
    )
    if per.height == 0:
        raise ValueError(f"machine {machine_id} has no records")
    return _observed(per, int(per["window"].min()), int(per["window"].max()), observations)


def _observed(per: pl.DataFrame, lo: int, hi: int, observations: int) -> pl.DataFrame:
    """Per-window totals ``per`` (window, n_tasks, usage) over windows lo..hi, gaps as zero, at ``observations`` evenly spaced windows."""
    full = pl.DataFrame({"window": np.arange(lo, hi + 1, dtype=np.int64)}).join(per, on="window", how="left").fill_null(0)
    if observations > full.height:
        raise ValueError(f"observations={observations} is more than the {full.height} windows spanned")
    pick = np.unique(np.linspace(0, full.height - 1, int(observations)).round().astype(np.int64))
    return full[pick].select(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("observation"),
        "window",
        (pl.col("window") * (WINDOW_US / 86_400e6)).alias("time_days"),
        pl.col("n_tasks").cast(pl.Int64),
        pl.col("usage").cast(pl.Float64),
    )


def _parts(series: pl.LazyFrame | pl.DataFrame | Sequence[pl.LazyFrame]) -> list[pl.LazyFrame]:
    return [p.lazy() for p in series] if isinstance(series, Sequence) else [series.lazy()]


def task_records(series: pl.LazyFrame | pl.DataFrame | Sequence[pl.LazyFrame]) -> tuple[pl.DataFrame, int, int]:
    """Per long task, its number of 5-minute windows with a record; and the first and last window of the whole series.

    Returns ``(records, lo, hi)``, ``records`` sorted by ``job_id, task_index``. A task's
    windows with a record are its windows alive (a measurement period split in two gives
    two records in one window: counted once), so a set's mean number of running tasks over
    the span is Σ records / (hi − lo + 1). Read part by part (one scan per bucket; a task's
    records are all in its bucket).
    """
    per = [p.select("job_id", "task_index", window_of())
           .group_by("job_id", "task_index")
           .agg(pl.col("window").n_unique().alias("records"), pl.col("window").min().alias("lo"),
                pl.col("window").max().alias("hi"))
           .collect(engine="streaming") for p in _parts(series)]
    t = pl.concat(per).group_by("job_id", "task_index").agg(pl.col("records").sum(), pl.col("lo").min(), pl.col("hi").max())
    if t.height == 0:
        return t.select("job_id", "task_index", "records"), 0, -1
    return t.sort("job_id", "task_index").select("job_id", "task_index", "records"), int(t["lo"].min()), int(t["hi"].max())


def draw_trace_set(
    records: pl.DataFrame, n: float, windows: int, rng: np.random.Generator, job_cap: int | None = None
) -> tuple[pl.DataFrame, int]:
    """Unuvar §IV-D's sample: long tasks drawn at random until on average ``n`` of them run over ``windows``.

    Tasks are taken in a random order until Σ records ≥ n · windows. A job
    contributes at most ``job_cap`` tasks; with ``None``, the smallest cap for
    which the capped tasks can reach n (1 where the trace holds enough jobs).
    Why a cap (the pipeline's choice; the paper draws without one): a random
    154 running tasks of the real trace come from 87 distinct jobs
    (task_events part 0 at the trace start: 132,982 tasks of 3,976 jobs); at
    the default scale ~20–40 large jobs are alive, so an uncapped draw follows
    a few jobs' arrivals and the total's tail is heavy (README, "Where the
    synthetic trace differs"). On the real trace the smallest cap is 1, which
    spreads a set over more jobs than a uniform draw; pass a large cap for
    the paper's draw. Where the cap binds, sets of different seeds share many
    tasks (at the default scale about half of them at 154 tasks).
    Returns ``(tasks, cap)``: the drawn ``job_id, task_index, records``, and the cap used.
    Raises ValueError if all the tasks together run fewer than n on average.
    """
    if not n > 0 or windows < 1:
        raise ValueError(f"need n > 0 and windows ≥ 1, got {n}, {windows}")
    if job_cap is not None and job_cap < 1:
        raise ValueError(f"job_cap must be ≥ 1, got {job_cap}")
    need = n * windows
    counts = records["records"].to_numpy().astype(np.int64)
    if counts.sum() < need:
        raise ValueError(f"the long tasks run {counts.sum() / windows:.1f} at a time on average, fewer than {n:g}")
    # a random rank of each task within its job (records sorted by job)
    jobs = records["job_id"].to_numpy()
    key = rng.random(records.height)
    order = np.lexsort((key, jobs))
    starts = np.r_[0, np.flatnonzero(np.diff(jobs[order])) + 1]
    sizes = np.diff(np.r_[starts, order.size])
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size) - np.repeat(starts, sizes)
    if job_cap is None:
        alive_by_rank = np.bincount(rank, weights=counts)  # Σ records of the tasks of each rank
        job_cap = int(np.searchsorted(np.cumsum(alive_by_rank), need) + 1)
    pool = np.flatnonzero(rank < job_cap)
    if counts[pool].sum() < need:
        raise ValueError(f"with at most {job_cap} tasks per job, the long tasks run fewer than {n:g} on average")
    pool = pool[rng.permutation(pool.size)]
    take = int(np.searchsorted(np.cumsum(counts[pool]), need) + 1)
    return records[np.sort(pool[:take])], job_cap


def set_aggregate(
    series: pl.LazyFrame | pl.DataFrame | Sequence[pl.LazyFrame], tasks: pl.DataFrame, column: str, lo: int, hi: int,
    observations: int,
) -> pl.DataFrame:
    """Total ``column`` usage of ``tasks`` (job_id, task_index) per 5-minute window at their own times (Unuvar §IV-D).

    Over windows lo..hi (a window without a record of the set counts as zero), at
    ``observations`` evenly spaced windows. Returns ``observation``, ``window``,
    ``time_days``, ``n_tasks`` (of the set running) and ``usage``.
    """
    rec = set_series(series, tasks, column)
    # numpy sums in a fixed order: a polars group-by sum adds in thread order, and its last bit varies
    windows, at = np.unique(rec["window"].to_numpy(), return_inverse=True)
    per = pl.DataFrame({"window": windows.astype(np.int64), "n_tasks": np.bincount(at).astype(np.int64),
                        "usage": np.bincount(at, weights=rec["usage"].to_numpy())})
    return _observed(per, lo, hi, observations)


def set_series(series: pl.LazyFrame | pl.DataFrame | Sequence[pl.LazyFrame], tasks: pl.DataFrame, column: str) -> pl.DataFrame:
    """The records of ``tasks`` (job_id, task_index): ``job_id``, ``task_index``, ``window`` and ``usage`` (``column``),
    one row per task and window (two records of a task in one window: their mean), sorted by task and window.

    A semi-join per part (one scan per bucket), so memory holds one bucket and the set's records.
    """
    keys = tasks.select(pl.col("job_id").cast(pl.Int64), pl.col("task_index").cast(pl.Int64)).lazy()
    rec = pl.concat([
        p.join(keys, on=["job_id", "task_index"], how="semi")
        .select("job_id", "task_index", window_of(), pl.col(column).cast(pl.Float64).alias("usage"))
        .collect(engine="streaming") for p in _parts(series)
    ]).sort("job_id", "task_index", "window", "usage")
    # a measurement period split in two gives a task two records in one window: their mean rate (numpy, in order)
    if rec.height == 0:
        return rec
    key = rec.select("job_id", "task_index", "window")
    first = np.flatnonzero(np.r_[True, (np.diff(key["job_id"].to_numpy()) != 0) | (np.diff(key["task_index"].to_numpy()) != 0)
                                 | (np.diff(key["window"].to_numpy()) != 0)])
    if first.size == rec.height:
        return rec
    usage = np.add.reduceat(rec["usage"].to_numpy(), first) / np.diff(np.r_[first, rec.height])
    return key[first].with_columns(pl.Series("usage", usage, dtype=pl.Float64))


def colocated_sets(
    matrix: np.ndarray, sizes: Sequence[int], observations: int, repetitions: int, rng: np.random.Generator
) -> pl.DataFrame:
    """Aggregates of random co-located sets from the realization matrix (tasks × R).

    For each size n and repetition, n distinct tasks are drawn; observation
    r (r < ``observations``) is the sum of their r-th realizations. Returns
    ``size``, ``rep``, ``observation``, ``n_tasks`` (= n) and ``usage``.
    """
    if matrix.ndim != 2:
        raise ValueError(f"realization matrix must be 2-D (tasks × R), got shape {matrix.shape}")
    if int(observations) < 2 or int(observations) > matrix.shape[1]:
        raise ValueError(f"observations={observations} must be in [2, R={matrix.shape[1]}]")
    out = []
    for n in sizes:
        sets = sample_sets(matrix.shape[0], n, repetitions, rng)
        totals = set_totals(matrix, sets)[:, : int(observations)]
        if not np.all(np.isfinite(totals)):
            raise ValueError("realization matrix: NaN or infinite values")
        reps, obs = totals.shape
        out.append(
            pl.DataFrame(
                {"size": np.full(reps * obs, int(n)), "rep": np.repeat(np.arange(reps), obs),
                 "observation": np.tile(np.arange(obs), reps), "n_tasks": np.full(reps * obs, int(n)),
                 "usage": totals.ravel()}
            )
        )
    return pl.concat(out)


def normalise_to_peak(usage: np.ndarray, peak: float = 0.9) -> np.ndarray:
    """Unuvar §IV-C's utilisation: usage scaled so that its maximum is ``peak`` (90%: 10% reserved)."""
    usage = np.asarray(usage, dtype=np.float64)
    if not 0 < peak <= 1:
        raise ValueError(f"peak utilisation must be in (0, 1], got {peak}")
    if usage.size == 0 or not np.all(np.isfinite(usage)):
        raise ValueError("usage must be a non-empty array of finite values")
    top = usage.max()
    if top <= 0:
        raise ValueError("usage is never positive: nothing to normalise")
    return usage * (peak / top)


def utilisation(aggregates: pl.DataFrame, by: Sequence[str], peak: float = 0.9) -> pl.DataFrame:
    """Add ``utilisation``: each aggregate (group ``by``) normalised by :func:`normalise_to_peak`."""
    if not 0 < peak <= 1:
        raise ValueError(f"peak utilisation must be in (0, 1], got {peak}")
    if aggregates.select(pl.col("usage").is_nan().any() | pl.col("usage").is_null().any()).item():
        raise ValueError("usage: NaN or missing values")
    tops = aggregates.group_by(by).agg(pl.col("usage").max().alias("_top"))
    if (tops["_top"] <= 0).any():
        raise ValueError("an aggregate's usage is never positive: nothing to normalise")
    return aggregates.with_columns((pl.col("usage") * peak / pl.col("usage").max().over(by)).alias("utilisation"))


AGGREGATE_SCHEMA = {"size": pl.Int64, "rep": pl.Int64, "source": pl.String, "machine_id": pl.Int64,
                    "observation": pl.Int64, "time_days": pl.Float64, "n_tasks": pl.Int64, "usage": pl.Float64}
SOURCES_SCHEMA = {"size": pl.Int64, "source": pl.String, "machine_id": pl.Int64, "mean_tasks": pl.Float64,
                  "tasks": pl.Int64, "jobs": pl.Int64, "job_cap": pl.Int64, "note": pl.String}
SOURCES = ("auto", "machines", "trace", "realizations")


def build_aggregates(
    series: pl.LazyFrame | Sequence[pl.LazyFrame] | None,
    matrix: np.ndarray | None,
    sizes: Sequence[int],
    source: str,
    tolerance: float,
    observations: int,
    column: str,
    rng: np.random.Generator,
    job_cap: int | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Unuvar §IV-B's aggregates, one per size: from a machine, a set of the trace's tasks, or realizations.

    ``source`` "machines": the machine of :func:`choose_machines` (within
    ``tolerance``), else a ``ValueError``; "trace": :func:`draw_trace_set`
    (``job_cap``) summed by :func:`set_aggregate`; "realizations":
    :func:`colocated_sets`; "auto": the first of these three that the trace can
    give (a machine; else a set, if the long tasks run n at a time on average
    over at least ``observations`` windows; else realizations, with the reason in ``note``).
    Returns ``(aggregates, sources)``: ``aggregates`` in :data:`AGGREGATE_SCHEMA`
    (``time_days`` null for realizations), and per size the source, machine,
    mean number of tasks running at the observations, tasks and distinct jobs
    drawn, the cap per job and a note (:data:`SOURCES_SCHEMA`). With "auto", a size neither the trace nor the
    realizations reach is skipped (source "none", the note says why); none at all is too little data.
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
    if source != "realizations" and series is None:
        raise ValueError(f"source {source} needs the series records")
    machine = dict.fromkeys((int(n) for n in sizes))
    if source in ("auto", "machines"):
        chosen = choose_machines(machine_concurrency(series), sizes, tolerance, observations)
        machine = dict(zip(chosen["size"].to_list(), chosen["machine_id"].to_list()))
    records = lo = hi = None
    if source in ("auto", "trace") and any(machine[int(n)] is None for n in sizes):
        records, lo, hi = task_records(series)
    frames, used = [], []
    for n in (int(n) for n in sizes):
        row = {"size": n, "machine_id": machine[n], "tasks": None, "jobs": None, "job_cap": None, "note": None}
        a = None
        if machine[n] is not None:
            m = pl.concat(_parts(series), how="vertical") if isinstance(series, Sequence) else series
            a = machine_aggregate(m, machine[n], column, observations)
            row["source"] = "machines"
        elif source == "machines":
            raise ValueError(f"source machines: no machine hosts about {n} concurrent tasks (tolerance {tolerance:g}) "
                             f"over at least {observations} windows")
        elif source in ("auto", "trace"):
            try:
                if hi - lo + 1 < observations:
                    raise ValueError(f"the series spans {hi - lo + 1} windows, fewer than observations={observations}")
                drawn, cap = draw_trace_set(records, n, hi - lo + 1, rng, job_cap)
            except ValueError as e:
                if source == "trace":
                    raise ValueError(f"source trace, {n} tasks: {e}") from None
                row["note"] = f"no set of the trace's tasks: {e}"
            else:
                a = set_aggregate(series, drawn, column, lo, hi, observations)
                row.update(source="trace", tasks=drawn.height, jobs=drawn["job_id"].n_unique(), job_cap=cap)
        if a is None and source == "auto" and matrix is not None and n > matrix.shape[0]:
            # neither the trace nor the realizations reach n tasks: this size is skipped, said in its note
            used.append({**row, "source": "none", "machine_id": None, "mean_tasks": None,
                         "note": f"{row['note']}; realizations of {matrix.shape[0]} tasks, fewer than {n}"})
            continue
        if a is None:
            a = colocated_sets(matrix, [n], observations, 1, rng).with_columns(pl.lit(None, pl.Float64).alias("time_days"))
            row.update(source="realizations", tasks=n)
        frames.append(a.select(pl.lit(n).alias("size"), pl.lit(0).alias("rep"), pl.lit(row["source"]).alias("source"),
                               pl.lit(machine[n] if row["source"] == "machines" else None, pl.Int64).alias("machine_id"),
                               "observation", "time_days", "n_tasks", "usage").cast(AGGREGATE_SCHEMA))
        if row["source"] != "machines":
            row["machine_id"] = None
        used.append({**row, "mean_tasks": float(a["n_tasks"].mean())})
    if not frames:
        raise InsufficientData(f"no size of {list(sizes)} can be aggregated: {used[0]['note']}",
                               f"tasks running {min(int(n) for n in sizes)} at a time on average, or as many realizations")
    return pl.concat(frames), pl.DataFrame(used, schema=SOURCES_SCHEMA)


def feasible_sizes(records: pl.DataFrame, lo: int, hi: int, sizes: Sequence[int]) -> tuple[list[int], list[int], float]:
    """The sizes a §IV-D set of the trace's tasks can reach: those at most the mean number of tasks running over
    windows lo..hi (Σ records / windows). Returns ``(kept, skipped, mean_running)``."""
    windows = hi - lo + 1
    running = float(records["records"].sum()) / windows if windows > 0 and records.height else 0.0
    kept = [int(n) for n in sizes if n <= running]
    return kept, [int(n) for n in sizes if n > running], running
