"""Fourier periodicity of long-running production jobs (Beaumont et al. §5.2, Table 4).

The hourly, daily, weekly and long-term components and the residual noise of the CPU demand of each *Normal
Production* dominant job that runs the whole trace, as ratios of amplitude to its mean (Table 4); which components
are significant, the weekly shape, and how close the daily peaks are, as the paper reports them.

Input: the job × 5-minute-window aggregates of the dominant jobs (``results/jobs/dominant_windows.parquet``) and the
per-job table (``dominant_jobs.parquet``); nothing here reads raw records.

Method: docs/methods.md#periodicity.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import polars as pl
from scipy import fft, stats

from colocate.analysis.jobs import TABLE_STATS, describe
from colocate.insufficient import require
from colocate.measure import measurement
from colocate.sources.contract import WINDOWS_PER_DAY

#: Periods of the periodic components, in 5-minute windows (WINDOWS_PER_DAY: colocate.trace's).
WINDOWS_PER_HOUR = 12
WINDOWS_PER_WEEK = 7 * WINDOWS_PER_DAY
PERIODS = {"hourly": WINDOWS_PER_HOUR, "daily": WINDOWS_PER_DAY, "weekly": WINDOWS_PER_WEEK}
#: Components of Beaumont Table 4 (long_term: period = the trace's length).
COMPONENTS = ("hourly", "daily", "weekly", "long_term")
TABLE4_COLUMNS = (*COMPONENTS, "noise")
#: "5 days of high usage, followed by 2 days of lower usage" (§5.2).
LOW_DAYS = 2
#: Backfitting rounds of the long-term sinusoid against the basis-periodic profile.
_BACKFIT_ROUNDS = 4
#: Columns read from the dominant-job table and the job × window rows (colocate.analysis.jobs).
DOMINANT_COLUMNS = ("job_id", "class", "n_windows", "first_window", "last_window", "tasks_mean")
WINDOW_COLUMNS = ["job_id", "window", "cpu_sum"]


def check_columns(names: Sequence[str], columns: Sequence[str], source: str) -> None:
    """Raise a ValueError naming ``source`` (the file) when any of ``columns`` is not among ``names``."""
    names = list(names)
    missing = [c for c in columns if c not in names]
    if missing:
        raise ValueError(f"{source}: missing column(s) {', '.join(missing)} (has {', '.join(names)})")


# ----------------------------------------------------------------------------- selection and series


def entity_spans(parts: Sequence[pl.LazyFrame]) -> pl.DataFrame:
    """Each entity of the contract's series (one LazyFrame per bucket, collected a bucket at a time) as a job of its
    own, of class :data:`ENTITY_CLASS`: ``n_windows`` (its windows with a record), ``first_window`` and
    ``last_window``, sorted by key (the columns :func:`select_jobs` reads)."""
    from colocate.sources.contract import window_of

    frames = [p.group_by("job_id", "task_index").agg(window_of().n_unique().alias("n_windows"),
                                                    window_of().min().alias("first_window"),
                                                    window_of().max().alias("last_window")).collect() for p in parts]
    schema = {"job_id": pl.Int64, "task_index": pl.Int64, "n_windows": pl.UInt32, "first_window": pl.Int64,
              "last_window": pl.Int64}
    spans = pl.concat(frames) if frames else pl.DataFrame(schema=schema)
    return spans.with_columns(pl.lit(ENTITY_CLASS).alias("class")).sort("job_id", "task_index")


def whole_span_entities(spans: pl.DataFrame, n_windows: int, min_coverage: float, limit: int | None,
                        seed: int) -> pl.DataFrame:
    """Entities read over the whole span, for a trace whose entities have no priority class to choose long-running
    jobs by (Beaumont §5.2's "run during the whole trace", for VMs): those :func:`select_jobs` keeps of ``spans``
    (:func:`entity_spans`). At most ``limit`` of them (None: all), drawn at random with ``seed`` (a month of
    5-minute windows is 69 kB an entity), sorted by key."""
    whole = select_jobs(spans, n_windows, (ENTITY_CLASS,), min_coverage).sort("job_id", "task_index")
    if limit is not None and whole.height > limit:
        keep = np.sort(np.random.default_rng(seed).choice(whole.height, size=limit, replace=False))
        whole = whole[keep]
    return whole


#: The class of an entity that is its own group (a trace without priorities).
ENTITY_CLASS = "all"


def entity_groups(chosen: pl.DataFrame, series: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The ``chosen`` entities (:func:`whole_span_entities`), each its own group of class :data:`ENTITY_CLASS` with one
    task, in the shapes :func:`analyse` reads for dominant jobs (:data:`DOMINANT_COLUMNS`, :data:`WINDOW_COLUMNS`):
    ``job_id`` the entity's rank (by key), its ``cpu_sum`` per window its ``avg`` usage in the contract's units
    (Table 4's ratios are relative to the mean, so the unit cancels there; §8.2's packing reads it). Returns
    ``(dominant, windows)``."""
    from colocate.sources.contract import window_of

    key = ["job_id", "task_index"]
    ids = chosen.select(*key, pl.int_range(pl.len(), dtype=pl.Int64).alias("group"))
    dominant = chosen.join(ids, on=key).select(
        pl.col("group").alias("job_id"), "class", pl.col("n_windows").cast(pl.Int64),
        pl.col("first_window").cast(pl.Int64), pl.col("last_window").cast(pl.Int64), pl.lit(1.0).alias("tasks_mean"))
    windows = series.join(ids, on=key).select(pl.col("group").alias("job_id"), window_of().cast(pl.Int64),
                                              pl.col("avg").cast(pl.Float64).alias("cpu_sum"))
    return dominant.sort("job_id"), windows.sort("job_id", "window")


def select_jobs(
    dominant: pl.DataFrame, n_windows: int, classes: Sequence[str] = ("production",), min_coverage: float = 1.0
) -> pl.DataFrame:
    """Dominant jobs that run the whole trace (Beaumont §5.2: "Normal Production, dominant jobs that run during the whole trace").

    A job qualifies when its class is in ``classes``, it is alive in the
    first and the last window of the trace and in at least ``min_coverage`` of
    its ``n_windows`` windows (1.0: every window, the paper's whole trace).
    """
    if not 0 < min_coverage <= 1:
        raise ValueError(f"min_coverage must be in (0, 1], got {min_coverage}")
    if not classes:
        raise ValueError("classes must name at least one priority class")
    if n_windows < 1:
        raise ValueError(f"n_windows must be >= 1, got {n_windows}")
    need = math.ceil(min_coverage * n_windows - 1e-9)
    return dominant.filter(
        pl.col("class").is_in(list(classes))
        & (pl.col("first_window") == 0)
        & (pl.col("last_window") == n_windows - 1)
        & (pl.col("n_windows") >= need)
    ).sort("job_id")


def job_series(windows: pl.DataFrame, job_ids: Sequence[int], n_windows: int) -> tuple[np.ndarray, np.ndarray]:
    """CPU series of the jobs: a (jobs × n_windows) array of each job's total CPU per window, and the filled count.

    ``windows`` holds ``job_id``, ``window`` and ``cpu_sum`` rows (the
    dominant_windows table). Missing windows are filled with the job's mean
    at the same time of day (docs/methods.md#periodicity); the second array
    counts them per job.
    """
    ids = np.asarray(job_ids, dtype=np.int64)
    x = np.full((ids.size, n_windows), np.nan)
    if ids.size == 0:
        return x, np.zeros(0, dtype=np.int64)
    rows = pl.DataFrame({"job_id": ids, "row": np.arange(ids.size)})
    w = windows.select("job_id", "window", "cpu_sum").join(rows, on="job_id", how="inner")
    k = w["window"].to_numpy()
    if k.size and (k.min() < 0 or k.max() >= n_windows):
        raise ValueError(f"window index outside [0, {n_windows}): {int(k.min())}..{int(k.max())}")
    x[w["row"].to_numpy(), k] = w["cpu_sum"].to_numpy().astype(np.float64)
    filled = np.isnan(x).sum(axis=1)
    return fill_by_time_of_day(x), filled


def fill_by_time_of_day(x: np.ndarray) -> np.ndarray:
    """Replace NaN windows by the job's mean at the same slot of the day (its overall mean if the slot is never seen)."""
    x = np.array(x, dtype=np.float64, copy=True)
    slot = np.arange(x.shape[1]) % WINDOWS_PER_DAY
    for j in np.flatnonzero(np.isnan(x).any(axis=1)):
        ok = ~np.isnan(x[j])
        if not ok.any():
            raise ValueError(f"series row {j} has no observed window")
        total = np.bincount(slot[ok], weights=x[j, ok], minlength=WINDOWS_PER_DAY)
        count = np.bincount(slot[ok], minlength=WINDOWS_PER_DAY)
        profile = np.where(count > 0, total / np.maximum(count, 1), x[j, ok].mean())
        x[j, ~ok] = profile[slot[~ok]]
    return x


# ----------------------------------------------------------------------------- decomposition


def component_bin(x: np.ndarray, period: int) -> tuple[np.ndarray, np.ndarray]:
    """Amplitude and peak phase (radians) of the component of ``period`` windows, per row of ``x``.

    The DFT of the longest prefix with a whole number K of periods puts the
    component exactly on bin K: amplitude 2|X_K|/m and peak phase
    φ = π/P − arg X_K for x ≈ c + A·cos(2π(k + ½)/P − φ). NaN when the series
    is shorter than one period.
    """
    x = np.atleast_2d(x)
    n = x.shape[1]
    K = n // period
    if K < 1 or period < 3:
        nan = np.full(x.shape[0], np.nan)
        return nan, nan.copy()
    m = K * period
    X = fft.rfft(x[:, :m], axis=1)[:, K]
    return 2 * np.abs(X) / m, np.mod(np.pi / period - np.angle(X), 2 * np.pi)


def periodic_profile(x: np.ndarray, period: int) -> np.ndarray:
    """The part of each row periodic in ``period``: slot means over the whole periods, tiled to the full length.

    Equal to keeping the prefix's DFT bins at multiples of its number of
    periods (DC included) and extending the result periodically.
    """
    x = np.atleast_2d(x)
    n = x.shape[1]
    K = n // period
    m = K * period
    prof = x[:, :m].reshape(x.shape[0], K, period).mean(axis=1)
    return prof[:, np.arange(n) % period]


def long_term_fit(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sinusoid whose period is the series' length (DFT bin 1): amplitude, peak phase, and its values."""
    y = np.atleast_2d(y)
    n = y.shape[1]
    X = fft.rfft(y, axis=1)[:, 1]
    amp = 2 * np.abs(X) / n
    phase = np.mod(np.pi / n - np.angle(X), 2 * np.pi)
    t = 2 * np.pi * (np.arange(n) + 0.5) / n
    return amp, phase, amp[:, None] * np.cos(t[None, :] - phase[:, None])


def basis_period(n: int) -> int | None:
    """The longest of week, day, hour that fits at least twice in n windows (the noise's periodic basis)."""
    for p in (WINDOWS_PER_WEEK, WINDOWS_PER_DAY, WINDOWS_PER_HOUR):
        if n // p >= 2:
            return p
    return None


def decompose(x: np.ndarray) -> dict[str, np.ndarray]:
    """Beaumont §5.2's Fourier decomposition of each row of ``x`` (jobs × windows); method: docs/methods.md#periodicity.

    Returns per row: ``mean``, ``<c>_amplitude`` for c in :data:`COMPONENTS`,
    ``daily_phase_deg`` (peak phase, cos convention, since the trace start),
    ``noise_std`` and ``basis_period`` (windows, 0 when no noise estimate).
    Ratios are amplitudes over ``mean``.
    """
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    J, n = x.shape
    out: dict[str, np.ndarray] = {"mean": x.mean(axis=1) if n else np.full(J, np.nan)}
    P = basis_period(n)
    trend = np.zeros_like(x)
    lt_amp = np.full(J, np.nan)
    if n >= 3:
        for _ in range(_BACKFIT_ROUNDS if P else 1):
            prof = periodic_profile(x - trend, P) if P else np.repeat(out["mean"][:, None], n, axis=1)
            lt_amp, _, trend = long_term_fit(x - prof)
    z = x - trend
    for name, period in PERIODS.items():
        amp, phase = component_bin(z, period)
        out[f"{name}_amplitude"] = amp
        if name == "daily":
            out["daily_phase_deg"] = np.degrees(phase)
    out["long_term_amplitude"] = lt_amp
    if P:
        m = (n // P) * P
        r = (z - periodic_profile(z, P))[:, :m]
        dof = m - P - 2
        out["noise_std"] = np.sqrt((r**2).sum(axis=1) / dof) if dof > 0 else np.full(J, np.nan)
    else:
        out["noise_std"] = np.full(J, np.nan)
    out["basis_period"] = np.full(J, P or 0, dtype=np.int64)
    return out


def components(
    series: np.ndarray,
    jobs: pl.DataFrame,
    significance_ratio: float = 0.12,
    strong_ratio: float = 0.2,
    n_filled: np.ndarray | None = None,
) -> pl.DataFrame:
    """One row per job: Table 4's amplitude/mean ratios, the daily peak phase, noise and significance flags (Beaumont §5.2).

    ``jobs`` holds ``job_id`` (and optionally ``tasks_mean``) in the order of
    the rows of ``series``. A ratio is NaN where the trace is shorter than
    the component's period (or the job's mean CPU is 0).
    """
    if series.shape[0] != jobs.height:
        raise ValueError(f"series has {series.shape[0]} rows but jobs has {jobs.height}")
    d = decompose(series) if jobs.height else {k: np.zeros(0) for k in ("mean", "daily_phase_deg", "noise_std", "basis_period")}
    mean = d["mean"]
    safe = np.where(mean > 0, mean, np.nan)
    cols: dict[str, object] = {"job_id": jobs["job_id"].cast(pl.Int64)}
    cols["tasks_mean"] = jobs["tasks_mean"].cast(pl.Float64) if "tasks_mean" in jobs.columns else np.ones(jobs.height)
    cols["n_filled"] = np.zeros(jobs.height, dtype=np.int64) if n_filled is None else np.asarray(n_filled, dtype=np.int64)
    cols["mean"] = mean
    for c in COMPONENTS:
        amp = d.get(f"{c}_amplitude", np.zeros(0))
        cols[f"{c}_amplitude"] = amp
        cols[f"{c}_ratio"] = amp / safe
    cols["daily_phase_deg"] = d["daily_phase_deg"]
    cols["noise_ratio"] = d["noise_std"] / safe
    cols["noise_period_h"] = d["basis_period"] / WINDOWS_PER_HOUR
    out = pl.DataFrame(cols).with_columns(pl.col(pl.Float64).fill_nan(None))
    return out.with_columns(
        *[(pl.col(f"{c}_ratio") > significance_ratio).alias(f"{c}_significant") for c in COMPONENTS],
        (pl.col("daily_ratio") > strong_ratio).alias("daily_strong"),
    )


# ----------------------------------------------------------------------------- Table 4, weekly shape, phases


def table4(comps: pl.DataFrame, paper: pl.DataFrame | None = None) -> pl.DataFrame:
    """Beaumont Table 4: mean, std, min, quartiles and max of each ratio over the jobs, beside the paper's.

    Columns ``hourly`` … ``noise`` are ours; with ``paper`` (the paper's table: a ``statistic`` column in the order
    of :data:`colocate.analysis.jobs.TABLE_STATS` and one column per component, ``workflow/papers/tables/``),
    ``paper_<column>`` are the paper's. A last row ``jobs`` counts the jobs with a finite ratio.
    """
    rows: dict[str, list] = {"statistic": [*TABLE_STATS, "jobs"]}
    for c in TABLE4_COLUMNS:
        v = comps[f"{c}_ratio"].cast(pl.Float64).to_numpy() if comps.height else np.zeros(0)
        rows[c] = [*describe(v), float(np.isfinite(v).sum())]
    if paper is not None:
        if paper["statistic"].to_list() != list(TABLE_STATS) or not set(TABLE4_COLUMNS) <= set(paper.columns):
            raise ValueError(f"the paper's Table 4 needs rows {list(TABLE_STATS)} and columns {list(TABLE4_COLUMNS)}, "
                             f"got rows {paper['statistic'].to_list()} and columns {paper.columns}")
        for c in TABLE4_COLUMNS:
            rows[f"paper_{c}"] = [*paper[c].cast(pl.Float64).to_list(), None]
    return pl.DataFrame(rows, schema={"statistic": pl.String, **{k: pl.Float64 for k in rows if k != "statistic"}})


def weekly_shape(series: np.ndarray, comps: pl.DataFrame) -> pl.DataFrame:
    """Beaumont §5.2's weekly shape: each job's mean CPU per day of the week over its mean, and its two lowest days.

    Days are counted from the trace start (day 0 = its first 24 hours), mod 7,
    over the whole weeks of the series after removing the long-term
    sinusoid. Columns: ``job_id``, ``weekly_ratio``, ``weekly_significant``,
    ``day_0`` … ``day_6``, ``low_days`` (the two lowest, e.g. "5,6") and
    ``low_gap`` (mean of the other days minus mean of the low days, over the
    mean). Empty when the trace holds no whole week.
    """
    n = series.shape[1] if series.ndim == 2 else 0
    weeks = n // WINDOWS_PER_WEEK
    schema = {"job_id": pl.Int64, "weekly_ratio": pl.Float64, "weekly_significant": pl.Boolean}
    schema |= {f"day_{d}": pl.Float64 for d in range(7)} | {"low_days": pl.String, "low_gap": pl.Float64}
    if weeks < 1 or series.shape[0] == 0:
        return pl.DataFrame(schema=schema)
    x = np.atleast_2d(series)
    P = basis_period(n)
    trend = np.zeros_like(x)
    for _ in range(_BACKFIT_ROUNDS):
        _, _, trend = long_term_fit(x - periodic_profile(x - trend, P))
    z = (x - trend)[:, : weeks * WINDOWS_PER_WEEK]
    mean = x.mean(axis=1)
    level = z.reshape(x.shape[0], weeks, 7, WINDOWS_PER_DAY).mean(axis=(1, 3)) / np.where(mean > 0, mean, np.nan)[:, None]
    order = np.argsort(level, axis=1, kind="stable")
    low = np.sort(order[:, :LOW_DAYS], axis=1)
    mask = np.zeros_like(level, dtype=bool)
    np.put_along_axis(mask, order[:, :LOW_DAYS], True, axis=1)
    gap = np.where(mask, np.nan, level)
    gap = np.nanmean(gap, axis=1) - np.nanmean(np.where(mask, level, np.nan), axis=1)
    cols = {
        "job_id": comps["job_id"],
        "weekly_ratio": comps["weekly_ratio"],
        "weekly_significant": comps["weekly_significant"],
        **{f"day_{d}": level[:, d] for d in range(7)},
        "low_days": [",".join(map(str, r)) for r in low.tolist()],
        "low_gap": gap,
    }
    return pl.DataFrame(cols, schema=schema).with_columns(pl.col(pl.Float64).fill_nan(None))


def weekly_synchrony(shape: pl.DataFrame) -> dict[str, object]:
    """Among weekly-significant jobs: their number, the modal pair of low days and the share sharing it (§5.2: all)."""
    sig = shape.filter(pl.col("weekly_significant").fill_null(False)) if shape.height else shape
    if sig.height == 0:
        return {"jobs": 0, "modal_low_days": None, "share_modal": None}
    counts = Counter(sig["low_days"].to_list())
    pair, k = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"jobs": sig.height, "modal_low_days": pair, "share_modal": k / sig.height}


def daily_phases(comps: pl.DataFrame, min_ratio: float = 0.10) -> pl.DataFrame:
    """Daily peak phases of the jobs with daily ratio ≥ ``min_ratio`` and their deviation from the circular mean (§5.2).

    ``deviation_deg`` ∈ [0°, 180°] is the angle between a job's peak phase and
    the circular mean (:func:`scipy.stats.circmean`) of all these jobs'
    phases; ``peak_hour`` is the peak's hour of the day counted from the
    trace start (360° = 24 h, so 60° = 4 hours).
    """
    sel = comps.filter(pl.col("daily_ratio") >= min_ratio) if comps.height else comps
    schema = {"job_id": pl.Int64, "daily_ratio": pl.Float64, "daily_phase_deg": pl.Float64,
              "peak_hour": pl.Float64, "deviation_deg": pl.Float64}
    if sel.height == 0:
        return pl.DataFrame(schema=schema)
    phase = sel["daily_phase_deg"].to_numpy()
    centre = stats.circmean(phase, high=360.0, low=0.0)
    dev = np.abs(np.mod(phase - centre + 180.0, 360.0) - 180.0)
    return pl.DataFrame(
        {"job_id": sel["job_id"], "daily_ratio": sel["daily_ratio"], "daily_phase_deg": phase,
         "peak_hour": phase / 15.0, "deviation_deg": dev},
        schema=schema,
    ).sort("deviation_deg", "job_id")


def phase_shares(phases: pl.DataFrame, limits_deg: Sequence[float] = (60.0, 120.0)) -> dict[float, float | None]:
    """Share of the jobs whose daily phase deviation is below each limit (§5.2: 0.5 below 60°, 0.9 below 120°)."""
    dev = phases["deviation_deg"].to_numpy() if phases.height else np.zeros(0)
    return {float(lim): (float((dev < lim).mean()) if dev.size else None) for lim in limits_deg}


def spectra(series: np.ndarray, comps: pl.DataFrame, n_jobs: int = 4) -> pl.DataFrame:
    """Amplitude spectra (2|X_k|/n over the mean, k ≥ 1) of ``n_jobs`` jobs spread over the range of daily ratios.

    The jobs are those at evenly spaced ranks of the daily ratio (lowest to
    highest), so the figure shows weak and strong daily patterns alike.
    Columns ``job_id``, ``daily_ratio``, ``period_h``, ``ratio``.
    """
    schema = {"job_id": pl.Int64, "daily_ratio": pl.Float64, "period_h": pl.Float64, "ratio": pl.Float64}
    n = series.shape[1] if series.ndim == 2 else 0
    if comps.height == 0 or n < 2 or n_jobs < 1:
        return pl.DataFrame(schema=schema)
    dr = comps["daily_ratio"].fill_null(-1.0).to_numpy()
    order = np.argsort(dr, kind="stable")
    picks = order[np.unique(np.round(np.linspace(0, order.size - 1, min(n_jobs, order.size))).astype(int))]
    X = fft.rfft(series[picks], axis=1)
    k = np.arange(1, X.shape[1])
    mean = series[picks].mean(axis=1)
    ratio = 2 * np.abs(X[:, 1:]) / n / np.where(mean > 0, mean, np.nan)[:, None]
    return pl.DataFrame(
        {
            "job_id": np.repeat(comps["job_id"].to_numpy()[picks], k.size),
            "daily_ratio": np.repeat(dr[picks], k.size),
            "period_h": np.tile(n / k / WINDOWS_PER_HOUR, picks.size),
            "ratio": ratio.ravel(),
        },
        schema=schema,
    ).with_columns(pl.col("daily_ratio").replace(-1.0, None))


# ----------------------------------------------------------------------------- the whole analysis and its summary


def analyse(
    dominant: pl.DataFrame,
    windows: pl.DataFrame,
    n_windows: int,
    *,
    classes: Sequence[str] = ("production",),
    min_coverage: float = 1.0,
    significance_ratio: float = 0.12,
    strong_ratio: float = 0.2,
    phase_min_ratio: float = 0.10,
    spectra_jobs: int = 4,
) -> dict[str, pl.DataFrame]:
    """Beaumont §5.2 end to end: select the jobs, build their series, decompose; Table 4, weekly shape, phases, spectra."""
    jobs = select_jobs(dominant, n_windows, classes, min_coverage)
    observed = int(windows["window"].n_unique()) if windows.height else 0
    require(
        jobs.height > 0,
        f"no {' or '.join(classes)} dominant job runs the whole trace (alive in the first and last of its "
        f"{n_windows} windows and in ≥ {min_coverage:.0%} of them); task_usage covers {observed} window(s)",
        "task_usage over the trace's whole span (29 days; at least two weeks for the daily and weekly components)",
    )
    series, filled = job_series(windows, jobs["job_id"].to_list(), n_windows)
    comps = components(series, jobs, significance_ratio, strong_ratio, n_filled=filled)
    return {
        "components": comps,
        "table4": table4(comps),
        "weekly": weekly_shape(series, comps),
        "phases": daily_phases(comps, phase_min_ratio),
        "spectra": spectra(series, comps, spectra_jobs),
    }


def _share(comps: pl.DataFrame, flag: str) -> float | None:
    """Share of the jobs with a measured ratio whose flag is set (None without any)."""
    v = comps[flag].drop_nulls() if comps.height else pl.Series([], dtype=pl.Boolean)
    return float(v.mean()) if v.len() else None


#: The measured cause of Table 4's noise deviation on the synthetic trace (README, "Where the synthetic trace differs").
def measurements(
    comps: pl.DataFrame,
    weekly: pl.DataFrame,
    phases: pl.DataFrame,
    *,
    n_windows: int,
    significance_ratio: float,
    strong_ratio: float,
    phase_min_ratio: float,
    phase_limits_deg: Sequence[float] = (60.0, 120.0),
    groups: str = "long-running production dominant jobs",
) -> list[dict]:
    """What Beaumont §5.2 reports, as measured here, by the claim it answers (``workflow/papers/beaumont.tsv``).
    ``groups`` names what was analysed (on a trace without priorities: entities read over the whole trace).

    Table 4's statistics and the shares are over a few jobs (17 at the ``default`` scale): each measurement gives
    its number of jobs ``n``, at which its claim's tolerance is two standard errors.
    """
    days = n_windows / WINDOWS_PER_DAY
    rows = [measurement("beaumont.s52.analysed", comps.height,
                        f"alive in the first and last of {n_windows} windows ({days:g} days)", groups=groups)]
    t4 = table4(comps)
    basis = basis_period(n_windows)
    notes = {
        "weekly": "NaN: the trace holds no whole week" if n_windows < WINDOWS_PER_WEEK else "",
        "long_term": f"period = the trace's {days:g} days",
        "noise": f"after removing everything periodic in a {'week' if basis == WINDOWS_PER_WEEK else 'day' if basis == WINDOWS_PER_DAY else 'hour'}"
        if basis else "NaN: the trace is shorter than 2 hours",
    }
    for c in TABLE4_COLUMNS:
        col = t4[c].to_list()
        n_jobs = int(col[7] or 0)
        for stat, idx in (("median", 4), ("mean", 0)):
            rows.append(measurement(f"beaumont.t4.{c}.{stat}", col[idx], notes.get(c, ""), n=n_jobs))
    med_noise = t4["noise"][4]

    def share(claim: str, flag: str, note: str) -> dict:
        n = comps[flag].drop_nulls().len() if comps.height else 0
        return measurement(claim, _share(comps, flag), note, n=n)

    rows += [
        share("beaumont.s52.daily_significant", "daily_significant", f"daily ratio > {significance_ratio:g}"),
        share("beaumont.s52.daily_strong", "daily_strong", f"daily ratio > {strong_ratio:g}"),
        share("beaumont.s52.weekly_significant", "weekly_significant",
              f"weekly ratio > {significance_ratio:g}" + ("" if n_windows >= WINDOWS_PER_WEEK else "; no whole week")),
        measurement("beaumont.s52.hourly_significant", _share(comps, "hourly_significant")),
        measurement("beaumont.s52.long_term_significant", _share(comps, "long_term_significant")),
    ]
    if med_noise is not None and comps.height:
        above = comps.select((pl.col("daily_ratio") > med_noise).mean()).item()
        rows.append(measurement("beaumont.s52.daily_above_noise", above,
                                f"median noise {med_noise:.3g} as threshold (the paper's 6%-noise reading)"))
    sync = weekly_synchrony(weekly)
    rows += [
        measurement("beaumont.s52.weekly_low_days", sync["modal_low_days"],
                    f"days since the trace start mod 7, over {sync['jobs']} weekly-significant jobs"),
        measurement("beaumont.s52.weekly_modal_share", sync["share_modal"]),
    ]
    for lim, value in phase_shares(phases, phase_limits_deg).items():
        claim = {60.0: "beaumont.s52.phase_within_60", 120.0: "beaumont.s52.phase_within_120"}.get(lim, "beaumont.s52.phase_within")
        rows.append(measurement(claim, value, f"{phases.height} jobs with daily ratio >= {phase_min_ratio:g}",
                                limit=lim, n=phases.height))
    return rows
