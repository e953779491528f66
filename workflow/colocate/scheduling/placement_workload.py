"""Workloads of the placement simulator: the Table I experiment of Tantawi & Steinder §IV and requests from the trace.

* :class:`Experiment` is the paper's experiment (Table I, §IV): homogeneous nodes, pod types with a demand vector
  and an offered load, Poisson arrivals and exponential lifetimes in phases. ``arrival_mix`` picks a reading of the
  per-type arrival rates the paper does not give (``equal``, the default, or ``load``); ``load_factor`` scales
  every type's offered load (the default run's 0.93: README, "The placement load").
* :func:`analytic_demand` gives the mixture mean μ^dem and covariance Σ^dem of relative demand (Tables IV–V,
  "analytic").
* :func:`trace_requests` builds a two-resource request stream and a set of nodes from the trace.

Method (the arrival mixes, the lifetimes, the trace's requests): docs/methods.md#placement-workloads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from colocate.insufficient import require
from colocate.registry import ConfigError
from colocate.scheduling import placement as P
from colocate.scheduling.placement import Workload

#: Readings of the per-type arrival rates (``placement.arrival_mix``): docs/methods.md#placement-workloads.
ARRIVAL_MIXES = ("equal", "load")

#: µs per 5-minute window of task_usage (the task table counts records of this length).
WINDOW_S = 300.0


@dataclass(frozen=True)
class Phase:
    """Requests ``requests`` drawn from the pod ``types`` (each at its rate, :meth:`Experiment.arrival_rates`)."""

    types: tuple[str, ...]
    requests: int


@dataclass(frozen=True)
class Experiment:
    """The experiment of Tantawi & Steinder §IV (Table I): built from the ``placement`` config section.

    ``key`` prefixes the configuration key named in errors.
    """

    nodes: int
    resources: tuple[str, ...]
    capacity: tuple[float, ...]
    pod_types: Mapping[str, tuple[tuple[float, ...], float]]  # name -> (demand, offered load)
    phases: tuple[Phase, ...]
    load_resource: str = "cpu"
    arrival_rate: float = 1.0
    arrival_mix: str = "equal"
    load_factor: float = 1.0
    warmup: int = 60
    snapshot_pod: int = 3961
    key: str = "placement"

    @classmethod
    def from_config(cls, section: Mapping, key: str = "placement") -> Experiment:
        """From the ``placement`` section (a mapping; validated here, errors name the key)."""
        types = {
            name: (tuple(float(x) for x in spec["demand"]), float(spec["load"]))
            for name, spec in section["pod_types"].items()
        }
        phases = tuple(Phase(tuple(p["types"]), int(p["requests"])) for p in section["phases"])
        exp = cls(
            nodes=int(section["nodes"]),
            resources=tuple(section["resources"]),
            capacity=tuple(float(x) for x in section["capacity"]),
            pod_types=types,
            phases=phases,
            load_resource=section["load_resource"],
            arrival_rate=float(section["arrival_rate"]),
            arrival_mix=str(section.get("arrival_mix", "equal")),
            load_factor=float(section.get("load_factor", 1.0)),
            warmup=int(section["warmup"]),
            snapshot_pod=int(section["snapshot_pod"]),
            key=key,
        )
        exp.check()
        return exp

    def check(self) -> None:
        """Raise :class:`ConfigError` naming the key of the first inconsistent value."""
        k, r = self.key, len(self.resources)
        if len(set(self.resources)) != r:
            raise ConfigError(f"{k}.resources: names must be unique, got {list(self.resources)}")
        if len(self.capacity) != r:
            raise ConfigError(f"{k}.capacity: {len(self.capacity)} values for {r} resources {list(self.resources)}")
        if min(self.capacity) <= 0:
            raise ConfigError(f"{k}.capacity: every capacity must be positive, got {list(self.capacity)}")
        if self.load_resource not in self.resources:
            raise ConfigError(f"{k}.load_resource: {self.load_resource!r} is not one of {list(self.resources)}")
        load_r = self.resources.index(self.load_resource)
        for name, (demand, load) in self.pod_types.items():
            where = f"{k}.pod_types.{name}.demand"
            if len(demand) != r:
                raise ConfigError(f"{where}: {len(demand)} values for {r} resources {list(self.resources)}")
            if min(demand) < 0:
                raise ConfigError(f"{where}: demands must be non-negative, got {list(demand)}")
            over = [self.resources[i] for i in range(r) if demand[i] > self.capacity[i]]
            if over:
                raise ConfigError(
                    f"{where}: demand {list(demand)} exceeds the node capacity {list(self.capacity)} "
                    f"on {', '.join(over)}: no node could ever hold it"
                )
            if demand[load_r] <= 0:
                raise ConfigError(
                    f"{where}: the load is measured on {self.load_resource!r} ({k}.load_resource), "
                    f"so every pod type needs a positive {self.load_resource} demand"
                )
            if load <= 0:
                raise ConfigError(f"{k}.pod_types.{name}.load: must be positive, got {load}")
        if not self.phases:
            raise ConfigError(f"{k}.phases: at least one phase is needed")
        for i, ph in enumerate(self.phases):
            unknown = [t for t in ph.types if t not in self.pod_types]
            if unknown or not ph.types:
                raise ConfigError(
                    f"{k}.phases[{i}].types: {unknown or 'empty'} — known pod types: {list(self.pod_types)}"
                )
            if ph.requests < 1:
                raise ConfigError(f"{k}.phases[{i}].requests: must be at least 1, got {ph.requests}")
        total = self.total_requests
        if not 0 <= self.warmup < total:
            raise ConfigError(f"{k}.warmup: {self.warmup} must be below the {total} requests of {k}.phases")
        if not 1 <= self.snapshot_pod <= total:
            raise ConfigError(
                f"{k}.snapshot_pod: pod {self.snapshot_pod} is outside the {total} requests of {k}.phases"
            )
        if self.arrival_rate <= 0:
            raise ConfigError(f"{k}.arrival_rate: must be positive, got {self.arrival_rate}")
        if self.arrival_mix not in ARRIVAL_MIXES:
            raise ConfigError(f"{k}.arrival_mix: one of {list(ARRIVAL_MIXES)}, got {self.arrival_mix!r}")
        if not self.load_factor > 0:
            raise ConfigError(f"{k}.load_factor: must be positive, got {self.load_factor}")

    @property
    def total_requests(self) -> int:
        return sum(p.requests for p in self.phases)

    @property
    def capacity_matrix(self) -> np.ndarray:
        """N × R capacities of the homogeneous cluster."""
        return np.tile(np.asarray(self.capacity, dtype=np.float64), (self.nodes, 1))

    @property
    def type_names(self) -> list[str]:
        return list(self.pod_types)

    def demand_matrix(self) -> np.ndarray:
        """T × R demands of the pod types, in :attr:`type_names` order."""
        return np.array([self.pod_types[t][0] for t in self.type_names], dtype=np.float64)

    def loads(self) -> np.ndarray:
        """Offered load ρ_k of each pod type (type_names order): Table I's "Load" × ``load_factor``."""
        return self.load_factor * np.array([self.pod_types[t][1] for t in self.type_names])

    def arrival_rates(self, arrival_mix: str | None = None) -> np.ndarray:
        """λ_k of each pod type (type_names order) under ``arrival_mix`` (default: this experiment's).

        ``equal``: λ_k = λ. ``load``: λ_k = λ · ρ_k / ρ̄, ρ̄ the mean load of the types that occur in
        the phases (so λ_k = λ on average over them; a type in no phase gets the same formula).
        """
        mix = self.arrival_mix if arrival_mix is None else arrival_mix
        if mix not in ARRIVAL_MIXES:
            raise ValueError(f"arrival_mix: one of {list(ARRIVAL_MIXES)}, got {mix!r}")
        if mix == "equal":
            return np.full(len(self.pod_types), self.arrival_rate)
        loads = self.loads()
        used = sorted({self.type_names.index(t) for ph in self.phases for t in ph.types})
        return self.arrival_rate * (loads / loads[used].mean())

    def mean_lifetimes(self) -> np.ndarray:
        """τ_k = ρ_k · N · c_load / (λ_k · d_k,load): type k then offers load ρ_k on the load resource."""
        r = self.resources.index(self.load_resource)
        cap = self.nodes * self.capacity[r]
        return self.loads() * cap / (self.arrival_rates() * self.demand_matrix()[:, r])

    def offered_load(self, phase: int) -> np.ndarray:
        """Offered utilisation per resource in a phase: Σ_k λ_k τ_k d_k / (N c) (Fig. 1's plateaus)."""
        tau = self.mean_lifetimes()
        lam = self.arrival_rates()
        dem = self.demand_matrix()
        idx = [self.type_names.index(t) for t in self.phases[phase].types]
        busy = (lam[idx, None] * tau[idx, None] * dem[idx]).sum(axis=0)
        return busy / (self.nodes * np.asarray(self.capacity))

    def mix(self, phase: int, arrival_mix: str = "equal") -> np.ndarray:
        """Probability of each pod type (type_names order) among the arrivals of a phase, λ_k / Σ λ_j.

        The default is the equal mix whatever this experiment's ``arrival_mix``: it is the mix of
        Tables IV–V's "analytic" row (one third of each type in phase III). Pass
        ``self.arrival_mix`` for the mix of the generated stream.
        """
        if arrival_mix not in ARRIVAL_MIXES:
            raise ValueError(f"arrival_mix: one of {list(ARRIVAL_MIXES)}, got {arrival_mix!r}")
        weight = self.loads() if arrival_mix == "load" else np.ones(len(self.pod_types))  # ∝ λ_k
        p = np.zeros(len(self.pod_types))
        for t in self.phases[phase].types:
            i = self.type_names.index(t)
            p[i] = weight[i]
        return p / p.sum()

    def workload(self, rng: np.random.Generator) -> Workload:
        """One realisation: Poisson arrivals (rate Σ λ_k over the types present), type k with
        probability λ_k / Σ λ_j (uniform for ``equal``), exponential lifetime of mean τ_k."""
        tau = self.mean_lifetimes()
        lam = self.arrival_rates()
        dem = self.demand_matrix()
        times, kinds, phases = [], [], []
        clock = 0.0
        for i, ph in enumerate(self.phases):
            idx = np.array([self.type_names.index(t) for t in ph.types])
            # equal: the original draws (rng.integers), so equal-mix streams are unchanged
            rate = self.arrival_rate * idx.size if self.arrival_mix == "equal" else lam[idx].sum()
            gaps = rng.exponential(1.0 / rate, ph.requests)
            t = clock + np.cumsum(gaps)
            clock = float(t[-1])
            times.append(t)
            if self.arrival_mix == "equal":
                kinds.append(idx[rng.integers(idx.size, size=ph.requests)])
            else:
                kinds.append(idx[rng.choice(idx.size, size=ph.requests, p=lam[idx] / rate)])
            phases.append(np.full(ph.requests, i))
        kind = np.concatenate(kinds)
        lifetime = rng.exponential(tau[kind])
        names = np.array(self.type_names)
        return Workload(
            time=np.concatenate(times),
            demand=dem[kind],
            lifetime=lifetime,
            kind=names[kind],
            phase=np.concatenate(phases) + 1,
        )


