"""Beta fit of aggregated utilisation: Unuvar et al. (2014) §III (eqs 7–8) and §IV-C to §IV-E.

* :func:`summary_statistics` — Tables II and IV (observations, min, max, mean, std).
* :func:`beta_parameters` — eqs 7–8 by the method of moments, vectorised and unchecked
  (shared with the Beta fit test and admission controller of :mod:`colocate.scheduling`).
* :func:`beta_by_moments` — eqs 7–8: α and β from the mean R̄ and std S̄.
* :func:`moments_table` — Tables III and V: mean, variance, skewness and
  (excess, the paper's "Pearson") kurtosis of the data vs the fitted Beta.
* :func:`ks_test` — Table VI: one-sample Kolmogorov–Smirnov against the fit.
* :func:`over_utilisation` — Table VII: P(U ≥ threshold), actual vs estimated.
* :func:`compare_models` — beyond the paper: the Gaussian (the GPA model of
  Janus & Rzadca §4) and the Beta side by side on the same aggregate.
* :func:`unuvar_measurements` — what the summary judges, by the claims of ``workflow/papers/unuvar.tsv``
  (:func:`claim_id`; the K-S test's verdict in the paper's words, :func:`ks_verdict`).

Distributions, moments and tests are scipy's (:mod:`scipy.stats`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from scipy import stats

from colocate.measure import measurement

#: The sizes whose claims ``workflow/papers/unuvar.tsv`` holds one by one (the paper's samples: 18 tasks in §IV-C,
#: Tables II and VII; 49, 88 and 154 in §IV-D, Tables IV, VI and VII): a measurement of one names the size in its
#: claim's id; any other size is measured under the size-free claims (Table IV's, VI's and VII's, no paper value).
CLAIMED_SIZES = (18, 49, 88, 154)


def _values(u: np.ndarray) -> np.ndarray:
    u = np.asarray(u, dtype=np.float64)
    if u.ndim != 1 or u.size < 2:
        raise ValueError(f"utilisation must be a 1-D array of at least 2 values, got shape {u.shape}")
    if not np.all(np.isfinite(u)):
        raise ValueError("utilisation: NaN or infinite values")
    return u


def summary_statistics(u: np.ndarray) -> dict[str, float]:
    """Tables II and IV (Unuvar §IV-C/D): observations, min, max, mean and std (ddof = 1) of the utilisation."""
    u = _values(u)
    return {"observations": int(u.size), "min": float(u.min()), "max": float(u.max()),
            "mean": float(u.mean()), "std": float(u.std(ddof=1))}


def beta_parameters(mean: np.ndarray | float, var: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """Shape parameters (α, β) of a Beta with the given mean R̄ and variance S̄² — Unuvar eqs 7–8.

    α = R̄ (R̄(1 − R̄)/S̄² − 1),  β = (1 − R̄)(R̄(1 − R̄)/S̄² − 1).
    The Beta exists iff 0 < R̄ < 1 and S̄² < R̄(1 − R̄); elsewhere α, β are not both > 0.
    """
    mean = np.asarray(mean, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = mean * (1 - mean) / var - 1
    return mean * k, (1 - mean) * k


def beta_by_moments(mean: float, std: float) -> tuple[float, float]:
    """Eqs 7–8 of Unuvar et al.: α = R̄(R̄(1−R̄)/S̄² − 1), β = (1−R̄)(R̄(1−R̄)/S̄² − 1).

    A Beta distribution with this mean and std exists only if 0 < R̄ < 1 and
    S̄² < R̄(1 − R̄); otherwise ``ValueError``.
    """
    if not 0 < mean < 1:
        raise ValueError(f"Beta fit by moments: mean must be in (0, 1), got {mean}")
    if not std > 0:
        raise ValueError(f"Beta fit by moments: std must be > 0, got {std}")
    if std**2 >= mean * (1 - mean):
        raise ValueError(f"Beta fit by moments: variance {std**2:.4g} must be below mean·(1 − mean) = {mean * (1 - mean):.4g}")
    alpha, beta = beta_parameters(mean, std**2)
    return float(alpha), float(beta)


def fit_beta(u: np.ndarray):
    """The Beta of eqs 7–8 fitted to ``u`` (mean and std with ddof = 1), as a frozen :data:`scipy.stats.beta`."""
    s = summary_statistics(u)
    return stats.beta(*beta_by_moments(s["mean"], s["std"]))


def fit_gaussian(u: np.ndarray):
    """The Gaussian with ``u``'s mean and std (ddof = 1), frozen :data:`scipy.stats.norm` (the GPA model)."""
    s = summary_statistics(u)
    return stats.norm(s["mean"], s["std"])


