"""Figures of Janus & Rzadca §5 (stochastic bin packing), rebuilt from the tidy results table.

Each function takes the table written by ``colocate.scheduling.packing_grid.run_setting`` (one row per
instance and cell) and returns a Figure titled with the paper's name for it. Boxes are over
instances, as in the paper.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from colocate.figures import style
from colocate.scheduling.packing_grid import select

#: The estimators of the paper's Fig 8 (the others are too conservative to share its axes).
FIG8_ESTIMATORS = ("GPA", "av", "perc")


def _order(frame: pl.DataFrame) -> list[str]:
    return frame.select("estimator", "parameter", "label").unique().sort("estimator", "parameter")["label"].to_list()


def _empty(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"no cells for {what} in this grid", ha="center", va="center", transform=ax.transAxes)


def _log_q(ax, floor: float) -> None:
    """A symmetric-log q axis whose linear part near 0 shows q = 0 points above the axis line, not on it."""
    ax.set_yscale("symlog", linthresh=floor)
    ax.set_ylim(-0.3 * floor, 1.6)  # q ≤ 1: half a decade of room above


def _q_floor(frame: pl.DataFrame) -> float:
    """The smallest non-zero q, for a symmetric-log axis that shows q = 0 too."""
    positive = frame.filter(pl.col("q") > 0)["q"]
    return float(positive.min()) if positive.len() else 1e-6


def fig7_machines(results: pl.DataFrame) -> Figure:
    """Fig 7: number of machines normalised to the lower bound, per estimator (clairvoyance, c = 1)."""
    style()
    base = select(results)
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * base["label"].n_unique()), 4))
    if base.height:
        sns.boxplot(base.to_pandas(), x="label", y="m", order=_order(base), ax=ax, color="C0")
        ax.tick_params(axis="x", rotation=90)
    else:
        _empty(ax, "the base case")
    ax.set(xlabel="estimator", ylabel="normalised machines m = m_abs / m_norm",
           title="Fig 7: machines (normalised to the lower bound) by estimator")
    return fig


def fig8_m_vs_q(results: pl.DataFrame) -> Figure:
    """Fig 8: normalised machines m vs empirical frequency of capacity violations q, one dot per instance."""
    style()
    base = select(results).filter(pl.col("estimator").is_in(FIG8_ESTIMATORS))
    fig, ax = plt.subplots(figsize=(8.5, 5), layout="constrained")
    if base.height:
        sns.scatterplot(base.to_pandas(), x="m", y="q", hue="label", hue_order=_order(base), style="estimator", ax=ax,
                        s=28, edgecolor="k", linewidth=0.3)
        _log_q(ax, _q_floor(base))
        # outside the axes: inside, it covers the perc 99 and max instances at q = 0 and the high-q corner
        ax.legend(fontsize="x-small", ncol=1, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    else:
        _empty(ax, "GPA, av or perc")
    ax.set(xlabel="normalised machines m", ylabel="q", title="Fig 8: machines vs capacity violations (GPA, av, perc)")
    return fig


def fig9_gpa_error(results: pl.DataFrame) -> Figure:
    """Fig 9: relative error (q − ρ)/ρ of GPA for each requested SLO ρ."""
    style()
    gpa = select(results).filter(pl.col("estimator") == "GPA").with_columns(
        ((pl.col("q") - pl.col("parameter")) / pl.col("parameter")).alias("error")
    )
    fig, ax = plt.subplots(figsize=(6, 4))
    if gpa.height:
        sns.boxplot(gpa.to_pandas(), x="parameter", y="error", ax=ax, color="C1")
        ax.axhline(0, color="k", lw=0.8)
    else:
        _empty(ax, "GPA")
    ax.set(xlabel="requested ρ", ylabel="(q − ρ) / ρ", title="Fig 9: relative error of GPA")
    return fig


def fig10_inst_vs_avg(results: pl.DataFrame) -> Figure:
    """Fig 10: q when estimators observe 5-minute averages (avg) or instantaneous (inst) usage."""
    style()
    both = select(results, data=None)
    both = both.filter(pl.col("label").is_in(select(results, data="avg")["label"].unique().implode()))
    fig, ax = plt.subplots(figsize=(max(6, 0.4 * both["label"].n_unique()), 4))
    if both.height:
        sns.boxplot(both.to_pandas(), x="label", y="q", hue="data", order=_order(both), hue_order=["inst", "avg"], ax=ax)
        _log_q(ax, _q_floor(both))
        ax.tick_params(axis="x", rotation=90)
    else:
        _empty(ax, "avg data")
    ax.set(xlabel="estimator", ylabel="q", title="Fig 10: q from inst vs avg observations")
    return fig


def fig11_capacity(results: pl.DataFrame, pairs=(("av", 2.0, "GPA", 0.001), ("av", 1.25, "GPA", 0.1))) -> Figure:
    """Fig 11: q by machine capacity c for av vs GPA pairs, with (top) and without (bottom) rebalancing."""
    style()
    cap = select(results, capacity=None, rebalance=None)
    fig, axes = plt.subplots(2, len(pairs), figsize=(5.5 * len(pairs), 8), squeeze=False, layout="constrained")
    for col, (e1, p1, e2, p2) in enumerate(pairs):
        for row, reb in enumerate((True, False)):
            ax = axes[row, col]
            sel = cap.filter(
                (pl.col("rebalance") == reb)
                & (((pl.col("estimator") == e1) & ((pl.col("parameter") - p1).abs() < 1e-12))
                   | ((pl.col("estimator") == e2) & ((pl.col("parameter") - p2).abs() < 1e-12)))
            )
            if sel.height:
                sns.boxplot(sel.to_pandas(), x="capacity", y="q", hue="label", ax=ax)
                _log_q(ax, _q_floor(sel))
            else:
                _empty(ax, f"{e1} {p1:g} / {e2} {p2:g}")
            ax.set(xlabel="capacity c", ylabel="q", title=f"{e1} {p1:g} vs {e2} {p2:g}, rebalancing {'on' if reb else 'off'}")
    fig.suptitle("Fig 11: q for av and GPA by machine capacity")
    return fig


def fig12_clairvoyance(results: pl.DataFrame) -> Figure:
    """Fig 12: q of GPA and av as a function of the clairvoyance level (fraction of realizations observed)."""
    style()
    cl = select(results, clairvoyance=None)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    for ax, est in zip(axes, ("GPA", "av")):
        sel = cl.filter(pl.col("estimator") == est)
        if sel.filter(pl.col("clairvoyance") < 1).height:
            sns.boxplot(sel.to_pandas(), x="clairvoyance", y="q", hue="label", ax=ax)
            _log_q(ax, _q_floor(sel))
        else:
            _empty(ax, f"{est} below full clairvoyance")
        ax.set(xlabel="clairvoyance", ylabel="q", title=est)
    fig.suptitle("Fig 12: q for GPA and av by clairvoyance level")
    return fig


def fig13_rebalancing(results: pl.DataFrame) -> Figure:
    """Fig 13: relative decrease of q from rebalancing, (q_off − q_on)/q_off (perc and q_off = 0 omitted)."""
    style()
    keys = ["instance", "estimator", "parameter", "label"]
    on, off = select(results), select(results, rebalance=False)
    both = (
        off.join(on.select(*keys, pl.col("q").alias("q_on")), on=keys)
        .filter((pl.col("estimator") != "perc") & (pl.col("q") > 0))
        .with_columns(((pl.col("q") - pl.col("q_on")) / pl.col("q")).alias("decrease"))
    )
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * max(both["label"].n_unique(), 1)), 4))
    if both.height:
        sns.boxplot(both.to_pandas(), x="label", y="decrease", order=_order(both), ax=ax, color="C2")
        ax.tick_params(axis="x", rotation=90)
        ax.axhline(0, color="k", lw=0.8)
    else:
        _empty(ax, "rebalancing on and off")
    ax.set(xlabel="estimator", ylabel="(q_off − q_on) / q_off", title="Fig 13: relative decrease of q from rebalancing")
    return fig


def _coincident_groups(med: pl.DataFrame, dm: float = 0.06, dlog_q: float = 0.2) -> list[dict]:
    """Points that fall on one spot of the plot, one dict each (``m``, ``q`` of the first, ``labels``).

    In order of m, a point joins the group before it when within ``dm`` in m and ``dlog_q`` decades
    in q (or both at q = 0): their labels would overlap.
    """
    groups: list[dict] = []
    for r in med.sort("m", "q", "label").iter_rows(named=True):
        last = groups[-1] if groups else None
        same_q = (r["q"] == 0 and last is not None and last["q"] == 0) or (
            r["q"] > 0 and last is not None and last["q"] > 0 and abs(np.log10(r["q"]) - np.log10(last["q"])) <= dlog_q)
        if last is not None and r["m"] - last["m_last"] <= dm and same_q:
            last["labels"].append(r["label"])
            last["m_last"] = r["m"]
        else:
            groups.append({"m": r["m"], "q": r["q"], "m_last": r["m"], "labels": [r["label"]]})
    return groups


def fig_pareto(results: pl.DataFrame) -> Figure:
    """Ours: median m vs median q of every fit test (Janus's and ours), with the Pareto front.

    Coincident points share one label; labels of the front are black, the others grey, and those
    at q = 0 run upwards so that a row of them stays legible.
    """
    style()
    base = select(results)
    # every key in the sort: 24 cells tie on m, and their order sets the colours and the front
    med = (
        base.group_by("estimator", "parameter", "label")
        .agg(pl.col("m").median(), pl.col("q").median())
        .sort("m", "q", "estimator", "parameter")
    )
    fig, ax = plt.subplots(figsize=(9, 6), layout="constrained")
    if med.height:
        sns.scatterplot(med.to_pandas(), x="m", y="q", hue="estimator", style="estimator", s=60, ax=ax)
        best = np.minimum.accumulate(med["q"].to_numpy())
        front = med.filter(pl.Series(med["q"].to_numpy() <= best))
        ax.step(front["m"], front["q"], where="post", color="k", lw=0.8, label="Pareto front")
        on_front = set(front["label"])
        for g in _coincident_groups(med):
            text, colour = " = ".join(g["labels"]), "k" if on_front & set(g["labels"]) else "0.45"
            if g["q"] > 0:
                ax.annotate(text, (g["m"], g["q"]), fontsize=7, color=colour, xytext=(5, 2), textcoords="offset points")
            else:
                ax.annotate(text, (g["m"], g["q"]), fontsize=7, color=colour, rotation=90, ha="center", va="bottom",
                            xytext=(-8, 6), textcoords="offset points")  # left of the front's vertical step
        _log_q(ax, _q_floor(med))
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    else:
        _empty(ax, "the base case")
    ax.set(xlabel="median normalised machines m", ylabel="median q",
           title="m–q trade-off of all fit tests (GPA, Cantelli, av, perc, Beta, peak predictors)")
    return fig


FIGURES = {
    "fig7": fig7_machines,
    "fig8": fig8_m_vs_q,
    "fig9": fig9_gpa_error,
    "fig10": fig10_inst_vs_avg,
    "fig11": fig11_capacity,
    "fig12": fig12_clairvoyance,
    "fig13": fig13_rebalancing,
    "pareto": fig_pareto,
}


def unuvar_fig9_utilisation(utilisation: pl.DataFrame, eps: float = 0.01, threshold: float = 0.8) -> Figure:
    """Unuvar Fig 9: distribution of CPU utilisation with and without the stochastic admission controller."""
    style()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    column = f"eps={eps:g}"
    if column not in utilisation.columns:
        column = next((c for c in utilisation.columns if c.startswith("eps=")), None)
    bins = np.linspace(0, 1, 51)
    ax.hist(utilisation["without"], bins=bins, alpha=0.6, density=True, label="without controller", color="C0")
    if column:
        ax.hist(utilisation[column], bins=bins, alpha=0.6, density=True, label=f"with controller ({column.replace('eps', 'ε')})", color="C2")
    ax.axvline(threshold, color="k", ls="--", lw=0.8, label=f"U* = {threshold:g}")
    ax.set(xlabel="CPU utilisation U", ylabel="density",
           title="Unuvar Fig 9: CPU utilisation with and without the stochastic admission controller")
    ax.legend(fontsize="small")
    return fig
