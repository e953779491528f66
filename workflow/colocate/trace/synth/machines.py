"""Machines and the machine_events table of the synthetic trace.

Capacities are in the proportions of Reiss et al. (SoCC'12, Table 1).
Removals follow Beaumont et al. §6: independent failures (negative binomial
counts per window), maintenance bursts shaped like §6's removal histogram,
the outstanding mass-removal and flapping events of §6, and removal
durations after Fig 7. ``machine_events`` draws the maintenance bursts, the
mass and the flapping events first, in that order, from the generator it is
given (tests replay those draws on a copy of the generator).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from colocate.trace import TRACE_START_US, WINDOW_US, MachineEventType
from colocate.trace.synth.draws import _allocate, _cast, _choice, hash_strings, inverse_cdf
from colocate.trace.synth.params import _MIN_US, _S_US, SynthParams


def sample_machines(p: SynthParams, rng: np.random.Generator) -> pl.DataFrame:
    """Machines with capacities in Reiss et al.'s (SoCC'12 Table 1) proportions.

    Columns: ``machine_id`` (distinct random integers like the trace's),
    ``platform_id`` (hashed platform name: 3 platforms), ``cpus``, ``memory``.
    """
    types = p.machine_types
    counts = _allocate(p.machines, np.array([t[0] for t in types], dtype=float))
    kind = rng.permutation(np.repeat(np.arange(len(types)), counts))
    ids = _distinct_ids(rng, p.machines, 1, 6_500_000_000)
    platforms = sorted({t[1] for t in types})
    hashed = dict(zip(platforms, hash_strings([f"platform:{name}" for name in platforms])))
    return pl.DataFrame(
        {
            "machine_id": ids,
            "platform_id": [hashed[types[k][1]] for k in kind],
            "cpus": np.array([types[k][2] for k in kind], dtype=float),
            "memory": np.array([types[k][3] for k in kind], dtype=float),
        }
    )


def _distinct_ids(rng: np.random.Generator, n: int, lo: int, hi: int) -> np.ndarray:
    ids = np.empty(0, dtype=np.int64)
    while ids.size < n:
        draw = rng.integers(lo, hi, size=2 * n + 16, dtype=np.int64)
        allv = np.concatenate([ids, draw])
        _, first = np.unique(allv, return_index=True)
        ids = allv[np.sort(first)]
    return ids[:n]


def machine_events(p: SynthParams, machines: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    """The machine_events table: an ADD at time 0 per machine, then removals and re-adds.

    Removals: independent Poisson failures and maintenance bursts (Beaumont §6),
    the three outstanding events of §6, durations after Fig 7. A machine that
    is already removed is not removed again. REMOVE rows have empty platform,
    CPU and memory fields, as in the trace.
    """
    n = machines.height
    others = [_maintenance_removals(p, n, rng), _mass_removals(p, n, rng), _flapping_removals(p, n, rng)]
    other = _cat3(*(list(x) for x in zip(*others)))
    # Beaumont's rate counts removals per window over all machines, removed or not: draws that hit a
    # machine already down are dropped, so the independent failures are topped up to the expected count
    expected = p.machine_failure_rate * n * p.windows
    independent = _independent_removals(p, n, rng, _window_counts(p, n, rng))
    for attempt in range(4):
        src = np.repeat([0, 1], [independent[0].size, other[0].size])
        mi, t_rem, t_add, src = _non_overlapping(*_cat3(*([a, b] for a, b in zip(independent, other))), src)
        deficit = expected - float((src == 0).sum())
        if deficit < 1 or attempt == 3:
            break
        extra = _independent_removals(p, n, rng, rng.poisson(deficit))
        independent = _cat3(*([a, b] for a, b in zip(independent, extra)))
    end = p.end_us
    readd = t_add < end
    ids = machines["machine_id"].to_numpy()
    plat = machines["platform_id"].to_numpy()
    cpus = machines["cpus"].to_numpy()
    mem = machines["memory"].to_numpy()
    add0 = pl.DataFrame(
        {"time": np.zeros(n, dtype=np.int64), "machine_id": ids, "event_type": np.full(n, int(MachineEventType.ADD)),
         "platform_id": plat, "cpus": cpus, "memory": mem}
    )
    rem = pl.DataFrame(
        {"time": t_rem, "machine_id": ids[mi], "event_type": np.full(mi.size, int(MachineEventType.REMOVE)),
         "platform_id": pl.Series([None] * mi.size, dtype=pl.String), "cpus": np.full(mi.size, np.nan),
         "memory": np.full(mi.size, np.nan)}
    )
    m2 = mi[readd]
    add = pl.DataFrame(
        {"time": t_add[readd], "machine_id": ids[m2], "event_type": np.full(m2.size, int(MachineEventType.ADD)),
         "platform_id": plat[m2], "cpus": cpus[m2], "memory": mem[m2]}
    )
    out = pl.concat([add0, rem, add]).with_columns(pl.col("cpus").fill_nan(None), pl.col("memory").fill_nan(None))
    return _cast(out.sort(["time", "event_type", "machine_id"], descending=[False, True, False]), "machine_events")


def removal_durations(p: SynthParams, rng: np.random.Generator, n: int) -> np.ndarray:
    """Removal durations in µs after Beaumont Fig 7 (``inf``: never re-added)."""
    minutes = inverse_cdf(rng.random(n), p.removal_duration_quantiles)
    return np.where(np.isinf(minutes), np.inf, minutes * _MIN_US)


_NEVER = np.iinfo(np.int64).max


def _with_durations(p, rng, mi, t_rem):
    """Re-add times after removal durations (Fig 7); ``_NEVER`` for machines that do not come back."""
    d = removal_durations(p, rng, mi.size)
    never = np.isinf(d)
    t_add = t_rem.astype(np.int64) + np.maximum(np.where(never, 0.0, d), 1e6).astype(np.int64)
    t_add[never] = _NEVER
    return mi.astype(np.int64), t_rem.astype(np.int64), t_add


def _window_counts(p: SynthParams, n: int, rng: np.random.Generator) -> np.ndarray:
    """Removals per window outside bursts: negative binomial with mean rate·n and variance/mean ``removal_dispersion``."""
    m = p.machine_failure_rate * n
    if p.removal_dispersion <= 1.0 or m <= 0:
        return rng.poisson(m, p.windows)
    r = m / (p.removal_dispersion - 1.0)
    return rng.negative_binomial(r, r / (r + m), p.windows)


def _independent_removals(p: SynthParams, n: int, rng: np.random.Generator, k):
    """Failures on uniform machines: ``k`` at uniform times, or ``k[w]`` uniform within each window w (Beaumont §6)."""
    if np.ndim(k) == 0:
        mi = rng.integers(0, n, k)
        t = rng.integers(TRACE_START_US, p.end_us, k)
    else:
        w = np.repeat(np.arange(k.size), k)
        mi = rng.integers(0, n, w.size)
        t = TRACE_START_US + w.astype(np.int64) * WINDOW_US + rng.integers(0, WINDOW_US, w.size)
    return _with_durations(p, rng, mi, t)


def _maintenance_removals(p: SynthParams, n: int, rng: np.random.Generator):
    """Maintenance bursts: windows with 10-30 removals (Beaumont §6's histogram tail)."""
    k = rng.poisson(p.maintenance_windows_per_day * p.days)
    sizes = np.array([r[0] for r in p.maintenance_burst_sizes], dtype=np.int64)
    # the ~1 background removal of the window tops the burst up; a burst has at least the table's smallest
    # size (10, Beaumont's definition of a maintenance window) even without one
    size = np.maximum(sizes[_choice(rng, k, [r[1] for r in p.maintenance_burst_sizes])] - 1, sizes.min())
    wins = rng.integers(0, p.windows, k)
    mi, t = [], []
    for s, w in zip(np.minimum(size, n), wins):
        mi.append(rng.choice(n, size=s, replace=False))
        t.append(TRACE_START_US + w * WINDOW_US + rng.integers(0, WINDOW_US, s))
    mi = np.concatenate(mi) if mi else np.empty(0, np.int64)
    t = np.concatenate(t) if t else np.empty(0, np.int64)
    return _with_durations(p, rng, mi, t)


def _event_start(p: SynthParams, rng: np.random.Generator, span_us: float) -> int:
    hi = max(TRACE_START_US + 1, p.end_us - int(span_us) - WINDOW_US)
    return int(rng.integers(TRACE_START_US, hi))


def _mass_removals(p: SynthParams, n: int, rng: np.random.Generator):
    """Outstanding events: many machines removed at 30 s intervals, then all re-added together (Beaumont §6).

    Like the real trace's: the machines go in ``mass_removal_batches`` batches over tens of minutes, stay down
    ``mass_removal_down_s`` after the last batch, and come back within ``mass_removal_readd_spread_s`` of
    each other.
    """
    mi, tr, ta = [], [], []
    k = int(round(p.mass_removal_share * n))
    removing = p.mass_removal_batches * p.mass_removal_interval_s * _S_US
    for _ in range(p.mass_removal_events):
        if k == 0:
            break
        t0 = _event_start(p, rng, removing + (p.mass_removal_down_s + p.mass_removal_readd_spread_s) * _S_US)
        m = rng.choice(n, size=k, replace=False)
        batch = np.arange(k) % p.mass_removal_batches
        t = t0 + (batch * p.mass_removal_interval_s * _S_US).astype(np.int64) + rng.integers(0, _S_US, k)
        back = t.max() + int(p.mass_removal_down_s * _S_US) + _S_US
        mi.append(m)
        tr.append(t)
        ta.append(back + rng.integers(0, int(p.mass_removal_readd_spread_s * _S_US) + 1, k))
    return _cat3(mi, tr, ta)


def _flapping_removals(p: SynthParams, n: int, rng: np.random.Generator):
    """Outstanding event: a subset removed and re-added many times in a row, until all are re-added together
    (Beaumont §6).

    Each machine runs ``flapping_cycles`` cycles of down and up times (uniform within
    ``flapping_down_minutes`` and ``flapping_up_minutes``), laid out backwards from its last re-add; the last
    re-adds fall within ``flapping_readd_spread_s`` of each other.
    """
    mi, tr, ta = [], [], []
    k = int(round(p.flapping_share * n))
    c = p.flapping_cycles
    for _ in range(p.flapping_events):
        if k == 0:
            break
        m = rng.choice(n, size=k, replace=False)
        down = (rng.uniform(*p.flapping_down_minutes, (k, c)) * _MIN_US).astype(np.int64)
        up = (rng.uniform(*p.flapping_up_minutes, (k, c)) * _MIN_US).astype(np.int64)
        up[:, 0] = 0  # up[:, j]: up time before cycle j's removal (none counted before the first)
        span = int((down + up).sum(axis=1).max())
        end = _event_start(p, rng, span + p.flapping_readd_spread_s * _S_US) + span
        last = end + rng.integers(0, int(p.flapping_readd_spread_s * _S_US) + 1, k)
        # re-add of cycle j: the last re-add less the later cycles' up and down times
        readd = last[:, None] - np.cumsum((down + up)[:, ::-1], axis=1)[:, ::-1] + down + up
        mi.append(np.repeat(m, c))
        tr.append((readd - down).ravel())
        ta.append(readd.ravel())
    return _cat3(mi, tr, ta)


def _cat3(a, b, c):
    if not a:
        e = np.empty(0, np.int64)
        return e, e.copy(), e.copy()
    return (np.concatenate(a).astype(np.int64), np.concatenate(b).astype(np.int64), np.concatenate(c).astype(np.int64))


def _non_overlapping(mi, t_rem, t_add, src):
    """Drop removals of a machine that is already removed (greedy in time order, per machine)."""
    df = pl.DataFrame({"m": mi, "r": t_rem, "a": t_add, "s": src}).sort(["m", "r", "a", "s"])
    while True:
        df = df.with_columns(
            pl.col("a").shift(1).cum_max().over("m").fill_null(-1).alias("_prev")
        ).with_columns((pl.col("r") <= pl.col("_prev")).alias("_bad"))
        if not df["_bad"].any():
            break
        first = pl.col("_bad") & (pl.col("_bad").cast(pl.Int64).cum_sum().over("m") == 1)
        df = df.filter(~first)
    df = df.sort(["r", "m"])
    return df["m"].to_numpy(), df["r"].to_numpy(), df["a"].to_numpy(), df["s"].to_numpy()
