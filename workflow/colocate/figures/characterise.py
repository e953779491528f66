"""Figures of the task characterisation: Janus & Rzadca §3 (Figs 1–6) and Unuvar et al. §IV (Figs 4, 7, 8).

One function per paper figure; each takes the tables of :mod:`colocate.analysis.characterise`,
:mod:`colocate.analysis.aggregate` or :mod:`colocate.analysis.betafit` and returns a matplotlib Figure
titled with the paper's caption.
"""

from __future__ import annotations

import string
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.colors import LogNorm, TwoSlopeNorm
from matplotlib.figure import Figure
from scipy import stats

from colocate.figures import style

KIND_LABEL = {"inst": "instantaneous (inst)", "avg": "5-minute average (avg)"}
KIND_COLOUR = {"inst": "C0", "avg": "C1"}


# ============================================================================ Janus & Rzadca §3


def janus_fig1_sampling(box: pl.DataFrame) -> Figure:
    """Fig 1: relative differences (ȳ_i − x̄_i^(k))/ȳ_i by number of inst samples k (boxes: IQR, whiskers 1.5 IQR)."""
    style()
    fig, ax = plt.subplots(figsize=(7.5, 4.0))
    stats_ = [
        {"label": str(r["k"]), "med": r["median"], "q1": r["q1"], "q3": r["q3"], "whislo": r["whislo"],
         "whishi": r["whishi"], "fliers": []}
        for r in box.iter_rows(named=True)
    ]
    ax.bxp(stats_, showfliers=False, patch_artist=True,
           boxprops={"facecolor": "#a6c8e8", "edgecolor": "0.2"}, medianprops={"color": "C3", "lw": 1.5})
    ax.axhline(0, color="0.3", lw=0.8, ls="--")
    for i, r in enumerate(box.iter_rows(named=True), start=1):
        ax.text(i, 1.0, f"{r['n']:,}", transform=ax.get_xaxis_transform(), ha="center", va="bottom", fontsize=7, color="0.35")
    ax.set(xlabel="number of instantaneous samples k", ylabel=r"$(\bar y_i - \bar x_i^{(k)})\,/\,\bar y_i$")
    ax.set_title("Fig 1: relative difference of avg and inst means vs number of inst samples\n"
                 "(Janus & Rzadca §3.2; numbers above: tasks with ≥ k records)", fontsize=10, pad=14)
    fig.tight_layout()
    return fig


def janus_fig2_std_cdf(long: pl.DataFrame) -> Figure:
    """Fig 2: CDF of the distribution of standard deviations of CPU usage for all long tasks."""
    style()
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    frame = pl.concat(
        [long.select(pl.col(f"{k}_std").alias("std"), pl.lit(KIND_LABEL[k]).alias("usage")) for k in ("inst", "avg")]
    ).to_pandas()
    sns.ecdfplot(frame, x="std", hue="usage", ax=ax, palette=[KIND_COLOUR["inst"], KIND_COLOUR["avg"]])
    top = float(np.quantile(long["inst_std"].to_numpy(), 0.99)) if long.height else 1.0
    ax.set(xlim=(0, top), xlabel="standard deviation of CPU usage σ(i)", ylabel="CDF (share of long tasks)")
    ax.set_title("Fig 2: CDF of standard deviations of CPU usage, long tasks\n(Janus & Rzadca §3.3)", fontsize=10)
    return fig


