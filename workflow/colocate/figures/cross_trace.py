"""The cross-trace figure (issues 16 and 45): each quantity on Google 2011 (the paper) and on the runs compared,
relative to the paper's value."""

from __future__ import annotations

import matplotlib.pyplot as plt
import polars as pl
import seaborn as sns
from matplotlib import transforms

from colocate.figures import style


def cross_trace_figure(table: pl.DataFrame, title: str = "The same quantities across traces") -> plt.Figure:
    """A dot per run and quantity at its value over the paper's (log scale: 1 is the paper's Google 2011); ``table``
    as :func:`colocate.report.cross_trace.cross_trace` gives it. Any number of runs: each run's dots sit on their own
    line within a quantity's band, with their own colour and marker, so runs at the same ratio stay apart; the legend
    (one run a line) is below the plot."""
    style()
    quantities = table["quantity"].unique(maintain_order=True).to_list()
    labels = table.select(pl.concat_str("run", pl.lit(" ("), "trace", pl.lit(")")).alias("label"))["label"]
    runs = labels.unique(maintain_order=True).to_list()
    band = 0.7 / max(len(runs), 1)  # a quantity's band is 0.7 high; each run its line within it
    long = table.with_columns(label=labels).filter(pl.col("over_paper").is_finite() & (pl.col("over_paper") > 0))
    if long.height:  # (polars types an empty mapping's result as the input's: only map rows there are)
        long = long.with_columns(
            y=pl.col("quantity").replace_strict(quantities, range(len(quantities)), return_dtype=pl.Float64)
            + (pl.col("label").replace_strict(runs, range(len(runs)), return_dtype=pl.Float64) - (len(runs) - 1) / 2) * band)
    fig, ax = plt.subplots(figsize=(8, 0.3 * max(len(quantities), 4) * max(1.5, len(runs) / 2) + 1.5))
    if long.height:
        sns.scatterplot(data=long.to_pandas(), x="over_paper", y="y", hue="label", style="label", hue_order=runs,
                        style_order=runs, s=60, ax=ax)
        ax.set_xscale("log")
        lo, hi = float(long["over_paper"].min()), float(long["over_paper"].max())
        ax.set_xlim(min(lo, 0.5) / 1.5, max(hi, 2) * 1.5)
    ax.set_yticks(range(len(quantities)), quantities)
    ax.set_ylim(len(quantities) - 0.5, -0.5)  # the first quantity on top, as in the table
    for edge in range(len(quantities) - 1):  # a faint line between quantities' bands
        ax.axhline(edge + 0.5, color="0.9", lw=0.8)
    ax.grid(False, axis="y")
    ax.axvline(1.0, color="0.3", lw=1, ls="--", label="paper (Google 2011)")
    ax.set_xlabel("value / the paper's value on Google 2011 (log)")
    ax.set_ylabel("")
    ax.set_title(title)
    # below the axis label, a fixed distance whatever the figure's height
    below = transforms.offset_copy(ax.transAxes, fig=fig, y=-36, units="points")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=below, fontsize=8, frameon=False)
    fig.tight_layout()
    return fig
