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

Distributions, moments and tests are scipy's (:mod:`scipy.stats`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl
from scipy import stats

from colocate.report.compare import (
    DEFAULT_TOLERANCE,
    Compare,
    Tolerance,
    absolute,
    cause_if_outside,
    issue_target,
    parse_number,
    widest,
)

#: Unuvar et al.'s printed values per average number of tasks (Tables II, IV, VI, VII; α, β from §IV-C).
PAPER = {
    18: {"observations": "500", "min": "0.124", "max": "0.901", "mean": "0.49", "std": "0.14", "alpha": "5.76",
         "beta": "5.93", "ks_d": "0.084", "ks_p": "0.002", "actual": "0.066", "estimated": "0.011", "error": "0.055"},
    49: {"observations": "500", "min": "0.085", "max": "0.900", "mean": "0.500", "std": "0.169", "alpha": None,
         "beta": None, "ks_d": "0.055", "ks_p": "0.098", "actual": "0.064", "estimated": "0.031", "error": "0.033"},
    88: {"observations": "500", "min": "0.088", "max": "0.901", "mean": "0.504", "std": "0.151", "alpha": None,
         "beta": None, "ks_d": "0.051", "ks_p": "0.150", "actual": "0.042", "estimated": "0.016", "error": "0.028"},
    154: {"observations": "500", "min": "0.091", "max": "0.900", "mean": "0.516", "std": "0.142", "alpha": None,
          "beta": None, "ks_d": "0.048", "ks_p": "0.196", "actual": "0.044", "estimated": "0.024", "error": "0.020"},
}


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


#: Where the paper prints each per-size number: the 18-task sample in §IV-C, the larger ones in §IV-D.
_PAPER_ITEMS = {
    18: {"moments": "Table II", "beta": "§IV-C", "ks": "§IV-C"},
    "other": {"moments": "Table IV", "beta": "§IV-D", "ks": "Table VI"},
}

#: The measured cause of a K-S D outside its tolerance (issue 13): D varies with the set drawn.
KS_CAUSE = ("D depends on the set drawn: over 30 random sets per size (each 500 observations of a slowly varying "
            "total, lag-1 autocorrelation 0.73–0.84) the median D is 0.067 / 0.053 / 0.073 / 0.086 for 18 / 49 / 88 / 154 "
            "tasks, p10–p90 0.039–0.086 / 0.041–0.069 / 0.069–0.080 / 0.083–0.092, which cover the paper's 0.084 / 0.055 "
            "but not its 0.051 / 0.048 (bench/unuvar_sets.py; at 88 and 154 the capped sets share many of their tasks, "
            "so they vary less)")
