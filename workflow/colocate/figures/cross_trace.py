"""The cross-trace figure (issue 16): each quantity on Google 2011 (the paper), a Google run and Azure, relative
to the paper's value."""

from __future__ import annotations

import matplotlib.pyplot as plt
import polars as pl
import seaborn as sns

from colocate.figures import style
from colocate.report.cross_trace import google_label


def cross_trace_figure(table: pl.DataFrame, title: str = "The same quantities across traces") -> plt.Figure:
    """A dot per trace and quantity at its value over the paper's (log scale: 1 is the paper's Google 2011)."""
    style()
    long = table.unpivot(index=["quantity", "unit", "paper_google_2011", "google_run", "azure_run"], on=["google", "azure"],
                         variable_name="trace", value_name="value").with_columns(
        pl.when(pl.col("trace") == "google").then(pl.col("google_run").map_elements(google_label, return_dtype=pl.String))
        .otherwise(pl.concat_str(pl.lit("Azure: "), pl.col("azure_run"))).alias("trace"),
        (pl.col("value") / pl.col("paper_google_2011")).alias("over_paper"),
    ).filter(pl.col("over_paper").is_finite() & (pl.col("over_paper") > 0))
    fig, ax = plt.subplots(figsize=(8, 0.45 * max(table.height, 4) + 1.5))
    if long.height:
        sns.scatterplot(data=long.to_pandas(), x="over_paper", y="quantity", hue="trace", style="trace", s=70, ax=ax)
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
