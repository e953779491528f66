"""Runs of the placement simulator: one replicate of §IV's experiment, the BSA comparison, the trace-driven run.

Each function takes the experiment's description and seeds and returns DataFrames; the rule
scripts only read and write them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl
import polars.selectors as cs

from colocate.scheduling import placement as P
from colocate.scheduling.placement_workload import Experiment


def policies(specs: Sequence[Mapping], alpha: float) -> list[P.PlacementPolicy]:
    """Fresh policy objects from the specs of :func:`colocate.scheduling.placement_workload.policy_specs`."""
    return [
        P.make_policy(s["kind"], prime_resource=s["prime_resource"], weights=s["weights"], alpha=alpha, own=s.get("own"))
        for s in specs
    ]


def run_replicate(
    exp: Experiment,
    specs: Sequence[Mapping],
    *,
    seed: int,
    replicate: int,
    alpha: float,
    optimiser: str = "exhaustive",
    tie_break: str = "first",
    bsa: Mapping | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every policy on replicate ``replicate``'s request stream (the same for all policies).

    Returns the stacked per-request logs (columns ``replicate``, ``policy`` first) and the
    snapshot after pod ``exp.snapshot_pod`` (replicate, policy, node, u_<resource>…).
    """
    wl = exp.workload(P.stream(seed, replicate, "workload"))
    logs, snaps = [], []
    for pol in policies(specs, alpha):
        opt = P.make_optimiser(optimiser, tie_break=tie_break, **(bsa or {}))
        res = P.simulate(
            exp.capacity_matrix, wl, pol, opt, P.stream(seed, replicate, f"policy:{pol.name}"),
            resources=exp.resources, demand_alpha=alpha, snapshot=exp.snapshot_pod - 1,
        )
        head = {"replicate": replicate, "policy": pol.name}
        logs.append(res.requests.select(*(pl.lit(v).alias(k) for k, v in head.items()), pl.all()))
        snap = pl.DataFrame({"node": np.arange(exp.nodes)} | {f"u_{r}": res.snapshot[:, i] for i, r in enumerate(exp.resources)})
        snaps.append(snap.select(*(pl.lit(v).alias(k) for k, v in head.items()), pl.all()))
    return pl.concat(logs), pl.concat(snaps)


def snapshot_matrices(snapshot: pl.DataFrame, resources: Sequence[str]) -> dict[str, np.ndarray]:
    """Policy → N × R utilisation matrix of a snapshot frame (nodes in index order)."""
    out = {}
    for (policy,), g in snapshot.sort("node", maintain_order=True).group_by("policy", maintain_order=True):
        out[policy] = g.select(f"u_{r}" for r in resources).to_numpy()
    return out


def compare_optimisers(
    exp: Experiment,
    specs: Sequence[Mapping],
    *,
    seed: int,
    replicate: int,
    alpha: float,
    tie_break: str,
    bsa: Mapping,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """BSA against the exact argmin, per policy, on one replicate.

    Each policy runs with the exhaustive optimiser while BSA, and an unbiased sampler of the same
    budget (uniform draws without replacement: what the biasing buys), shadow every decision
    (the agreement rate: the shadow's choice has the exact minimum objective); and again with
    BSA making the decisions (its rejection rate). Returns the deterministic
    comparison table and the timing table (wall-clock µs per decision, machine-dependent).
    """
    wl = exp.workload(P.stream(seed, replicate, "workload"))
    rows, times = [], []
    budget = bsa["samples"] * bsa["iterations"]
    for pol_exact, pol_bsa in zip(policies(specs, alpha), policies(specs, alpha)):
        name = pol_exact.name
        shadow = P.Shadow(P.BiasedSampling(**bsa), P.stream(seed, replicate, f"bsa:{name}"))
        uniform = P.Shadow(P.BiasedSampling(samples=budget, iterations=1), P.stream(seed, replicate, f"uniform:{name}"))
        exact = P.simulate(
            exp.capacity_matrix, wl, pol_exact, P.Exhaustive(tie_break), P.stream(seed, replicate, f"policy:{name}"),
            resources=exp.resources, demand_alpha=alpha, shadow=[shadow, uniform],
        )
        approx = P.simulate(
            exp.capacity_matrix, wl, pol_bsa, P.BiasedSampling(**bsa), P.stream(seed, replicate, f"bsa-run:{name}"),
            resources=exp.resources, demand_alpha=alpha,
        )
        post = [r.requests.filter(pl.col("request") >= exp.warmup) for r in (exact, approx)]
        rows.append(
            {"policy": name, "decisions": shadow.decisions, "agreements": shadow.agreements,
             "agreement": shadow.agreement, "agreement_unbiased": uniform.agreement, "budget": budget, "nodes": exp.nodes,
             "reject_pct_exhaustive": 100 * float((~post[0]["accepted"]).mean()),
             "reject_pct_bsa": 100 * float((~post[1]["accepted"]).mean())}
        )
        for opt, ns in (("exhaustive", shadow.main_ns), ("bsa", shadow.shadow_ns)):
            us = np.asarray(ns, dtype=np.float64) / 1e3
            times.append(
                {"policy": name, "optimiser": opt, "decisions": us.size, "mean_us": float(us.mean()),
                 "median_us": float(np.median(us)), "p95_us": float(np.quantile(us, 0.95))}
            )
    return pl.DataFrame(rows), pl.DataFrame(times)


def run_trace(
    requests: pl.DataFrame,
    nodes: pl.DataFrame,
    specs: Sequence[Mapping],
    *,
    seed: int,
    alpha: float,
    tie_break: str,
) -> pl.DataFrame:
    """Every policy on the trace-driven stream (resources cpu, memory) over the sampled machines."""
    resources = ("cpu", "memory")
    wl = P.Workload.from_frame(requests, resources)
    capacity = nodes.select("cpus", "memory").to_numpy().astype(np.float64)
    logs = []
    for pol in policies(specs, alpha):
        res = P.simulate(
            capacity, wl, pol, P.Exhaustive(tie_break), P.stream(seed, 0, f"trace:{pol.name}"),
            resources=resources, demand_alpha=alpha,
        )
        logs.append(res.requests.select(pl.lit(pol.name).alias("policy"), pl.all()))
    return pl.concat(logs)


def rounded(df: pl.DataFrame, digits: int = 6) -> pl.DataFrame:
    """Floats rounded for the published CSV tables."""
    return df.with_columns(cs.float().round(digits))