#: The measured cause of Unuvar's thinner tail above 0.8 (README, "Where the synthetic trace differs").
UNUVAR_CAUSE = ("the aggregates are §IV-D's random sets of long tasks over 29 days, at most 1 / 2 / 3 / 7 tasks per job "
                "(the default scale's ~600 long-running jobs are fewer than the real trace's). Over 30 sets per size "
                "the mean (0.45–0.55) and skewness (0.4–0.65) match the paper's, but the std is 0.123–0.135, not "
                "0.14–0.169, and the peak at the 90% normalisation is sharper: 1.7–4.0% of observations above 0.8 "
                "(medians), not 4.2–6.6%, and a Beta estimate of 0.004–0.009 for 18, 49 and 154 tasks against "
                "0.011–0.031 (bench/unuvar_sets.py; README). The default seed's set of 18 is a low draw: mean 0.38, "
                "0.2% above 0.8. On one set the share moves between 0.2–0.6% and 2.9–4.7% with where its 500 "
                "windows fall (8 grids shifted within the 84-minute spacing; the pipeline's grid is a high one at 88 "
                "and 154 tasks). At the peak, the running tasks' excess over their own means holds 0.53–0.65 of the "
                "set's rise over its mean, production tasks' 0.35–0.63 and the heaviest task's 0.09–0.32 "
                "(bench/unuvar_sets.py --offsets 8, --peak). Two other readings leave the share above 0.8 as it is: an observation as the mean over "
                "each 1/500 of the span (the trace's 500 files) gives 1.8–3.0%, and a further 30% drop on the weekly "
                "pattern's low days (where the sets already run 17–19% lower) 1.6–4.0%, though it brings the std to "
                "0.150–0.161 and D to 0.053–0.056 (bench/unuvar_sets.py --observation file, --weekend-drop 0.3). The "
                "paper's 18 tasks are one machine's, short ones included, and a real machine bounds its tasks' total "
                "by its capacity; the synthetic trace does not (3.2% of its machine-windows exceed it, 1–27% on the "
                "densest machines). Read as the paper reads it, each of the six densest machines (12–14 tasks) gives "
                "0.2–1.0% above 0.8 as recorded and 3–37% with its total capped at its capacity, the paper's 6.6% "
                "between the two (bench/machine_totals.py). Bounding every machine's total by its capacity raises "
                "the sets' share only to 1.6 / 2.0 / 2.6 / 2.0% with the non-production tasks throttled first, as "
                "Borg shares a full machine, and 1.6 / 2.2 / 2.8 / 2.5% with every task alike (medians over 30 sets × 8 "
                "grids; bench/unuvar_sets.py --throttle … --offsets 8); in the model (bench/patches/machine-capacity.diff, "
                "measured on the whole run at Table I's stated placement load, not kept) either "
                "bound lifts Janus Table 1's A-D rates at N = 250 / 500 to 0.28–0.29 / 0.16, outside the paper's "
                "0.183 / 0.087, and leaves 149 (batch first) or 151 (alike, as without it, on the model before "
                "synthetic.small_task_max_cv) rows within; placing tasks where their mean fits as well keeps Table 1 but "
                "leaves 150. Nor is it the few production jobs that hold the sets' CPU at this scale: three times as many, "
                "each a third as large, make the sets smoother, less skewed and closer to their Beta (std 0.111–0.122, skewness −0.09–0.52, "
                "K-S D 0.022–0.049; 0.7–2.6% above 0.8) and leave 149 (examples/production-jobs-tripled.yaml)")


_EXPLAINED = ("std", "alpha", "beta", "actual", "estimated")

#: Issue 13's target for Table VII's P(U ≥ 0.8), actual and Beta-estimated (item 2: "within 2× of the paper's").
TAIL_TARGET = issue_target("Table VII's P(U ≥ 0.8)")


def _share_tolerance(paper: str | None, n_paper: str | None, ours: float, n_ours: int,
                     base: Tolerance = DEFAULT_TOLERANCE) -> Tolerance:
    """2 SE of the difference of two binomial shares (the paper's and ours, each over its observations), where
    that band reaches further than ``base``."""
    p = parse_number(paper)
    m = parse_number(n_paper)
    if p is None or m is None or not (m.value > 0 and n_ours > 0):
        return base
    se = math.sqrt(p.value * (1 - p.value) / m.value + ours * (1 - ours) / n_ours)
    if not se > 0:
        return base
    return widest(p.value, ours, base, absolute(
        2 * se, f"2 SE of the difference of two binomial shares over {m.value:g} (paper) and {n_ours} (ours) observations"))


