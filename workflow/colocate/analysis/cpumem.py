"""CPU vs memory usage of dominant jobs (Beaumont et al. §4.2, Fig 3).

Per dominant job, the (CPU, memory) points of its tasks at the sampled windows are clustered (DBSCAN), each cluster
is fitted with a line (OLS) and judged Flat, Slope or BadlyFitted, and the job is classified Flat, MultiFlat, Slope,
BadlyFitted or TooFewPoints. A literal "r² below threshold ⇒ BadlyFitted" would reject every flat cluster (r² ≈ 0
by construction), so a flat cluster is judged by its range parameter instead.

Method: docs/methods.md#cpu-vs-memory.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl

import statsmodels.api as sm
from sklearn.cluster import DBSCAN
from sklearn.preprocessing import MinMaxScaler, RobustScaler, StandardScaler

from colocate.insufficient import require
from colocate.sources.contract import CLASSES

#: Job categories (Beaumont §4.2, Fig 3), in the order of the figure's panels.
CATEGORIES = ("Flat", "MultiFlat", "Slope", "BadlyFitted")
#: Well-fitted categories: the paper's shares 67% / 6.5% / 26.5% are of these.
FITTED = ("Flat", "MultiFlat", "Slope")
#: Jobs with too few sampled points to be classified (not in the shares).
TOO_FEW = "TooFewPoints"
#: Fewest points of a cluster a line is fitted to; smaller DBSCAN clusters count as noise.
MIN_CLUSTER_POINTS = 3
#: Per-job scaling of (CPU, memory) before DBSCAN (scikit-learn scalers).
SCALERS = {"standard": StandardScaler, "robust": RobustScaler, "minmax": MinMaxScaler}

POINT_COLUMNS = ["job_id", "task_index", "window", "cpu_rate", "canonical_memory_usage"]
FIT_SCHEMA = {
    "job_id": pl.Int64,
    "cluster": pl.Int32,
    "n_points": pl.Int64,
    "cpu_median": pl.Float64,
    "intercept": pl.Float64,
    "slope": pl.Float64,
    "r2": pl.Float64,
    "cv": pl.Float64,
    "range": pl.Float64,
    "verdict": pl.String,
}
CLASS_SCHEMA = {
    "job_id": pl.Int64,
    "category": pl.String,
    "n_points": pl.Int64,
    "n_clusters": pl.Int32,
    "noise_share": pl.Float64,
}


@dataclasses.dataclass(frozen=True)
class Settings:
    """Parameters of the §4.2 classification (the ``cpumem`` config section supplies them).

    ``eps``/``min_samples``: DBSCAN's, on data scaled by ``scaling``;
    ``r2_min``: least r² of a Slope cluster; ``cv_max``: largest residual
    coefficient of variation of any cluster; ``flat_range_max``: a cluster whose
    range parameter lies in [1/flat_range_max, flat_range_max] is Flat;
    ``min_points``: fewer points ⇒ TooFewPoints.

    The paper publishes none of these values. The defaults classify the
    synthetic trace's injected shapes (colocate.trace.synth: 2% memory noise for
    Flat/MultiFlat/Slope jobs, ≥ 15% for BadlyFitted ones) right for ≈ 99% of
    the classified jobs at the default scale: cluster CVs are ≤ 0.035 for the
    former and ≥ 0.06 for the latter; flat ranges stay within 1 ± 0.025; eps
    1.25 keeps two flat levels ±20% around their mean apart (1.5 merges them).
    """

    eps: float = 1.25
    min_samples: int = 7
    scaling: str = "standard"
    r2_min: float = 0.5
    cv_max: float = 0.05
    flat_range_max: float = 1.1
    min_points: int = 20

    def __post_init__(self) -> None:
        checks = {
            "eps": self.eps > 0,
            "min_samples": self.min_samples >= MIN_CLUSTER_POINTS,
            "scaling": self.scaling in SCALERS,
            "r2_min": 0 <= self.r2_min <= 1,
            "cv_max": self.cv_max > 0,
            "flat_range_max": self.flat_range_max >= 1,
            "min_points": self.min_points >= MIN_CLUSTER_POINTS,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"cpumem.{bad[0]}: invalid value {getattr(self, bad[0])!r}")


# ----------------------------------------------------------------------------- points


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser: a stable 64-bit hash (numpy's uint64 arithmetic wraps)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def point_keys(job_id: np.ndarray, task_index: np.ndarray, window: np.ndarray, seed: int) -> np.ndarray:
    """Pseudo-random uniform [0, 1) key of each (job, task, window) record, a function of the key and ``seed`` only.

    So the subsample of a job does not depend on file order or sharding.
    """
    with np.errstate(over="ignore"):
        h = _mix64(np.asarray(job_id, dtype=np.int64).astype(np.uint64) + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15))
        h = _mix64(h ^ np.asarray(task_index, dtype=np.int64).astype(np.uint64))
        h = _mix64(h ^ np.asarray(window, dtype=np.int64).astype(np.uint64))
    return (h >> np.uint64(11)).astype(np.float64) / float(2**53)


def sample_points(
    sampled: Mapping[str, pl.LazyFrame] | pl.DataFrame,
    job_ids: pl.Series,
    max_points: int,
    seed: int,
    counts: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The (CPU, memory) points of the jobs in ``job_ids`` at the sampled windows, at most ``max_points`` per job.

    ``sampled``: the map's sampled-window records (``window``, ``job_id``,
    ``task_index``, ``cpu_rate``, ``canonical_memory_usage``), as lazy frames
    by name (e.g. ``{path: pl.scan_parquet(path)}``: collected one at a time,
    semi-joined on ``job_ids``, so memory stays bounded; one without these
    columns raises ``ValueError`` naming it) or a frame.
    A job with more points keeps those with the ``max_points`` smallest
    :func:`point_keys` (a seeded uniform subsample). Records with a missing
    value are dropped. Sorted by job, task, window, CPU, memory. ``counts``
    (:func:`point_counts` of these jobs, if already known) saves the first pass.
    """
    if max_points < 1:
        raise ValueError(f"max_points must be ≥ 1, got {max_points}")
    ids = pl.Series("job_id", job_ids, dtype=pl.Int64).unique().implode()

    def frames():
        return _checked_frames(sampled)

    def points_of(lf: pl.LazyFrame) -> pl.LazyFrame:
        return lf.select(POINT_COLUMNS).filter(pl.col("job_id").is_in(ids)).drop_nulls()

    # pass 1: points per job; pass 2: keep each point with probability ≈ 1.5·max/n (a streaming
    # thinning, so memory is bounded by ~1.5·max per job), then the max smallest keys exactly.
    if counts is None:
        counts = _count(frames(), points_of)
    keep_p = counts.with_columns(
        pl.min_horizontal(pl.lit(1.0), (1.5 * max_points + 50) / pl.col("n")).alias("p")
    ).select("job_id", "p")
    kept = []
    for lf in frames():
        part = points_of(lf).with_columns(pl.col("cpu_rate", "canonical_memory_usage").cast(pl.Float64)).collect()
        if part.height == 0:
            continue
        key = point_keys(part["job_id"].to_numpy(), part["task_index"].to_numpy(), part["window"].to_numpy(), seed)
        part = part.with_columns(pl.Series("key", key)).join(keep_p, on="job_id", how="left")
        kept.append(part.filter(pl.col("key") < pl.col("p")).drop("p"))
    if not kept:
        return pl.DataFrame(schema={c: pl.Float64 if c in ("cpu_rate", "canonical_memory_usage") else pl.Int64 for c in POINT_COLUMNS})
    # sorted on every column, so that duplicate records (same key) are kept in a fixed order
    order = ["job_id", "key", "window", "task_index", "cpu_rate", "canonical_memory_usage"]
    points = pl.concat(kept, how="vertical_relaxed").sort(order)
    points = points.filter(pl.int_range(pl.len()).over("job_id") < max_points)
    return points.select(
        pl.col("job_id").cast(pl.Int64),
        pl.col("task_index").cast(pl.Int64),
        pl.col("window").cast(pl.Int64),
        "cpu_rate",
        "canonical_memory_usage",
    ).sort(POINT_COLUMNS)


