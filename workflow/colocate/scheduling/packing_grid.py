"""The experiment grid of Janus & Rzadca §5 (plus our fit tests), and its instances.

A grid is given as *sections* (the paper's §5.2–5.6), each varying some axes
around a base case (Best Fit, rebalancing, c = 1, full clairvoyance, inst
data; Janus §5.1) for a set of estimators. :func:`expand_grid` turns them into
one table of distinct cells; :func:`settings` groups cells by what the
per-task statistics and the capacity depend on (data, clairvoyance, capacity),
the unit of work of one job; :func:`instances` sub-samples the tasks;
:func:`run_setting` runs one setting on every instance and :func:`summarise`
averages the results over instances; :func:`headline_measurements` measures what §5
prints, by the claims of ``workflow/papers/janus.tsv``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence

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


def _q_noise(frame: pl.DataFrame, estimator: str, parameter: float) -> dict:
    """What the tolerance of a mean q reads (``±2 SE``, ``±zero of n`` in ``workflow/papers/janus.tsv``): the
    ``instances``, those ``overloaded`` at all, ``se`` the standard error of the mean q over them (0 with fewer than
    2 instances, or where none overloads and it says nothing), and ``n`` the (machine, realization) pairs pooled over
    them, m_abs · |E| (0 with fewer than 2 instances, or without the ``evaluations`` column of older results): where
    no instance overloads, the exact bound of a zero count in those pairs. It takes the pairs as independent
    (overloads cluster by instance): it bounds the noise of these realizations, not of the trace's draw."""
    rows = frame.filter((pl.col("estimator") == estimator) & ((pl.col("parameter") - parameter).abs() < 1e-12))
    q = rows["q"]
    k = q.len()
    se = float(q.std()) / np.sqrt(k) if k >= 2 else 0.0
    pairs = (int((rows["m_abs"].cast(pl.Int64) * rows["evaluations"].cast(pl.Int64)).sum())
             if k >= 2 and "evaluations" in rows.columns else 0)
    return {"instances": k, "overloaded": int((q > 0).sum()), "se": se if np.isfinite(se) and se > 0 else 0.0,
            "n": pairs}


#: The claims of Fig 9 by GPA's target ρ (Janus §5.1 runs 0.1, 0.05, 0.01 and 0.001: SLOs of 90 to 99.9%); another
#: ρ is shown under janus.f9.gpa_q, without a paper value.
GPA_CLAIMS = {0.1: "janus.f9.gpa_q_slo90", 0.05: "janus.f9.gpa_q_slo95", 0.01: "janus.f9.gpa_q_slo99",
              0.001: "janus.f9.gpa_q_slo999"}

#: The size-based tests whose mean q §5.2 prints, by their claims.
SIZE_TEST_CLAIMS = (("Cantelli", 1.0, "janus.s52.q_cantelli1"), ("Cantelli", 1.7, "janus.s52.q_cantelli1_7"),
                    ("perc", 90, "janus.s52.q_perc90"), ("perc", 95, "janus.s52.q_perc95"),
                    ("perc", 99, "janus.s52.q_perc99"), ("perc", 100, "janus.s52.q_max"))


def headline_measurements(results: pl.DataFrame) -> list[dict]:
    """What Janus & Rzadca §5 print, as measured here, by the claims they answer (``workflow/papers/janus.tsv``).

    Means are over instances at the base case (Best Fit, rebalancing, c = 1, clairvoyance 1, inst)
    unless a claim says otherwise; claims whose cells are not in ``results`` are left out. A mean q that the
    paper gives as a rare-event frequency carries what its tolerance reads (:func:`_q_noise`): the standard error
    over instances and, where no instance overloads, the pooled (machine, realization) pairs.
    """
    from colocate.measure import measurement

    base = select(results)
    out: list[dict] = []

    def add(claim: str, value: float | None, **values: object) -> None:
        if value is not None:
            out.append(measurement(claim, value, **values))

    gpa = sorted(base.filter(pl.col("estimator") == "GPA")["parameter"].unique().to_list(), reverse=True)
    for rho in gpa:
        claim = GPA_CLAIMS.get(rho, "janus.f9.gpa_q")
        add(claim, _mean(base, "q", "GPA", rho), rho=rho, **_q_noise(base, "GPA", rho))
    add("janus.s52.av1_machines", _mean(base, "m_abs", "av", 1.0))
    for est, par, claim in SIZE_TEST_CLAIMS:
        add(claim, _mean(base, "q", est, par), **_q_noise(base, est, par))
    # §6 prints one range of machines for Cantelli's b = 1.7 … 4.4: a claim for each end (more machines for the
    # larger b, as §7's ratios to GPA confirm)
    for b, claim in ((1.7, "janus.s6.cantelli1_7_machines"), (4.4, "janus.s6.cantelli4_4_machines")):
        add(claim, _mean(base, "m", "Cantelli", b))
    g = _mean(base, "m_abs", "GPA", 0.05)
    for b, claim in ((1.7, "janus.s7.cantelli1_7_over_gpa"), (4.4, "janus.s7.cantelli4_4_over_gpa")):
        c = _mean(base, "m_abs", "Cantelli", b)
        if g and c is not None:
            add(claim, c / g)
    for rho, claim in ((0.1, "janus.s56.gpa0_1_median_machines"), (0.001, "janus.s56.gpa0_001_median_machines")):
        rows = base.filter((pl.col("estimator") == "GPA") & ((pl.col("parameter") - rho).abs() < 1e-12))
        add(claim, float(rows["m_abs"].median()) if rows.height else None)
    ff = select(results, algorithm="FF")
    if ff.height:
        keys = ["instance", "estimator", "parameter"]
        both = ff.join(base, on=keys, suffix="_bf")
        if both.height:
            add("janus.s52.ff_bf_machines", float((both["m_abs"] - both["m_abs_bf"]).abs().max()))
    off = select(results, rebalance=False)
    if off.height:
        keys = ["instance", "estimator", "parameter"]
        both = off.join(base, on=keys, suffix="_on").filter(
            pl.col("estimator").is_in(["GPA", "av"]) & (pl.col("q") > 0)
        )
        if both.height:
            add("janus.f13.rebalancing_decrease", float(((both["q"] - both["q_on"]) / both["q"]).mean()))
    avg = select(results, data="avg")
    for est, par, claim in (("Cantelli", 1.0, "janus.f10.cantelli1_avg_over_inst"),
                            ("GPA", 0.05, "janus.f10.gpa0_05_avg_over_inst")):
        a, i = _mean(avg, "q", est, par), _mean(base, "q", est, par)
        if a is not None and i:
            add(claim, a / i, q_avg=a, q_inst=i)
    for eps in sorted(base.filter(pl.col("estimator") == "Beta")["parameter"].unique().to_list(), reverse=True):
        add("janus.ours.beta_q", _mean(base, "q", "Beta", eps), eps=eps)
    return out
