"""Figures of the inst-sampling analysis (beyond the papers, :mod:`colocate.analysis.sampling`)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from colocate.figures import style

__all__ = ["inst_vs_distribution"]


def inst_vs_distribution(per_task: pl.DataFrame, packing: pl.DataFrame, trace: str) -> Figure:
    """Left: each task's inst std against the std its windows' distributions imply (the diagonal: one sample per
    window stands for every second); right: GPA's overflow frequency q against ρ with either variance."""
    style()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    data = per_task.filter((pl.col("inst_std") > 0) & (pl.col("implied_std") > 0)).to_pandas()
    sns.scatterplot(data=data, x="implied_std", y="inst_std", s=10, alpha=0.5, linewidth=0, ax=left)
    if len(data):
        lo, hi = data[["implied_std", "inst_std"]].min().min(), data[["implied_std", "inst_std"]].max().max()
        left.plot([lo, hi], [lo, hi], color="0.3", lw=1, ls="--", label="inst std = implied std")
        left.set(xscale="log", yscale="log")
        left.legend(loc="upper left")
    left.set(xlabel="std implied by the windows' distributions", ylabel="inst std (one 1-s sample per window)",
             title=f"{len(data)} tasks")
    if packing.height:
        sns.lineplot(data=packing.to_pandas(), x="rho", y="q", hue="variance_from", marker="o", ax=right)
        top = float(packing["rho"].max())
        right.plot([0, top], [0, top], color="0.3", lw=1, ls="--", label="q = ρ")
        right.legend(title="GPA's variance from")
    right.set(xlabel="ρ (GPA's target)", ylabel="q (overflows on inst, evaluation windows)", title="GPA (Janus §4)")
    fig.suptitle(f"One 1-s sample per window against the window's distribution: {trace}")
    return fig
