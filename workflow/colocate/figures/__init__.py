"""Figures: one function per paper figure, titled with what the paper calls it.

Each function takes DataFrames/arrays and returns a matplotlib Figure; the
rule script saves it. Modules per paper area (placement, packing, …).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # figures are files; no display

import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402


def style() -> None:
    """The common look of every figure."""
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)
    plt.rcParams.update({"figure.dpi": 120, "savefig.bbox": "tight"})