def janus_fig3_std_vs_mean(
    maps: Mapping[str, np.ndarray], mean_edges: np.ndarray, std_edges: np.ndarray, bands: pl.DataFrame, lines: pl.DataFrame
) -> Figure:
    """Fig 3: heatmaps of std vs mean for (a) inst, (b) avg, (c) inst − avg, with OLS trend lines and 95% bands."""
    style()
    fig, axes = plt.subplots(1, 3, figsize=(14.5, 4.4), sharey=True)
    extent = (mean_edges[0], mean_edges[-1], std_edges[0], std_edges[-1])
    pos = np.concatenate([maps["inst"].ravel(), maps["avg"].ravel()])
    pos = pos[pos > 0]
    norm = LogNorm(vmin=max(pos.min(), 1e-6), vmax=pos.max()) if pos.size else None
    for ax, kind, letter in zip(axes[:2], ("inst", "avg"), "ab"):
        m = np.ma.masked_equal(maps[kind].T, 0)
        im = ax.imshow(m, origin="lower", aspect="auto", extent=extent, cmap="viridis", norm=norm, interpolation="nearest")
        b = bands.filter(pl.col("kind") == kind)
        ln = lines.filter(pl.col("kind") == kind).row(0, named=True)
        ax.fill_between(b["mean"], b["lo"], b["hi"], color="C3", alpha=0.3, lw=0)
        ax.plot(b["mean"], b["fit"], color="C3", lw=1.5,
                label=f"OLS: {ln['intercept']:.3f} + {ln['slope']:.2f}·mean\n(paper: "
                + {"inst": "0.015 + 0.36·mean", "avg": "0.010 + 0.31·mean"}[kind] + ")")
        ax.legend(loc="upper left", fontsize=8, frameon=True)
        ax.grid(False)
        ax.set(title=f"({letter}) {KIND_LABEL[kind]}", xlabel="mean CPU usage", xlim=extent[:2], ylim=extent[2:])
        fig.colorbar(im, ax=ax, label="share of long tasks", pad=0.01)
    diff = maps["difference"].T
    lim = float(np.abs(diff).max()) or 1.0
    im = axes[2].imshow(np.ma.masked_equal(diff, 0), origin="lower", aspect="auto", extent=extent, cmap="RdBu",
                        norm=TwoSlopeNorm(0, -lim, lim), interpolation="nearest")
    axes[2].grid(False)
    axes[2].set(title="(c) inst − avg (blue: more inst than avg)", xlabel="mean CPU usage", xlim=extent[:2])
    fig.colorbar(im, ax=axes[2], label="difference of shares", pad=0.01)
    axes[0].set_ylabel("standard deviation of CPU usage")
    fig.suptitle("Fig 3: standard deviations of CPU usage as a function of means, long tasks (Janus & Rzadca §3.3)", fontsize=11)
    fig.tight_layout()
    return fig


def janus_s34_time_invariance(tests: pl.DataFrame, shares: pl.DataFrame, alpha: float) -> Figure:
    """§3.4 "Time invariance": K-S p-values of two random windows per task, and the share rejected per Δ."""
    style()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [1.6, 1]})
    sns.ecdfplot(tests.select("pvalue", pl.col("delta").cast(pl.String).alias("Δ")).to_pandas(), x="pvalue", hue="Δ", ax=ax1)
    ax1.plot([0, 1], [0, 1], color="0.5", lw=0.8, ls=":", label="time-invariant (uniform)")
    ax1.axvline(alpha, color="C3", ls="--", lw=1)
    ax1.set(xlim=(0, 1), ylim=(0, 1), xlabel="K-S p-value (two random windows of Δ records)", ylabel="share of tasks",
            title="CDF of p-values (dotted: all tasks time-invariant)")
    x = np.arange(shares.height)
    ax2.bar(x, shares["share"], color="C0", yerr=[shares["share"] - shares["ci_lo"], shares["ci_hi"] - shares["share"]], capsize=4)
    ax2.axhline(0.30, color="C3", ls="--", lw=1, label="paper: ≈ 30%")
    ax2.set_xticks(x, [f"Δ = {d}" for d in shares["delta"]])
    ax2.set(ylim=(0, 1), ylabel=f"share of tasks rejected at {alpha:.0%}", title="rejected share (95% CI)")
    ax2.legend(loc="upper left")
    fig.suptitle("§3.4 Time invariance: two-sample Kolmogorov-Smirnov test on random windows (Janus & Rzadca)", fontsize=11)
    fig.tight_layout()
    return fig


def janus_fig4_centroids(centroids: np.ndarray, shares: pl.DataFrame, cut: float = 0.5) -> Figure:
    """Fig 4: typical distributions of tasks' inst usage — the k-means centroids, cut to [0, ``cut``]."""
    style()
    k, bins = centroids.shape
    cols = int(np.ceil(np.sqrt(k)))
    rows = int(np.ceil(k / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols, 1.9 * rows), squeeze=False)
    width = 1.0 / bins
    nb = int(round(cut * bins))
    left = np.arange(nb) * width
    letters = string.ascii_lowercase
    for c, ax in enumerate(axes.flat):
        if c >= k:
            ax.set_visible(False)
            continue
        ax.bar(left, 100 * centroids[c, :nb], width=width, align="edge", color="C0", edgecolor="none")
        share = float(shares["share"][c])
        label = letters[c] if c < len(letters) else str(c)
        ax.set_title(f"({label}) {share:.1%} of tasks", fontsize=9)
        ax.set_xlim(0, cut)
        ax.tick_params(labelsize=7)
        if c // cols == rows - 1 or c + cols >= k:
            ax.set_xlabel("inst CPU usage", fontsize=8)
        if c % cols == 0:
            ax.set_ylabel("% of samples", fontsize=8)
    fig.suptitle(f"Fig 4: typical distributions of tasks' instantaneous CPU usage — centres of the {k} k-means clusters\n"
                 f"(Janus & Rzadca §3.5; X cut to [0, {cut:g}], Y ranges differ)", fontsize=11)
    fig.tight_layout()
    return fig


