"""Legibility of Tantawi & Steinder's Fig 2: one legend for the panels, outside every panel."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import polars as pl

from colocate.figures import placement as figs


def test_fig2_legend_sits_below_the_panels():
    n, resources, policies = 40, ["cpu", "memory", "gpu"], ["PACK", "SPREAD", "XBAL", "ABP"]
    rng = np.random.default_rng(0)
    requests = pl.concat(
        pl.DataFrame({"policy": [p] * n, "request": np.arange(n), "phase": np.repeat([0, 1], n // 2),
                      **{f"sd_{r}": rng.uniform(0, 0.5, n) for r in resources}})
        for p in policies
    )
    fig = figs.fig2_stdev(requests, resources, policies)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert all(ax.get_legend() is None for ax in panels)  # none covers a panel's curves
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["CPU", "Memory", "GPU"]
    renderer = fig.canvas.get_renderer()
    below = min(ax.get_window_extent(renderer).y0 for ax in panels)
    assert legend.get_window_extent(renderer).y1 <= below
    plt.close(fig)