def unuvar_summary(tables: dict[str, pl.DataFrame], alpha: float, threshold: float) -> list[tuple]:
    """Headline numbers of Unuvar §IV beside the paper's: ``(quantity, paper, ours, note, Compare)`` rows.

    One row per printed number: mean and std (Tables II/IV), α and β (§IV-C; the paper prints them for
    18 tasks only), K-S D (§IV-C, Table VI) and P(U ≥ threshold) actual and Beta-estimated (Table VII).
    The K-S p-values are shown as the test's decision (a p-value is not a quantity to agree within a
    factor); P(U ≥ threshold) within issue 13's 2× (:data:`TAIL_TARGET`), the actual share within 2 SE of the
    difference of two binomial shares where that is wider. Rows of the spread and the tail outside their
    tolerance carry the measured cause (:data:`UNUVAR_CAUSE`), and the K-S D its own (:data:`KS_CAUSE`).
    """
    rows: list[tuple] = []
    st = tables["statistics"].join(tables["fits"].drop("source"), on="size").join(tables["ks"], on="size").join(
        tables["overutilisation"].drop("ks_p"), on="size")
    for r in st.iter_rows(named=True):
        n = int(r["size"])
        paper = PAPER.get(n, {})
        item = _PAPER_ITEMS.get(n, _PAPER_ITEMS["other"])
        tag = f"{n} tasks ({r['source']})"
        moments, table7 = Compare(item=item["moments"]), Compare(item="Table VII", tolerance=TAIL_TARGET)
        spread = f"{r['observations']} observations, min {r['min']:.3f}, max {r['max']:.3f}"
        if paper:
            spread += f" (paper {paper['observations']}, min {paper['min']}, max {paper['max']})"
        decision = ("rejected" if r["ks_p"] < alpha else "not rejected") + f" (p = {r['ks_p']:.3g})"
        paper_decision = (("rejected" if float(paper["ks_p"]) < alpha else "not rejected") + f" (p = {paper['ks_p']})"
                          if paper else None)
        actual = replace(table7, tolerance=_share_tolerance(paper.get("actual"), paper.get("observations"),
                                                            r["actual"], int(r["observations"]), TAIL_TARGET))
        ours = {"mean": r["mean"], "std": r["std"], "alpha": r["alpha"], "beta": r["beta"], "ks_d": r["ks_d"],
                "actual": r["actual"], "estimated": r["estimated"]}
        for key, quantity, spec, note in (
            ("mean", f"{item['moments']}: mean utilisation, {tag}", moments, spread),
            ("std", f"{item['moments']}: std of utilisation, {tag}", moments, ""),
            ("alpha", f"Beta α (eqs 7–8), {tag}", Compare(item=item["beta"]), ""),
            ("beta", f"Beta β (eqs 7–8), {tag}", Compare(item=item["beta"]), ""),
            ("ks_d", f"{item['ks']}: K-S D, {tag}", Compare(item=item["ks"]), ""),
            ("actual", f"Table VII: P(U ≥ {threshold:g}) actual, {tag}", actual, ""),
            ("estimated", f"Table VII: P(U ≥ {threshold:g}) Beta estimate, {tag}", table7,
             f"error (actual − estimated) {r['error']:.3f}" + (f", paper {paper['error']}" if paper else "")),
        ):
            p = paper.get(key)
            cause = UNUVAR_CAUSE if key in _EXPLAINED else KS_CAUSE if key == "ks_d" else ""
            spec = cause_if_outside(p, ours[key], spec, cause)
            rows.append((quantity, p, ours[key], note, spec))
            if key == "ks_d":
                rows.append((f"{item['ks']}: K-S test at {alpha:g}, {tag}", paper_decision, decision,
                             "H0: the sample follows the fitted Beta", Compare(item=item["ks"])))
    m = tables["models"].filter(pl.col("threshold") == threshold)
    for (size,), g in m.group_by("size", maintain_order=True):
        b = g.filter(pl.col("model") == "beta").row(0, named=True)
        gs = g.filter(pl.col("model") == "gaussian").row(0, named=True)
        rows.append((f"Gaussian vs Beta: K-S D, {size} tasks", None, f"{gs['ks_d']:.3f} vs {b['ks_d']:.3f}",
                     f"P(U ≥ {threshold:g}) error {gs['error']:.3f} vs {b['error']:.3f} (actual − estimated)",
                     Compare(item="beyond the paper (§IV-D)")))
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
