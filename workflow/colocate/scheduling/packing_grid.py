"""The experiment grid of Janus & Rzadca §5 (plus our fit tests), and its instances.

A grid is given as *sections* (the paper's §5.2–5.6), each varying some axes
around a base case (Best Fit, rebalancing, c = 1, full clairvoyance, inst
data; Janus §5.1) for a set of estimators. :func:`expand_grid` turns them into
one table of distinct cells; :func:`settings` groups cells by what the
per-task statistics and the capacity depend on (data, clairvoyance, capacity),
the unit of work of one job; :func:`instances` sub-samples the tasks;
:func:`run_setting` runs one setting on every instance and :func:`summarise`
averages the results over instances.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from colocate.insufficient import InsufficientData
from colocate.registry import ConfigError
from colocate.scheduling.fit_tests import (
    FIT_OPTIONS,
    FIT_TESTS,
    FitTest,
    required_percentiles,
)
from colocate.scheduling.packing import ALGORITHMS, lower_bound, observe, run

if TYPE_CHECKING:
    from colocate.report.compare import Tolerance

#: The base case of Janus §5.1.
BASE = {"algorithm": "BF", "rebalance": True, "capacity": 1.0, "clairvoyance": 1.0, "data": "inst"}
AXES = tuple(BASE)
SETTING = ("data", "clairvoyance", "capacity")
CELL_SCHEMA = {
    "estimator": pl.String,
    "parameter": pl.Float64,
    "algorithm": pl.String,
    "rebalance": pl.Boolean,
    "capacity": pl.Float64,
    "clairvoyance": pl.Float64,
    "data": pl.String,
}


def expand_grid(
    estimators: Mapping[str, Sequence[float]],
    sections: Mapping[str, Mapping[str, object]],
    base: Mapping[str, object] = BASE,
) -> pl.DataFrame:
    """Distinct cells of all sections, sorted; column ``sections`` lists the sections a cell belongs to.

    ``estimators`` maps an estimator name (a key of ``FIT_TESTS`` or a plug-in ``module:Class``) to
    its parameters (:func:`estimator_settings` reads them from config). A section maps
    ``estimators`` to ``"all"`` or to a sub-mapping of names → parameters (``"all"`` for all of that
    estimator's), and any axis of :data:`BASE` to a list of values; unnamed axes stay at ``base``.
    """
    for name in estimators:
        FIT_TESTS.resolve(name, f"packing.estimators.{name}")
    rows = []
    for sname, spec in sections.items():
        unknown = set(spec) - set(AXES) - {"estimators"}
        if unknown:
            raise ValueError(f"section {sname}: unknown keys {sorted(unknown)} (axes: {list(AXES)}, estimators)")
        chosen = spec.get("estimators", "all")
        if chosen == "all":
            chosen = {k: "all" for k in estimators}
        pairs = []
        for est, params in dict(chosen).items():
            if est not in estimators:
                raise ValueError(f"section {sname}: estimator {est!r} is not in the estimators list")
            params = estimators[est] if params == "all" else params
            pairs += [(est, float(p)) for p in params]
        axes = []
        for axis in AXES:
            values = spec.get(axis, [base[axis]])
            values = values if isinstance(values, list | tuple) else [values]
            if not values:
                raise ValueError(f"section {sname}: axis {axis} is empty")
            axes.append(values)
        for algo in axes[0]:
            if algo not in ALGORITHMS:
                raise ValueError(f"section {sname}: algorithm must be one of {sorted(ALGORITHMS)}, got {algo!r}")
        for data in axes[4]:
            if data not in ("inst", "avg"):
                raise ValueError(f"section {sname}: data must be inst or avg, got {data!r}")
        for (est, par), (algo, reb, cap, clair, data) in itertools.product(pairs, itertools.product(*axes)):
            rows.append((est, par, algo, bool(reb), float(cap), float(clair), data, sname))
    if not rows:
        raise ValueError("the packing grid is empty")
    frame = pl.DataFrame(rows, schema={**CELL_SCHEMA, "section": pl.String}, orient="row")
    return (
        frame.group_by(list(CELL_SCHEMA), maintain_order=True)
        .agg(pl.col("section").unique(maintain_order=True).str.join(",").alias("sections"))
        .sort(list(CELL_SCHEMA))
    )


def settings(cells: pl.DataFrame) -> pl.DataFrame:
    """The distinct (data, clairvoyance, capacity) of ``cells``, sorted: one job each."""
    return cells.select(SETTING).unique().sort(SETTING)


def cells_of(cells: pl.DataFrame, setting: Mapping[str, object]) -> list[dict]:
    """The cells of one setting (``data``, ``clairvoyance``, ``capacity``; numbers may be strings), as dicts."""
    data = str(setting["data"])
    clair, cap = float(setting["clairvoyance"]), float(setting["capacity"])
    sel = cells.filter(
        (pl.col("data") == data)
        & ((pl.col("clairvoyance") - clair).abs() < 1e-12)
        & ((pl.col("capacity") - cap).abs() < 1e-12)
    )
    if not sel.height:
        raise ValueError(f"no cells for setting data={data}, clairvoyance={clair}, capacity={cap}")
    return sel.select(list(CELL_SCHEMA)).to_dicts()


def instances(n_tasks: int, n_instances: int, tasks_per_instance: int, seed: int) -> np.ndarray:
    """Row indices of the realization matrix for each instance (n_instances × tasks_per_instance).

    Each instance is a uniform sample without replacement of the N tasks (Janus §5.1: 50 instances
    of N' = 1,000 out of N = 100,000), drawn from ``numpy.random.default_rng(seed)``; rows keep the
    draw order, which is the order tasks arrive to the packing algorithm.
    """
    if n_instances < 1 or tasks_per_instance < 1:
        raise ValueError(f"need ≥ 1 instance of ≥ 1 task, got {n_instances} × {tasks_per_instance}")
    if tasks_per_instance > n_tasks:  # a trace with fewer long tasks (realizations takes all it holds)
        raise InsufficientData(f"tasks_per_instance {tasks_per_instance} exceeds the {n_tasks} tasks with realizations",
                               f"at least {tasks_per_instance} long tasks")
    rng = np.random.default_rng(seed)
    return np.stack([rng.choice(n_tasks, size=tasks_per_instance, replace=False) for _ in range(n_instances)])


def estimator_settings(
    estimators: Mapping[str, object], key: str = "packing.estimators"
) -> tuple[dict[str, list[float]], dict[str, dict]]:
    """Each estimator's parameters and own options from the config mapping, every fit test built once to check it.

    A value is a list of parameters, or ``{parameters: [...], options: {...}}`` where ``options`` are
    constructor arguments of the class (a plug-in's own settings). Plug-ins (``module:Class``) are
    imported and checked against :class:`~colocate.scheduling.fit_tests.FitTest` here, so a misfit
    fails at start-up with its key.
    """
    params, own = {}, {}
    for name, value in estimators.items():
        where = f"{key}.{name}"
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - {"parameters", "options"})
            if unknown:
                raise ConfigError(f"{where}: unknown key(s) {unknown} (parameters, options)")
            params[name], own[name] = list(value.get("parameters", [])), dict(value.get("options") or {})
        else:
            params[name] = list(value)
        if not params[name]:
            raise ConfigError(f"{where}: no parameters")
        for parameter in params[name]:
            try:
                FIT_TESTS.build(name, float(parameter), key=where, own=own.get(name))
            except ConfigError:
                raise
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"{where}: parameter {parameter!r}: {exc}") from None
    return params, own


def fit_test(estimator: str, parameter: float, own: Mapping | None = None, **options: float) -> FitTest:
    """The fit test of a grid cell, given the grid-wide fit-test options by config key (:data:`FIT_OPTIONS`).

    Each fit test takes the options its class declares (``options``) and ignores the others; an option
    that no built-in fit test declares is an error. Options left out keep the fit test's defaults.
    ``own`` are the estimator's own constructor arguments (:func:`estimator_settings`).
    """
    unknown = sorted(set(options) - set(FIT_OPTIONS))
    if unknown:
        raise ValueError(f"unknown fit-test option(s) {unknown} (known: {list(FIT_OPTIONS)})")
    return FIT_TESTS.build(estimator, parameter, key=f"packing.estimators.{estimator}", settings=options, own=own)


def load_rows(matrix: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``matrix[rows]`` in memory, reading a memory-mapped matrix in ascending row order."""
    order = np.argsort(rows, kind="stable")
    out = np.empty((rows.size, matrix.shape[1]), dtype=matrix.dtype)
    out[order] = matrix[rows[order]]
    return out


RESULT_SCHEMA = {
    "instance": pl.Int32,
    **CELL_SCHEMA,
    "label": pl.String,
    "m_abs": pl.Int32,
    "m_norm": pl.Int32,
    "m": pl.Float64,
    "q": pl.Float64,
    "evaluations": pl.Int32,
    "migrations": pl.Int32,
    "oversized": pl.Int32,
    "utilisation_mean": pl.Float64,
    "q_machines": pl.List(pl.Float64),
    "utilisation_machines": pl.List(pl.Float64),
}


def run_setting(
    inst: np.ndarray,
    avg: np.ndarray,
    instance_rows: np.ndarray,
    cells: pl.DataFrame,
    requests: np.ndarray | None = None,
    *,
    max_failures: int = 5,
    log: Callable[[str], None] | None = None,
    estimator_options: Mapping[str, Mapping] | None = None,
    **options: float,
) -> pl.DataFrame:
    """Every cell of one setting (one data source, clairvoyance and capacity) on every instance.

    ``inst``/``avg`` are the N × R realization matrices (memory-mapped is fine), ``instance_rows``
    the rows of each instance (:func:`instances`), ``requests`` the CPU request per row (NaN where
    unknown), ``options`` the grid-wide fit-test options by config key and ``estimator_options``
    each estimator's own options (:func:`fit_test`). Per
    instance, the task statistics over O are computed once and shared by all cells
    (Janus §5.1); q is measured on the inst realizations of E. One row per (instance, cell), with
    the per-machine q(j)/|E| and utilisation as lists.
    """
    setting = cells.select(SETTING).unique()
    if setting.height != 1:
        raise ValueError(f"run_setting takes the cells of one setting, got {setting.height}")
    data, clairvoyance, capacity = setting.row(0)
    if inst.shape != avg.shape:
        raise ValueError(f"inst {inst.shape} and avg {avg.shape} realization matrices differ in shape")
    rows = cells.to_dicts()
    own = estimator_options or {}
    fits = [fit_test(r["estimator"], r["parameter"], own.get(r["estimator"]), **options) for r in rows]
    percentiles = required_percentiles(fits)
    out = []
    for k, idx in enumerate(np.asarray(instance_rows)):
        x = load_rows(inst, idx)
        observed = x if data == "inst" else load_rows(avg, idx)
        stats = observe(observed, clairvoyance, percentiles, None if requests is None else requests[idx])
        m_norm = lower_bound(x.mean(axis=1, dtype=np.float64), capacity)
        for row, fit in zip(rows, fits):
            packing, ev = run(
                x, fit, capacity, stats=stats, clairvoyance=clairvoyance, algorithm=row["algorithm"],
                rebalancing=row["rebalance"], max_failures=max_failures, m_norm=m_norm,
            )
            out.append(
                {
                    "instance": k,
                    **{c: row[c] for c in CELL_SCHEMA},
                    "label": fit.label,
                    "m_abs": ev.m_abs,
                    "m_norm": ev.m_norm,
                    "m": ev.m,
                    "q": ev.q,
                    "evaluations": ev.evaluations,
                    "migrations": packing.migrations,
                    "oversized": len(packing.oversized),
                    "utilisation_mean": float(ev.utilisation.mean()),
                    "q_machines": ev.q_machine.tolist(),
                    "utilisation_machines": ev.utilisation.tolist(),
                }
            )
        if log:
            log(f"instance {k + 1}/{len(instance_rows)}: {len(rows)} cells")
    return pl.DataFrame(out, schema=RESULT_SCHEMA)


def summarise(results: pl.DataFrame) -> pl.DataFrame:
    """Per cell, the mean and median over instances of m_abs, m and q (the CSV beside the table)."""
    return (
        results.group_by(list(CELL_SCHEMA) + ["label"], maintain_order=True)
        .agg(
            pl.len().alias("instances"),
            pl.col("m_abs").mean().alias("m_abs_mean"),
            pl.col("m").mean().alias("m_mean"),
            pl.col("m").median().alias("m_median"),
            pl.col("q").mean().alias("q_mean"),
            pl.col("q").median().alias("q_median"),
            pl.col("utilisation_mean").mean().alias("utilisation_mean"),
        )
        .sort(list(CELL_SCHEMA))
    )


def select(results: pl.DataFrame, **axes: object) -> pl.DataFrame:
    """Rows of ``results`` at the base case (:data:`BASE`) except for the axes given (None: any value)."""
    want = {**BASE, **axes}
    out = results
    for axis, value in want.items():
        if value is not None:
            out = out.filter(pl.col(axis) == value)
    return out


def _mean(frame: pl.DataFrame, column: str, estimator: str, parameter: float) -> float | None:
    rows = frame.filter((pl.col("estimator") == estimator) & ((pl.col("parameter") - parameter).abs() < 1e-12))
    return float(rows[column].mean()) if rows.height else None


def _q_tolerance(frame: pl.DataFrame, estimator: str, parameter: float, paper: str | None, base: Tolerance | None = None
                 ) -> Tolerance:
    """The tolerance of a mean q: 2 SE over instances where that noise reaches further than the ``base`` band
    (rare overloads); ``base`` defaults to the default factor. Where no instance overloads at all, the SE is 0
    and says nothing: the band is then the upper end of the exact (Clopper–Pearson) two-sided 95% interval of a
    zero count in the pooled m_abs · |E| (machine, realization) pairs, 1 − 0.025^(1/n) ≈ 3.7/n. It takes the
    pairs as independent (overloads cluster by instance): it bounds the noise of these realizations, not of the
    trace's draw."""
    from statsmodels.stats.proportion import proportion_confint

    from colocate.report.compare import DEFAULT_TOLERANCE, absolute, parse_number, widest

    base = base or DEFAULT_TOLERANCE
    p = parse_number(paper)
    rows = frame.filter((pl.col("estimator") == estimator) & ((pl.col("parameter") - parameter).abs() < 1e-12))
    q = rows["q"]
    if p is None or q.len() < 2:
        return base
    if not (q > 0).any() and "evaluations" in rows.columns:
        pairs = int((rows["m_abs"].cast(pl.Int64) * rows["evaluations"].cast(pl.Int64)).sum())
        upper = float(proportion_confint(0, pairs, alpha=0.05, method="beta")[1])
        never = absolute(upper, f"no overload in {pairs:,} (machine, realization) pairs over {q.len()} instances: "
                                "the upper end of the exact two-sided 95% interval of a zero count")
        return widest(p.value, float(q.mean()), base, never)
    se = float(q.std()) / np.sqrt(q.len())
    if not (np.isfinite(se) and se > 0):
        return base
    overloaded = int((q > 0).sum())
    noise = absolute(2 * se, f"2 SE of the mean q over {q.len()} instances ({overloaded} with any overload): rare "
                             "overloads, noise wider than the factor")
    return widest(p.value, float(q.mean()), base, noise)


#: The measured cause of the size-based tests' excess q on the synthetic trace (issue 13, item 4).
CAUSE_Q_TAILS = (
    "synthetic model, two sources measured on the model before the small-job and production-balance changes of commit 1264356: the top 2% of tasks by mean (σ ≈ 0.11, 27% of the inst variance) each "
    "dominate a machine, leaving a ≈ 3σ margin (a quarter of the machines, 44–78% of q); and spiky tasks' far tail, "
    "P(X > μ + 3σ) = 1.4% against 0.13% for a Gaussian. Excluding the first or trimming the second cuts q 2.4–20×. "
    "Not R: R = 10,000 gives the same q. q also varies with the trace seed (Cantelli 1: 3.6e-4 to 2.1e-3, 5.9×, "
    "over nine seeds). Capping task means at 0.2 (synthetic.task_cpu_max, 0.5) cuts q 2–8× on two seeds, but lowers "
    "Janus Table 1's A-D rates at N = 30 / 50 by 0.11–0.18, and the real sample window has 1.8% of its records "
    "above 0.2 (the model 0.07%): the cap would fit the paper's q, not the trace"
)


def headline_numbers(results: pl.DataFrame) -> list[tuple]:
    """The numbers Janus & Rzadca §5 print, beside ours: (quantity, paper, ours, note, Compare) for summary.rows.

    Means are over instances at the base case (Best Fit, rebalancing, c = 1, clairvoyance 1, inst)
    unless a quantity says otherwise; quantities whose cells are not in ``results`` are left out.
    A mean q whose paper value is a rare-event frequency is compared within 2 SE over instances when
    that noise is wider than the default factor, or, where no instance overloads, within the exact bound of a
    zero count (:func:`_q_tolerance`); the size-based tests' q (§5.2)
    within issue 13's 2× (:func:`~colocate.report.compare.issue_target`), or those 2 SE where wider: a mean q
    of 1e-8–1e-3 is a rare-event rate that varies 6–27× over nine trace seeds alone.
    """
    from colocate.report.compare import (
        DEFAULT_TOLERANCE,
        Compare,
        cause_if_outside,
        compare,
        issue_target,
    )

    base = select(results)
    items: list[tuple] = []

    def add(quantity, paper, value, note="", spec=None):
        if value is not None:
            items.append((quantity, paper, value, note, spec or Compare()))

    gpa = sorted(base.filter(pl.col("estimator") == "GPA")["parameter"].unique().to_list(), reverse=True)
    for rho in gpa:
        paper = "0.0016" if rho == 0.001 else None
        add(f"GPA ρ={rho:g}: mean q", paper, _mean(base, "q", "GPA", rho),
            "§5.2 Fig 9" if rho == 0.001 else "§5.2 Fig 9: close to ρ",
            Compare(item="Fig 9", tolerance=_q_tolerance(base, "GPA", rho, paper)))
    add("av 1: mean machines m_abs", "28.0", _mean(base, "m_abs", "av", 1.0), "§5.2, 1,000-task instances", Compare(item="§5.2"))
    for est, par, paper in (("Cantelli", 1.0, "3e-4"), ("Cantelli", 1.7, "2e-6"), ("perc", 90, "7e-5"),
                            ("perc", 95, "5e-6"), ("perc", 99, "2e-8"), ("perc", 100, "0")):
        value = _mean(base, "q", est, par)
        target = issue_target("the packing tails (a rare-event rate, 6–27× apart over nine trace seeds)")
        spec = cause_if_outside(paper, value, Compare(item="§5.2", tolerance=_q_tolerance(base, est, par, paper, target)),
                                CAUSE_Q_TAILS)
        add(f"{'max' if par == 100 else f'{est} {par:g}'}: mean q", paper, value, "§5.2", spec)
    # §6 prints one range, 2.5–5, for Cantelli's b = 1.7 … 4.4: its ends (more machines for the larger b,
    # as §7's ratios 1.9 and 3.7 to GPA confirm)
    for b, paper in ((1.7, "2.5 (of 2.5–5)"), (4.4, "5 (of 2.5–5)")):
        add(f"Cantelli {b:g}: machines / lower bound m", paper, _mean(base, "m", "Cantelli", b),
            "§6: the range's end for this b", Compare(item="§6"))
    g = _mean(base, "m_abs", "GPA", 0.05)
    for b, paper in ((1.7, "1.9"), (4.4, "3.7")):
        c = _mean(base, "m_abs", "Cantelli", b)
        if g and c is not None:
            add(f"machines Cantelli {b:g} / GPA 0.05", paper, c / g, "§7: GPA's saving at a 95% SLO", Compare(item="§7"))
    for rho, paper in ((0.1, "35"), (0.001, "47")):
        rows = base.filter((pl.col("estimator") == "GPA") & ((pl.col("parameter") - rho).abs() < 1e-12))
        add(f"GPA {rho:g}: median m_abs", paper, float(rows["m_abs"].median()) if rows.height else None, "§5.6",
            Compare(item="§5.6"))
    ff = select(results, algorithm="FF")
    if ff.height:
        keys = ["instance", "estimator", "parameter"]
        both = ff.join(base, on=keys, suffix="_bf")
        if both.height:
            add("max |m_abs FF − m_abs BF|", "≤ 1", float((both["m_abs"] - both["m_abs_bf"]).abs().max()),
                "§5.2: differed by at most 1", Compare(item="§5.2"))
    off = select(results, rebalance=False)
    if off.height:
        keys = ["instance", "estimator", "parameter"]
        both = off.join(base, on=keys, suffix="_on").filter(
            pl.col("estimator").is_in(["GPA", "av"]) & (pl.col("q") > 0)
        )
        if both.height:
            dec = ((both["q"] - both["q_on"]) / both["q"]).mean()
            add("rebalancing: mean relative decrease of q (GPA, av)", "≈ 7%", float(dec), "§5.6 Fig 13",
                Compare(item="Fig 13", unit="%", scale=100))
    avg = select(results, data="avg")
    for est, par, paper in (("Cantelli", 1.0, "≈ 10"), ("GPA", 0.05, "2–3")):
        a, i = _mean(avg, "q", est, par), _mean(base, "q", est, par)
        if a is not None and i:
            # the paper's ratio with its q(inst) gives its q(avg): where only q(inst) is off, say so
            implied = 10 * 3e-4  # the paper's ratio ≈ 10 times its Cantelli 1 q(inst), 3e-4 (the row above)
            in_band = est == "Cantelli" and compare(f"{implied:g}", a, Compare())["within"] is True
            cause = (f"only q(inst) is off: q(avg) = {a:.2g} is within {DEFAULT_TOLERANCE} of the paper's ≈ {implied:g} "
                     f"(10 × its q(inst) 3e-4), q(inst) = {i:.2g} is not (the packing tails of the inst rows above)"
                     ) if in_band else ""
            add(f"{est} {par:g}: q(avg) / q(inst)", paper, a / i, "§5.3 Fig 10",
                cause_if_outside(paper, a / i, Compare(item="Fig 10"), cause))
    for eps in sorted(base.filter(pl.col("estimator") == "Beta")["parameter"].unique().to_list(), reverse=True):
        add(f"Beta ε={eps:g} (ours): mean q", None, _mean(base, "q", "Beta", eps), "Unuvar eq 6 per machine",
            Compare(item="ours (Unuvar eq 6)"))
    return items
