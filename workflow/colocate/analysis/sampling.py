"""Does one random 1-s sample per window stand for a task's instantaneous variability? Beyond the papers, on a trace
that records each window's distribution of 1-s samples (the Google 2019 trace).

Janus & Rzadca (§3, §5) take inst, one randomly chosen second of each 5-minute window, as the task's instantaneous
usage: its spread over the windows is the variance GPA packs with. The 2019 trace records, per window, percentiles
of all its 1-s samples. By the law of total variance, the variance of a task's usage at a random second is

    Var U = E_t[Var(U | t)] + Var_t(E[U | t]),

the mean within-window variance plus the variance of the window means. :func:`quantile_moments` reads each window's
mean and variance off its percentiles (a piecewise-linear quantile function, exact for a uniform spread between
them); :func:`task_variability` sets each task's inst std beside the std so implied (``implied_std``);
:func:`gpa_variance_sources` packs the same tasks by GPA (Janus §4, Algorithm 1) with either variance and measures
the overflow frequency q on the inst samples of other windows, against the target ρ.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from colocate.measure import measurement
from colocate.scheduling.fit_tests import GPA, TaskStats
from colocate.scheduling.packing import evaluate, lower_bound, pack

__all__ = ["MOMENT_COLUMNS", "quantile_moments", "task_variability", "gpa_variance_sources", "sampling_measurements"]

#: The per-window table the analysis reads (the contract's window_moments): an entity's window, its inst sample, its
#: mean (avg) and the mean and variance of its 1-s samples.
MOMENT_COLUMNS = ("job_id", "task_index", "window", "sampled_cpu_usage", "cpu_rate", "within_mean", "within_var")
_KEY = ["job_id", "task_index"]


def quantile_moments(levels: Sequence[float], quantiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of distributions given by their quantiles at ``levels`` (increasing, from 0 to 1), one
    distribution per row of ``quantiles`` (n × len(levels)): the quantile function is taken linear between the
    levels, so the mean is its trapezoid integral and E[U²] = Σ Δp (a² + ab + b²) / 3 over each segment [a, b].
    Exact for a distribution uniform between consecutive quantiles (uniform on [0, 1]: 1/2 and 1/12)."""
    p = np.asarray(levels, dtype=np.float64)
    q = np.asarray(quantiles, dtype=np.float64)
    if p.ndim != 1 or p.size < 2 or p[0] != 0 or p[-1] != 1 or np.any(np.diff(p) <= 0):
        raise ValueError(f"levels must increase from 0 to 1, got {p.tolist()}")
    if q.ndim != 2 or q.shape[1] != p.size:
        raise ValueError(f"quantiles must be (n, {p.size}), got {q.shape}")
    # the segments' sums as products with fixed weights: a level's value counts in the segments on either side of it
    dp = np.diff(p)
    beside = np.concatenate([[0.0], dp]) + np.concatenate([dp, [0.0]])
    mean = q @ (beside / 2)
    second = (q * q) @ (beside / 3) + np.einsum("ij,ij,j->i", q[:, :-1], q[:, 1:], dp / 3)
    return mean, np.maximum(second - mean * mean, 0.0)


def task_variability(moments: pl.DataFrame, tasks: pl.DataFrame | None = None, min_windows: int = 24) -> pl.DataFrame:
    """Per task with at least ``min_windows`` windows of ``moments`` (:data:`MOMENT_COLUMNS`; only the tasks of
    ``tasks`` where given, e.g. Janus §3.1's long ones): ``windows``, ``inst_mean`` and ``inst_std`` (ddof 0, as
    Janus's statistics) of the samples, ``within_std`` = √E_t[Var(U | t)], ``between_std`` = the std of the window
    means, ``implied_std`` = √(within² + between²), and ``ratio`` = inst_std / implied_std (1 where one sample per
    window stands for the whole distribution, up to its sampling error ~1/√(2·windows))."""
    frame = moments if tasks is None else moments.join(tasks.select(_KEY).unique(), on=_KEY, how="semi")
    out = (
        frame.group_by(_KEY)
        .agg(pl.len().alias("windows"),
             pl.col("sampled_cpu_usage").cast(pl.Float64).mean().alias("inst_mean"),
             pl.col("sampled_cpu_usage").cast(pl.Float64).std(ddof=0).alias("inst_std"),
             pl.col("within_var").cast(pl.Float64).mean().sqrt().alias("within_std"),
             pl.col("within_mean").cast(pl.Float64).std(ddof=0).alias("between_std"))
        .filter(pl.col("windows") >= min_windows)
        .with_columns((pl.col("within_std") ** 2 + pl.col("between_std") ** 2).sqrt().alias("implied_std"))
        .with_columns(pl.when(pl.col("implied_std") > 0).then(pl.col("inst_std") / pl.col("implied_std")).alias("ratio"))
        .sort(_KEY)
    )
    return out


