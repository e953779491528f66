"""Figures of Beaumont et al. §4.2 (CPU vs memory of dominant jobs).

:func:`fig3_cpu_memory` is the paper's Fig 3 (four example jobs, dots coloured
by DBSCAN cluster, one fitted line per cluster); :func:`shares` compares the
category shares with the paper's.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
import seaborn as sns
from matplotlib.figure import Figure

from colocate.analysis.cpumem import CATEGORIES, FITTED
from colocate.figures import style

_TITLES = {
    "Flat": "Flat: memory independent of CPU",
    "MultiFlat": "multi-cluster Flat",
    "Slope": "Slope: memory affine in CPU",
    "BadlyFitted": "BadlyFitted",
}
_NOISE = "noise (DBSCAN −1)"


def fig3_cpu_memory(examples: pl.DataFrame, fits: pl.DataFrame) -> Figure:
    """Fig 3: memory vs CPU of one job per category, dots coloured by DBSCAN cluster, the OLS line of each cluster.

    ``examples``: :func:`colocate.analysis.cpumem.example_points` (``category``,
    ``job_id``, ``cpu_rate``, ``canonical_memory_usage``, ``cluster``);
    ``fits``: the per-cluster fits (``job_id``, ``cluster``, ``intercept``,
    ``slope``, ``r2``, ``cv``, ``range``, ``verdict``). A category without any
    job gets an empty panel saying so.
    """
    style()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
    palette = sns.color_palette("tab10")
    for ax, cat in zip(axes.flat, CATEGORIES):
        part = examples.filter(pl.col("category") == cat)
        if part.height == 0:
            ax.text(0.5, 0.5, f"no {cat} job in this run", ha="center", va="center", transform=ax.transAxes)
            ax.set(title=_TITLES[cat], xlabel="CPU usage (cores, normalised)", ylabel="memory usage (normalised)")
            continue
        job = int(part["job_id"][0])
        frame = part.with_columns(
            pl.when(pl.col("cluster") < 0)
            .then(pl.lit(_NOISE))
            .otherwise(pl.format("cluster {}", pl.col("cluster")))
            .alias("group")
        )
        clusters = sorted(c for c in frame["cluster"].unique().to_list() if c >= 0)
        colours = {f"cluster {c}": palette[c % len(palette)] for c in clusters}
        colours[_NOISE] = (0.6, 0.6, 0.6)
        order = [f"cluster {c}" for c in clusters] + ([_NOISE] if (frame["cluster"] < 0).any() else [])
        sns.scatterplot(
            frame.to_pandas(), x="cpu_rate", y="canonical_memory_usage", hue="group", hue_order=order,
            palette=colours, s=8, alpha=0.6, linewidth=0, ax=ax,
        )
        lines = fits.filter(pl.col("job_id") == job).sort("cluster")
        for r in lines.iter_rows(named=True):
            x = frame.filter(pl.col("cluster") == r["cluster"])["cpu_rate"].to_numpy()
            if x.size == 0 or not np.isfinite(r["slope"]):
                continue
            xs = np.array([0.0, x.max()])
            ax.plot(
                xs, r["intercept"] + r["slope"] * xs, color=colours[f"cluster {r['cluster']}"], lw=2,
                label=f"fit {r['cluster']}: range {r['range']:.3f}, r² {r['r2']:.2f}, CV {r['cv']:.3f} → {r['verdict']}",
            )
        ax.legend(fontsize="x-small", loc="best")
        ax.set(
            title=f"{_TITLES[cat]} (job {job}, {part.height} points)",
            xlabel="CPU usage (cores, normalised)",
            ylabel="memory usage (normalised)",
        )
        ax.set_xlim(left=min(0.0, float(frame["cpu_rate"].min())))
    fig.suptitle("Fig 3: memory vs CPU of tasks of four dominant jobs (colours: DBSCAN clusters)")
    fig.tight_layout()
    return fig


def shares(table: pl.DataFrame) -> Figure:
    """Category shares beside the paper's (Beaumont §4.2): Flat/MultiFlat/Slope of the fitted jobs, BadlyFitted of all classified.

    ``table``: :func:`colocate.analysis.cpumem.shares`; one bar per scope (all jobs, then each priority class).
    """
    style()
    long = table.filter(pl.col("category").is_in(CATEGORIES)).with_columns(
        pl.when(pl.col("category").is_in(FITTED))
        .then(pl.col("share_of_fitted"))
        .otherwise(pl.col("share_of_classified"))
        .alias("share"),
        pl.format("{} ({} jobs)", pl.col("scope"), pl.col("n_jobs").sum().over("scope")).alias("jobs"),
    )
    fig, ax = plt.subplots(figsize=(8, 4.5))
    sns.barplot(long.to_pandas(), x="category", y="share", hue="jobs", order=list(CATEGORIES), ax=ax)
    paper = dict(table.filter(pl.col("scope") == table["scope"][0]).select("category", "paper").iter_rows())
    for i, cat in enumerate(CATEGORIES):
        if paper.get(cat) is not None:  # the paper's share, where the table carries it
            ax.hlines(paper[cat], i - 0.45, i + 0.45, colors="black", linestyles="--", lw=1.5,
                      label="paper" if i == 0 else None)
    ax.legend(fontsize="x-small", title="scope (classified jobs)", title_fontsize="x-small")
    ax.set(
        xlabel="category (Flat, MultiFlat, Slope: share of fitted jobs; BadlyFitted: share of classified jobs)",
        ylabel="share of jobs",
        ylim=(0, 1),
        title="CPU vs memory categories of dominant jobs (Beaumont §4.2)",
    )
    return fig
