"""Characterisation of instantaneous CPU usage: Janus & Rzadca (2017) §3.

Fig 1 (sampling validation), Figs 2–3 (variability), §3.4 (time invariance), Fig 4 (typical distributions) and
Fig 5, Table 1, Fig 6 (total usage), in the paper's notation: ``x_i(t)`` a task's inst values, ``y_i(t)`` its avg.
Every function is pure (arrays and DataFrames in and out, every draw from the ``numpy.random.Generator`` it is
given); a task's records are one flat array per quantity plus ``offsets`` (:func:`series_blocks`).

Method (the notation, the functions by figure): docs/methods.md#characterisation-of-instantaneous-usage.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from colocate.insufficient import InsufficientData
from colocate.measure import measurement
from colocate.prep.tasks import HIST_BINS, TASK_KEY

# scipy, statsmodels, scikit-learn and matplotlib are imported where they are used: each rule
# script needs one or two of them, and importing all costs seconds per job.

#: Fig 1's numbers of instantaneous samples k (Janus & Rzadca §3.2).
SAMPLING_KS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
#: The sizes N Table 1 reports (its columns, Janus & Rzadca §3.6): a row of one of them answers the claim of its N
#: (``janus.t1.ad_rejection_n10`` …, ``workflow/papers/janus.tsv``), a row of another N the claim without a paper value.
TABLE1_SIZES = (10, 20, 30, 50, 100, 250, 500)
#: Fig 1's box is symmetric around 0 when it holds 0 and its shorter side is at least this share of its longer one:
#: neither side of the interquartile range more than twice the other.
FIG1_SYMMETRY = 0.5
KINDS = ("inst", "avg")
WINDOW_KS_SCHEMA = {"task": pl.Int64, "n_windows": pl.Int64, "window_1": pl.Int64, "window_2": pl.Int64,
                    "statistic": pl.Float64, "pvalue": pl.Float64}


def _count(n: float | None) -> str:
    """A count in a note, with thousands separators (7,024)."""
    return "?" if n is None else f"{int(n):,}"


def stream(seed: int, name: str) -> np.random.Generator:
    """An independent generator for the analysis ``name``, derived from ``seed`` (same seed, same draws)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(zlib.crc32(name.encode()),)))


