"""Tables of Tantawi & Steinder §IV from simulator logs, and statistics over replications.

Per-request logs (:func:`colocate.scheduling.placement.simulate`) of several policies are stacked with a
``policy`` column (PACK, SPREAD, XBAL, ABP, …) and, across replications, a ``replicate`` column.
Measures are taken over the arrivals after the warm-up (the first ``warmup`` requests), as §IV
"statistics are collected after a warm up period of 60 requests": the reject percentage is over
those requests (Table II's percentages are Table III's totals over the stream after the warm-up),
utilisation means and standard deviations across nodes are averaged over the post-warm-up arrivals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW

from colocate.measure import measurement
from colocate.scheduling.placement import DemandStatistics, mcv
from colocate.scheduling.placement_runs import snapshot_matrices
from colocate.scheduling.placement_workload import analytic_demand


def after_warmup(requests: pl.DataFrame, warmup: int) -> pl.DataFrame:
    return requests.filter(pl.col("request") >= warmup)


def run_metrics(requests: pl.DataFrame, resources: Sequence[str], warmup: int) -> pl.DataFrame:
    """Table II's measures per policy (and replicate, if present), long: policy, [replicate,] metric, value.

    Metrics: ``reject_pct``, ``rejected``, ``mean_<r>`` (average utilisation) and ``sd_<r>`` (std
    of utilisation across nodes), averaged over post-warm-up arrivals.
    """
    keys = [c for c in ("policy", "replicate") if c in requests.columns]
    agg = [
        (100 * (~pl.col("accepted")).mean()).alias("reject_pct"),
        (~pl.col("accepted")).sum().cast(pl.Float64).alias("rejected"),
        *[pl.col(f"mu_{r}").mean().alias(f"mean_{r}") for r in resources],
        *[pl.col(f"sd_{r}").mean().alias(f"sd_{r}") for r in resources],
    ]
    wide = after_warmup(requests, warmup).group_by(keys, maintain_order=True).agg(agg)
    return wide.unpivot(index=keys, variable_name="metric", value_name="value")


def _wide(long: pl.DataFrame, policies: Sequence[str]) -> pl.DataFrame:
    return long.pivot(on="policy", index=["measure", "resource"], values="value").select(
        "measure", "resource", *policies
    )


def table2(requests: pl.DataFrame, resources: Sequence[str], warmup: int, policies: Sequence[str]) -> pl.DataFrame:
    """Table II "Results summary": % reject, average utilisation and StDev across nodes per resource."""
    m = run_metrics(requests.drop("replicate", strict=False), resources, warmup)
    names = {"reject_pct": ("% Reject", "")}
    names |= {f"mean_{r}": ("Average", r) for r in resources}
    names |= {f"sd_{r}": ("StDev", r) for r in resources}
    m = m.filter(pl.col("metric").is_in(list(names))).with_columns(
        measure=pl.col("metric").replace_strict({k: v[0] for k, v in names.items()}),
        resource=pl.col("metric").replace_strict({k: v[1] for k, v in names.items()}),
    )
    return _wide(m, policies)


def table3(
    requests: pl.DataFrame, resource: str, capacity: float, warmup: int, policies: Sequence[str]
) -> pl.DataFrame:
    """Table III "Relation between rejections and GPU demand": rejected requests per demand level."""
    rej = after_warmup(requests, warmup).filter(~pl.col("accepted"))
    levels = np.arange(int(capacity) + 1, dtype=np.float64)
    rows = []
    for p in policies:
        d = rej.filter(pl.col("policy") == p)[f"d_{resource}"].to_numpy()
        counts = [int((d == lv).sum()) for lv in levels]
        other = int(d.size - sum(counts))
        rows.append([*counts, other, int(d.size)])
    labels = [f"{lv:g}" for lv in levels] + ["other", "Total"]
    out = pl.DataFrame({f"{resource} demand": labels} | {p: r for p, r in zip(policies, rows)})
    if all(r[-2] == 0 for r in rows):  # only integer demand levels: drop the "other" row
        out = out.filter(pl.col(f"{resource} demand") != "other")
    return out


def demand_rejections(requests: pl.DataFrame, resource: str, capacity: float, warmup: int) -> pl.DataFrame:
    """Table III's counts per policy and replicate, long as :func:`run_metrics` gives: metric ``rejected_<resource>_<level>``
    for every integer demand level 0..``capacity`` (zero where a replicate rejected none of that level)."""
    levels = [float(v) for v in range(int(capacity) + 1)]
    keys = [c for c in ("policy", "replicate") if c in requests.columns]
    grid = requests.select(keys).unique(maintain_order=True).join(pl.DataFrame({"_level": levels}), how="cross")
    counts = (after_warmup(requests, warmup).filter(~pl.col("accepted"))
              .group_by(*keys, pl.col(f"d_{resource}").alias("_level")).agg(pl.len().cast(pl.Float64).alias("value")))
    return grid.join(counts, on=[*keys, "_level"], how="left").select(
        *keys, pl.format(f"rejected_{resource}_{{}}", pl.col("_level").cast(pl.Int64)).alias("metric"),
        pl.col("value").fill_null(0.0))


def observed_demand(demands: np.ndarray, alpha: float, cbar: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """μ^dem(t), Σ^dem(t) after the given demand sequence (§III-C step 1, smoothing α)."""
    s = DemandStatistics(alpha, cbar)
    for d in demands:
        s.update(d)
    return s.mean, s.cov


def _matrix_rows(label_col: str, label: str, resources: Sequence[str], m: np.ndarray) -> list[dict]:
    return [{label_col: label, "resource": r} | {c: float(m[i, j]) for j, c in enumerate(resources)} for i, r in enumerate(resources)]


def demand_tables(
    analytic: tuple[np.ndarray, np.ndarray], observed: tuple[np.ndarray, np.ndarray], resources: Sequence[str]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Table IV (average observed demand μ^dem) and Table V (covariance Σ^dem), analytic and observed."""
    t4 = pl.DataFrame(
        [{"source": "Analytic"} | dict(zip(resources, map(float, analytic[0])))]
        + [{"source": "Observed"} | dict(zip(resources, map(float, observed[0])))]
    )
    t5 = pl.DataFrame(
        _matrix_rows("source", "Analytic", resources, analytic[1]) + _matrix_rows("source", "Observed", resources, observed[1])
    )
    return t4, t5