def moments_table(u: np.ndarray, dist) -> pl.DataFrame:
    """Tables III and V (Unuvar §IV-C/D): mean, variance, skewness, kurtosis of the data vs the fitted distribution.

    Data: sample variance (ddof = 1), :func:`scipy.stats.skew` and
    :func:`scipy.stats.kurtosis` (excess kurtosis, bias-corrected; the
    paper's "Kurtosis (Pearson)" values are excess kurtosis). Fit:
    ``dist.stats(moments="mvsk")``.
    """
    u = _values(u)
    m, v, s, k = (float(x) for x in dist.stats(moments="mvsk"))
    return pl.DataFrame(
        {"statistic": ["mean", "variance", "skewness", "kurtosis"],
         "data": [float(u.mean()), float(u.var(ddof=1)), float(stats.skew(u, bias=False)), float(stats.kurtosis(u, bias=False))],
         "fitted": [m, v, s, k]}
    )


def ks_test(u: np.ndarray, dist) -> tuple[float, float]:
    """Table VI (Unuvar §IV-D): one-sample K-S statistic D and p-value of ``u`` against ``dist`` (scipy)."""
    r = stats.kstest(_values(u), dist.cdf)
    return float(r.statistic), float(r.pvalue)


def over_utilisation(u: np.ndarray, dist, threshold: float = 0.8) -> tuple[float, float, float]:
    """Table VII (Unuvar §IV-E): ``(actual, estimated, error)`` of P(U ≥ threshold).

    ``actual`` is the share of observations at or above the threshold,
    ``estimated`` is ``dist.sf(threshold)`` and ``error = actual − estimated``
    (positive: the model underestimates over-utilisation, as the paper finds).
    """
    u = _values(u)
    actual = float(np.mean(u >= threshold))
    estimated = float(dist.sf(threshold))
    return actual, estimated, actual - estimated


def compare_models(u: np.ndarray, thresholds: Sequence[float]) -> pl.DataFrame:
    """Beyond the paper: Beta (eqs 7–8) and Gaussian fitted to the same aggregate, side by side.

    One row per model and threshold: the models' parameters, K-S D and p, and
    the actual and estimated P(U ≥ threshold) with their difference.
    """
    u = _values(u)
    rows = []
    for model, dist in (("beta", fit_beta(u)), ("gaussian", fit_gaussian(u))):
        d, p = ks_test(u, dist)
        a, b = dist.args if model == "beta" else (float(dist.mean()), float(dist.std()))
        for t in thresholds:
            actual, est, err = over_utilisation(u, dist, t)
            rows.append({"model": model, "param_1": float(a), "param_2": float(b), "ks_d": d, "ks_p": p,
                         "threshold": float(t), "actual": actual, "estimated": est, "error": err})
    return pl.DataFrame(rows)


def fit_tables(
    utilisation: pl.DataFrame, threshold: float, thresholds: Sequence[float], alpha: float = 0.05
) -> dict[str, pl.DataFrame]:
    """Unuvar Tables II/IV, III/V, VI and VII and the Gaussian-vs-Beta comparison, one block per aggregate ``size``.

    ``utilisation`` has ``size``, ``source`` and ``utilisation`` (one
    aggregate per size); K-S rejects at ``alpha``. Returns frames ``statistics``, ``fits`` (α, β),
    ``moments``, ``ks``, ``overutilisation`` and ``models``.
    """
    out: dict[str, list] = {k: [] for k in ("statistics", "fits", "moments", "ks", "overutilisation", "models")}
    for (size,), g in utilisation.group_by("size", maintain_order=True):
        u = g["utilisation"].to_numpy()
        src = g["source"][0]
        s = summary_statistics(u)
        a, b = beta_by_moments(s["mean"], s["std"])
        dist = stats.beta(a, b)
        d, p = ks_test(u, dist)
        actual, est, err = over_utilisation(u, dist, threshold)
        out["statistics"].append(pl.DataFrame([{"size": size, "source": src, **s}]))
        out["fits"].append(pl.DataFrame([{"size": size, "source": src, "alpha": a, "beta": b}]))
        out["moments"].append(moments_table(u, dist).select(pl.lit(size).alias("size"), pl.all()))
        out["ks"].append(pl.DataFrame([{"size": size, "ks_d": d, "ks_p": p, "alpha": alpha, "rejected": p < alpha}]))
        out["overutilisation"].append(pl.DataFrame([{"size": size, "ks_p": p, "threshold": threshold, "actual": actual,
                                                     "estimated": est, "error": err}]))
        out["models"].append(compare_models(u, thresholds).select(pl.lit(size).alias("size"), pl.all()))
    return {k: pl.concat(v, how="vertical_relaxed") for k, v in out.items()}


#: Where each per-size measure is claimed (the claims' ids, :func:`claim_id`): the first of :data:`CLAIMED_SIZES`
#: (§IV-C's sample of 18 tasks) and the others (§IV-D).
_ITEMS = {
    "first": {"mean": "t2", "std": "t2", "alpha": "s4c", "beta": "s4c", "ks_d": "s4c", "ks_test": "s4c",
              "actual": "t7", "estimated": "t7"},
    "other": {"mean": "t4", "std": "t4", "alpha": "s4d", "beta": "s4d", "ks_d": "t6", "ks_test": "t6",
              "actual": "t7", "estimated": "t7"},
}