def _finite(name: str, a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.size and not np.all(np.isfinite(a)):
        bad = int(np.size(a) - np.count_nonzero(np.isfinite(a)))
        raise ValueError(f"{name}: {bad} value(s) are NaN or infinite")
    return a


def _lengths(offsets: np.ndarray) -> np.ndarray:
    offsets = np.asarray(offsets, dtype=np.int64)
    if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0:
        raise ValueError("offsets must be a 1-D array starting at 0")
    lengths = np.diff(offsets)
    if np.any(lengths < 1):
        raise ValueError("offsets: every task needs at least one record")
    return lengths


# ============================================================================ series


@dataclass(frozen=True)
class Series:
    """Long tasks' time-ordered records as flat arrays: task ``j`` owns ``[offsets[j], offsets[j+1])``."""

    keys: pl.DataFrame
    offsets: np.ndarray
    inst: np.ndarray
    avg: np.ndarray


def series_blocks(records: pl.DataFrame) -> Series:
    """Group series records (``job_id``, ``task_index``, ``start_time``, ``inst``, ``avg``) into task blocks.

    Records are sorted by task and time; ``keys`` lists the tasks in block order.
    """
    rec = records.select(*TASK_KEY, "start_time", "inst", "avg").sort(*TASK_KEY, "start_time")
    lengths = rec.group_by(TASK_KEY, maintain_order=True).len()
    offsets = np.concatenate([[0], np.cumsum(lengths["len"].to_numpy().astype(np.int64))])
    return Series(
        keys=lengths.select(TASK_KEY),
        offsets=offsets,
        inst=_finite("inst", rec["inst"].to_numpy().astype(np.float64)),
        avg=_finite("avg", rec["avg"].to_numpy().astype(np.float64)),
    )


# ============================================================================ Fig 1 (§3.2)


def sampling_differences(
    inst: np.ndarray, avg: np.ndarray, offsets: np.ndarray, ks: Sequence[int], rng: np.random.Generator
) -> pl.DataFrame:
    """Fig 1, sampling validation (Janus & Rzadca §3.2): ``(ȳ_i − x̄_i^(k)) / ȳ_i`` per task and k.

    ``ȳ_i`` is the mean of all of task ``i``'s avg records and ``x̄_i^(k)`` the
    mean of ``k`` inst records chosen uniformly without replacement (a fresh
    subset for every k). Only tasks with at least ``k`` records count for ``k``;
    tasks with ``ȳ_i = 0`` have no relative difference and are left out.
    Returns ``task`` (block index), ``k`` and ``rel_diff``.
    """
    inst, avg = _finite("inst", inst), _finite("avg", avg)
    lengths = _lengths(offsets)
    if inst.shape != avg.shape or inst.size != offsets[-1]:
        raise ValueError("inst and avg must hold offsets[-1] records each")
    ks = [int(k) for k in ks]
    if not ks or min(ks) < 1:
        raise ValueError(f"ks: numbers of samples must be >= 1, got {ks}")
    n = lengths.size
    owner = np.repeat(np.arange(n), lengths)
    ybar = np.bincount(owner, weights=avg, minlength=n) / lengths
    pos_base = np.asarray(offsets)[owner]
    out = []
    for k in ks:
        # a random permutation within each task: owner + u in [owner, owner + 1) sorts as (owner, u) does, by one
        # float argsort (5× np.lexsort's time on a 3.5 M-record bucket; the same order there)
        order = np.argsort(owner + rng.random(owner.size), kind="stable")
        pick = order[(np.arange(owner.size) - pos_base) < k]
        xk = np.bincount(owner[pick], weights=inst[pick], minlength=n) / k
        ok = (lengths >= k) & (ybar > 0)
        idx = np.flatnonzero(ok)
        out.append(
            pl.DataFrame(
                {"task": idx.astype(np.int64), "k": np.full(idx.size, k, dtype=np.int64), "rel_diff": (ybar[idx] - xk[idx]) / ybar[idx]}
            )
        )
    return pl.concat(out)


def bucket_sampling_differences(records: pl.DataFrame, ks: Sequence[int], rng: np.random.Generator) -> pl.DataFrame:
    """Fig 1's sampling validation (Janus & Rzadca §3.2) of one bucket's long tasks: :func:`sampling_differences`
    keyed by task (``job_id``, ``task_index``, ``k``, ``rel_diff``); no rows for a bucket without long tasks.

    ``records`` are the bucket's series records (:func:`series_blocks`). A bucket's result depends only on its
    records and ``rng``, so the buckets can be computed apart and concatenated in bucket order."""
    s = series_blocks(records)
    return with_keys(sampling_differences(s.inst, s.avg, s.offsets, ks, rng), s.keys)


def box_statistics(values: pl.DataFrame, by: str = "k", value: str = "rel_diff", whis: float = 1.5) -> pl.DataFrame:
    """Boxplot statistics per group (matplotlib's): quartiles, IQR and whiskers at the last point within ``whis``·IQR.

    The Fig 1 table: one row per ``by`` value with ``n``, ``q1``, ``median``,
    ``q3``, ``iqr``, ``whislo``, ``whishi`` and ``mean``.
    """
    from matplotlib import cbook

    rows = []
    for (key,), g in values.group_by(by, maintain_order=True):
        v = _finite(value, g[value].to_numpy())
        s = cbook.boxplot_stats(v, whis=whis)[0]
        rows.append(
            {by: key, "n": v.size, "q1": s["q1"], "median": s["med"], "q3": s["q3"], "iqr": s["iqr"],
             "whislo": s["whislo"], "whishi": s["whishi"], "mean": s["mean"]}
        )
    return pl.DataFrame(rows).sort(by)


# ============================================================================ Figs 2–3 (§3.3)


def std_summary(long: pl.DataFrame) -> pl.DataFrame:
    """Fig 2, CDFs of the per-task std of inst and avg (Janus & Rzadca §3.3): quantiles per kind.

    Also ``share_above_other``: the share of tasks whose std of this kind
    exceeds the other kind's (the paper: inst is more variable than avg).
    """
    inst, avg = (_finite(f"{k}_std", long[f"{k}_std"].to_numpy()) for k in KINDS)
    rows = []
    for kind, v, other in (("inst", inst, avg), ("avg", avg, inst)):
        q = np.quantile(v, [0.25, 0.5, 0.75, 0.9])
        rows.append(
            {"kind": kind, "n_tasks": v.size, "mean": float(v.mean()), "q25": q[0], "median": q[1], "q75": q[2],
             "q90": q[3], "share_above_other": float(np.mean(v > other))}
        )
    return pl.DataFrame(rows)


def _ols(long: pl.DataFrame, kind: str):
    import statsmodels.api as sm

    x = _finite(f"{kind}_mean", long[f"{kind}_mean"].to_numpy())
    y = _finite(f"{kind}_std", long[f"{kind}_std"].to_numpy())
    if x.size < 3:
        raise ValueError(f"std trend lines need at least 3 tasks, got {x.size}")
    return sm.OLS(y, sm.add_constant(x, has_constant="add")).fit()


def std_trend_lines(long: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Fig 3's linear trend lines (Janus & Rzadca §3.3): OLS of per-task std on mean, for inst and avg.

    Returns per kind the intercept and slope with their ``1 − alpha``
    confidence intervals (statsmodels OLS), R² and the number of tasks
    (the paper: inst 0.015 + 0.36·mean, avg 0.010 + 0.31·mean).
    """
    rows = []
    for kind in KINDS:
        fit = _ols(long, kind)
        ci = fit.conf_int(alpha)
        rows.append(
            {"kind": kind, "intercept": fit.params[0], "intercept_lo": ci[0, 0], "intercept_hi": ci[0, 1],
             "slope": fit.params[1], "slope_lo": ci[1, 0], "slope_hi": ci[1, 1], "r2": fit.rsquared, "n_tasks": int(fit.nobs)}
        )
    return pl.DataFrame(rows)


def trend_bands(long: pl.DataFrame, grid: np.ndarray, alpha: float = 0.05) -> pl.DataFrame:
    """Fig 3's trend lines on ``grid`` with the ``1 − alpha`` confidence band of the mean (statsmodels)."""
    import statsmodels.api as sm

    rows = []
    grid = np.asarray(grid, dtype=np.float64)
    for kind in KINDS:
        pred = _ols(long, kind).get_prediction(sm.add_constant(grid, has_constant="add")).summary_frame(alpha=alpha)
        rows.append(
            pl.DataFrame({"kind": kind, "mean": grid, "fit": pred["mean"].to_numpy(),
                          "lo": pred["mean_ci_lower"].to_numpy(), "hi": pred["mean_ci_upper"].to_numpy()})
        )
    return pl.concat(rows)


def std_heatmaps(long: pl.DataFrame, mean_edges: np.ndarray, std_edges: np.ndarray) -> dict[str, np.ndarray]:
    """Fig 3's heatmaps (Janus & Rzadca §3.3): share of tasks per (mean, std) cell, for inst, avg and inst − avg.

    Each map is a ``(len(mean_edges) − 1, len(std_edges) − 1)`` array of
    shares of all tasks (tasks outside the edges count in the denominator).
    """
    out = {}
    for kind in KINDS:
        x = _finite(f"{kind}_mean", long[f"{kind}_mean"].to_numpy())
        y = _finite(f"{kind}_std", long[f"{kind}_std"].to_numpy())
        counts, _, _ = np.histogram2d(x, y, bins=[mean_edges, std_edges])
        out[kind] = counts / max(x.size, 1)
    out["difference"] = out["inst"] - out["avg"]
    return out


# ============================================================================ §3.4 time invariance


def window_ks(
    values: np.ndarray, offsets: np.ndarray, delta: int, rng: np.random.Generator, require: bool = True
) -> pl.DataFrame:
    """§3.4, time invariance (Janus & Rzadca): two-sample K-S between two random windows of each task.

    A task's records are cut into windows of ``delta`` consecutive records
    (``k·Δ … k·Δ + Δ − 1``, an incomplete last window dropped); two distinct
    windows ``k1 ≠ k2`` are drawn uniformly and compared with
    :func:`scipy.stats.ks_2samp` (vectorised over tasks). Tasks with fewer
    than two windows are left out; if that is every task, ``ValueError``
    (or, with ``require=False``, an empty frame: one bucket of many).
    Returns ``task`` (block index), ``n_windows``, ``window_1``, ``window_2``,
    ``statistic`` and ``pvalue``.
    """
    from scipy import stats

    values = _finite("values", values)
    lengths = _lengths(offsets)
    if values.size != offsets[-1]:
        raise ValueError("values must hold offsets[-1] records")
    if int(delta) < 2:
        raise ValueError(f"window length delta must be >= 2 records, got {delta}")
    delta = int(delta)
    n_win = lengths // delta
    idx = np.flatnonzero(n_win >= 2)
    if idx.size == 0 and not require:
        return pl.DataFrame(schema=WINDOW_KS_SCHEMA)
    if idx.size == 0:
        raise ValueError(
            f"window length delta={delta} records: no task has two windows (the longest has {lengths.max()} records)"
        )
    w = n_win[idx]
    k1 = np.minimum((rng.random(idx.size) * w).astype(np.int64), w - 1)
    k2 = np.minimum((rng.random(idx.size) * (w - 1)).astype(np.int64), w - 2)
    k2 = np.where(k2 >= k1, k2 + 1, k2)
    base = np.asarray(offsets, dtype=np.int64)[idx, None] + np.arange(delta)
    a = values[base + k1[:, None] * delta]
    b = values[base + k2[:, None] * delta]
    res = stats.ks_2samp(a, b, axis=1)
    return pl.DataFrame(
        {"task": idx.astype(np.int64), "n_windows": w, "window_1": k1, "window_2": k2,
         "statistic": np.asarray(res.statistic, dtype=np.float64), "pvalue": np.asarray(res.pvalue, dtype=np.float64)},
        schema=WINDOW_KS_SCHEMA,
    )


def bucket_window_ks(records: pl.DataFrame, windows: Sequence[int], rng: np.random.Generator) -> pl.DataFrame:
    """§3.4's time invariance (Janus & Rzadca) of one bucket's long tasks: :func:`window_ks` for each window
    length Δ in ``windows``, in that order, keyed by task (``delta``, ``job_id``, ``task_index``, then
    :data:`WINDOW_KS_SCHEMA`'s columns); no rows for a Δ no task holds twice, or a bucket without long tasks.

    ``records`` are the bucket's series records (:func:`series_blocks`); buckets are independent, as in
    :func:`bucket_sampling_differences`."""
    if not windows:
        raise ValueError("windows: at least one window length Δ is needed")
    s = series_blocks(records)
    return pl.concat([
        with_keys(window_ks(s.inst, s.offsets, d, rng, require=False), s.keys).select(pl.lit(d, pl.Int64).alias("delta"), pl.all())
        for d in windows
    ])


def rejection_shares(
    tests: pl.DataFrame, alpha: float = 0.05, by: str = "delta", expected: Sequence[int] | None = None
) -> pl.DataFrame:
    """§3.4's headline: the share of tasks whose K-S test rejects at ``alpha``, with a 95% interval.

    ``tests`` holds ``pvalue`` and the grouping column ``by`` (the window Δ);
    the paper finds about 30% for Δ = 12, 24 and 36. The interval is Wilson's
    for independent tasks; when ``tests`` has ``job_id`` it is the
    cluster-robust one by job instead (statsmodels OLS on the 0/1 outcomes,
    ``cov_type="cluster"``): tasks of a job share their load, so their outcomes
    are correlated and Wilson's interval is too narrow (``jobs`` counts them).
    A value of ``expected`` without any test (a Δ longer than every task's
    series allows, as in a trace shorter than 2Δ records) is
    :class:`~colocate.insufficient.InsufficientData`.
    """
    import statsmodels.api as sm
    from statsmodels.stats.proportion import proportion_confint

    missing = sorted(set(expected or ()) - set(tests[by].to_list()))
    if missing:
        raise InsufficientData(f"window length Δ (delta) {missing} records: no task has two windows that long",
                               f"long tasks with at least 2 × {max(missing)} records ({max(missing) * 10} minutes)")
    agg = (
        tests.group_by(by, maintain_order=True)
        .agg(pl.len().alias("n_tasks"), (pl.col("pvalue") < alpha).sum().alias("rejected"))
        .sort(by)
    )
    lo, hi = proportion_confint(agg["rejected"].to_numpy(), agg["n_tasks"].to_numpy(), alpha=0.05, method="wilson")
    out = agg.with_columns(
        (pl.col("rejected") / pl.col("n_tasks")).alias("share"), pl.Series("ci_lo", lo), pl.Series("ci_hi", hi)
    )
    if "job_id" not in tests.columns:
        return out
    jobs, lo, hi = [], [], []
    for key in out[by].to_list():
        t = tests.filter(pl.col(by) == key)
        y = (t["pvalue"] < alpha).cast(pl.Float64).to_numpy()
        groups = t["job_id"].to_numpy()
        jobs.append(int(np.unique(groups).size))
        if jobs[-1] < 2:
            lo.append(float("nan"))
            hi.append(float("nan"))
            continue
        fit = sm.OLS(y, np.ones(y.size)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        ci = np.asarray(fit.conf_int(alpha=0.05))[0]
        lo.append(max(float(ci[0]), 0.0))
        hi.append(min(float(ci[1]), 1.0))
    return out.with_columns(pl.Series("jobs", jobs, dtype=pl.Int64), pl.Series("ci_lo", lo), pl.Series("ci_hi", hi))


# ============================================================================ Fig 4 (§3.5)


def _check_hist(hist: np.ndarray, k: int) -> np.ndarray:
    hist = np.asarray(hist)
    if hist.ndim != 2:
        raise ValueError(f"histograms must be a 2-D array (tasks × bins), got shape {hist.shape}")
    _finite("histograms", hist)
    if int(k) < 1:
        raise ValueError(f"number of clusters k must be >= 1, got {k}")
    if int(k) > hist.shape[0]:
        raise InsufficientData(
            f"number of clusters k={k} is larger than the number of tasks ({hist.shape[0]} long tasks)",
            f"at least k = {k} long tasks (≥ 2 h of task_usage each)",
        )
    return hist


def kmeans_histograms(
    hist: np.ndarray, k: int, seed: int, n_init: int = 10
) -> tuple[np.ndarray, np.ndarray, float]:
    """Fig 4, typical distributions of inst usage (Janus & Rzadca §3.5): k-means on the histograms h_i.

    scikit-learn's KMeans (Euclidean, k-means++, ``n_init`` restarts, seeded).
    Clusters are renumbered by the mean usage of their centroid (ascending),
    so that cluster 0 is the "almost always 0" one and labels do not depend
    on the solver's order. Returns ``(labels, centroids (k × bins), inertia)``.
    """
    from sklearn.cluster import KMeans

    hist = _check_hist(hist, k)
    # one float64 matrix, centred in place (copy_x=False): 0.8 KB per task where a copy would double it
    x = np.array(hist, dtype=np.float64, order="C")
    km = KMeans(n_clusters=int(k), n_init=int(n_init), random_state=int(seed), copy_x=False).fit(x)
    centres = km.cluster_centers_
    bins = hist.shape[1]
    mean_usage = centres @ ((np.arange(bins) + 0.5) / bins)
    order = np.argsort(mean_usage, kind="stable")
    relabel = np.empty(int(k), dtype=np.int64)
    relabel[order] = np.arange(int(k))
    return relabel[km.labels_], centres[order], float(km.inertia_)


def cluster_shares(labels: np.ndarray, k: int) -> pl.DataFrame:
    """Fig 4's cluster sizes: tasks and share of all tasks per cluster (the paper: 1.4%–17.6%)."""
    counts = np.bincount(np.asarray(labels, dtype=np.int64), minlength=int(k))
    return pl.DataFrame({"cluster": np.arange(int(k)), "tasks": counts, "share": counts / max(counts.sum(), 1)})


def elbow(
    hist: np.ndarray, ks: Sequence[int], seed: int, rng: np.random.Generator, max_tasks: int, n_init: int = 4
) -> pl.DataFrame:
    """Inertia of k-means for each k (the elbow plot justifying Fig 4's k = 16).

    At most ``max_tasks`` histograms (a uniform sample drawn with ``rng``) are
    clustered for each k. Returns ``k``, ``inertia`` and ``inertia_per_task``.
    """
    import scipy.sparse as sp
    from sklearn.cluster import KMeans

    hist = _check_hist(hist, max(ks))
    if hist.shape[0] > max_tasks:
        hist = hist[np.sort(rng.choice(hist.shape[0], int(max_tasks), replace=False))]
    # sparse: most bins are empty (a task's usage fills a few), and k-means' distances then cost 2-4x less
    rows, x = [], sp.csr_array(hist).astype(np.float64)  # converted once for every k
    for k in ks:
        inertia = KMeans(n_clusters=int(k), n_init=int(n_init), random_state=int(seed)).fit(x).inertia_
        rows.append({"k": int(k), "inertia": float(inertia), "inertia_per_task": float(inertia) / hist.shape[0]})
    return pl.DataFrame(rows)


# ============================================================================ Fig 5, Table 1, Fig 6 (§3.6)


def distinct_sizes(n_tasks: int, sizes: Sequence[int], repetitions: int) -> tuple[list[int], list[int]]:
    """The sample sizes N of §3.6 whose random sets S_j are (nearly) all different: with C(n, N) sets of N out of
    ``n_tasks``, ``repetitions`` independent draws repeat a set about (r − 1) / 2C of the time, kept below 1%
    (C ≥ 50 (r − 1)). Near n there are few sets (one at N = n), so the repetitions would test the same sets again
    and a rate over them would not be a rate over sets. Returns ``(kept, skipped)``."""
    import math

    r = int(repetitions)
    kept = [int(n) for n in sizes if int(n) <= int(n_tasks) and math.comb(int(n_tasks), int(n)) >= 50 * (r - 1)]
    return kept, [int(n) for n in sizes if int(n) not in kept]


def total_usage_sizes(n_tasks: int, table1: Sequence[int], fig6: Sequence[int], fig5: Sequence[int], repetitions: int
                      ) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """The sizes §3.6 can use on ``n_tasks`` tasks: Table 1's and Fig 6's with distinct sets (:func:`distinct_sizes`),
    Fig 5's (one set each) up to ``n_tasks``. Returns ``(kept, skipped)``, each ``{"table1": …, "fig6": …, "fig5":
    …}``; lacking a size for any of the three is insufficient data."""
    asked = {"table1": table1, "fig6": fig6, "fig5": fig5}
    kept = {"table1": distinct_sizes(n_tasks, table1, repetitions)[0], "fig6": distinct_sizes(n_tasks, fig6, repetitions)[0],
            "fig5": [int(n) for n in fig5 if int(n) <= int(n_tasks)]}
    skipped = {key: [int(n) for n in asked[key] if int(n) not in kept[key]] for key in asked}
    if not all(kept.values()):
        smallest = max(min(v) for v in (table1, fig6, fig5))
        raise InsufficientData(f"{n_tasks} tasks with realizations, too few for distinct random sets of the sizes asked",
                               f"enough tasks for N = {smallest}")
    return kept, skipped


def sample_sets(n_tasks: int, size: int, repetitions: int, rng: np.random.Generator) -> np.ndarray:
    """``repetitions`` random samples S_j of ``size`` distinct tasks out of ``n_tasks`` (Janus & Rzadca §3.6).

    Returns an int64 array (repetitions × size) of row indices.
    """
    if int(size) < 1:
        raise ValueError(f"sample size N must be >= 1, got {size}")
    if int(size) > int(n_tasks):  # a trace with fewer long tasks (realizations takes all it holds)
        raise InsufficientData(f"sample size N={size} is larger than the number of tasks with realizations ({n_tasks})",
                               f"at least {size} long tasks")
    if int(repetitions) < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    return np.stack([rng.choice(int(n_tasks), int(size), replace=False) for _ in range(int(repetitions))])


def set_totals(matrix: np.ndarray, sets: np.ndarray) -> np.ndarray:
    """Total usage of each set: ``Σ_{i ∈ S_j} matrix[i, :]`` (repetitions × R, float64).

    A sparse selection matrix times the (memory-mapped) realization matrix,
    so the cost is Σ|S_j|·R and nothing of size sets × tasks × R is built.
    """
    import scipy.sparse as sp

    sets = np.asarray(sets, dtype=np.int64)
    reps, size = sets.shape
    sel = sp.csr_matrix(
        (np.ones(sets.size, dtype=matrix.dtype), sets.ravel(), np.arange(0, sets.size + 1, size)),
        shape=(reps, matrix.shape[0]),
    )
    return np.asarray(sel @ matrix, dtype=np.float64)


def anderson_pvalues(totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Anderson–Darling test of normality (unknown mean and std) of each row: ``(statistic, p-value)``.

    :func:`scipy.stats.anderson` with interpolated p-values (SciPy ≥ 1.17); on
    older SciPy the p-value is bracketed from the critical values (exact at
    the tabulated levels 15, 10, 5, 2.5 and 1%).
    """
    from scipy import stats

    stat = np.empty(totals.shape[0])
    pval = np.empty(totals.shape[0])
    for j, row in enumerate(totals):
        try:
            r = stats.anderson(row, dist="norm", method="interpolate")
            stat[j], pval[j] = r.statistic, r.pvalue
        except TypeError:  # SciPy < 1.17: no `method`
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = stats.anderson(row, dist="norm")
            stat[j] = r.statistic
            above = r.significance_level[r.statistic > r.critical_values] / 100
            pval[j] = above.min() if above.size else 1.0
    return stat, pval


def total_usage_samples(
    matrix: np.ndarray,
    mu: np.ndarray,
    sigma: np.ndarray,
    sizes: Sequence[int],
    repetitions: int,
    rng: np.random.Generator,
    percentiles: Sequence[float] = (95.0, 99.0, 99.9),
    chunk_values: int = 8_000_000,
) -> pl.DataFrame:
    """Total inst usage of random samples of N tasks (Janus & Rzadca §3.6: Table 1 and Fig 6).

    For each N in ``sizes`` and each of ``repetitions`` samples S_j: the total
    usage's R realizations are the sums of the tasks' realization rows
    (``matrix``, tasks × R); the fitted Gaussian is N(μ_j, σ_j²) with
    μ_j = Σ μ_i and σ_j² = Σ σ_i² from the tasks' own statistics ``mu`` and
    ``sigma``. Returns one row per sample: ``N``, ``rep``, ``mu_j``,
    ``sigma_j``, ``ad_statistic``, ``ad_pvalue`` (Anderson–Darling) and, per
    percentile k, ``empirical_pK`` (P_k of the realizations) and ``gaussian_pK``
    (F⁻¹_{μ_j,σ_j}(k)), ordered by N, then repetition.

    A repetition draws one ordered random sample of max N tasks, and S_j of each
    N is its first N: every S_j is a uniform sample of N tasks, as the paper
    draws them, and the sums grow from one N to the next, so the cost is
    max N · R per repetition instead of Σ N · R (halved for Table 1's sizes).
    Repetitions are drawn in order, so chunking does not change the numbers.
    """
    from scipy import stats

    if matrix.ndim != 2:
        raise ValueError(f"realization matrix must be 2-D (tasks × R), got shape {matrix.shape}")
    mu, sigma = _finite("mu", np.asarray(mu, dtype=np.float64)), _finite("sigma", np.asarray(sigma, dtype=np.float64))
    if mu.shape != (matrix.shape[0],) or sigma.shape != mu.shape:
        raise ValueError("mu and sigma need one value per row of the realization matrix")
    q = np.asarray(percentiles, dtype=np.float64)
    if np.any((q <= 0) | (q >= 100)):
        raise ValueError(f"percentiles must be in (0, 100), got {list(percentiles)}")
    names = [_pname(p) for p in q]
    sizes = sorted({int(n) for n in sizes})
    if not sizes or sizes[0] < 1:
        raise ValueError(f"sample sizes N must be >= 1, got {list(sizes)}")
    if int(repetitions) < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    frames: dict[int, list[pl.DataFrame]] = {n: [] for n in sizes}
    step = max(1, int(chunk_values) // max(matrix.shape[1], 1))
    for start in range(0, int(repetitions), step):
        # S_j(N) for every N: the first N tasks of one random ordered sample of max N (nested, each uniform)
        order = sample_sets(matrix.shape[0], sizes[-1], min(step, int(repetitions) - start), rng)
        reps = np.arange(start, start + order.shape[0])
        totals, done = np.zeros((order.shape[0], matrix.shape[1])), 0
        for size in sizes:
            totals += set_totals(matrix, order[:, done:size])  # only the tasks added since the last N
            done = size
            _finite("realization matrix", totals)
            block = order[:, :size]
            mu_j = mu[block].sum(axis=1)
            sigma_j = np.sqrt((sigma[block] ** 2).sum(axis=1))
            ad, pv = anderson_pvalues(totals)
            emp = np.percentile(totals, q, axis=1)  # (percentiles, reps)
            gauss = stats.norm.ppf(q[:, None] / 100, loc=mu_j, scale=sigma_j)
            cols = {"N": np.full(block.shape[0], size), "rep": reps,
                    "mu_j": mu_j, "sigma_j": sigma_j, "ad_statistic": ad, "ad_pvalue": pv}
            for i, name in enumerate(names):
                cols[f"empirical_{name}"] = emp[i]
                cols[f"gaussian_{name}"] = gauss[i]
            frames[size].append(pl.DataFrame(cols))
    return pl.concat([f for n in sizes for f in frames[n]])


def _pname(p: float) -> str:
    return "p" + f"{p:g}".replace(".", "_")


def normality_table(samples: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Table 1 (Janus & Rzadca §3.6): per N, the A-D rejection rate at ``alpha`` and the mean total μ̄_j.

    Also the number of samples and a 95% Wilson interval of the rate.
    """
    from statsmodels.stats.proportion import proportion_confint

    agg = (
        samples.group_by("N")
        .agg(pl.len().alias("samples"), (pl.col("ad_pvalue") < alpha).sum().alias("rejected"), pl.col("mu_j"))
        .sort("N")
    )
    # numpy's mean in the rows' order: polars' group-by mean differed in the last bit between two calls on the
    # same frame (issue 13's determinism: same config, same bytes)
    agg = agg.with_columns(pl.Series("mean_total", [float(np.mean(v.to_numpy())) for v in agg["mu_j"]])).drop("mu_j")
    lo, hi = proportion_confint(agg["rejected"].to_numpy(), agg["samples"].to_numpy(), alpha=0.05, method="wilson")
    return agg.select(
        "N", "samples", (pl.col("rejected") / pl.col("samples")).alias("ad_rejection"),
        pl.Series("ad_rejection_lo", lo), pl.Series("ad_rejection_hi", hi), "mean_total",
    )


def percentile_differences(samples: pl.DataFrame, sizes: Sequence[int] | None = None) -> pl.DataFrame:
    """Fig 6 (Janus & Rzadca §3.6): ``(F⁻¹_{μ_j,σ_j}(k) − P_k) / P_k`` per sample and percentile k.

    Long format: ``N``, ``percentile`` (e.g. 99.9), ``rel_diff``; samples
    whose empirical percentile is 0 are left out.
    """
    if sizes is not None:
        samples = samples.filter(pl.col("N").is_in(list(sizes)))
    out = []
    for col in samples.columns:
        if not col.startswith("empirical_p"):
            continue
        name = col.removeprefix("empirical_")
        pct = float(name[1:].replace("_", "."))
        out.append(
            samples.filter(pl.col(col) > 0).select(
                "N", pl.lit(pct).alias("percentile"),
                ((pl.col(f"gaussian_{name}") - pl.col(col)) / pl.col(col)).alias("rel_diff"),
            )
        )
    return pl.concat(out)


def percentile_difference_table(diffs: pl.DataFrame) -> pl.DataFrame:
    """Fig 6 in numbers: median, quartiles and the share of underestimates per N and percentile."""
    return (
        diffs.group_by("N", "percentile")
        .agg(
            pl.len().alias("samples"),
            pl.col("rel_diff").median().alias("median"),
            pl.col("rel_diff").quantile(0.25).alias("q1"),
            pl.col("rel_diff").quantile(0.75).alias("q3"),
            (pl.col("rel_diff") < 0).mean().alias("share_underestimated"),
        )
        .sort("N", "percentile")
    )


def example_totals(
    matrix: np.ndarray, mu: np.ndarray, sigma: np.ndarray, sizes: Sequence[int], rng: np.random.Generator
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Fig 5 (Janus & Rzadca §3.6): one random sample per N, its total usage's realizations and its Gaussian.

    Returns ``(totals, gaussians)``: ``totals`` has ``N`` and ``total`` (R rows
    per N); ``gaussians`` has ``N``, ``mu_j`` and ``sigma_j``.
    """
    mu, sigma = np.asarray(mu, dtype=np.float64), np.asarray(sigma, dtype=np.float64)
    totals, params = [], []
    for size in sizes:
        s = sample_sets(matrix.shape[0], size, 1, rng)
        t = _finite("realization matrix", set_totals(matrix, s)[0])
        totals.append(pl.DataFrame({"N": np.full(t.size, int(size)), "total": t}))
        params.append({"N": int(size), "mu_j": float(mu[s[0]].sum()), "sigma_j": float(np.sqrt((sigma[s[0]] ** 2).sum()))})
    return pl.concat(totals), pl.DataFrame(params)


def hist_matrix(long: pl.DataFrame, column: str = "inst_hist") -> np.ndarray:
    """The h_i histograms of ``long`` (an Array column) as a tasks × bins float32 matrix."""
    if long.height == 0:
        return np.zeros((0, HIST_BINS), dtype=np.float32)
    return long[column].to_numpy().astype(np.float32, copy=False)


# ============================================================================ plumbing helpers


def with_keys(frame: pl.DataFrame, keys: pl.DataFrame, column: str = "task") -> pl.DataFrame:
    """Replace the block index ``column`` of ``frame`` by the task key (``job_id``, ``task_index``) of ``keys``."""
    k = keys.with_row_index(column).with_columns(pl.col(column).cast(pl.Int64))
    return frame.join(k, on=column, how="left").select(*TASK_KEY, pl.exclude(*TASK_KEY, column))


def heatmap_edges(long: pl.DataFrame, bins: int, quantile: float) -> tuple[np.ndarray, np.ndarray]:
    """Fig 3's cell edges: ``bins`` cells from 0 to the ``quantile`` of the inst mean and of the inst std."""
    if long.height == 0:
        raise ValueError("Fig 3 needs at least one long task")
    top_mean = float(np.quantile(_finite("inst_mean", long["inst_mean"].to_numpy()), quantile)) or 1.0
    top_std = float(np.quantile(_finite("inst_std", long["inst_std"].to_numpy()), quantile)) or 1.0
    return np.linspace(0, top_mean, bins + 1), np.linspace(0, top_std, bins + 1)


def task_moments(rows: pl.DataFrame, stats_: pl.DataFrame, kind: str = "inst") -> tuple[np.ndarray, np.ndarray]:
    """μ_i and σ_i (``{kind}_mean``, ``{kind}_std``) of the realization matrix's rows, in row order.

    ``rows`` maps ``row`` to the task key (results/realizations/tasks.parquet);
    ``stats_`` holds the per-task statistics.
    """
    m = rows.join(stats_.select(*TASK_KEY, f"{kind}_mean", f"{kind}_std"), on=TASK_KEY, how="left").sort("row")
    if m[f"{kind}_mean"].null_count():
        raise ValueError(f"{m[f'{kind}_mean'].null_count()} realization row(s) have no task statistics")
    if m["row"].to_list() != list(range(m.height)):
        raise ValueError("realization rows must be numbered 0..N-1")
    return m[f"{kind}_mean"].to_numpy(), m[f"{kind}_std"].to_numpy()


def janus_measurements(
    fig1: pl.DataFrame | None, fig2: pl.DataFrame | None, lines: pl.DataFrame | None, s34: pl.DataFrame | None,
    shares: pl.DataFrame | None, table1: pl.DataFrame | None, fig6: pl.DataFrame | None, n_realizations: int,
) -> list[dict]:
    """What Janus & Rzadca §3 reports, as measured here, by the claim it answers (``workflow/papers/janus.tsv``).

    ``n_realizations`` (R, the realizations per task summed for Table 1) goes into Table 1's note: the A-D test's
    power, hence its rejection rate, grows with R. A table that is None (its analysis did not apply, or lacked data)
    gives no measurements."""
    out: list[dict] = []
    fig1_rows = fig1_measurements(fig1) if fig1 is not None and fig1.height else []
    out += [m for m in fig1_rows if m["id"] == "janus.fig1.iqr"]
    if fig2 is not None and lines is not None:
        out += variability_measurements(fig2, lines)
    for r in s34.iter_rows(named=True) if s34 is not None else ():
        clustered = f" of {_count(r['jobs'])} jobs (clustered by job)" if r.get("jobs") is not None else ""
        # ours is a share of a few thousand tasks whose jobs make them alike: its 95% CI is the noise (the claim's
        # tolerance adds it to the paper's rounding)
        sample = f"{_count(r['n_tasks'])} tasks{clustered}"
        out.append(measurement("janus.s34.rejected", f"{r['share']:.1%}", f"95% CI [{r['ci_lo']:.1%}, {r['ci_hi']:.1%}], {sample}",
                               delta=int(r["delta"]), ci_lo=r["ci_lo"], ci_hi=r["ci_hi"], sample=sample))
    if shares is not None:
        out += cluster_measurements(shares)
    if table1 is not None and fig6 is not None:
        out += total_usage_measurements(table1, fig6, n_realizations)
    # Fig 1's statements (symmetric around 0, shrinking with k) close the section, after the rows it had before them
    return out + [m for m in fig1_rows if m["id"] != "janus.fig1.iqr"]


def fig1_measurements(fig1: pl.DataFrame) -> list[dict]:
    """Fig 1 (§3.2): the IQR of the relative difference at the first k, at the first k ≥ 15 (from which the paper
    reads it as symmetric around 0) and at the last k; whether every box from there on is symmetric around 0
    (:data:`FIG1_SYMMETRY`), and whether the IQR shrinks as k grows, in the paper's words."""
    f = fig1.sort("k")
    ks = f["k"].to_list()
    by_k = {r["k"]: r for r in f.iter_rows(named=True)}
    middle = next((k for k in ks if k >= 15), ks[-1])
    out = [measurement("janus.fig1.iqr", by_k[k]["iqr"], f"median {by_k[k]['median']:.3g}, {_count(by_k[k]['n'])} tasks", k=k)
           for k in (ks[0], middle, ks[-1])]
    sides = {k: box_symmetry(by_k[k]["q1"], by_k[k]["q3"]) for k in ks if k >= middle}
    skewed = [k for k, ratio in sides.items() if ratio < FIG1_SYMMETRY]
    least = min(sides, key=sides.get)
    out.append(measurement(
        "janus.fig1.symmetric",
        "symmetric around 0" if not skewed else "not symmetric around 0 at k = " + ", ".join(f"{k:,}" for k in skewed),
        f"each box holds 0 and its shorter side is at least {FIG1_SYMMETRY:g} of its longer (least {sides[least]:.2f}, "
        f"k = {least:,})", k=middle))
    iqr = f["iqr"].to_list()
    grew = [(a, b) for (a, x), (b, y) in zip(zip(ks, iqr), zip(ks[1:], iqr[1:])) if y >= x]
    out.append(measurement(
        "janus.fig1.shrinking",
        "the more samples, the smaller" if not grew else "not smaller at k = " + ", ".join(f"{b:,} (than at {a:,})" for a, b in grew),
        f"IQR {iqr[0]:.3g} at k = {ks[0]:,}, {iqr[-1]:.3g} at k = {ks[-1]:,}"))
    return out


def box_symmetry(q1: float, q3: float) -> float:
    """How symmetric a box [q1, q3] is around 0: its shorter side over its longer (1 = symmetric), 0 when it does
    not hold 0."""
    below, above = -q1, q3
    if below <= 0 or above <= 0:
        return 0.0
    return min(below, above) / max(below, above)


def total_usage_measurements(table1: pl.DataFrame, fig6: pl.DataFrame, n_realizations: int) -> list[dict]:
    """Janus §3.6: Table 1's A-D rejection rate and mean total μ̄_j per N (the claim of its N where Table 1 reports
    it, :data:`TABLE1_SIZES`), and Fig 6's median relative difference for the smallest and largest N."""
    out: list[dict] = []
    for r in table1.iter_rows(named=True):
        n = int(r["N"])
        suffix = f"_n{n}" if n in TABLE1_SIZES else ""
        out.append(measurement(f"janus.t1.ad_rejection{suffix}", r["ad_rejection"], N=n, samples=int(r["samples"]),
                               realizations=int(n_realizations)))
        out.append(measurement(f"janus.t1.mean_total{suffix}", r["mean_total"], N=n))
    for r in fig6.filter(pl.col("N").is_in([fig6["N"].min(), fig6["N"].max()])).iter_rows(named=True):
        out.append(measurement("janus.fig6.median", r["median"], f"underestimated in {r['share_underestimated']:.0%} of samples",
                               N=int(r["N"]), k=f"{r['percentile']:g}"))
    return out


def variability_measurements(fig2: pl.DataFrame, lines: pl.DataFrame) -> list[dict]:
    """Janus Figs 2-3: the median std of inst and avg, the share of tasks with inst std > avg std, and the OLS
    std-vs-mean lines."""
    st = {r["kind"]: r for r in fig2.iter_rows(named=True)}
    out = [measurement("janus.fig2.median_std", st[kind]["median"], kind=kind) for kind in KINDS]
    out.append(measurement("janus.fig2.inst_above_avg", st["inst"]["share_above_other"]))
    for r in lines.iter_rows(named=True):
        out.append(measurement(f"janus.fig3.{r['kind']}_slope", r["slope"],
                               f"95% CI [{r['slope_lo']:.3f}, {r['slope_hi']:.3f}], OLS over {_count(r['n_tasks'])} tasks"))
        out.append(measurement(f"janus.fig3.{r['kind']}_intercept", r["intercept"],
                               f"95% CI [{r['intercept_lo']:.4f}, {r['intercept_hi']:.4f}]"))
    return out


def cluster_measurements(shares: pl.DataFrame) -> list[dict]:
    """Janus Fig 4: the smallest and largest cluster shares."""
    s = shares["share"].to_numpy()
    return [measurement("janus.fig4.smallest_share", float(s.min()), clusters=s.size),
            measurement("janus.fig4.largest_share", float(s.max()), clusters=s.size)]