def system_moments(util: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """μ^sys and Σ^sys (population) of a snapshot's N × R utilisation matrix."""
    mu = util.mean(axis=0)
    c = util - mu
    return mu, c.T @ c / util.shape[0]


def system_tables(
    snapshots: Mapping[str, np.ndarray],
    resources: Sequence[str],
    analytic: tuple[np.ndarray, np.ndarray],
    observed: tuple[np.ndarray, np.ndarray],
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Table VI (μ^sys), Table VII (Σ^sys) per policy and Table VIII (γ: analytic, observed demand, each policy)."""
    t6, t7, gam = [], [], {"Analytic": float(mcv(*analytic)), "Observed": float(mcv(*observed))}
    for policy, util in snapshots.items():
        mu, sigma = system_moments(util)
        t6.append({"policy": policy} | dict(zip(resources, map(float, mu))))
        t7 += _matrix_rows("policy", policy, resources, sigma)
        gam[policy] = float(mcv(mu, sigma))
    return pl.DataFrame(t6), pl.DataFrame(t7), pl.DataFrame([gam])


def sort_snapshot(util: np.ndarray, order: Sequence[int]) -> np.ndarray:
    """Nodes in increasing order of utilisation of resources ``order`` (lexicographic: Fig. 3's GPU, CPU, memory)."""
    keys = tuple(util[:, r] for r in reversed(list(order)))
    return util[np.lexsort(keys)]


# ----------------------------------------------------------------------------- replications


def confidence_intervals(metrics: pl.DataFrame, level: float = 0.95) -> pl.DataFrame:
    """Mean over replicates with a Student-t confidence interval per (policy, metric), and their min and max.

    ``metrics`` is long (policy, replicate, metric, value) as :func:`run_metrics` gives. The min–max is
    the spread of a single run (the paper's numbers are one run each; see :func:`measurements`).
    """
    rows = []
    for (policy, metric), g in metrics.group_by("policy", "metric", maintain_order=True):
        x = g["value"].to_numpy()
        d = DescrStatsW(x)
        if x.size > 1 and d.std > 0:
            lo, hi = d.tconfint_mean(alpha=1 - level)
        else:
            lo = hi = float(x.mean())
        rows.append(
            {"policy": policy, "metric": metric, "n": x.size, "mean": float(x.mean()),
             "sd": float(x.std(ddof=1)) if x.size > 1 else 0.0, "ci_low": float(lo), "ci_high": float(hi),
             "min": float(x.min()), "max": float(x.max())}
        )
    return pl.DataFrame(rows)


def compare_policies(
    metrics: pl.DataFrame, target: str, metric: str = "reject_pct", level: float = 0.95
) -> pl.DataFrame:
    """Does ``target``'s ``metric`` differ from each other policy's? Paired over replicates.

    Every policy sees the same request stream in a replicate (common random numbers), so the
    comparison is on the per-replicate differences target − baseline: their mean with a paired
    t confidence interval (scipy ``ttest_rel``), the two-sided Wilcoxon signed-rank p-value
    (scipy ``wilcoxon``; no normality assumed; 1 when all differences are zero) and the p-values
    adjusted for the number of baselines by Holm's method (statsmodels ``multipletests``).
    """
    m = metrics.filter(pl.col("metric") == metric).pivot(on="policy", index="replicate", values="value").sort("replicate")
    if target not in m.columns:
        raise ValueError(f"policy {target!r} is not among {m.columns[1:]}")
    rows = []
    for base in [c for c in m.columns if c not in ("replicate", target)]:
        x, y = m[target].to_numpy(), m[base].to_numpy()
        diff = x - y
        if diff.size > 1 and np.ptp(diff) > 0:
            tt = stats.ttest_rel(x, y)
            ci = tt.confidence_interval(confidence_level=level)
            lo, hi, p_t = float(ci.low), float(ci.high), float(tt.pvalue)
        else:
            lo = hi = float(diff.mean())
            p_t = 1.0 if diff.mean() == 0 else 0.0
        p_w = float(stats.wilcoxon(x, y).pvalue) if np.any(diff != 0) and diff.size > 1 else 1.0
        rows.append(
            {"policy": target, "baseline": base, "metric": metric, "n": diff.size,
             "mean_policy": float(x.mean()), "mean_baseline": float(y.mean()), "mean_diff": float(diff.mean()),
             "ci_low": lo, "ci_high": hi, "wins": int((diff < 0).sum()), "losses": int((diff > 0).sum()),
             "p_ttest": p_t, "p_wilcoxon": p_w}
        )
    out = pl.DataFrame(rows)
    if out.height:
        out = out.with_columns(p_wilcoxon_holm=pl.Series(multipletests(out["p_wilcoxon"].to_numpy(), method="holm")[1]))
    return out


# ----------------------------------------------------------------------------- the experiment's tables

def snapshot_figure_input(snapshot: pl.DataFrame, resources: Sequence[str]) -> dict[str, np.ndarray]:
    """Policy → snapshot utilisation with nodes sorted by GPU, then CPU, then memory (Fig. 3's order)."""
    order = [list(resources).index(r) for r in ("gpu", "cpu", "memory") if r in resources]
    order += [i for i in range(len(resources)) if i not in order]
    out = {}
    for (policy,), g in snapshot.sort("node", maintain_order=True).group_by("policy", maintain_order=True):
        out[policy] = sort_snapshot(g.select(f"u_{r}" for r in resources).to_numpy(), order)
    return out


def experiment_tables(
    exp, requests: pl.DataFrame, snapshots: pl.DataFrame, *, alpha: float, resource: str, target: str = "ABP"
) -> dict[str, pl.DataFrame]:
    """Tables II–VIII on the first replicate, and metrics, confidence intervals and tests over all replicates.

    ``exp`` is the :class:`~colocate.scheduling.placement_workload.Experiment`; ``resource`` the resource of
    Table III (GPU in the paper); ``target`` the policy compared with every other (ABP).
    """
    res = list(exp.resources)
    first = requests["replicate"].min()
    rep0 = requests.filter(pl.col("replicate") == first)
    policies = rep0["policy"].unique(maintain_order=True).to_list()
    snap = exp.snapshot_pod - 1
    one = rep0.filter(pl.col("policy") == policies[0]).sort("request")
    demands = one.select(f"d_{r}" for r in res).to_numpy()
    cbar = exp.capacity_matrix.max(axis=0)
    phase = int(one["phase"][snap]) - 1
    analytic = analytic_demand_of(exp, phase)
    observed = observed_demand(demands[: snap + 1], alpha, cbar)
    t4, t5 = demand_tables(analytic, observed, res)
    mats = snapshot_matrices(snapshots.filter(pl.col("replicate") == first), res)
    t6, t7, t8 = system_tables({p: mats[p] for p in policies}, res, analytic, observed)

    metrics = pl.concat([run_metrics(requests, res, exp.warmup),
                         demand_rejections(requests, resource, exp.capacity[res.index(resource)], exp.warmup)])
    at_snap = requests.filter(pl.col("request") == snap)
    metrics = pl.concat(
        [
            metrics,
            at_snap.select("policy", "replicate", pl.lit("gamma_sys_snapshot").alias("metric"), pl.col("gamma_sys").alias("value")),
            at_snap.select("policy", "replicate", pl.lit("gamma_dem_snapshot").alias("metric"), pl.col("gamma_dem").alias("value")),
        ]
    ).sort("policy", "replicate", "metric", maintain_order=True)
    order = {p: i for i, p in enumerate(policies)}
    metrics = metrics.sort(pl.col("policy").replace_strict(order, return_dtype=pl.Int64), "replicate", maintain_order=True)
    tests = (
        compare_policies(metrics, target, "reject_pct")
        if target in policies and len(policies) > 1
        else pl.DataFrame(schema={"policy": pl.String, "baseline": pl.String})
    )
    return {
        "table2": table2(rep0, res, exp.warmup, policies),
        "table3": table3(rep0, resource, exp.capacity[res.index(resource)], exp.warmup, policies),
        "table4": t4,
        "table5": t5,
        "table6": t6,
        "table7": t7,
        "table8": t8,
        "metrics": metrics,
        "replicates": confidence_intervals(metrics),
        "tests": tests,
    }


def analytic_demand_of(exp, phase: int) -> tuple[np.ndarray, np.ndarray]:
    """Analytic μ^dem, Σ^dem of the pod-type mix of ``phase`` (0-based) of the experiment."""
    return analytic_demand(exp.demand_matrix(), exp.mix(phase), exp.capacity_matrix.max(axis=0))


#: The paper's policies and resources (Tables II, III and VIII): a measure of another (a plug-in policy, a fourth
#: resource) answers a claim of no paper value (``workflow/papers/tantawi.tsv``).
PAPER_POLICIES = ("PACK", "SPREAD", "XBAL", "ABP")
PAPER_RESOURCES = ("cpu", "memory", "gpu")


def _requests_after_warmup(table2: pl.DataFrame, table3: pl.DataFrame) -> int | None:
    """Requests after the warm-up of replicate 0: a policy's rejections (Table III) over its reject share (Table II)."""
    reject = table2.filter(pl.col("measure") == "% Reject")
    if not reject.height:
        return None
    total = dict(zip(table3[table3.columns[0]].cast(pl.String), range(table3.height))).get("Total")
    if total is None:
        return None
    for policy in table3.columns[1:]:
        if policy in reject.columns:
            pct, count = reject[policy][0], table3[policy][total]
            if pct is not None and count is not None and pct > 0 and count > 0:
                return int(round(100 * float(count) / float(pct)))
    return None


def replicate_values(r: Mapping | None) -> dict:
    """What the claims' ``replicates`` tolerance reads of a metric's row of :func:`confidence_intervals`: the number
    of replicates and their runs' mean, min and max (empty without one: the default factor)."""
    return {k: r[k] for k in ("n", "mean", "min", "max") if r.get(k) is not None} if r else {}


def _alpha(level: float) -> float:
    """The significance level of a confidence ``level`` (1 − 0.95 is 0.05, not 0.05000000000000004)."""
    return round(1 - level, 12)


def paired_verdict(row: Mapping, level: float = 0.95) -> str:
    """A paired test's answer to "does the policy reject less than the baseline?" in the paper's words: "lower"
    or "higher" where the Holm-adjusted Wilcoxon p-value (:func:`compare_policies`) is below 1 − ``level``, by the
    sign of the mean difference, and "not significantly different" otherwise."""
    if row["p_wilcoxon_holm"] < _alpha(level) and row["mean_diff"] != 0:
        return "lower" if row["mean_diff"] < 0 else "higher"
    return "not significantly different"


def paired_test_can_reject(n: int, baselines: int, level: float = 0.95) -> bool:
    """Can the paired test find any difference at all? The smallest two-sided p-value of the exact Wilcoxon
    signed-rank test over ``n`` pairs, 2 / 2^n (every difference of one sign), times the ``baselines`` Holm's
    first step multiplies it by, must fall below 1 − ``level``: 3 replicates against 3 baselines give 0.75."""
    return n > 0 and baselines * 2.0 ** (1 - n) < _alpha(level)


def measurements(
    *, table2: pl.DataFrame, table3: pl.DataFrame, table8: pl.DataFrame, replicates: pl.DataFrame,
    tests: pl.DataFrame, bsa: pl.DataFrame, level: float = 0.95,
) -> list[dict]:
    """The experiment at Table I's loads measured for Tables II, III and VIII, the paired test and BSA, by the claims
    they answer (``workflow/papers/tantawi.tsv``; the paper's values, tolerances and causes are there).

    The paper's numbers are one run each. Ours is a mean over replicates where the replicates give one (Table II,
    γ at the snapshot), and replicate 0's where they do not (Table III's counts, γ^dem analytic); each measurement
    passes the replicates' n, mean, min and max in the row's unit, from which the claims' ``replicates`` tolerance
    compares the paper's one run with the range of our runs where a run varies more than the default factor.
    Table III's counts stand beside the paper's only on the paper's stream of requests after the warm-up: the
    stream's size is measured, and the counts' claims name it as their precondition (otherwise they are counts of
    another stream: the summary says so). The paired test of ABP against each other policy
    answers the paper's "ABP slightly lower" (:func:`paired_verdict`), unless too few replicates let it find a
    difference (:func:`paired_test_can_reject`). It is long because it is a table, one entry per paper number, read
    top to bottom beside the paper's tables.
    """
    out = []
    ci = {(r["policy"], r["metric"]): r for r in replicates.iter_rows(named=True)}

    def rep_note(policy: str, metric: str, first: float | None) -> str:
        r = ci.get((policy, metric))
        if r is None:
            return ""
        u = "%" if metric == "reject_pct" else ""  # in the row's unit, as its value is shown
        note = f"mean of {r['n']} replicates, 95% CI [{r['ci_low']:.3g}{u}, {r['ci_high']:.3g}{u}]"
        if r.get("min") is not None and r.get("max") is not None:
            note += f", runs {r['min']:.3g}–{r['max']:.3g}{u}"
        return note + (f"; replicate 0: {first:.3g}{u}" if first is not None else "")

    policies = [c for c in table2.columns if c not in ("measure", "resource")]
    for policy in policies:
        for row in table2.iter_rows(named=True):
            metric = "reject_pct" if row["measure"] == "% Reject" else ("mean_" if row["measure"] == "Average" else "sd_") + row["resource"]
            r = ci.get((policy, metric))
            ours = r["mean"] if r else row[policy]
            paper = policy in PAPER_POLICIES and (metric == "reject_pct" or row["resource"] in PAPER_RESOURCES)
            claim = (f"tantawi.t2.{metric}.{policy.lower()}" if paper
                     else "tantawi.t2.reject_pct.other" if metric == "reject_pct" else "tantawi.t2.other")
            out.append(measurement(claim, ours, rep_note(policy, metric, row[policy]), **replicate_values(r),
                                   **({} if paper else {"policy": policy, "measure": f"{row['measure']} {row['resource']}".strip()})))
    level_col = table3.columns[0]
    resource = level_col.split()[0]  # "gpu demand"
    requests = _requests_after_warmup(table2, table3)
    note = "replicate 0, after warm-up" + (f", {requests:,} requests" if requests else "")
    # Table III's counts stand beside the paper's only on its stream: their claims' precondition
    out.append(measurement("tantawi.t3.requests", requests, "replicate 0",
                           "" if requests is not None else "the stream's size is unknown without a rejection"))
    for policy in table3.columns[1:]:
        col = dict(zip(table3[level_col].cast(pl.String), table3[policy]))
        for label, key, name in ((f"with {level_col} 2", "2", "level2"), (f"with {level_col} 4", "4", "level4"), ("total", "Total", "total")):
            ours = col.get(key)
            r = ci.get((policy, "rejected" if key == "Total" else f"rejected_{resource}_{key}"))
            values = replicate_values(r) if ours is not None else {}
            if policy in PAPER_POLICIES:
                out.append(measurement(f"tantawi.t3.{name}.{policy.lower()}", ours, note, demand=level_col, **values))
            else:
                out.append(measurement("tantawi.t3.other", ours, note, policy=policy, level=label, **values))
    for key, value in table8.row(0, named=True).items():
        if key == "Analytic":
            out.append(measurement("tantawi.t8.gamma_dem_analytic", value))
            continue
        metric = "gamma_dem_snapshot" if key == "Observed" else "gamma_sys_snapshot"
        policy = policies[0] if key == "Observed" else key
        r = ci.get((policy, metric))
        ours = r["mean"] if r else value
        claim = ("tantawi.t8.gamma_dem_observed" if key == "Observed"
                 else f"tantawi.t8.gamma_sys.{key.lower()}" if key in PAPER_POLICIES else "tantawi.t8.gamma_sys.other")
        out.append(measurement(claim, ours, rep_note(policy, metric, value), **replicate_values(r),
                               **({"policy": key} if claim == "tantawi.t8.gamma_sys.other" else {})))
    paired = list(tests.iter_rows(named=True)) if "mean_diff" in tests.columns else []
    for row in paired:
        note = (f"mean difference {row['mean_diff']:.4g} points, 95% CI [{row['ci_low']:.3g}, {row['ci_high']:.3g}]; "
                f"Wilcoxon p = {row['p_wilcoxon']:.3g} (Holm {row['p_wilcoxon_holm']:.3g}; significant below {_alpha(level):g}); "
                f"{row['policy']} lower in {row['wins']}, higher in {row['losses']}")
        testable = paired_test_can_reject(row["n"], len(paired), level)
        status = "" if testable else (f"{row['n']} replicates: the paired test cannot find a difference at "
                                      f"{_alpha(level):g} against {len(paired)} baselines")
        if row["policy"] == "ABP" and row["baseline"] in PAPER_POLICIES:
            out.append(measurement(f"tantawi.t2.abp_vs.{row['baseline'].lower()}", paired_verdict(row, level), note, status,
                                   n=row["n"]))
        else:
            out.append(measurement("tantawi.t2.paired.other", paired_verdict(row, level), note, n=row["n"],
                                   policy=row["policy"], baseline=row["baseline"]))
    for row in bsa.iter_rows(named=True):
        out.append(measurement(
            "tantawi.bsa.agreement", row["agreement"],
            f"{row['agreements']} of {row['decisions']} decisions, budget {row['budget']} samples on {row['nodes']} nodes; "
            f"% reject {row['reject_pct_exhaustive']:.3g} exact vs {row['reject_pct_bsa']:.3g} BSA", policy=row["policy"]))
    return out


# ----------------------------------------------------------------------------- trace-driven run


def trace_table(requests: pl.DataFrame, warmup: int, facts: pl.DataFrame) -> pl.DataFrame:
    """Per policy on the trace-driven stream: requests, rejections, utilisation mean and StDev, γ^sys."""
    m = after_warmup(requests, warmup).group_by("policy", maintain_order=True).agg(
        pl.len().alias("requests"),
        (~pl.col("accepted")).sum().alias("rejected"),
        (100 * (~pl.col("accepted")).mean()).alias("reject_pct"),
        pl.col("mu_cpu").mean().alias("mean_cpu"),
        pl.col("mu_memory").mean().alias("mean_memory"),
        pl.col("sd_cpu").mean().alias("sd_cpu"),
        pl.col("sd_memory").mean().alias("sd_memory"),
        pl.col("gamma_sys").mean().alias("gamma_sys"),
        pl.col("gamma_dem").mean().alias("gamma_dem"),
    )
    f = dict(zip(facts["quantity"], facts["value"]))
    return m.with_columns(
        offered_cpu_load=pl.lit(f.get("offered_cpu_load")), offered_memory_load=pl.lit(f.get("offered_memory_load"))
    )


def trace_measurements(table: pl.DataFrame) -> list[dict]:
    """The trace-driven run's Table II measures, by the claims they answer (``workflow/papers/tantawi.tsv``: the
    paper has no values for them, so none is judged)."""
    rows = []
    for r in table.iter_rows(named=True):
        rows += [
            measurement("tantawi.trace.reject", r["reject_pct"], f"{r['rejected']} of {r['requests']} requests; offered CPU "
                        f"load {r['offered_cpu_load']:.3g}, memory {r['offered_memory_load']:.3g}", policy=r["policy"]),
            measurement("tantawi.trace.sd_cpu", r["sd_cpu"], policy=r["policy"]),
            measurement("tantawi.trace.sd_memory", r["sd_memory"], policy=r["policy"]),
        ]
    return rows
