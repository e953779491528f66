"""Inst against each window's distribution of 1-s samples (colocate.analysis.sampling; beyond the papers): the
moments of a quantile function against hand-computed ones, a ratio the analysis must recover from records drawn
with known within-window spreads, and GPA packed with either variance."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, strategies as st

from colocate.analysis import sampling
from colocate.sources import google2019 as g

LEVELS = sorted(g.DISTRIBUTION_LEVELS["cpu_usage_distribution"] + g.DISTRIBUTION_LEVELS["tail_cpu_usage_distribution"])


def test_moments_of_a_uniform_spread_are_exact():
    # U(0, 1): Q(p) = p, mean 1/2, variance 1/12; U(a, b) scales and shifts them
    mean, var = sampling.quantile_moments(LEVELS, np.array([LEVELS, [2 + 3 * p for p in LEVELS]]))
    assert mean == pytest.approx([0.5, 3.5]) and var == pytest.approx([1 / 12, 9 / 12])


def test_moments_of_a_point_and_of_a_two_level_spread():
    # a constant: variance 0; half the mass at 0 and half at 1 (a jump at the median, linear across 0.4-0.5-0.6)
    q = np.array([[0.3] * len(LEVELS), [0.0 if p <= 0.5 else 1.0 for p in LEVELS]])
    mean, var = sampling.quantile_moments(LEVELS, q)
    assert mean[0] == pytest.approx(0.3) and var[0] == pytest.approx(0.0, abs=1e-15)
    # Q = 0 up to .5, rises linearly to 1 at .6, 1 after: mean = .05 + .4, E[U²] = .1/3 + .4
    assert mean[1] == pytest.approx(0.45) and var[1] == pytest.approx(0.1 / 3 + 0.4 - 0.45**2)


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=20, max_size=20))
def test_moments_match_a_fine_numerical_integral(values):
    q = np.sort(np.array(values))[None, :]
    mean, var = sampling.quantile_moments(LEVELS, q)
    p = np.linspace(0, 1, 200_001)
    curve = np.interp(p, LEVELS, q[0])
    assert mean[0] == pytest.approx(curve.mean(), abs=1e-5)
    assert var[0] == pytest.approx(curve.var(), abs=1e-5)


def test_bad_levels_or_shapes_are_refused():
    with pytest.raises(ValueError, match="increase from 0 to 1"):
        sampling.quantile_moments([0.1, 1.0], np.zeros((1, 2)))
    with pytest.raises(ValueError, match=r"must be \(n, 20\)"):
        sampling.quantile_moments(LEVELS, np.zeros((2, 11)))


def records(tasks: int, windows: int, spread: float, seed: int = 0) -> pl.DataFrame:
    """Tasks whose window means are m·(1 + 0.3·N(0, 1)) and whose 1-s samples in a window are uniform on
    mean·[1 − spread, 1 + spread]; inst is one of them. Within variance: (mean·spread)²/3."""
    rng = np.random.default_rng(seed)
    m = rng.uniform(0.01, 0.1, tasks)[:, None]
    mean = np.clip(m * (1 + 0.3 * rng.standard_normal((tasks, windows))), 1e-4, None)
    inst = mean * (1 + spread * rng.uniform(-1, 1, (tasks, windows)))
    return pl.DataFrame({
        "job_id": np.repeat(np.arange(tasks), windows), "task_index": np.zeros(tasks * windows, np.int64),
        "window": np.tile(np.arange(windows), tasks).astype(np.int32),
        "sampled_cpu_usage": inst.ravel().astype(np.float32), "cpu_rate": mean.ravel().astype(np.float32),
        "within_mean": mean.ravel().astype(np.float32), "within_var": ((mean * spread) ** 2 / 3).ravel().astype(np.float32),
    })


@pytest.mark.parametrize("spread", [0.0, 0.5, 1.0])
def test_a_sample_drawn_from_its_window_gives_a_ratio_of_one(spread):
    per_task = sampling.task_variability(records(200, 400, spread), min_windows=24)
    assert per_task.height == 200
    # each task's ratio is a ratio of stds over 400 windows: its sampling error is about 1/√(2·400) = 3.5%; the
    # median of 200 is within 1% (4 × 0.035 / √200 ≈ 1.0%) and 95% of them within 4 SE
    assert per_task["ratio"].median() == pytest.approx(1.0, abs=0.012)
    assert ((per_task["ratio"] - 1).abs() < 4 / np.sqrt(800)).mean() > 0.95


def test_a_sample_that_misses_the_window_spread_is_seen():
    """The records say each window's 1-s samples spread ±100% (uniform), but inst is the window mean itself: inst's
    variance is the window means' only. The ratio the analysis must recover is √(V_b / (V_b + E[w])), known from
    the construction."""
    frame = records(200, 400, 1.0).with_columns(pl.col("within_mean").alias("sampled_cpu_usage"))
    per_task = sampling.task_variability(frame)
    # within variance mean²/3, between 0.09 m² (±√ small windows' clipping): ratio √(0.09 / (0.09 + (1+0.09)/3))
    expected = np.sqrt(0.09 / (0.09 + 1.09 / 3))
    assert per_task["ratio"].median() == pytest.approx(expected, rel=0.05)


def test_tasks_outside_the_list_or_with_few_windows_are_left_out():
    frame = records(5, 30, 0.5)
    assert sampling.task_variability(frame, min_windows=31).height == 0
    keep = pl.DataFrame({"job_id": [1, 3], "task_index": [0, 0]})
    assert sampling.task_variability(frame, keep)["job_id"].to_list() == [1, 3]


def test_gpa_with_either_variance_packs_the_same_tasks_and_a_smaller_rho_uses_more_machines():
    frame = records(300, 300, 1.0, seed=3)
    tasks = frame.select("job_id", "task_index").unique()
    out = sampling.gpa_variance_sources(frame, tasks, [0.1, 0.01], n_tasks=100, instances=3, realizations=100,
                                        capacity=1.0, seed=5)
    assert out.height == 4 and set(out["variance_from"]) == {"inst samples", "window distributions"}
    assert (out["instances"] == 3).all() and out["q"].is_between(0, 1).all()
    by = {(r["rho"], r["variance_from"]): r for r in out.iter_rows(named=True)}
    for source in ("inst samples", "window distributions"):  # a smaller ρ never uses fewer machines
        assert by[(0.01, source)]["machines"] >= by[(0.1, source)]["machines"]
    again = sampling.gpa_variance_sources(frame, tasks, [0.1, 0.01], n_tasks=100, instances=3, realizations=100,
                                          capacity=1.0, seed=5)
    assert out.equals(again)  # seeded


def test_too_few_tasks_give_an_empty_packing_and_the_summary_says_so():
    frame = records(10, 40, 0.5)
    tasks = frame.select("job_id", "task_index").unique()
    out = sampling.gpa_variance_sources(frame, tasks, [0.1], n_tasks=50, instances=2, realizations=10, capacity=1.0,
                                        seed=1)
    assert out.height == 0
    rows = sampling.sampling_measurements(sampling.task_variability(frame), out)
    assert [r["id"] for r in rows] == ["beyond.sampling.tasks", "beyond.sampling.ratio.median",
                                       "beyond.sampling.ratio.within10"]
    assert "fewer than 30" in rows[1]["status"]