def analytic_demand(demands: np.ndarray, probs: np.ndarray, cbar: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """μ^dem and Σ^dem of relative demand v = d / c̄ for a mix of types (Tables IV–V, "analytic").

    ``demands`` is T × R, ``probs`` the probability of each type among arrivals.
    """
    v = np.asarray(demands, dtype=np.float64) / np.asarray(cbar, dtype=np.float64)
    p = np.asarray(probs, dtype=np.float64)
    p = p / p.sum()
    mu = p @ v
    return mu, (v * p[:, None]).T @ v - np.outer(mu, mu)


# ----------------------------------------------------------------------------- trace-driven

#: Terminal task events (EVICT, FAIL, FINISH, KILL, LOST).
_TERMINAL = (2, 3, 4, 5, 6)


def trace_nodes(machine_events: pl.DataFrame, n_machines: int, rng: np.random.Generator) -> pl.DataFrame:
    """``n_machines`` machines drawn without replacement from those added at the start of the trace.

    Capacities (cpus, memory) are those of each machine's first ADD event (normalised, as the
    trace publishes them). Machines with a missing capacity are skipped.
    """
    first = (
        machine_events.filter(pl.col("event_type") == 0)
        .sort("time", "machine_id")
        .group_by("machine_id", maintain_order=True)
        .first()
        .drop_nulls(["cpus", "memory"])
        .filter((pl.col("cpus") > 0) & (pl.col("memory") > 0))
    )
    initial = first.filter(pl.col("time") == first["time"].min()).sort("machine_id")
    pool = initial if initial.height >= n_machines else first.sort("machine_id")
    if pool.height < n_machines:
        raise ConfigError(
            f"placement.trace.machines: {n_machines} machines asked, machine_events has {pool.height} with capacities"
        )
    pick = np.sort(rng.choice(pool.height, size=n_machines, replace=False))
    return pool[pick].select("machine_id", "cpus", "memory")


def task_arrivals(task_events: pl.DataFrame) -> pl.DataFrame:
    """Per task: first SUBMIT time (µs) with its CPU and memory request, first SCHEDULE, last terminal event."""
    submit = (
        task_events.filter(pl.col("event_type") == 0)
        .sort("time", "job_id", "task_index")
        .group_by("job_id", "task_index", maintain_order=True)
        .first()
        .select("job_id", "task_index", pl.col("time").alias("submit"), "cpu_request", "memory_request")
    )
    bounds = task_events.group_by("job_id", "task_index").agg(
        pl.col("time").filter(pl.col("event_type") == 1).min().alias("schedule"),
        pl.col("time").filter(pl.col("event_type").is_in(_TERMINAL)).max().alias("end"),
    )
    return submit.join(bounds, on=["job_id", "task_index"], how="left")


def trace_requests(
    arrivals: pl.DataFrame,
    task_stats: pl.DataFrame,
    nodes: pl.DataFrame,
    *,
    n_requests: int,
    offered_load: float,
    lifetime: str,
    rng: np.random.Generator,
) -> tuple[pl.DataFrame, dict[str, float]]:
    """A two-resource request stream (cpu, memory) from the trace, replayed at a given offered CPU load.

    The population is every task submitted in the task_events read (a SUBMIT event) with positive
    requests, over the span of those events, not only the tasks task_usage saw. Lifetimes are
    ``n_records × 300 s`` where the task table (kept by the reduce) has the task and otherwise last
    terminal event − first SCHEDULE (``lifetime="usage"``), or always the latter (``"events"``); a task
    with neither is left out. ``n_requests`` tasks are drawn
    without replacement, ordered by submit time; requests larger than every node on some
    resource are dropped (no policy could place them). The arrival times are then scaled by one
    factor so that the offered CPU load on the nodes, Σ_k cpu_k L_k / (T · Σ_n cpu_n), equals
    ``offered_load``: the trace's request mix and burstiness at the load of Table I's phase III.

    Returns the request frame (columns of :meth:`Workload.to_frame` for resources cpu, memory,
    plus job_id, task_index) and facts for the log and the table.
    """
    if lifetime not in ("usage", "events"):
        raise ConfigError(f"placement.trace.lifetime: 'usage' or 'events', got {lifetime!r}")
    cap = nodes.select("cpus", "memory").to_numpy()
    eligible, too_big = _placeable_tasks(arrivals, task_stats, lifetime, cap)
    frame, facts = replay_requests(eligible, too_big, cap, n_requests=n_requests, offered_load=offered_load, rng=rng)
    from_usage = int(eligible["from_usage"].sum())
    return frame, {**facts, "lifetimes_from_usage": float(from_usage), "lifetimes_from_events": float(eligible.height - from_usage),
                   "submit_span_h": float(eligible["submit"].max() - eligible["submit"].min()) / 3.6e9}


def replay_requests(
    eligible: pl.DataFrame, too_big: int, cap: np.ndarray, *, n_requests: int, offered_load: float, rng: np.random.Generator
) -> tuple[pl.DataFrame, dict[str, float]]:
    """The request stream of :func:`trace_requests` from placeable requests of any trace.

    ``eligible`` holds ``submit`` (µs), ``cpu_request``, ``memory_request``, ``lifetime`` (s), ``job_id`` and
    ``task_index``, sorted by submit, each fitting some node of ``cap`` (nodes × (cpu, memory)); ``too_big``
    counts those that did not. ``n_requests`` are drawn without replacement and their arrival times scaled so
    that the offered CPU load is ``offered_load``.
    """
    n = min(n_requests, eligible.height)
    chosen = eligible[np.sort(rng.choice(eligible.height, size=n, replace=False))]
    submit_s = (chosen["submit"].to_numpy() - chosen["submit"][0]) / 1e6
    span = float(submit_s[-1])
    require(
        span > 0,
        f"the {n} sampled tasks were all submitted at the same instant ({chosen['submit'][0] / 1e6:g} s; "
        "0 means before the trace began), so there is no arrival process to replay",
        "requests submitted at different times during the trace (Google: task_usage beyond its first 5-minute "
        "window, after the start at 600 s; Azure: VMs created after the trace start)",
    )
    cpu, memory, life = (chosen[c].to_numpy() for c in ("cpu_request", "memory_request", "lifetime"))
    natural_load = float((cpu * life).sum()) / (span * cap[:, 0].sum())
    scale = natural_load / offered_load
    frame = pl.DataFrame(
        {
            "request": np.arange(n),
            "time": submit_s * scale,
            "kind": np.zeros(n, dtype=np.int64).astype(str),
            "phase": np.ones(n, dtype=np.int64),
            "d_cpu": cpu,
            "d_memory": memory,
            "lifetime": life,
            "job_id": chosen["job_id"].to_numpy(),
            "task_index": chosen["task_index"].to_numpy(),
        }
    )
    facts = {
        "tasks_eligible": float(eligible.height),
        "tasks_too_big": float(too_big),
        "requests": float(n),
        "natural_cpu_load": natural_load,
        "time_scale": scale,
        "offered_cpu_load": offered_load,
        "offered_memory_load": float((memory * life).sum() / (span * scale * cap[:, 1].sum())),
    }
    return frame, facts


def placeable(tasks: pl.DataFrame, cap: np.ndarray) -> tuple[pl.DataFrame, int]:
    """The requests (``cpu_request``, ``memory_request``) of ``tasks`` that fit some node of ``cap``, and how many
    do not (no policy could place them)."""
    fits = (tasks["cpu_request"].to_numpy()[:, None] <= cap[None, :, 0]) & (
        tasks["memory_request"].to_numpy()[:, None] <= cap[None, :, 1]
    )
    too_big = ~fits.any(axis=1)
    return tasks.filter(pl.Series(~too_big)), int(too_big.sum())


def _placeable_tasks(
    arrivals: pl.DataFrame, task_stats: pl.DataFrame, lifetime: str, cap: np.ndarray
) -> tuple[pl.DataFrame, int]:
    """Tasks with a SUBMIT, positive requests and lifetime that fit some node, by submit time (``from_usage``: the
    lifetime is the task table's); and how many don't fit."""
    tasks = arrivals.join(task_stats.select("job_id", "task_index", "n_records"), on=["job_id", "task_index"], how="left")
    from_events = (pl.col("end") - pl.col("schedule")).cast(pl.Float64) / 1e6
    from_usage = pl.col("n_records").cast(pl.Float64) * WINDOW_S if lifetime == "usage" else pl.lit(None, pl.Float64)
    tasks = tasks.with_columns(lifetime=pl.coalesce(from_usage, from_events), from_usage=from_usage.is_not_null())
    tasks = (
        tasks.drop_nulls(["lifetime", "cpu_request", "memory_request"])
        .filter((pl.col("lifetime") > 0) & (pl.col("cpu_request") > 0) & (pl.col("memory_request") > 0))
        .sort("submit", "job_id", "task_index")
    )
    eligible, too_big = placeable(tasks, cap)
    require(
        eligible.height >= 2,
        f"only {eligible.height} task(s) have a SUBMIT event, requests and a lifetime (in the task table, or a SCHEDULE "
        "and an end in task_events)",
        "task_events with at least two placeable tasks submitted, and their usage or ends",
    )
    return eligible, too_big


def policy_specs(
    entries: Sequence[str | Mapping], resources: Sequence[str], prime_resource: str, weights: Sequence[float], key: str
) -> list[dict]:
    """Check the policy settings of one run (errors name ``key``) and return keyword sets for make_policy.

    An entry is a policy's config name or plug-in ``module:Class``, or a one-key mapping from either to
    the class's own options. Each policy is built once here, so a plug-in that doesn't fit the
    :class:`~colocate.scheduling.placement.PlacementPolicy` protocol fails at start-up.
    """
    if prime_resource not in resources:
        raise ConfigError(f"{key}.prime_resource: {prime_resource!r} is not one of {list(resources)}")
    if len(weights) != len(resources):
        raise ConfigError(
            f"{key}.xbalance_weights: {len(weights)} weights for {len(resources)} resources {list(resources)}"
        )
    specs = []
    for entry in entries:
        if isinstance(entry, Mapping):
            if len(entry) != 1:
                raise ConfigError(f"{key}.policies: a mapping entry names one policy with its options, got {dict(entry)}")
            (kind, own), = entry.items()
        else:
            kind, own = entry, None
        specs.append({"kind": kind, "prime_resource": list(resources).index(prime_resource), "weights": list(weights),
                      "own": dict(own or {})})
    kinds = [s["kind"] for s in specs]
    if len(set(kinds)) != len(kinds) or not kinds:
        raise ConfigError(f"{key}.policies: a non-empty list without repeats, got {kinds}")
    for s in specs:
        P.make_policy(s["kind"], prime_resource=s["prime_resource"], weights=s["weights"], own=s["own"],
                      key=f"{key}.policies")
    return specs