def janus_fig4_elbow(elbow: pl.DataFrame, k: int) -> Figure:
    """Inertia of k-means on the inst histograms against k (the elbow plot behind Fig 4's k)."""
    style()
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    ax.plot(elbow["k"], elbow["inertia_per_task"], marker="o", ms=3.5, color="C0")
    ax.axvline(k, color="C3", ls="--", lw=1, label=f"k = {k} (paper: 16)")
    ax.set(xlabel="number of clusters k", ylabel="inertia per task (squared Euclidean)")
    ax.legend()
    ax.set_title("Fig 4's k: k-means inertia of the inst histograms (elbow)\n(Janus & Rzadca §3.5)", fontsize=10)
    return fig


def janus_fig5_totals(totals: pl.DataFrame, gaussians: pl.DataFrame, usage: str = "total instantaneous CPU usage",
                      entities: str = "tasks") -> Figure:
    """Fig 5: empirical distributions of the total inst usage of random samples of N tasks (``entities``), with the
    fitted Gaussian; ``usage`` labels the x axis."""
    style()
    sizes = gaussians["N"].to_list()
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.3 * len(sizes), 3.6), squeeze=False)
    for ax, g in zip(axes[0], gaussians.iter_rows(named=True)):
        t = totals.filter(pl.col("N") == g["N"])["total"].to_numpy()
        sns.histplot(t, bins=50, stat="density", color="C0", alpha=0.6, edgecolor="none", ax=ax)
        x = np.linspace(min(t.min(), g["mu_j"] - 4 * g["sigma_j"]), max(t.max(), g["mu_j"] + 4 * g["sigma_j"]), 400)
        ax.plot(x, stats.norm.pdf(x, g["mu_j"], g["sigma_j"]), color="k", lw=1.5, label="fitted Gaussian")
        ax.set(title=f"N = {g['N']}", xlabel=usage, ylabel="density")
        ax.legend(fontsize=8)
    fig.suptitle(f"Fig 5: empirical distributions of the {usage} of random samples of N {entities}\n"
                 "(Janus & Rzadca §3.6; black: N(Σμ_i, Σσ_i²))", fontsize=11)
    fig.tight_layout()
    return fig


def janus_fig6_percentiles(diffs: pl.DataFrame, entities: str = "tasks") -> Figure:
    """Fig 6: relative differences (F⁻¹(k) − P_k)/P_k of Gaussian and empirical percentiles, violins by N."""
    style()
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    labels = {p: f"{p:g}th" for p in diffs["percentile"].unique().to_list()}
    frame = diffs.with_columns(pl.col("percentile").replace_strict(labels, return_dtype=pl.String).alias("k")).to_pandas()
    sns.violinplot(frame, x="N", y="rel_diff", hue="k", cut=0, inner="quart", density_norm="width", linewidth=0.8, ax=ax)
    ax.axhline(0, color="0.3", ls="--", lw=0.8)
    ax.set(xlabel=f"number of {entities} N", ylabel=r"$(F^{-1}_{\mu_j,\sigma_j}(k) - P_k)\,/\,P_k$")
    ax.legend(title="percentile k", fontsize=8)
    n = diffs.group_by("N", "percentile").len()["len"].min() if diffs.height else 0
    ax.set_title(f"Fig 6: relative differences of Gaussian and empirical percentiles (Janus & Rzadca §3.6)\n"
                 f"(each violin: {n:,} independent samples)", fontsize=10)
    return fig


# ============================================================================ Unuvar et al. §IV


