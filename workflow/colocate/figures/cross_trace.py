"""The cross-trace figure (issue 16): each quantity on Google 2011 (the paper) and on the runs compared, relative
to the paper's value."""

from __future__ import annotations

import matplotlib.pyplot as plt
import polars as pl
import seaborn as sns

from colocate.figures import style


def cross_trace_figure(table: pl.DataFrame, title: str = "The same quantities across traces") -> plt.Figure:
    """A dot per run and quantity at its value over the paper's (log scale: 1 is the paper's Google 2011); ``table``
    as :func:`colocate.report.cross_trace.cross_trace` gives it."""
    style()
    long = table.with_columns(pl.concat_str("run", pl.lit(" ("), "trace", pl.lit(")")).alias("run")).filter(
        pl.col("over_paper").is_finite() & (pl.col("over_paper") > 0))
    fig, ax = plt.subplots(figsize=(8, 0.45 * max(table["quantity"].n_unique(), 4) + 1.5))
    if long.height:
        sns.scatterplot(data=long.to_pandas(), x="over_paper", y="quantity", hue="run", style="run", s=70, ax=ax)
        ax.set_xscale("log")
        lo, hi = float(long["over_paper"].min()), float(long["over_paper"].max())
        ax.set_xlim(min(lo, 0.5) / 1.5, max(hi, 2) * 1.5)
    ax.axvline(1.0, color="0.3", lw=1, ls="--", label="paper (Google 2011)")
    ax.set_xlabel("value / the paper's value on Google 2011 (log)")
    ax.set_ylabel("")
    ax.set_title(title)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    return fig