def _count(frames, points_of) -> pl.DataFrame:
    counts = pl.concat(
        [points_of(lf).group_by("job_id").agg(pl.len().cast(pl.Int64).alias("n")).collect() for lf in frames]
        or [pl.DataFrame(schema={"job_id": pl.Int64, "n": pl.Int64})],
        how="vertical_relaxed",
    )
    return counts.group_by("job_id").agg(pl.col("n").sum()).sort("job_id")


def _checked_frames(sampled: Mapping[str, pl.LazyFrame] | pl.DataFrame):
    """The sampled-window frames one at a time; one without the point columns is a ValueError naming it."""
    if isinstance(sampled, pl.DataFrame):
        yield sampled.lazy()
        return
    for name, lf in sampled.items():
        missing = [c for c in POINT_COLUMNS if c not in lf.collect_schema().names()]
        if missing:
            raise ValueError(f"{name}: not a sampled-windows file, missing column(s) {', '.join(missing)}")
        yield lf


def point_counts(sampled: Mapping[str, pl.LazyFrame] | pl.DataFrame, job_ids: pl.Series) -> pl.DataFrame:
    """(``job_id``, ``n``): each job's points at the sampled windows (records without a missing value), a file at a time."""
    ids = pl.Series("job_id", job_ids, dtype=pl.Int64).unique().implode()
    return _count(_checked_frames(sampled),
                  lambda lf: lf.select(POINT_COLUMNS).filter(pl.col("job_id").is_in(ids)).drop_nulls())


