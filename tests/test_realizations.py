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
    chosen = rz.choose_tasks(long_tasks, 40, rz.choose_stream(5))
    assert chosen.height == 40 and chosen.unique().height == 40
    R = 20_000
    m = rz.realize(series, chosen, R, 5)
    assert m.shape == (40, R) and m.dtype == np.float32
    for j, task in enumerate(chosen.iter_rows(named=True)):
        x = series.filter(job_id=task["job_id"], task_index=task["task_index"])["inst"].to_numpy()
        if j in (0, 17, 39):  # every realization of task j is one of its own records
            assert np.isin(m[j], np.unique(x.astype(np.float32))).all()
        # the empirical mean and std of each task are reproduced: the standard error of a mean of R
        # draws is σ/√R, so 5 standard errors bound the deviation with overwhelming probability
        assert abs(m[j].mean() - x.mean()) < 5 * x.std() / np.sqrt(R) + 1e-6
        assert m[j].std() == pytest.approx(x.std(), rel=0.05)
    # same seed → same bytes; different seed or stream → different
    assert rz.realize(series, chosen, R, 5).tobytes() == m.tobytes()
    assert rz.realize(series, chosen, R, 6).tobytes() != m.tobytes()
    assert rz.realize(series, chosen, R, 5, stream="janus_table1").tobytes() != m.tobytes()


def _buckets(series, n_buckets):
    """The series split as the map splits tasks: each task's records in one bucket."""
    bucket = (pl.col("job_id") * 31 + pl.col("task_index")) % n_buckets
    return [series.filter(bucket == b) for b in range(n_buckets)]


@settings(max_examples=25, deadline=None)
@given(n_buckets=st.integers(1, 7), chunk=st.integers(1, 50), n=st.integers(1, 60), seed=st.integers(0, 2**16))
def test_buckets_chunks_and_sample_size_do_not_change_a_tasks_draws(n_buckets, chunk, n, seed):
    """Drawn a bucket at a time (memory: one bucket), in chunks of any size, the matrix has the bytes of the whole
    draw; and a task's row is the same whichever N sampled it (its stream is its own)."""
    series = make_series(np.random.default_rng(seed % 7))
    chosen = rz.choose_tasks(series.select("job_id", "task_index"), n, rz.choose_stream(seed)).with_row_index("row")
    whole = {k: rz.realize(series, chosen, 30, seed, column=k) for k in rz.KINDS}
    got = {k: np.full((n, 30), np.nan, dtype=np.float32) for k in rz.KINDS}
    n_records = np.zeros(n, dtype=np.int64)
    for block in rz.realize_buckets(_buckets(series, n_buckets), chosen, 30, seed, chunk_rows=chunk):
        assert len(block.rows) <= chunk
        for k in rz.KINDS:
            got[k][block.rows] = block.draws[k]
        n_records[block.rows] = block.n_records
    for k in rz.KINDS:
        assert got[k].tobytes() == whole[k].tobytes()
    counts = series.group_by("job_id", "task_index").len()
    assert n_records.tolist() == chosen.join(counts, on=["job_id", "task_index"], how="left")["len"].to_list()
    # task j's row alone, drawn as a sample of one, equals its row in the sample of n
    j = n // 2
    assert rz.realize(series, chosen[j], 30, seed).tobytes() == whole["inst"][j].tobytes()


def test_a_task_without_records_or_in_two_buckets_is_an_error():
    series = make_series(np.random.default_rng(2), n_tasks=6)
    chosen = series.select("job_id", "task_index").unique().sort("job_id", "task_index").with_row_index("row")
    with pytest.raises(ValueError, match="1 chosen task\\(s\\) have no series records"):
        list(rz.realize_buckets([series.filter(pl.col("task_index") != 2)], chosen, 5, 0))
    with pytest.raises(ValueError, match="more than one bucket"):
        list(rz.realize_buckets([series, series.filter(pl.col("task_index") == 1)], chosen, 5, 0))


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


def test_realize_follows_the_chosen_order_and_each_tasks_records():
    """Janus Table 1's own draw (its own stream): row j of the matrix holds only task j's inst values (in ``chosen``'s order),
    each record about equally often; a task with one record gives a constant row."""
    series = pl.DataFrame({
        "job_id": [1, 1, 1, 2, 2, 3], "task_index": [0, 0, 0, 0, 0, 0], "start_time": [0, 1, 2, 0, 1, 0],
        "inst": [0.1, 0.2, 0.3, 0.5, 0.7, 0.9], "avg": [0.0] * 6,
    })
    chosen = pl.DataFrame({"job_id": [3, 1, 2], "task_index": [0, 0, 0]})
    m = rz.realize(series, chosen, 30_000, 5, stream="janus_table1")
    assert m.shape == (3, 30_000) and m.dtype == np.float32
    assert set(np.unique(m[0])) == {np.float32(0.9)}
    values, counts = np.unique(m[1], return_counts=True)
    assert np.allclose(values, [0.1, 0.2, 0.3])
    # each of 3 records with probability 1/3: binomial sd ≈ 82, so ±5 sd is ±410
    assert np.all(np.abs(counts - 10_000) < 410)
    assert np.allclose(np.unique(m[2]), [0.5, 0.7])
    with pytest.raises(ValueError, match="no series records"):
        rz.realize(series, pl.DataFrame({"job_id": [9], "task_index": [0]}), 10, 0)


def test_drawing_a_bucket_at_a_time_into_an_own_stream_is_the_whole_draw():
    """rz.fill over buckets (how Azure's Table 1 draws its R again) gives, byte for byte, rz.realize's matrix of the
    whole series under the same stream name: a task's draws depend on the seed, the stream and its records only."""
    series = make_series(np.random.default_rng(3), n_tasks=30)
    chosen = rz.choose_tasks(series.select("job_id", "task_index").unique(), 20, rz.choose_stream(1)).with_row_index("row")
    whole = rz.realize(series, chosen, 700, 9, stream="janus_table1_realizations")
    buckets = series.with_columns(b=pl.col("job_id") % 3).partition_by("b", include_key=False)
    out = np.empty((20, 700), dtype=np.float32)
    records = rz.fill({"janus_table1_realizations": out},
                      (b.rename({"inst": "janus_table1_realizations"}) for b in buckets), chosen, 700, 9, chunk_rows=4)
    assert np.array_equal(out, whole)
    assert records.sum() == series.join(chosen, on=["job_id", "task_index"], how="semi").height


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
