"""The event tables of the synthetic trace, the assembled :func:`generate`, and :func:`split_shards`.

``job_events`` has SUBMIT, SCHEDULE and an end event per job; ``task_events``
has SUBMIT/SCHEDULE/FINISH per task with requests that are a multiple of
usage, and a failing task's EVICT/FAIL/KILL/LOST event, some re-submitted on
another machine (Janus & Rzadca §3.1). :func:`generate` samples the model
(:mod:`colocate.trace.synth.jobs`) and renders the four tables;
:func:`split_shards` cuts a table into the trace's time-range shards.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from colocate.trace import TRACE_START_US, WINDOW_US, EventType, column_names
from colocate.trace.synth.draws import _cast, _group_mean, _rngs, hash_strings
from colocate.trace.synth.jobs import Model, sample_model
from colocate.trace.synth.machines import machine_events
from colocate.trace.synth.params import _FAIL_CODE, _S_US, CLASS_NAMES, FAILING, MEMORY_SHAPES, SHAPES, SynthParams
from colocate.trace.synth.usage import usage_records

# ============================================================================ event tables


def job_events(p: SynthParams, m: Model) -> pl.DataFrame:
    """The job_events table: SUBMIT, SCHEDULE and, for jobs ending in the trace, FINISH/KILL/FAIL.

    A job whose tasks all ended by KILL (or all by FAIL) ends with that event;
    others FINISH. Jobs alive at the trace start have their events at time 0.
    """
    J, T = m.jobs, m.tasks
    nj = J["class"].size
    sched, submit = J["sched_us"], J["submit_us"]
    # task end times: terminal failures end early
    t_end = np.where(T["fail_terminal"], T["fail_time"], T["b"])
    last = np.zeros(nj, dtype=np.int64)
    np.maximum.at(last, T["job"], t_end)
    ended_in_trace = (J["end_us"] < m.info["end_us"]) | (last < m.info["end_us"])
    kill = FAILING.index("kill")
    fail = FAILING.index("fail")
    tk = T["fail_terminal"] & (T["fail_kind"] == kill)
    tf = T["fail_terminal"] & (T["fail_kind"] == fail)
    cnt = np.bincount(T["job"], minlength=nj)
    all_kill = np.bincount(T["job"], weights=tk, minlength=nj) == cnt
    all_fail = np.bincount(T["job"], weights=tf, minlength=nj) == cnt
    end_type = np.where(all_kill, int(EventType.KILL), np.where(all_fail, int(EventType.FAIL), int(EventType.FINISH)))
    end_time = np.maximum(last, sched)
    names = m.info["names"]
    ev = [
        (submit, np.full(nj, int(EventType.SUBMIT)), np.ones(nj, dtype=bool)),
        (sched, np.full(nj, int(EventType.SCHEDULE)), np.ones(nj, dtype=bool)),
        (end_time, end_type, ended_in_trace),
    ]
    frames = []
    for t, e, sel in ev:
        idx = np.flatnonzero(sel)
        frames.append(
            pl.DataFrame(
                {
                    "time": t[idx].astype(np.int64),
                    "missing_info": pl.Series([None] * idx.size, dtype=pl.Int64),
                    "job_id": J["job_id"][idx],
                    "event_type": e[idx].astype(np.int64),
                    "_job": idx,
                }
            )
        )
    df = pl.concat(frames).sort(["time", "_job", "event_type"])
    j = df["_job"].to_numpy()
    df = df.with_columns(
        pl.Series("user", names["user"][J["user"][j]]),
        pl.Series("scheduling_class", J["scheduling_class"][j]),
        pl.Series("job_name", names["job"][j]),
        pl.Series("logical_job_name", names["logical"][J["logical"][j]]),
    ).drop("_job")
    return _cast(df, "job_events")


def task_events(p: SynthParams, m: Model, rng: np.random.Generator) -> pl.DataFrame:
    """The task_events table: SUBMIT, SCHEDULE (with the machine), failing events, re-SUBMIT/SCHEDULE, FINISH.

    Requests are per job: the mean task usage times a log-normal ratio (CPU
    rounded up to 1/3200 like the trace's values), memory likewise.
    """
    J, T = m.jobs, m.tasks
    n = T["mu"].size
    job = T["job"]
    pre = T["a"] <= TRACE_START_US
    pre &= J["start_us"][job] < TRACE_START_US
    submit = np.where(pre, 0, np.maximum(T["a"] - rng.integers(0, 20 * _S_US, n), J["submit_us"][job]))
    sched = np.where(pre, 0, T["a"])
    f = T["failing"]
    term = T["fail_terminal"]
    finish = ~term & (T["b"] < p.end_us)
    mid = T["machine"]
    mid2 = np.where(f & ~term, T["machine2"], mid)
    fail_code = np.array([int(_FAIL_CODE[k]) for k in FAILING])
    rows = [
        (submit, np.full(n, int(EventType.SUBMIT)), np.full(n, -1), np.ones(n, bool), 0),
        (sched, np.full(n, int(EventType.SCHEDULE)), mid, np.ones(n, bool), 1),
        (T["fail_time"], fail_code[np.maximum(T["fail_kind"], 0)], mid, f, 2),
        (T["resubmit_time"], np.full(n, int(EventType.SUBMIT)), np.full(n, -1), f & ~term, 3),
        (T["resched_time"], np.full(n, int(EventType.SCHEDULE)), mid2, f & ~term, 4),
        (T["b"], np.full(n, int(EventType.FINISH)), mid2, finish, 5),
    ]
    machine_ids = m.machines["machine_id"].to_numpy()
    frames = []
    for t, e, mach, sel, seq in rows:
        idx = np.flatnonzero(sel)
        mm = mach[idx]
        frames.append(
            pl.DataFrame(
                {
                    "time": t[idx].astype(np.int64),
                    "_task": idx,
                    "_seq": np.full(idx.size, seq),
                    "event_type": e[idx].astype(np.int64),
                    "machine_id": np.where(mm >= 0, machine_ids[np.maximum(mm, 0)], -1),
                }
            )
        )
    df = pl.concat(frames).sort(["time", "_task", "_seq"])
    df = df.with_columns(pl.when(pl.col("machine_id") >= 0).then(pl.col("machine_id")).alias("machine_id"))
    t = df["_task"].to_numpy()
    j = job[t]
    cpu_req = np.ceil(J["request_ratio"] * np.maximum(_group_mean(job, T["mu"], J["class"].size), 1e-5) * 3200) / 3200
    mem_mean = T["mem_intercept"] + T["mem_slope"] * T["mu"]
    mem_req = J["memory_request_ratio"] * np.maximum(_group_mean(job, mem_mean, J["class"].size), 1e-6)
    names = m.info["names"]
    df = df.with_columns(
        pl.lit(None, dtype=pl.Int64).alias("missing_info"),
        pl.Series("job_id", J["job_id"][j]),
        pl.Series("task_index", T["task_index"][t]),
        pl.Series("user", names["user"][J["user"][j]]),
        pl.Series("scheduling_class", J["scheduling_class"][j]),
        pl.Series("priority", J["priority"][j]),
        pl.Series("cpu_request", np.minimum(cpu_req[j], 1.0)),
        pl.Series("memory_request", np.minimum(mem_req[j], 1.0)),
        pl.Series("disk_space_request", J["disk_request"][j]),
        pl.Series("different_machines_restriction", J["different_machines"][j]),
    ).drop("_task", "_seq")
    return _cast(df, "task_events")


def _names(p: SynthParams, m: Model, seed: int) -> dict[str, np.ndarray]:
    """Hashed user, job and logical job names (base64 SHA-256, 44 characters, like the trace's)."""
    nj = m.jobs["class"].size
    nl = int(m.jobs["logical"].max()) + 1 if nj else 0
    return {
        "user": np.array(hash_strings([f"{seed}:user:{i}" for i in range(p.users)]), dtype=object),
        "job": np.array(hash_strings([f"{seed}:job:{i}" for i in range(nj)]), dtype=object),
        "logical": np.array(hash_strings([f"{seed}:logical:{i}" for i in range(nl)]), dtype=object),
    }


# ============================================================================ public API


def generate(params: SynthParams, seed: int, *, truth: bool = False) -> dict[str, pl.DataFrame]:
    """Generate the four trace tables from the model.

    Returns ``machine_events``, ``job_events``, ``task_events`` and
    ``task_usage`` DataFrames with the trace's column names and dtypes, rows in
    time order. The same params and seed give identical frames. With
    ``truth=True`` also ``truth_jobs`` and ``truth_tasks``: the model's
    per-job and per-task parameters (for tests and calibration checks).
    """
    if not isinstance(params, SynthParams):
        raise TypeError("params must be a SynthParams (use SynthParams.from_dict)")
    r = _rngs(seed)
    model = sample_model(params, seed)
    params = params.rendered  # with synthetic.slice_days, only the slice is written
    model.info["end_us"] = params.end_us
    model.info["names"] = _names(params, model, int(seed))
    out = {
        "machine_events": machine_events(params, model.machines, r["failures"]),
        "job_events": job_events(params, model),
        "task_events": task_events(params, model, r["events"]),
        "task_usage": usage_records(params, model, r["usage"]),
    }
    if truth:
        out["truth_jobs"], out["truth_tasks"] = truth_frames(model)
    return out


def truth_frames(m: Model) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-job and per-task model parameters (not part of the trace)."""
    J, T = m.jobs, m.tasks
    jobs = pl.DataFrame(
        {
            "job_id": J["job_id"],
            "class": np.array(CLASS_NAMES)[J["class"]],
            "large": J["large"],
            "priority": J["priority"],
            "n_tasks": J["n_tasks"],
            "cpu_total": J["cpu_total"],
            "memory_total": J["memory_total"],
            "duration_us": J["duration_us"],
            "start_us": J["start_us"],
            "end_us": J["end_us"],
            "memory_shape": np.array(MEMORY_SHAPES + ("badly_fitted",))[J["memory_shape"]],
            "daily_amp": J["daily_amp"],
            "daily_phase_deg": J["daily_phase_deg"],
            "weekly_amp": J["weekly_amp"],
            "hourly_amp": J["hourly_amp"],
            "long_term_amp": J["long_term_amp"],
            "noise_ratio": J["noise_ratio"],
        }
    )
    fk = T["fail_kind"]
    tasks = pl.DataFrame(
        {
            "job_id": J["job_id"][T["job"]],
            "task_index": T["task_index"],
            "large": T["large"],
            "mu": T["mu"],
            "start_us": T["a"],
            "end_us": T["b"],
            "n_windows": T["k1"] - T["k0"] + 1,
            "avg_std_target": T["avg_std_target"],
            "inst_std_target": T["inst_std_target"],
            "shape": np.array(SHAPES)[T["shape"]],
            "nonstationary": T["nonstationary"],
            "all_zero": T["all_zero"],
            "failing": T["failing"],
            "fail_event": pl.Series([FAILING[k] if k >= 0 else None for k in fk.tolist()], dtype=pl.String),
            "fail_terminal": T["fail_terminal"],
        }
    )
    return jobs, tasks


def split_shards(df: pl.DataFrame, table: str, n: int, end_us: int | None = None) -> list[pl.DataFrame]:
    """Cut a table into ``n`` shards covering contiguous, equal-length time ranges (as the trace's shards).

    task_usage is cut by ``start_time``, event tables by ``time``; the ranges
    split [TRACE_START_US, end_us) on 5-minute window boundaries (events
    before the trace start, at time 0, go to the first shard). ``end_us``
    defaults to the end of the last window in ``df``. Each shard keeps the
    input's row order.
    """
    if n < 1:
        raise ValueError(f"shard count must be >= 1, got {n}")
    if list(df.columns) != column_names(table):
        raise ValueError(f"{table}: columns must be {column_names(table)}")
    tcol = "start_time" if table == "task_usage" else "time"
    if end_us is None:
        last = df[tcol].max() if df.height else TRACE_START_US
        end_us = TRACE_START_US + (max(int(last) - TRACE_START_US, 0) // WINDOW_US + 1) * WINDOW_US
    windows = max(1, -(-(int(end_us) - TRACE_START_US) // WINDOW_US))
    bounds = [TRACE_START_US + (i * windows // n) * WINDOW_US for i in range(1, n)]
    shard = np.searchsorted(np.array(bounds, dtype=np.int64), df[tcol].to_numpy(), side="right")
    tagged = df.with_columns(pl.Series("_shard", shard))
    return [tagged.filter(pl.col("_shard") == i).drop("_shard") for i in range(n)]