def job_groups(counts: pl.DataFrame, max_points: int, group_points: int) -> list[pl.Series]:
    """The jobs of ``counts`` in consecutive groups (by job ID) that each hold at most ``group_points`` points while
    :func:`sample_points` thins them (≤ 1.5·max + 50 per job; a job above ``group_points`` alone is a group)."""
    if group_points < 1:
        raise ValueError(f"group_points must be ≥ 1, got {group_points}")
    held = np.minimum(counts["n"].to_numpy(), int(1.5 * max_points + 50))
    group = np.zeros(held.size, dtype=np.int64)
    total, g = 0, 0
    for i, h in enumerate(held.tolist()):  # greedy: a new group when this job would overflow the current one
        if total and total + h > group_points:
            g, total = g + 1, 0
        group[i], total = g, total + h
    return [counts["job_id"].filter(pl.Series(group == k)) for k in range(g + 1)] if held.size else []


def classify_sampled(
    sampled: Mapping[str, pl.LazyFrame],
    job_ids: pl.Series,
    max_points: int,
    seed: int,
    settings: Settings,
    group_points: int = 4_000_000,
) -> dict[str, pl.DataFrame | int]:
    """:func:`sample_points` then :func:`classify_jobs` for every job of ``job_ids``, a group of jobs at a time.

    Memory is bounded by ``group_points`` points (:func:`job_groups`), not by the number of dominant jobs: the
    full trace's 25,839 would hold up to tens of millions. Each job's points, fits and class depend on that
    job only, so the result is the same for any grouping. Returns ``fits``, ``classes``, the labelled points of
    Fig 3's example jobs (``examples``, :func:`example_points`), ``n_points`` (the points classified) and ``groups``.
    """
    ids = pl.Series("job_id", job_ids, dtype=pl.Int64)
    counts = point_counts(sampled, ids)
    groups = job_groups(counts, max_points, group_points)
    fits, classes, labelled = [], [], None
    for g in groups:
        out = classify_jobs(sample_points(sampled, g, max_points, seed, counts.join(g.to_frame(), on="job_id")),
                            settings, require_some=False)
        fits.append(out["fits"])
        classes.append(out["classes"])
        labelled = out["points"] if len(groups) == 1 else None
    merged = classify_jobs(pl.DataFrame(schema={c: pl.Float64 if c in ("cpu_rate", "canonical_memory_usage")
                                                else pl.Int64 for c in POINT_COLUMNS}), settings, ids,
                           known=pl.concat(classes) if classes else None)
    if labelled is None:  # the examples' points again: each job's points and labels depend on it alone
        picked = pl.Series("job_id", [j for j in pick_examples(merged["classes"]).values() if j is not None], dtype=pl.Int64)
        labelled = classify_jobs(sample_points(sampled, picked, max_points, seed, counts.join(picked.to_frame(), on="job_id")),
                                 settings, require_some=False)["points"]
    return {"fits": pl.concat(fits) if fits else merged["fits"], "classes": merged["classes"],
            "examples": example_points(labelled, merged["classes"]), "n_points": int(merged["classes"]["n_points"].sum()),
            "groups": len(groups)}