def unuvar_beta_fit(
    aggregates: Mapping[int, pl.DataFrame], fits: pl.DataFrame, threshold: float, title: str
) -> Figure:
    """Unuvar Figs 4–8: per aggregate a Q-Q plot against the fitted Beta, the histogram with the Beta pdf
    (P(U ≥ threshold) shaded, Fig 8) and the utilisation series with the Beta's 5–95% band.

    ``aggregates`` maps a size to its frame (``observation``, ``utilisation``,
    optional ``time_days``); ``fits`` has ``size``, ``alpha``, ``beta``, ``source``.
    """
    import statsmodels.api as sm  # its import costs seconds; only this figure needs it

    style()
    sizes = list(aggregates)
    fig, axes = plt.subplots(len(sizes), 3, figsize=(13.5, 3.5 * len(sizes)), squeeze=False,
                             gridspec_kw={"width_ratios": [1, 1.2, 1.8]})
    letters = iter(string.ascii_lowercase)
    for row, size in zip(axes, sizes):
        g = aggregates[size]
        f = fits.filter(pl.col("size") == size).row(0, named=True)
        dist = stats.beta(f["alpha"], f["beta"])
        u = g["utilisation"].to_numpy()
        what = f"average of {g['n_tasks'].mean():.0f} tasks" if f["source"] == "machines" else f"{size} tasks"
        sm.ProbPlot(u, dist=dist).qqplot(ax=row[0], line="45", markersize=2.5, alpha=0.6)
        row[0].set(xlabel="Beta quantiles", ylabel="utilisation quantiles", xlim=(0, 1), ylim=(0, 1),
                   title=f"({next(letters)}) Q-Q vs Beta({f['alpha']:.2f}, {f['beta']:.2f}), {what}")
        row[0].title.set_fontsize(9)
        sns.histplot(u, bins=30, stat="density", color="C0", alpha=0.55, edgecolor="none", ax=row[1], label="utilisation")
        x = np.linspace(0, 1, 400)
        row[1].plot(x, dist.pdf(x), color="k", lw=1.5, label="fitted Beta pdf")
        xt = x[x >= threshold]
        row[1].fill_between(xt, dist.pdf(xt), color="C2", alpha=0.5,
                            label=f"Beta P(U ≥ {threshold:g}) = {dist.sf(threshold):.3f}\nactual: {np.mean(u >= threshold):.3f}")
        row[1].set(xlim=(0, 1), xlabel="CPU utilisation", ylabel="density",
                   title=f"({next(letters)}) histogram and fitted Beta, {what}")
        row[1].title.set_fontsize(9)
        row[1].legend(fontsize=7, loc="upper left")
        t = g["time_days"].to_numpy() if "time_days" in g.columns and f["source"] in ("machines", "trace") else g["observation"].to_numpy()
        row[2].plot(t, u, lw=0.7, color="C0", label="observed")
        lo, hi = dist.ppf([0.05, 0.95])
        row[2].axhspan(lo, hi, color="k", alpha=0.08, label="Beta 5–95%")
        row[2].axhline(dist.mean(), color="k", lw=1, label="Beta mean")
        row[2].axhline(threshold, color="C2", ls="--", lw=1, label=f"threshold {threshold:g}")
        row[2].set(ylim=(0, 1), ylabel="CPU utilisation",
                   xlabel="days since the trace start" if f["source"] in ("machines", "trace") else "observation (realization index)",
                   title=f"({next(letters)}) observed and theoretical utilisation, {what}")
        row[2].title.set_fontsize(9)
        row[2].legend(fontsize=7, loc="lower right", ncols=2)
    src = ", ".join(sorted(set(fits.filter(pl.col("size").is_in(sizes))["source"].to_list())))
    fig.suptitle(f"{title}\n(Unuvar et al. §IV; aggregates from {src})", fontsize=11)
    fig.tight_layout()
    return fig


def unuvar_gaussian_vs_beta(sweep: pl.DataFrame, threshold: float) -> Figure:
    """Beyond Unuvar: Gaussian (GPA) vs Beta fits of aggregated utilisation by number of tasks — K-S D and tail error."""
    style()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11.5, 4.0))
    s = sweep.filter(pl.col("threshold") == threshold).to_pandas()
    sns.boxplot(s, x="size", y="ks_d", hue="model", ax=ax1, showfliers=False, linewidth=0.8)
    ax1.set(xlabel="tasks in the aggregate", ylabel="K-S statistic D", title="goodness of fit (lower is better)")
    sns.boxplot(s, x="size", y="error", hue="model", ax=ax2, showfliers=False, linewidth=0.8)
    ax2.axhline(0, color="0.3", ls="--", lw=0.8)
    ax2.set(xlabel="tasks in the aggregate", ylabel=f"actual − estimated P(U ≥ {threshold:g})",
            title="overload tail error (> 0: underestimated)")
    fig.suptitle("Beyond Unuvar et al. §IV-E: Gaussian (GPA) vs Beta on the same aggregates", fontsize=11)
    fig.tight_layout()
    return fig
