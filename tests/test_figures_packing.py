"""Legibility of the packing figures: each fit test labelled once, coincident labels merged, q = 0 visible."""

from __future__ import annotations

import matplotlib.pyplot as plt
import polars as pl

from colocate.figures import packing as figs


def _results(points):
    """A packing results table with one base-case instance per (estimator, parameter, m, q)."""
    n = len(points)
    return pl.DataFrame({
        "instance": [0] * n, "estimator": [p[0] for p in points], "parameter": [float(p[1]) for p in points],
        "label": [f"{p[0]} {p[1]:g}" for p in points], "m": [float(p[2]) for p in points], "q": [float(p[3]) for p in points],
        "algorithm": ["BF"] * n, "data": ["inst"] * n, "clairvoyance": [1.0] * n, "capacity": [1.0] * n,
        "rebalance": [True] * n, "m_abs": [10] * n, "m_norm": [5.0] * n,
    })


POINTS = [("GPA", 0.1, 1.25, 0.09), ("av", 1.25, 1.26, 0.092), ("perc", 70, 1.28, 0.088),  # one spot
          ("GPA", 0.01, 1.5, 0.011), ("Cantelli", 1.7, 2.5, 8e-6),
          ("perc", 99, 3.6, 0.0), ("max", 1, 3.62, 0.0), ("Cantelli", 4.4, 5.0, 0.0)]


def test_coincident_points_share_one_label_and_every_test_is_named_once():
    groups = figs._coincident_groups(_results(POINTS).select("label", "m", "q"))
    assert [g["labels"] for g in groups] == [["GPA 0.1", "av 1.25", "perc 70"], ["GPA 0.01"], ["Cantelli 1.7"],
                                             ["perc 99", "max 1"], ["Cantelli 4.4"]]


def test_pareto_labels_are_legible():
    fig = figs.fig_pareto(_results(POINTS))
    (ax,) = fig.axes
    texts = [t.get_text() for t in ax.texts]
    named = [label for t in texts for label in t.split(" = ")]
    assert sorted(named) == sorted(f"{e} {p:g}" for e, p, _, _ in POINTS)  # each once
    upright = {t.get_text(): t.get_rotation() for t in ax.texts}
    assert upright["perc 99 = max 1"] == 90 and upright["Cantelli 4.4"] == 90 and upright["GPA 0.01"] == 0
    assert ax.get_ylim()[0] < 0  # q = 0 sits above the axis line
    plt.close(fig)


def test_fig8_shows_q_zero_and_keeps_the_legend_off_the_data():
    fig = figs.fig8_m_vs_q(_results(POINTS))
    (ax,) = fig.axes
    assert ax.get_ylim()[0] < 0 < ax.get_ylim()[1]
    legend = ax.get_legend()
    box = legend.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= ax.get_window_extent(fig.canvas.get_renderer()).x1  # outside, right of the axes
    plt.close(fig)