# ----------------------------------------------------------------------------- one job


def cluster_points(cpu: np.ndarray, mem: np.ndarray, eps: float, min_samples: int, scaling: str = "standard") -> np.ndarray:
    """DBSCAN cluster labels of the points (−1 = noise), on per-job scaled (CPU, memory) (Beaumont §4.2).

    Points are clustered in a canonical order (sorted by CPU, then memory), so
    the labels of a point do not depend on the order of the input (DBSCAN
    assigns a border point to the first cluster that reaches it). Labels are
    renumbered 0, 1, … by increasing mean memory. A cluster of fewer than
    :data:`MIN_CLUSTER_POINTS` points (possible when its core point's neighbours
    are border points of another cluster) is counted as noise: no line fits it.
    """
    cpu = np.asarray(cpu, dtype=np.float64)
    mem = np.asarray(mem, dtype=np.float64)
    if cpu.shape != mem.shape or cpu.ndim != 1:
        raise ValueError("cpu and mem must be 1-d arrays of the same length")
    if scaling not in SCALERS:
        raise ValueError(f"unknown scaling {scaling!r} (known: {', '.join(SCALERS)})")
    n = cpu.size
    if n == 0:
        return np.empty(0, dtype=np.int64)
    order = np.lexsort((mem, cpu))
    x = SCALERS[scaling]().fit_transform(np.column_stack([cpu[order], mem[order]]))
    raw = DBSCAN(eps=eps, min_samples=min_samples).fit_predict(x)
    labels = np.empty(n, dtype=np.int64)
    labels[order] = raw
    found, sizes = np.unique(labels[labels >= 0], return_counts=True)
    labels[np.isin(labels, found[sizes < MIN_CLUSTER_POINTS])] = -1
    found = found[sizes >= MIN_CLUSTER_POINTS]
    if found.size == 0:
        return labels
    means = np.array([mem[labels == c].mean() for c in found])
    out = np.full(n, -1, dtype=np.int64)
    for new, c in enumerate(found[np.lexsort((found, means))]):
        out[labels == c] = new
    return out


