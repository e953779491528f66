"""Figures of Beaumont et al. §3–4: dominant jobs by class (Fig 1), job usage densities (Fig 2), task balance (Figs 4–5)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.figure import Figure
from scipy import stats

from colocate.figures import style
from colocate.sources.contract import CLASSES, WINDOW_US

_CLASS_ORDER = list(CLASSES)[::-1]  # infrastructure on top, as the paper's legend


def beaumont_fig1_classes(shares: pl.DataFrame) -> Figure:
    """Fig 1: tasks, CPU and memory of the dominant jobs, stacked by priority class (shares of the cluster's)."""
    style()
    wide = shares.to_pandas().set_index("class").reindex([c for c in _CLASS_ORDER if c in shares["class"]])
    fig, ax = plt.subplots(figsize=(5, 4))
    wide.T.rename(index={"tasks": "Tasks", "cpu": "CPU", "memory": "Memory"}).plot(
        kind="bar", stacked=True, ax=ax, color=sns.color_palette("deep", len(wide))[::-1], width=0.6
    )
    ax.set_ylabel("share of the whole cluster's usage")
    ax.set_ylim(0, 1)
    ax.set_title("Fig 1: dominant jobs by priority class")
    ax.tick_params(axis="x", rotation=0)
    handles, labels = ax.get_legend_handles_labels()
    # top of the stack first, as drawn
    ax.legend(handles[::-1], labels[::-1], title="priority class", fontsize=8, loc="upper left", bbox_to_anchor=(1, 1))
    return fig


def beaumont_fig2_usage(dominant: pl.DataFrame, mixtures: pl.DataFrame) -> Figure:
    """Fig 2: density of log mean CPU (top) and memory (bottom) of dominant jobs per class, with both fits."""
    style()
    classes = list(dict.fromkeys(mixtures["class"].to_list()))
    fig, axes = plt.subplots(2, len(classes), figsize=(4 * len(classes), 6.5), squeeze=False)
    for i, (resource, col) in enumerate((("cpu", "cpu_mean"), ("memory", "mem_mean"))):
        for j, cls in enumerate(classes):
            ax = axes[i, j]
            x = dominant.filter((pl.col("class") == cls) & (pl.col(col) > 0))[col].to_numpy()
            fit = mixtures.filter((pl.col("class") == cls) & (pl.col("resource") == resource)).row(0, named=True)
            ax.set_title(f"{cls}: log mean {resource} ({x.size} jobs)", fontsize=9)
            if x.size == 0:
                continue
            z = np.log(x)
            sns.histplot(z, stat="density", bins=30, ax=ax, color="0.75", edgecolor="white")
            if fit["sigma"] is not None:
                grid = np.linspace(z.min() - 1, z.max() + 1, 300)
                ax.plot(grid, stats.norm.pdf(grid, fit["mu"], fit["sigma"]), label="Gaussian")
                mix = sum(fit[f"lambda{k}"] * stats.norm.pdf(grid, fit[f"mu{k}"], fit[f"sigma{k}"]) for k in (1, 2))
                ax.plot(grid, mix, ls="--", label="2-Gaussian mixture")
                ax.legend(fontsize=7, title=f"BIC prefers {fit['chosen']}", title_fontsize=7)
            ax.set_xlabel(f"ln(mean {resource})")
    fig.suptitle("Fig 2: usage density of dominant jobs")
    fig.tight_layout()
    return fig


def beaumont_fig4_examples(dominant_windows: pl.DataFrame, examples: dict[str, int]) -> Figure:
    """Fig 4: normalised number of tasks and CPU per task over time, for the constant and the variable example jobs."""
    style()
    titles = {"constant": "(a) constant number of tasks", "variable": "(b) variable number of tasks"}
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), squeeze=False)
    for ax, key in zip(axes[0], ("constant", "variable")):
        ax.set_title(titles[key], fontsize=10)
        if key not in examples:
            ax.text(0.5, 0.5, "no such job in this trace", ha="center", transform=ax.transAxes)
            continue
        s = dominant_windows.filter(pl.col("job_id") == examples[key]).sort("window")
        days = s["window"].to_numpy().astype(np.float64) * WINDOW_US / 86_400e6  # since the trace start
        tasks = s["n_tasks"].to_numpy().astype(float)
        ax.plot(days, tasks / tasks.max(), lw=1, label="tasks / max")
        ax.set_ylabel("normalised number of tasks")
        ax.set_xlabel("time since the trace start (days)")
        ax.set_ylim(0, 1.1)
        ax2 = ax.twinx()
        ax2.plot(days, s["cpu_sum"].to_numpy() / np.maximum(tasks, 1), lw=0.8, color="C1", label="CPU per task")
        ax2.set_ylabel("CPU per task", color="C1")
        ax2.grid(False)
        ax.text(0.01, 0.02, f"job {examples[key]}", transform=ax.transAxes, fontsize=7)
    fig.suptitle("Fig 4: number of tasks and CPU per task of two dominant jobs")
    fig.tight_layout()
    return fig


def beaumont_fig5_balance(thresholds: pl.DataFrame, groups: tuple[str, ...] = ("production", "gratis", "other")) -> Figure:
    """Fig 5: CDF over jobs of the 80% threshold of the per-window interdecile ratio of task CPU, per group."""
    style()
    d = thresholds.filter(pl.col("class").is_in(groups) & pl.col("threshold").is_not_null())
    cap = 100.0  # infinite ratios (idle tasks) are drawn at the right edge
    pdf = d.with_columns(pl.col("threshold").clip(1.0, cap)).to_pandas()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    if len(pdf):
        sns.ecdfplot(data=pdf, x="threshold", hue="class", hue_order=[g for g in groups if g in set(pdf["class"])], ax=ax)
    ax.set_xscale("log")
    ax.set_xlim(1, cap)
    ax.axvline(2, color="0.5", ls=":", lw=1)
    ax.set_xlabel("80% threshold of the interdecile ratio of task CPU (capped at 100)")
    ax.set_ylabel("share of jobs")
    ax.set_title("Fig 5: load balance among a job's tasks")
    return fig
