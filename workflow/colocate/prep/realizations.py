"""Realizations of long tasks' CPU usage (Janus & Rzadca §3.1).

For each of N sampled long tasks, R realizations are drawn from the task's
empirical distribution X_i (resp. Y_i for 5-minute averages), under the
time-invariance assumption of §3.1. Summing realizations of co-located tasks
then gives samples of their total usage.

Random streams: one seed gives three independent child streams (task choice,
inst draws, avg draws). Draws are made row by row in C order, so writing the
matrix in chunks of any size yields the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import polars as pl

from colocate.prep.tasks import TASK_KEY


def streams(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """Independent generators for (task choice, inst draws, avg draws), all from ``seed``."""
    choose, inst, avg = np.random.SeedSequence(seed).spawn(3)
    return np.random.default_rng(choose), np.random.default_rng(inst), np.random.default_rng(avg)


def choose_tasks(long_tasks: pl.DataFrame, n: int, rng: np.random.Generator, *, allow_fewer: bool = False) -> pl.DataFrame:
    """Sample ``n`` distinct long tasks (the keys, in draw order) from ``long_tasks``.

    The candidates are sorted by key first, so the sample does not depend on
    the order in which buckets were concatenated. With fewer than ``n`` long
    tasks this is an error, unless ``allow_fewer``: then every one is taken
    (in a random order), as the paper scale does on a slice of the trace.
    """
    if n < 1:
        raise ValueError(f"number of tasks to sample must be ≥ 1, got {n}")
    keys = long_tasks.select(TASK_KEY).unique().sort(TASK_KEY)
    if keys.height < n and not (allow_fewer and keys.height):
        raise ValueError(f"asked for {n} long tasks but the data has only {keys.height}")
    n = min(n, keys.height)
    idx = rng.choice(keys.height, size=n, replace=False)
    return keys[idx]


def draw(
    values: np.ndarray, offsets: np.ndarray, n_realizations: int, rng: np.random.Generator, chunk_rows: int = 1024
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first_row, block)`` of the realization matrix, ``block`` float32 of shape (rows, R).

    Task ``j``'s records are ``values[offsets[j]:offsets[j+1]]``; each
    realization picks one of them uniformly (sampling from the empirical
    distribution). Chunking does not change the numbers.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    if np.any(lengths < 1):
        raise ValueError("every task needs at least one record")
    n = lengths.size
    for start in range(0, n, chunk_rows):
        stop = min(start + chunk_rows, n)
        u = rng.random((stop - start, n_realizations))
        pick = offsets[start:stop, None] + np.minimum(
            (u * lengths[start:stop, None]).astype(np.int64), lengths[start:stop, None] - 1
        )
        yield start, values[pick].astype(np.float32)


def realize(values: np.ndarray, offsets: np.ndarray, n_realizations: int, rng: np.random.Generator) -> np.ndarray:
    """The whole realization matrix in memory (small cases and tests)."""
    out = np.empty((np.diff(offsets).size, n_realizations), dtype=np.float32)
    for start, block in draw(values, offsets, n_realizations, rng):
        out[start : start + block.shape[0]] = block
    return out


def series_arrays(series: pl.DataFrame, chosen: pl.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Concatenate the chosen tasks' inst and avg records in the order of ``chosen``.

    Returns ``(inst_values, avg_values, offsets)`` for :func:`draw`.
    """
    order = chosen.with_row_index("_order")
    rows = series.join(order, on=TASK_KEY, how="inner").sort("_order", "start_time")
    lengths = rows.group_by("_order").len().sort("_order")
    if lengths.height != chosen.height:
        raise ValueError(f"{chosen.height - lengths.height} chosen task(s) have no series records")
    offsets = np.concatenate([[0], np.cumsum(lengths["len"].to_numpy().astype(np.int64))])
    return (
        rows["inst"].to_numpy().astype(np.float64),
        rows["avg"].to_numpy().astype(np.float64),
        offsets,
    )


def redraw(series: pl.DataFrame, chosen: pl.DataFrame, n_realizations: int, rng: np.random.Generator) -> np.ndarray:
    """The inst realization matrix of the ``chosen`` tasks (rows in its order), drawn again with ``n_realizations``.

    For an analysis that needs more realizations than the shared matrix holds
    (Janus Table 1: R = 10,000): the same tasks, a fresh draw from ``rng``.
    """
    inst, _, offsets = series_arrays(series, chosen)
    return realize(inst, offsets, n_realizations, rng)


def row_moments(matrix: np.ndarray, chunk_rows: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Mean and (population) variance of every row of a possibly memory-mapped N × R matrix, in float64.

    Row blocks of ``chunk_rows`` at a time, so that memory stays one block (a float64 copy of the whole
    100,000 × 10,000 paper-scale matrix would be 8 GB).
    """
    if matrix.ndim != 2 or chunk_rows < 1:
        raise ValueError(f"need a 2-d matrix and chunk_rows ≥ 1, got shape {matrix.shape} and {chunk_rows}")
    means = np.empty(matrix.shape[0])
    variances = np.empty(matrix.shape[0])
    for start in range(0, matrix.shape[0], chunk_rows):
        block = np.asarray(matrix[start : start + chunk_rows], dtype=np.float64)
        means[start : start + block.shape[0]] = block.mean(axis=1)
        variances[start : start + block.shape[0]] = block.var(axis=1)
    return means, variances


def realizations_summary(n_used: int, n_asked: int, n_realizations: int) -> pl.DataFrame:
    """The sample of long tasks the realizations were drawn for (Janus & Rzadca §3.1: N = 100,000 long tasks of
    R = 10,000 realizations each), for results/summary.md: N as drawn, which is fewer than asked when the trace
    holds fewer long tasks (every one is then used). N grows with the trace: not compared."""
    from colocate.report import summary
    from colocate.report.compare import Compare

    fewer = f"; the trace has only {n_used:,} long tasks, so every one is used" if n_used < n_asked else ""
    return summary.rows("Janus & Rzadca §3.1: preprocessing", [
        ("long tasks with realizations, N", "100,000", n_used,
         f"realizations.n_tasks = {n_asked:,}{fewer}; R = {n_realizations:,} realizations each (paper: 10,000)",
         Compare(item="§3.1", scale_dependent=True)),
    ])