def fit_cluster(cpu: np.ndarray, mem: np.ndarray) -> dict:
    """OLS line memory = intercept + slope · CPU of one cluster (statsmodels), with the §4.2 quality measures.

    Returns ``n_points``, ``cpu_median``, ``intercept``, ``slope``, ``r2``,
    ``cv`` (residual standard deviation, ``sqrt(mse_resid)``, over the mean
    memory of the dots) and ``range`` (the line at the median CPU over the line
    at CPU 0; +inf when the line is ≤ 0 at CPU 0 and rises, NaN when both are
    ≤ 0). A cluster whose CPU does not vary gets the constant model
    (slope 0, r² 0, range 1).
    """
    cpu = np.asarray(cpu, dtype=np.float64)
    mem = np.asarray(mem, dtype=np.float64)
    n = cpu.size
    if n < 3:
        raise ValueError(f"a cluster needs at least 3 points to fit a line, got {n}")
    if np.ptp(cpu) > 0:
        res = sm.OLS(mem, sm.add_constant(cpu, has_constant="add")).fit()
        intercept, slope = (float(v) for v in res.params)
        r2 = float(res.rsquared) if np.ptp(mem) > 0 else 0.0
        resid_sd = math.sqrt(max(float(res.mse_resid), 0.0))
    else:
        res = sm.OLS(mem, np.ones((n, 1))).fit()
        intercept, slope, r2 = float(res.params[0]), 0.0, 0.0
        resid_sd = math.sqrt(max(float(res.mse_resid), 0.0))
    mean = float(mem.mean())
    cv = resid_sd / mean if mean > 0 else math.inf
    median = float(np.median(cpu))
    at_median = intercept + slope * median
    if intercept > 0:
        rng = at_median / intercept
    elif at_median > intercept:
        rng = math.inf
    else:
        rng = math.nan
    return {
        "n_points": n,
        "cpu_median": median,
        "intercept": intercept,
        "slope": slope,
        "r2": r2,
        "cv": cv,
        "range": rng,
    }


def cluster_verdict(fit: dict, r2_min: float, cv_max: float, flat_range_max: float) -> str:
    """Flat, Slope or BadlyFitted for one cluster's fit (Beaumont §4.2; the criterion: docs/methods.md#cpu-vs-memory).

    The r² test applies only to clusters whose range parameter says Slope: a flat
    cluster has r² ≈ 0 by construction, so it is judged by the residual CV alone.
    """
    if not (fit["cv"] <= cv_max):  # NaN/inf fail too
        return "BadlyFitted"
    rng = fit["range"]
    if math.isnan(rng):
        return "BadlyFitted"
    if 1.0 / flat_range_max <= rng <= flat_range_max:
        return "Flat"
    return "Slope" if fit["r2"] >= r2_min else "BadlyFitted"


def job_category(verdicts: Sequence[str]) -> str:
    """A job's category from its clusters' verdicts (Beaumont §4.2, conservatively as the paper).

    BadlyFitted if any cluster is (or there is none); Flat if one flat cluster;
    MultiFlat if ≥ 2 clusters, all flat; otherwise Slope.
    """
    if len(verdicts) == 0 or "BadlyFitted" in verdicts:
        return "BadlyFitted"
    if all(v == "Flat" for v in verdicts):
        return "Flat" if len(verdicts) == 1 else "MultiFlat"
    return "Slope"


def classify_job(cpu: np.ndarray, mem: np.ndarray, settings: Settings) -> tuple[str, np.ndarray, list[dict]]:
    """One job: (category, DBSCAN labels per point, one fit dict per cluster with its ``verdict``).

    Clustering and fits run on the points sorted by (CPU, memory), so the result
    does not depend on the order of the points, to the last bit.
    """
    cpu = np.asarray(cpu, dtype=np.float64)
    mem = np.asarray(mem, dtype=np.float64)
    if cpu.size < settings.min_points:
        return TOO_FEW, np.full(cpu.size, -1, dtype=np.int64), []
    order = np.lexsort((mem, cpu))
    x, y = cpu[order], mem[order]
    sorted_labels = cluster_points(x, y, settings.eps, settings.min_samples, settings.scaling)
    fits = []
    for c in range(int(sorted_labels.max()) + 1 if sorted_labels.size else 0):
        sel = sorted_labels == c
        fit = fit_cluster(x[sel], y[sel])
        fit["cluster"] = c
        fit["verdict"] = cluster_verdict(fit, settings.r2_min, settings.cv_max, settings.flat_range_max)
        fits.append(fit)
    labels = np.empty_like(sorted_labels)
    labels[order] = sorted_labels
    return job_category([f["verdict"] for f in fits]), labels, fits


# ----------------------------------------------------------------------------- all jobs


