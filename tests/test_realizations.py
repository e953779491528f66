"""Realizations (Janus & Rzadca §3.1): shapes, determinism, chunk invariance, empirical moments."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colocate.prep import realizations as rz


def make_series(rng, n_tasks=60):
    rows = []
    for t in range(n_tasks):
        n = int(rng.integers(24, 300))
        inst = rng.gamma(rng.uniform(0.3, 3), 0.02, n)
        rows.append(
            pl.DataFrame(
                {
                    "job_id": [1000 + t // 5] * n,
                    "task_index": [t % 5] * n,
                    "start_time": np.arange(n) * 300_000_000 + 600_000_000,
                    "inst": inst,
                    "avg": inst * 0.5 + 0.01,
                }
            )
        )
    return pl.concat(rows)


def test_shapes_determinism_and_moments():
    series = make_series(np.random.default_rng(0))
    long_tasks = series.select("job_id", "task_index").unique()
    choose, inst_rng, _ = rz.streams(5)
    chosen = rz.choose_tasks(long_tasks, 40, choose)
    assert chosen.height == 40 and chosen.unique().height == 40
    inst, avg, offsets = rz.series_arrays(series, chosen)
    R = 20_000
    m = rz.realize(inst, offsets, R, inst_rng)
    assert m.shape == (40, R) and m.dtype == np.float32
    # every realization of task j is one of its own records
    for j in (0, 17, 39):
        own = np.unique(inst[offsets[j] : offsets[j + 1]].astype(np.float32))
        assert np.isin(m[j], own).all()
    # the empirical mean and std of each task are reproduced: the standard error of a mean of R
    # draws is σ/√R, so 5 standard errors bound the deviation with overwhelming probability
    for j in range(40):
        x = inst[offsets[j] : offsets[j + 1]]
        assert abs(m[j].mean() - x.mean()) < 5 * x.std() / np.sqrt(R) + 1e-6
        assert m[j].std() == pytest.approx(x.std(), rel=0.05)
    # same seed → same bytes; different seed → different
    again = rz.realize(inst, offsets, R, rz.streams(5)[1])
    assert again.tobytes() == m.tobytes()
    assert rz.realize(inst, offsets, R, rz.streams(6)[1]).tobytes() != m.tobytes()


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 50), st.integers(1, 40), st.integers(1, 64))
def test_chunk_size_does_not_change_the_matrix(n_tasks, r, chunk):
    rng = np.random.default_rng(n_tasks)
    lengths = rng.integers(1, 30, n_tasks)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    values = rng.random(offsets[-1])
    whole = rz.realize(values, offsets, r, np.random.default_rng(1))
    blocks = np.concatenate([b for _, b in rz.draw(values, offsets, r, np.random.default_rng(1), chunk_rows=chunk)])
    assert blocks.tobytes() == whole.tobytes()


def test_sample_is_independent_of_input_order():
    series = make_series(np.random.default_rng(1))
    keys = series.select("job_id", "task_index").unique()
    a = rz.choose_tasks(keys.sort("job_id"), 10, np.random.default_rng(3))
    b = rz.choose_tasks(keys.sort("job_id", descending=True), 10, np.random.default_rng(3))
    assert a.equals(b)


def test_too_few_long_tasks_is_a_clear_error():
    keys = pl.DataFrame({"job_id": [1, 2], "task_index": [0, 0]})
    with pytest.raises(ValueError, match="only 2"):
        rz.choose_tasks(keys, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="≥ 1"):
        rz.choose_tasks(keys, 0, np.random.default_rng(0))


def test_redraw_follows_the_chosen_order_and_each_tasks_records():
    """Janus Table 1's own draw: row j of the matrix holds only task j's inst values (in ``chosen``'s order),
    each record about equally often; a task with one record gives a constant row."""
    series = pl.DataFrame({
        "job_id": [1, 1, 1, 2, 2, 3], "task_index": [0, 0, 0, 0, 0, 0], "start_time": [0, 1, 2, 0, 1, 0],
        "inst": [0.1, 0.2, 0.3, 0.5, 0.7, 0.9], "avg": [0.0] * 6,
    })
    chosen = pl.DataFrame({"job_id": [3, 1, 2], "task_index": [0, 0, 0]})
    m = rz.redraw(series, chosen, 30_000, np.random.default_rng(5))
    assert m.shape == (3, 30_000) and m.dtype == np.float32
    assert set(np.unique(m[0])) == {np.float32(0.9)}
    values, counts = np.unique(m[1], return_counts=True)
    assert np.allclose(values, [0.1, 0.2, 0.3])
    # each of 3 records with probability 1/3: binomial sd ≈ 82, so ±5 sd is ±410
    assert np.all(np.abs(counts - 10_000) < 410)
    assert np.allclose(np.unique(m[2]), [0.5, 0.7])
    with pytest.raises(ValueError, match="no series records"):
        rz.redraw(series, pl.DataFrame({"job_id": [9], "task_index": [0]}), 10, np.random.default_rng(0))


def test_too_few_long_tasks_can_take_them_all():
    """The paper scale on a slice of the trace: N = 100,000 asked, fewer held; every one is taken, each once."""
    keys = pl.DataFrame({"job_id": [5, 1, 2], "task_index": [0, 0, 3]})
    chosen = rz.choose_tasks(keys, 10, np.random.default_rng(0), allow_fewer=True)
    assert chosen.sort("job_id").equals(keys.sort("job_id"))
    with pytest.raises(ValueError, match="asked for 10 long tasks but the data has only 0"):
        rz.choose_tasks(keys.clear(), 10, np.random.default_rng(0), allow_fewer=True)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 40), cols=st.integers(1, 30), chunk=st.integers(1, 50), seed=st.integers(0, 2**16))
def test_row_moments_in_blocks_equal_the_whole_matrix(rows, cols, chunk, seed):
    """Block by block (as the paper-scale matrix must be read) gives numpy's float64 moments of the whole matrix."""
    x = np.random.default_rng(seed).gamma(0.5, 0.1, (rows, cols)).astype(np.float32)
    means, variances = rz.row_moments(x, chunk)
    np.testing.assert_array_equal(means, x.mean(axis=1, dtype=np.float64))
    np.testing.assert_array_equal(variances, x.var(axis=1, dtype=np.float64))