def gpa_variance_sources(moments: pl.DataFrame, tasks: pl.DataFrame, rhos: Sequence[float], *, n_tasks: int,
                         instances: int, realizations: int, capacity: float, seed: int) -> pl.DataFrame:
    """GPA (Janus §4, Algorithm 1) with each task's variance from its inst samples (Janus's way) or from its windows'
    distributions, on the same tasks: per instance, ``n_tasks`` of ``tasks`` (with ``moments``) drawn without
    replacement, each with ``realizations`` of its windows drawn with replacement (independent across tasks, as
    Janus §5.1's realizations), the first half observed (O), the second evaluated (E). Both pack with the inst mean
    over O; q is the share of (machine, realization) pairs of E whose inst total exceeds ``capacity``. One row per
    ρ and variance source: the mean q over instances, q / ρ and the mean machines. Empty where fewer tasks than
    ``n_tasks`` have windows."""
    frame = moments.join(tasks.select(_KEY).unique(), on=_KEY, how="semi").sort([*_KEY, "window"])
    counts = frame.group_by(_KEY, maintain_order=True).len()
    schema = {"rho": pl.Float64, "variance_from": pl.String, "q": pl.Float64, "q_over_rho": pl.Float64,
              "machines": pl.Float64, "instances": pl.Int64}
    if counts.height < n_tasks or realizations < 2:
        return pl.DataFrame(schema=schema)
    n = counts["len"].to_numpy().astype(np.int64)
    start = np.concatenate([[0], np.cumsum(n)[:-1]])
    inst = frame["sampled_cpu_usage"].cast(pl.Float64).to_numpy()
    wmean = frame["within_mean"].cast(pl.Float64).to_numpy()
    wvar = frame["within_var"].cast(pl.Float64).to_numpy()
    rng = np.random.default_rng(seed)
    half = realizations // 2
    rows = []
    for _ in range(instances):
        chosen = np.sort(rng.choice(counts.height, size=n_tasks, replace=False))
        idx = start[chosen, None] + (rng.random((n_tasks, realizations)) * n[chosen, None]).astype(np.int64)
        x = inst[idx]
        obs, ev = x[:, :half], x[:, half:]
        mean = obs.mean(axis=1)
        variances = {"inst samples": obs.var(axis=1),
                     "window distributions": wvar[idx[:, :half]].mean(axis=1) + wmean[idx[:, :half]].var(axis=1)}
        m_norm = lower_bound(x.mean(axis=1), capacity)
        for rho in rhos:
            for source, var in variances.items():
                packing = pack(GPA(rho), TaskStats(mean, var), capacity)
                e = evaluate(packing, ev, capacity, m_norm)
                rows.append({"rho": float(rho), "variance_from": source, "q": e.q, "machines": float(e.m_abs)})
    per = pl.DataFrame(rows)
    return (per.group_by("rho", "variance_from", maintain_order=True)
            .agg(pl.col("q").mean(), pl.col("machines").mean(), pl.len().cast(pl.Int64).alias("instances"))
            .with_columns((pl.col("q") / pl.col("rho")).alias("q_over_rho")).select(list(schema)))


def sampling_measurements(per_task: pl.DataFrame, packing: pl.DataFrame, min_tasks: int = 30) -> list[dict]:
    """The summary's rows: how far inst's std is from the std the distributions imply (median ratio, the share of
    tasks within ±10%), and GPA's q with either variance at each ρ. Too few tasks is said, not failed."""
    ratio = per_task["ratio"].drop_nulls()
    few = f"{ratio.len()} tasks with windows enough (fewer than {min_tasks})" if ratio.len() < min_tasks else ""
    rows = [
        measurement("beyond.sampling.tasks", per_task.height, "tasks with distributions in enough windows"),
        measurement("beyond.sampling.ratio.median", ratio.median() if ratio.len() else None,
                    "median over tasks of inst std / the std the windows' distributions imply", few),
        measurement("beyond.sampling.ratio.within10", float((ratio - 1).abs().le(0.1).mean()) if ratio.len() else None,
                    "share of tasks whose ratio is within ±10% of 1", few),
    ]
    for row in packing.iter_rows(named=True):
        key = "inst" if row["variance_from"] == "inst samples" else "distributions"
        rows.append(measurement(f"beyond.sampling.gpa_q.{key}", row["q"], f"mean q over {row['instances']} instances",
                                rho=row["rho"]))
    return rows