def classify_jobs(points: pl.DataFrame, settings: Settings, job_ids: pl.Series | None = None, *,
                  require_some: bool = True, known: pl.DataFrame | None = None) -> dict[str, pl.DataFrame]:
    """Every job of ``points`` (:func:`sample_points`): per-cluster fits, per-job classes and per-point labels.

    ``job_ids``, if given, adds the jobs without any point (TooFewPoints, 0 points). ``known``: classes
    already computed (of other groups of jobs), added before that. ``require_some``: raise
    InsufficientData when no job has enough points (off for one group of many).
    Returns ``fits`` (one row per job × cluster: :data:`FIT_SCHEMA`), ``classes``
    (one row per job: :data:`CLASS_SCHEMA`) and ``points`` (the points, sorted,
    with their DBSCAN ``cluster``; −1 = noise or not clustered).
    """
    fit_rows, class_rows, label_parts = [], [], []
    pts = points.select(POINT_COLUMNS).sort(POINT_COLUMNS)
    for (job_id,), part in pts.group_by("job_id", maintain_order=True):
        cpu = part["cpu_rate"].to_numpy()
        mem = part["canonical_memory_usage"].to_numpy()
        category, labels, fits = classify_job(cpu, mem, settings)
        for f in fits:
            fit_rows.append({"job_id": job_id, **{k: f[k] for k in FIT_SCHEMA if k != "job_id"}})
        clustered = category != TOO_FEW
        class_rows.append(
            {
                "job_id": job_id,
                "category": category,
                "n_points": cpu.size,
                "n_clusters": len(fits),
                "noise_share": float((labels < 0).mean()) if clustered and cpu.size else None,
            }
        )
        label_parts.append(part.with_columns(pl.Series("cluster", labels, dtype=pl.Int32)))
    classes = pl.DataFrame(class_rows, schema=CLASS_SCHEMA)
    if known is not None:
        classes = pl.concat([known.select(list(CLASS_SCHEMA)), classes])
    if job_ids is not None:
        missing = pl.DataFrame({"job_id": pl.Series(job_ids, dtype=pl.Int64)}).join(classes, on="job_id", how="anti")
        classes = pl.concat(
            [classes, missing.unique().with_columns(
                pl.lit(TOO_FEW).alias("category"), pl.lit(0, pl.Int64).alias("n_points"),
                pl.lit(0, pl.Int32).alias("n_clusters"), pl.lit(None, pl.Float64).alias("noise_share"),
            )]
        )
    require(
        not require_some or (classes["category"] != TOO_FEW).any(),
        f"none of the {classes.height} dominant jobs has ≥ {settings.min_points} sampled (cpu, memory) points",
        f"task_usage over more sampled windows (mapreduce.sampled_windows_per_day per day): "
        f"≥ {settings.min_points} records of some dominant job",
    )
    labelled = pl.concat(label_parts) if label_parts else pts.with_columns(pl.lit(-1, pl.Int32).alias("cluster"))
    return {
        "fits": pl.DataFrame(fit_rows, schema=FIT_SCHEMA),
        "classes": classes.sort("job_id"),
        "points": labelled,
    }


