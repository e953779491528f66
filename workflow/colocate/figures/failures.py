"""Figures of the machine failure characterisation: Beaumont et al. (2015) §6, Figs 6 and 7.

One function per paper figure; each takes the tables of :mod:`colocate.analysis.failures` and
returns a matplotlib Figure titled with the paper's caption.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from colocate.analysis.failures import back_within
from colocate.figures import style

#: Lowest y of the log axes of Fig 6 (the paper: fewer than 2e-3 windows expected with ≥ 10 removals).
_FIG6_FLOOR = 1e-4


def _actual_vs_expected(ax, table: pl.DataFrame, title: str) -> None:
    long = pl.concat(
        [
            table.select("k", pl.col("windows").cast(pl.Float64).alias("windows"), pl.lit("actual").alias("windows of")),
            table.select("k", pl.col("expected").alias("windows"), pl.lit("expected (Poisson)").alias("windows of")),
        ]
    ).to_pandas()
    sns.barplot(long, x="k", y="windows", hue="windows of", ax=ax, palette=["C0", "C1"])
    ax.set_yscale("log")
    ax.set_ylim(bottom=_FIG6_FLOOR)
    ax.set(xlabel="removals in the 5-minute window", ylabel="number of windows (log)", title=title)
    ticks = [int(t.get_text()) for t in ax.get_xticklabels()]
    if len(ticks) > 16:  # many k: label every 5th
        ax.set_xticks([i for i, k in enumerate(ticks) if k % 5 == 0], [str(k) for k in ticks if k % 5 == 0])


def fig6_poisson(remaining: pl.DataFrame, with_maintenance: pl.DataFrame, maintenance_min_removals: int) -> Figure:
    """Fig 6: actual versus expected (Poisson) distribution of failures per 5-minute window.

    ``remaining`` is :func:`colocate.analysis.failures.poisson_table` of the windows left once the
    outstanding events and the maintenance windows are removed (the paper's Fig 6);
    ``with_maintenance`` keeps the maintenance windows (the paper's table), to show their tail.
    """
    style()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1, 1.6]})
    n1, m1 = int(remaining["windows"].sum()), float((remaining["k"] * remaining["windows"]).sum())
    n2, m2 = int(with_maintenance["windows"].sum()), float((with_maintenance["k"] * with_maintenance["windows"]).sum())
    _actual_vs_expected(
        ax1, remaining,
        f"(a) maintenance windows (≥ {maintenance_min_removals}) removed\n{n1} windows, mean {m1 / max(n1, 1):.3f}",
    )
    _actual_vs_expected(
        ax2, with_maintenance,
        f"(b) outstanding events removed, maintenance kept\n{n2} windows, mean {m2 / max(n2, 1):.3f}",
    )
    if with_maintenance["k"].max() >= maintenance_min_removals:  # categorical axis: position = k (k is 0..max)
        ax2.axvline(maintenance_min_removals - 0.5, color="C3", ls="--", lw=1)
        ax2.text(maintenance_min_removals - 0.3, 0.97, "maintenance", color="C3", va="top",
                 transform=ax2.get_xaxis_transform(), fontsize=8)
    handles, labels = ax1.get_legend_handles_labels()
    for ax in (ax1, ax2):
        ax.get_legend().remove()
    fig.suptitle("Fig 6: actual versus expected distribution of failures (Beaumont et al. §6)", fontsize=11)
    fig.tight_layout()
    fig.legend(handles, labels, loc="upper right", ncol=2, fontsize=9, frameon=False)
    return fig


def fig7_removal_durations(rem: pl.DataFrame, back_within_minutes: float, trace_minutes: float) -> Figure:
    """Fig 7: failure (removal) durations distribution, ECDF in minutes on a log axis.

    ``rem`` is :func:`colocate.analysis.failures.detect_outstanding`'s removals. Machines never re-added
    (censored at the trace end, duration ``inf``) are placed beyond the axis, so each curve ends
    below 1 at the trace length by their share. A marker at ``back_within_minutes`` (the paper:
    60% back within 17 min).
    """
    style()
    fig, ax = plt.subplots(figsize=(7.0, 4.3))
    beyond = trace_minutes * 10
    groups = {
        "ordinary removals (outstanding events left out)": rem.filter(~pl.col("outstanding")),
        "all removals": rem,
    }
    frames = []
    for label, g in groups.items():
        minutes = g["duration_s"].to_numpy() / 60
        frames.append(pl.DataFrame({"minutes": np.where(np.isinf(minutes), beyond, minutes), "removals": label}))
    frame = pl.concat(frames).to_pandas()
    sns.ecdfplot(frame, x="minutes", hue="removals", ax=ax, palette=["C0", "0.5"], log_scale=(True, False))
    low = max(float(frame["minutes"].min()) if len(frame) else 0.01, 1e-3)
    ax.set_xlim(low, trace_minutes)
    ax.axvline(back_within_minutes, color="C3", ls="--", lw=1)
    for (label, g), colour in zip(groups.items(), ["C0", "0.5"]):
        share = back_within(g["duration_s"].to_numpy(), back_within_minutes)
        never = float(np.isinf(g["duration_s"].to_numpy()).mean()) if g.height else float("nan")
        ax.plot([back_within_minutes], [share], "o", color=colour)
        ax.annotate(f"{share:.0%} back within {back_within_minutes:g} min; {never:.1%} never",
                    (back_within_minutes, share), textcoords="offset points", xytext=(8, -12), fontsize=8, color=colour)
    ax.set(ylim=(0, 1), xlabel="removal duration (minutes, log; REMOVE to the next ADD)",
           ylabel="CDF (share of removals)")
    ax.set_title("Fig 7: failure durations distribution (Beaumont et al. §6)\npaper: 60% back within 17 min; "
                 "curves end below 1: never re-added by the trace end", fontsize=10)
    sns.move_legend(ax, "lower right", title=None, fontsize=8)
    return fig
