"""Shared helpers of the synthetic trace model: random generators and draws, per-owner statistics, the output schema.

:func:`_rngs` spawns one independent generator per mechanism from the seed,
so that changing how one mechanism draws leaves the others' draws unchanged;
:func:`inverse_cdf` samples the papers' quantile tables (Beaumont Table 3,
Fig 7, Table 4) and :func:`_mixture_inverse` their log-normal mixtures
(Beaumont Table 2). Arrays of rows grouped by an owner (records of a task,
tasks of a job) are summarised by :func:`_segments`, :func:`_group_mean` and
:func:`_group_var`; :func:`_cast` gives a frame exactly a trace table's columns.
"""

from __future__ import annotations

import base64
import hashlib

import numpy as np
import polars as pl
from scipy.special import ndtr

from colocate.trace import polars_schema


def _rngs(seed: int) -> dict[str, np.random.Generator]:
    """One independent generator per mechanism, spawned from ``seed`` in a fixed order.

    Changing how one mechanism draws leaves the others' draws unchanged.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    names = ("machines", "failures", "jobs", "small", "tasks", "usage", "memory", "events", "aux", "names")
    children = np.random.SeedSequence(int(seed)).spawn(len(names))
    return {n: np.random.default_rng(s) for n, s in zip(names, children)}


def hash_strings(values: list[str]) -> list[str]:
    """Base64 SHA-256 of each string: 44 characters ending in '=', like the trace's hashed fields."""
    return [base64.b64encode(hashlib.sha256(v.encode()).digest()).decode() for v in values]


def inverse_cdf(u: np.ndarray, table: list) -> np.ndarray:
    """Sample by inverse CDF with log-linear interpolation between [quantile, value] points.

    ``u`` above the last quantile gives ``inf`` (e.g. "runs the whole trace").
    """
    q = np.array([r[0] for r in table], dtype=float)
    logv = np.log(np.array([r[1] for r in table], dtype=float))
    out = np.exp(np.interp(u, q, logv))
    return np.where(u > q[-1], np.inf, out)


def stratified(u: np.ndarray, group: np.ndarray) -> np.ndarray:
    """``u`` with the g uniforms of ``group`` replaced by the midpoints (i + ½)/g of g equal strata, in the order of their ranks.

    Few draws from a quantile table scatter widely (15 jobs from Table 4's noise column: the mean falls outside
    2 SE of Table 4's in a quarter of seeds); stratified, they follow the table's distribution, and each member
    still takes a random stratum. The others keep their draws, and no extra random number is used.
    """
    out = np.array(u, dtype=float)
    idx = np.flatnonzero(group)
    if idx.size:
        ranks = np.argsort(np.argsort(out[idx], kind="stable"), kind="stable")
        out[idx] = (ranks + 0.5) / idx.size
    return out


def _mixture_inverse(u: np.ndarray, mix: list) -> np.ndarray:
    """Inverse CDF of a Gaussian mixture [[w, mu, sigma], ...], by interpolation on a fine grid."""
    w = np.array([c[0] for c in mix])
    mu = np.array([c[1] for c in mix])
    sd = np.array([c[2] for c in mix])
    grid = np.linspace((mu - 9 * sd).min(), (mu + 9 * sd).max(), 20001)
    cdf = (w[None, :] * ndtr((grid[:, None] - mu[None, :]) / sd[None, :])).sum(axis=1)
    cdf, idx = np.unique(cdf, return_index=True)
    return np.interp(u, cdf, grid[idx])


def _choice(rng: np.random.Generator, n: int, weights: list | np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    return rng.choice(len(w), size=n, p=w / w.sum())


def _allocate(total: int, weights: np.ndarray) -> np.ndarray:
    """Split ``total`` in proportion to ``weights`` (largest remainder; deterministic)."""
    w = np.asarray(weights, dtype=float)
    exact = total * w / w.sum()
    base = np.floor(exact).astype(np.int64)
    rest = total - base.sum()
    order = np.argsort(-(exact - base), kind="stable")
    base[order[:rest]] += 1
    return base


def _segments(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row -> owner index and row -> position within owner, for owners with ``counts`` rows each."""
    counts = np.asarray(counts, dtype=np.int64)
    owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    pos = np.arange(owner.size, dtype=np.int64) - starts[owner]
    return owner, pos


def _group_mean(owner: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    cnt = np.bincount(owner, minlength=n)
    s = np.bincount(owner, weights=values, minlength=n)
    return np.divide(s, cnt, out=np.zeros(n), where=cnt > 0)


def _group_var(owner: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    m = _group_mean(owner, values, n)
    return np.maximum(_group_mean(owner, values * values, n) - m * m, 0.0)


def _mean1_lognormal(rng: np.random.Generator, sigma, size: int) -> np.ndarray:
    """Log-normal draws with mean 1 and log-sd ``sigma`` (scalar or per draw)."""
    sigma = np.asarray(sigma, dtype=float)
    return np.exp(rng.standard_normal(size) * sigma - 0.5 * sigma**2)


def _cast(df: pl.DataFrame, table: str) -> pl.DataFrame:
    """Exactly the table's columns, in file order, with the reader's dtypes."""
    schema = polars_schema(table)
    return df.select([pl.col(c).cast(t) for c, t in schema.items()])
