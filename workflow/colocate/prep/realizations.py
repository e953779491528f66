"""Realizations of long tasks' CPU usage (Janus & Rzadca §3.1).

For each of N sampled long tasks, R realizations are drawn from the task's
empirical distribution X_i (resp. Y_i for 5-minute averages), under the
time-invariance assumption of §3.1. Summing realizations of co-located tasks
then gives samples of their total usage.

Random streams: one seed gives the task sample's stream and, for each task, its
own inst and avg streams (:func:`task_stream`). So the matrix is drawn a bucket
at a time with the bytes of a whole draw: on the full trace the chosen tasks'
series (~100-200 M records) would not fit in memory at once.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import polars as pl

from colocate.prep.tasks import TASK_KEY

KINDS = ("inst", "avg")


def choose_stream(seed: int) -> np.random.Generator:
    """The generator of the task sample, from ``seed``."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])


def task_stream(seed: int, kind: str, job_id: int, task_index: int) -> np.random.Generator:
    """Task (job_id, task_index)'s own generator of ``kind`` draws ("inst", "avg", or an analysis's name).

    A task's realizations depend only on the seed, the kind, the task and its records: not on the bucket that
    holds it, on how many tasks are sampled, or on the order in which tasks are drawn. So the matrix can be drawn
    a bucket at a time, and the same task gets the same row of draws whatever N or B.
    """
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(kind.encode()), job_id, task_index]))


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


@dataclass(frozen=True)
class Block:
    """Realizations of some of the chosen tasks: matrix ``rows``, their ``n_records`` and, per kind, the float32
    draws of shape (len(rows), R)."""

    rows: np.ndarray
    n_records: np.ndarray
    draws: dict[str, np.ndarray]


def realize_blocks(
    series: pl.DataFrame, chosen: pl.DataFrame, n_realizations: int, seed: int,
    kinds: tuple[str, ...] = KINDS, chunk_rows: int = 1024,
) -> Iterator[Block]:
    """Draw the realizations of the chosen tasks found in ``series`` (for example one bucket's), ``chunk_rows``
    tasks at a time.

    ``chosen`` holds the sample's keys and its matrix ``row``; ``series`` a task's records (``start_time`` and
    one column per kind). Each realization of a task picks one of its records uniformly: a draw from its
    empirical distribution (Janus & Rzadca §3.1), from the task's own :func:`task_stream`.
    """
    rows = series.join(chosen.select(*TASK_KEY, "row"), on=TASK_KEY, how="inner").sort("row", "start_time")
    tasks = rows.group_by("row", maintain_order=True).agg(pl.len().alias("n"), pl.first("job_id"), pl.first("task_index"))
    offsets = np.concatenate([[0], np.cumsum(tasks["n"].to_numpy().astype(np.int64))])
    values = {k: rows[k].to_numpy().astype(np.float64) for k in kinds}
    job_ids, task_indices, matrix_rows = (tasks[c].to_numpy() for c in ("job_id", "task_index", "row"))
    for start in range(0, tasks.height, chunk_rows):
        stop = min(start + chunk_rows, tasks.height)
        draws = {k: np.empty((stop - start, n_realizations), dtype=np.float32) for k in kinds}
        for j in range(start, stop):
            own = slice(offsets[j], offsets[j + 1])
            for k in kinds:
                u = task_stream(seed, k, int(job_ids[j]), int(task_indices[j])).random(n_realizations)
                pick = np.minimum((u * (own.stop - own.start)).astype(np.int64), own.stop - own.start - 1)
                draws[k][j - start] = values[k][own][pick]
        yield Block(matrix_rows[start:stop].astype(np.int64), np.diff(offsets[start : stop + 1]), draws)


def realize_buckets(
    buckets: Iterable[pl.DataFrame], chosen: pl.DataFrame, n_realizations: int, seed: int,
    kinds: tuple[str, ...] = KINDS, chunk_rows: int = 1024,
) -> Iterator[Block]:
    """:func:`realize_blocks` over the buckets' series in turn, so that memory holds one bucket's records of the
    chosen tasks and one block of draws. At the end every chosen task must have been drawn exactly once: a task
    without records, or with records in two buckets, is an error."""
    drawn = np.zeros(chosen.height, dtype=np.int64)
    for series in buckets:
        for block in realize_blocks(series, chosen, n_realizations, seed, kinds, chunk_rows):
            if drawn[block.rows].any():
                raise ValueError(f"{int(np.count_nonzero(drawn[block.rows]))} chosen task(s) have records in more than one bucket")
            drawn[block.rows] = block.n_records
            yield block
    if (missing := int(np.count_nonzero(drawn == 0))) > 0:
        raise ValueError(f"{missing} chosen task(s) have no series records")


def fill(matrices: dict[str, np.ndarray], buckets: Iterable[pl.DataFrame], chosen: pl.DataFrame, n_realizations: int,
         seed: int, chunk_rows: int = 1024) -> np.ndarray:
    """Draw every chosen task's realizations (:func:`realize_buckets`) into ``matrices`` (one N × R array, possibly
    memory-mapped, per kind) at the tasks' ``row``. Returns each row's number of records."""
    n_records = np.zeros(chosen.height, dtype=np.int64)
    for block in realize_buckets(buckets, chosen, n_realizations, seed, tuple(matrices), chunk_rows):
        for kind, matrix in matrices.items():
            matrix[block.rows] = block.draws[kind]
        n_records[block.rows] = block.n_records
    return n_records


def realize(series: pl.DataFrame, chosen: pl.DataFrame, n_realizations: int, seed: int, column: str = "inst",
            stream: str | None = None) -> np.ndarray:
    """The whole realization matrix of ``column`` for the ``chosen`` tasks (rows in its order), in memory.

    For small cases, and for an analysis that needs more realizations than the shared matrix holds (Janus
    Table 1: R = 10,000): it names its own ``stream``, so that its draws are independent of the matrix's.
    """
    stream = stream or column
    chosen = chosen.select(TASK_KEY).with_row_index("row")
    out = np.empty((chosen.height, n_realizations), dtype=np.float32)
    fill({stream: out}, [series.select(*TASK_KEY, "start_time", pl.col(column).alias(stream))], chosen, n_realizations, seed)
    return out


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


def realizations_measurements(n_used: int, n_asked: int, n_realizations: int) -> list[dict]:
    """The sample of long tasks the realizations were drawn for (Janus & Rzadca §3.1), by the claim it answers: N
    as drawn, which is fewer than asked when the trace holds fewer long tasks (every one is then used)."""
    from colocate.measure import measurement

    fewer = f"; the trace has only {n_used:,} long tasks, so every one is used" if n_used < n_asked else ""
    return [measurement("janus.s31.realizations_n", n_used,
                        f"realizations.n_tasks = {n_asked:,}{fewer}; R = {n_realizations:,} realizations each")]
