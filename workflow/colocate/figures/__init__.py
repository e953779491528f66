"""Figures: one function per paper figure, titled with what the paper calls it.

Each function takes DataFrames/arrays and returns a matplotlib Figure; the
rule script saves it. Modules per paper area (placement, packing, …).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import seaborn as sns

# No backend is forced here: rule scripts choose Agg (colocate.rulescript.run), and a notebook keeps its
# inline backend, so the figures it draws with these functions show where it runs.


def style() -> None:
    """The common look of every figure."""
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    plt.rcParams.update({"figure.dpi": 120, "savefig.bbox": "tight"})


def insufficient_data_figure(analysis: str, reason: str, needs: str) -> plt.Figure:
    """What an analysis that lacked data shows where its plot would be: the reason, never empty axes."""
    import textwrap

    fig = plt.figure(figsize=(7, 3))
    wrap = lambda s: "\n".join(textwrap.wrap(s, 80))  # noqa: E731
    fig.text(0.5, 0.78, analysis, ha="center", va="center", fontsize=12, weight="bold")
    fig.text(0.5, 0.5, "insufficient data: " + wrap(reason), ha="center", va="center", fontsize=10, color="firebrick")
    fig.text(0.5, 0.2, "needs: " + wrap(needs), ha="center", va="center", fontsize=9, color="0.3")
    return fig