def claim_id(measure: str, size: int) -> str:
    """The id of the claim a per-size ``measure`` answers (``workflow/papers/unuvar.tsv``): ``unuvar.<item>.<measure>.<size>``
    for a size of :data:`CLAIMED_SIZES`, else the size-free ``unuvar.<item>.<measure>`` (no paper value)."""
    if size in CLAIMED_SIZES:
        return f"unuvar.{_ITEMS['first' if size == CLAIMED_SIZES[0] else 'other'][measure]}.{measure}.{size}"
    return f"unuvar.{_ITEMS['other'][measure]}.{measure}"


def ks_verdict(p: float, alpha: float) -> str:
    """The K-S test's verdict on H0 (the sample follows the fitted Beta) at significance ``alpha``, in the paper's
    words (Table VI: "one cannot reject the null hypothesis"): "rejected" iff p < alpha, else "not rejected"."""
    return "rejected" if p < alpha else "not rejected"


def unuvar_measurements(tables: dict[str, pl.DataFrame], alpha: float, threshold: float) -> list[dict]:
    """What Unuvar §IV reports, as measured here, by the claims it answers (``workflow/papers/unuvar.tsv``).

    Per aggregate size: the mean and std (Tables II/IV; the note gives observations, min and max), α and β (eqs 7–8),
    K-S D and the test's verdict at ``alpha`` (§IV-C, Table VI: :func:`ks_verdict`, the p-value in the note), and
    P(U ≥ threshold) actual and Beta-estimated (Table VII; the actual share's tolerance takes our number of
    observations, ``n``); then, beyond the paper, the Gaussian's K-S D beside the Beta's per size.
    """
    rows: list[dict] = []
    st = tables["statistics"].join(tables["fits"].drop("source"), on="size").join(tables["ks"], on="size").join(
        tables["overutilisation"].drop("ks_p"), on="size")
    for r in st.iter_rows(named=True):
        size = int(r["size"])
        run = {"tasks": size, "source": r["source"]}
        tail = {**run, "threshold": threshold}
        rows += [
            measurement(claim_id("mean", size), r["mean"], observations=int(r["observations"]), min=r["min"],
                        max=r["max"], **run),
            measurement(claim_id("std", size), r["std"], **run),
            measurement(claim_id("alpha", size), r["alpha"], **run),
            measurement(claim_id("beta", size), r["beta"], **run),
            measurement(claim_id("ks_d", size), r["ks_d"], **run),
            measurement(claim_id("ks_test", size), ks_verdict(r["ks_p"], alpha), p=r["ks_p"], alpha=alpha, **run),
            measurement(claim_id("actual", size), r["actual"], n=int(r["observations"]), **tail),
            measurement(claim_id("estimated", size), r["estimated"], error=r["error"], **tail),
        ]
    m = tables["models"].filter(pl.col("threshold") == threshold)
    for (size,), g in m.group_by("size", maintain_order=True):
        b = g.filter(pl.col("model") == "beta").row(0, named=True)
        gs = g.filter(pl.col("model") == "gaussian").row(0, named=True)
        rows.append(measurement("unuvar.s4d.gaussian_vs_beta", f"{gs['ks_d']:.3f} vs {b['ks_d']:.3f}",
                                f"P(U ≥ {threshold:g}) error {gs['error']:.3f} vs {b['error']:.3f} (actual − estimated)",
                                tasks=int(size)))
    return rows


def model_sweep(utilisation: pl.DataFrame, thresholds: Sequence[float]) -> pl.DataFrame:
    """Beyond Unuvar §IV-D: :func:`compare_models` on every aggregate (``size``, ``rep``) of ``utilisation``."""
    out = []
    for (size, rep), g in utilisation.group_by("size", "rep", maintain_order=True):
        out.append(compare_models(g["utilisation"].to_numpy(), thresholds).select(
            pl.lit(size).alias("size"), pl.lit(rep).alias("rep"), pl.all()))
    return pl.concat(out).sort("size", "rep", "model", "threshold")


def sweep_summary(sweep: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Per size, model and threshold: median K-S D, share of aggregates rejected at ``alpha``, mean and mean |tail error|."""
    return (
        sweep.group_by("size", "model", "threshold")
        .agg(
            pl.len().alias("aggregates"),
            pl.col("ks_d").median().alias("median_ks_d"),
            (pl.col("ks_p") < alpha).mean().alias("ks_rejected"),
            pl.col("actual").mean().alias("mean_actual"),
            pl.col("estimated").mean().alias("mean_estimated"),
            pl.col("error").mean().alias("mean_error"),
            pl.col("error").abs().mean().alias("mean_abs_error"),
        )
        .sort("size", "threshold", "model")
    )
