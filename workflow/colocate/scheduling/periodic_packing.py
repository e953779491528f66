"""Packing periodic jobs (Beaumont et al. §8.2): First Fit under the phasor constraint Σc + ‖Σv‖ ≤ C.

A task's daily CPU pattern is a phasor, so tasks whose daily peaks fall at different times share a machine better
than their peaks suggest (the paper's eq. (6)). :func:`first_fit` packs the tasks in one order under each
:class:`PackingConstraint` — :class:`PhasorConstraint`, :class:`PeakConstraint` (every task's peak),
:class:`MeanConstraint` (the mean only) — and :func:`evaluate` loads each machine with its tasks' actual CPU series,
giving the overload each constraint misses.

Method: docs/methods.md#periodic-packing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import polars as pl
from scipy import sparse

from colocate.registry import Registry
from colocate.measure import measurement

#: Relative slack of the capacity test (float sums of many small tasks).
_TOL = 1e-12


# ----------------------------------------------------------------------------- items


def task_items(comps: pl.DataFrame) -> pl.DataFrame:
    """Tasks to pack, one row per task in First Fit order (Beaumont §8.2).

    ``comps`` holds per job ``job_id``, ``tasks_mean``, ``mean``,
    ``daily_amplitude`` and ``daily_phase_deg`` (:func:`colocate.analysis.periodicity.components`).
    Columns: ``job_id``, ``task``, ``n_tasks`` (n_i), ``c``, ``a`` (|v|),
    ``phase_deg``, ``job_row`` (the job's row in ``comps``). Jobs without a
    daily component (shorter than a day) get a = 0.
    """
    if comps.height == 0:
        return pl.DataFrame(
            schema={"job_id": pl.Int64, "task": pl.Int64, "n_tasks": pl.Int64, "c": pl.Float64, "a": pl.Float64,
                    "phase_deg": pl.Float64, "job_row": pl.Int64}
        )
    n = np.maximum(1, np.rint(comps["tasks_mean"].fill_null(1.0).to_numpy())).astype(np.int64)
    mean = comps["mean"].fill_null(0.0).to_numpy()
    amp = comps["daily_amplitude"].fill_null(0.0).to_numpy()
    phase = comps["daily_phase_deg"].fill_null(0.0).to_numpy()
    row = np.repeat(np.arange(comps.height), n)
    task = np.concatenate([np.arange(k) for k in n])
    items = pl.DataFrame(
        {
            "job_id": comps["job_id"].to_numpy()[row],
            "task": task,
            "n_tasks": n[row],
            "c": (mean / n)[row],
            "a": (amp / n)[row],
            "phase_deg": phase[row],
            "job_row": row,
        }
    )
    return items.sort(pl.col("c") + pl.col("a"), "job_id", "task", descending=[True, False, False])


def phasors(a: np.ndarray, phase_deg: np.ndarray) -> np.ndarray:
    """v = a·e^{−iφ}: the daily component c + a·cos(ωt − φ) is Re(c + v·e^{iωt})."""
    return np.asarray(a, dtype=np.float64) * np.exp(-1j * np.radians(phase_deg))


# ----------------------------------------------------------------------------- constraints


class PackingConstraint(Protocol):
    """A machine's worst-case load under a workload model: it accepts a set of tasks while this is ≤ C."""

    name: str

    def bound(self, c: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Worst-case load of machines whose tasks sum to Σc = ``c``, Σv = ``v`` (complex) and Σ|v| = ``a``."""
        ...


#: The packing constraints of Beaumont §8.2, strictest first.
CONSTRAINTS: Registry[PackingConstraint] = Registry("packing constraint", PackingConstraint)


@CONSTRAINTS.register
@dataclass(frozen=True)
class PeakConstraint:
    """Σ(c + |v|): every task provisioned at its own peak."""

    name: str = "peak"

    def bound(self, c: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        return c + a


@CONSTRAINTS.register
@dataclass(frozen=True)
class PhasorConstraint:
    """Beaumont eq. (6): Σc + ‖Σv‖, the exact maximum over time of the summed daily sinusoids."""

    name: str = "phasor"

    def bound(self, c: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        return c + np.abs(v)


@CONSTRAINTS.register
@dataclass(frozen=True)
class MeanConstraint:
    """Σc: every task provisioned at its mean."""

    name: str = "mean"

    def bound(self, c: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        return np.asarray(c, dtype=np.float64)


@dataclass
class MachineState:
    """Open machines and the sums Σc, Σv, Σ|v| of the tasks on each."""

    capacity: float
    size: int
    c: np.ndarray = field(init=False)
    v: np.ndarray = field(init=False)
    a: np.ndarray = field(init=False)
    open: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.c = np.zeros(self.size)
        self.v = np.zeros(self.size, dtype=np.complex128)
        self.a = np.zeros(self.size)

    def fits(self, constraint: PackingConstraint, c: float, v: complex, start: int = 0) -> np.ndarray:
        """Which of the open machines ``start``.. can take a task (c, v) under ``constraint``."""
        s = slice(start, self.open)
        load = constraint.bound(self.c[s] + c, self.v[s] + v, self.a[s] + abs(v))
        return load <= self.capacity * (1 + _TOL)

    def add(self, machine: int, c: float, v: complex) -> None:
        """Put a task on ``machine`` (opening it if it is the next one)."""
        if machine == self.open:
            self.open += 1
        self.c[machine] += c
        self.v[machine] += v
        self.a[machine] += abs(v)


def first_fit(
    c: np.ndarray, v: np.ndarray, constraint: PackingConstraint, capacity: float, group: np.ndarray | None = None
) -> tuple[np.ndarray, int]:
    """First Fit in the given order: each task goes to the first open machine that accepts it, else a new one.

    Returns the machine of each task and the number of tasks that exceed C on
    their own (each alone on a machine). ``group`` (e.g. the job of each
    task) marks identical consecutive tasks: a task identical to the previous
    one starts its search at the previous one's machine, since the machines
    before it rejected an identical task and have not changed since.
    """
    c = np.asarray(c, dtype=np.float64)
    v = np.asarray(v, dtype=np.complex128)
    if capacity <= 0:
        raise ValueError(f"capacity must be > 0, got {capacity}")
    state = MachineState(capacity, max(c.size, 1))
    out = np.empty(c.size, dtype=np.int64)
    oversize = 0
    prev = -1
    for i in range(c.size):
        same = group is not None and i > 0 and group[i] == group[i - 1] and c[i] == c[i - 1] and v[i] == v[i - 1]
        start = prev if same else 0
        ok = state.fits(constraint, c[i], v[i], start)
        if ok.any():
            m = start + int(np.argmax(ok))
        else:
            m = state.open
            if constraint.bound(np.array([c[i]]), np.array([v[i]]), np.array([abs(v[i])]))[0] > capacity * (1 + _TOL):
                oversize += 1
        state.add(m, c[i], v[i])
        out[i] = m
        prev = m
    return out, oversize


def machine_bounds(machine: np.ndarray, c: np.ndarray, v: np.ndarray, constraint: PackingConstraint) -> np.ndarray:
    """The constraint's bound of each machine of a packing."""
    k = int(machine.max()) + 1 if machine.size else 0
    sc = np.bincount(machine, weights=c, minlength=k)
    sv = np.bincount(machine, weights=v.real, minlength=k) + 1j * np.bincount(machine, weights=v.imag, minlength=k)
    sa = np.bincount(machine, weights=np.abs(v), minlength=k)
    return constraint.bound(sc, sv, sa)


# ----------------------------------------------------------------------------- evaluation on the actual series


def machine_loads(machine: np.ndarray, job_row: np.ndarray, n_tasks: np.ndarray, series: np.ndarray, chunk: int = 256):
    """Yield the actual CPU series of the machines, ``chunk`` machines at a time: Σ over tasks of job series / n_i."""
    k = int(machine.max()) + 1 if machine.size else 0
    # machines × jobs shares, sparse: a machine holds few jobs (duplicates add up)
    share = sparse.csr_matrix((1.0 / np.asarray(n_tasks, dtype=np.float64), (machine, job_row)), shape=(k, series.shape[0]))
    for s in range(0, k, chunk):
        yield np.asarray(share[s : s + chunk] @ series)


def evaluate(
    items: pl.DataFrame, machine: np.ndarray, series: np.ndarray, capacity: float, sample_points: int = 20_000
) -> tuple[dict[str, float], np.ndarray]:
    """Overload of a packing on the actual series (Beaumont §8.2's "total workload remains below capacity at all time").

    Returns the statistics (``overload_share``: machine-windows with load
    > C; ``machines_overloaded``: machines above C at least once;
    ``mean_excess``: mean (load − C)/C over the overloaded machine-windows;
    ``max_load``: the largest load over C) and, for the figure, load/C at
    up to ``sample_points`` machine-windows (every k-th window of every
    machine: deterministic).
    """
    if machine.size == 0:
        nan = float("nan")
        return {"overload_share": nan, "machines_overloaded": nan, "mean_excess": nan, "max_load": nan}, np.zeros(0)
    n_win = series.shape[1]
    k = int(machine.max()) + 1
    stride = max(1, -(-k * n_win // max(sample_points, 1)))
    over = 0
    excess = 0.0
    any_over = 0
    peak = 0.0
    sample = []
    loads = machine_loads(machine, items["job_row"].to_numpy(), items["n_tasks"].to_numpy().astype(np.float64), series)
    for block in loads:
        above = block > capacity
        over += int(above.sum())
        excess += float((block[above] - capacity).sum())
        any_over += int(above.any(axis=1).sum())
        peak = max(peak, float(block.max()))
        sample.append(block[:, ::stride].ravel() / capacity)
    return (
        {
            "overload_share": over / (k * n_win),
            "machines_overloaded": any_over / k,
            "mean_excess": excess / capacity / over if over else 0.0,
            "max_load": peak / capacity,
        },
        np.concatenate(sample),
    )


def pack(
    comps: pl.DataFrame, series: np.ndarray, capacities: list[float], sample_points: int = 20_000
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Beaumont §8.2 for every capacity and policy: machines used (First Fit) and overload on the actual series.

    ``series`` holds the jobs' CPU series in the rows of ``comps``. Returns
    the table (one row per capacity and policy: ``tasks``, ``jobs``,
    ``machines``, ``lower_bound`` = ⌈Σc/C⌉, ``oversize``, ``model_bound`` =
    the largest phasor bound of a machine over C, and :func:`evaluate`'s
    statistics) and the sampled loads (``capacity``, ``policy``, ``load_ratio``).
    """
    items = task_items(comps)
    c = items["c"].to_numpy()
    v = phasors(items["a"].to_numpy(), items["phase_deg"].to_numpy())
    group = items["job_id"].to_numpy()
    rows, samples = [], []
    for cap in capacities:
        for con in CONSTRAINTS.defaults():
            machine, oversize = first_fit(c, v, con, cap, group)
            stats, sample = evaluate(items, machine, series, cap, sample_points)
            bound = machine_bounds(machine, c, v, PhasorConstraint())
            rows.append(
                {
                    "capacity": float(cap),
                    "policy": con.name,
                    "tasks": items.height,
                    "jobs": comps.height,
                    "machines": int(machine.max()) + 1 if machine.size else 0,
                    "lower_bound": int(np.ceil(c.sum() / cap * (1 - 1e-12))) if c.size else 0,
                    "oversize": oversize,
                    "model_bound": float(bound.max() / cap) if bound.size else float("nan"),
                    **stats,
                }
            )
            samples.append(pl.DataFrame({"capacity": np.full(sample.size, float(cap)), "policy": con.name, "load_ratio": sample}))
    table = pl.DataFrame(rows).with_columns(pl.col(pl.Float64).fill_nan(None)) if rows else pl.DataFrame()
    loads = pl.concat(samples) if samples else pl.DataFrame(schema={"capacity": pl.Float64, "policy": pl.String, "load_ratio": pl.Float64})
    return table, loads


def measurements(table: pl.DataFrame) -> list[dict]:
    """Machines used and overload share per capacity, policies side by side, by the claim each answers
    (``workflow/papers/beaumont.tsv``; Beaumont §8.2 gives the model only). Machine counts grow with the number of
    jobs packed."""
    if table.height == 0:
        return [measurement("beaumont.s82.packing", None, "no long-running jobs to pack")]
    rows = []
    order = list(CONSTRAINTS.names())
    for (cap,), t in table.group_by("capacity", maintain_order=True):
        by = {r["policy"]: r for r in t.iter_rows(named=True)}
        rows.append(measurement(
            "beaumont.s82.machines", " / ".join(str(by[p]["machines"]) for p in order),
            f"First Fit Decreasing of {t['tasks'][0]} tasks of {t['jobs'][0]} jobs; ⌈Σc/C⌉ = {t['lower_bound'][0]}",
            capacity=cap))
        rows.append(measurement(
            "beaumont.s82.overload",
            " / ".join(f"{by[p]['overload_share']:.3g}" if by[p]["overload_share"] is not None else "nan" for p in order),
            "actual 5-minute CPU of each machine's tasks above C", capacity=cap))
    return rows