def shares(classes: pl.DataFrame, job_class: pl.DataFrame | None = None, paper: Mapping[str, float] | None = None) -> pl.DataFrame:
    """Counts and shares per category, over all jobs and per priority class (Beaumont §4.2).

    ``share_of_fitted``: of the Flat + MultiFlat + Slope jobs (the paper's 67% /
    6.5% / 26.5%); ``share_of_classified``: of all jobs with enough points (the
    paper's "about half" BadlyFitted). TooFewPoints jobs get a count only.
    ``job_class`` (``job_id``, ``class``) adds one block per priority class, in
    the order gratis, other, production, monitoring, infrastructure. ``paper``: the
    paper's share per category (``workflow/papers/tables/beaumont-s42-shares.tsv``),
    the ``paper`` column.
    """
    frames = [("all", classes)]
    if job_class is not None:
        joined = classes.join(job_class.select("job_id", "class"), on="job_id", how="left").with_columns(
            pl.col("class").fill_null("unknown")
        )
        rank = {c: i for i, c in enumerate(CLASSES)}
        for cls in sorted(joined["class"].unique().to_list(), key=lambda c: (rank.get(c, len(rank)), c)):
            frames.append((cls, joined.filter(pl.col("class") == cls)))
    rows = []
    for scope, part in frames:
        counts = dict(part.group_by("category").len().iter_rows())
        fitted = sum(counts.get(c, 0) for c in FITTED)
        classified = fitted + counts.get("BadlyFitted", 0)
        for cat in (*CATEGORIES, TOO_FEW):
            n = counts.get(cat, 0)
            rows.append(
                {
                    "scope": scope,
                    "category": cat,
                    "n_jobs": n,
                    "share_of_fitted": n / fitted if cat in FITTED and fitted else None,
                    "share_of_classified": n / classified if cat != TOO_FEW and classified else None,
                    "paper": (paper or {}).get(cat),
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "scope": pl.String,
            "category": pl.String,
            "n_jobs": pl.Int64,
            "share_of_fitted": pl.Float64,
            "share_of_classified": pl.Float64,
            "paper": pl.Float64,
        },
    )


def pick_examples(classes: pl.DataFrame) -> dict[str, int | None]:
    """Fig 3's example job of each category: the one with most points (ties: smallest job ID); None if none."""
    out = {}
    for cat in CATEGORIES:
        part = classes.filter(pl.col("category") == cat).sort(["n_points", "job_id"], descending=[True, False])
        out[cat] = int(part["job_id"][0]) if part.height else None
    return out


def example_points(points: pl.DataFrame, classes: pl.DataFrame) -> pl.DataFrame:
    """The points of Fig 3's example jobs (:func:`pick_examples`) with their category and DBSCAN ``cluster`` (−1 = noise).

    ``points``: :func:`classify_jobs`' labelled points.
    """
    picked = pl.DataFrame(
        [(cat, jid) for cat, jid in pick_examples(classes).items() if jid is not None],
        schema={"category": pl.String, "job_id": pl.Int64},
        orient="row",
    )
    return picked.join(points, on="job_id", how="inner").sort(POINT_COLUMNS)


def measurements(table: pl.DataFrame, classes: pl.DataFrame, settings: Settings) -> list[dict]:
    """What §4.2 reports, as measured here, by the claim it answers (``workflow/papers/beaumont.tsv``): the
    shares of the categories, the jobs classified and left out, the DBSCAN noise."""
    from colocate.measure import measurement

    overall = {r["category"]: r for r in table.filter(pl.col("scope") == "all").iter_rows(named=True)}
    classified = classes.filter(pl.col("category") != TOO_FEW)
    n_points = classified["n_points"].sum()
    noise = float((classified["noise_share"] * classified["n_points"]).sum() / n_points) if n_points else None
    crit = (
        f"cluster BadlyFitted if CV > {settings.cv_max:g}, or if its range is outside "
        f"[1/{settings.flat_range_max:g}, {settings.flat_range_max:g}] and r² < {settings.r2_min:g}"
    )
    n_fitted = sum(overall[c]["n_jobs"] for c in FITTED)
    return [
        measurement("beaumont.s42.flat", overall["Flat"]["share_of_fitted"], f"{n_fitted} fitted jobs"),
        measurement("beaumont.s42.multiflat", overall["MultiFlat"]["share_of_fitted"], "≥ 2 DBSCAN clusters, all flat"),
        measurement("beaumont.s42.slope", overall["Slope"]["share_of_fitted"], "affine memory in CPU"),
        measurement("beaumont.s42.badly_fitted", overall["BadlyFitted"]["share_of_classified"], crit, n=classified.height),
        measurement("beaumont.s42.classified", classified.height, f"≥ {settings.min_points} sampled points"),
        measurement("beaumont.s42.too_few_points", overall[TOO_FEW]["n_jobs"], "left out of the shares"),
        measurement("beaumont.s42.noise", noise, "left out of the fits"),
    ]
