"""Machine failures: removals per 5-minute window against a Poisson model, Beaumont et al. (2015) §6.

The paper counts the machine REMOVE events of every 5-minute window, sets aside three *outstanding events* and the
maintenance windows (≥ 10 removals), and compares the rest with the Poisson distribution of independent failures
(Fig 6); it derives a per-machine failure rate (an MTBF of about 1000 h) and the CDF of removal durations (Fig 7).
The functions follow its steps: :func:`removals`, :func:`detect_outstanding` (:class:`OutstandingCriterion`),
:func:`window_counts`, :func:`set_statistics`, :func:`dispersion_table`, :func:`duration_table`. Every function is
pure: DataFrames and arrays in, DataFrames out.

Method: docs/methods.md#machine-failures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
import polars as pl
from scipy import stats

from colocate.registry import Registry
from colocate.measure import measurement
from colocate.sources.contract import ORIGIN_US, WINDOW_US, MachineEventType, TraceFormatError

__all__ = [
    "WINDOWS_PER_HOUR",
    "SETS",
    "OutstandingCriterion",
    "DispersionTest",
    "IndexOfDispersion",
    "DeanScore",
    "DISPERSION_TESTS",
    "check_events",
    "machine_count",
    "event_counts",
    "removals",
    "readd_groups",
    "detect_outstanding",
    "episode_report",
    "window_counts",
    "count_sets",
    "histogram",
    "poisson_table",
    "set_statistics",
    "failure_rate",
    "dispersion_table",
    "back_within",
    "duration_table",
    "measurements",
]

#: 5-minute windows per hour.
WINDOWS_PER_HOUR = 3_600_000_000 // WINDOW_US
_US = 1_000_000

#: The three sets of windows of §6: every window; every window with the outstanding events' removals
#: taken out; the windows left after also dropping the maintenance windows (Fig 6's set).
SETS = {
    "all": "all windows, all removals",
    "without_outstanding": "all windows, outstanding events removed",
    "without_maintenance": "outstanding events removed, maintenance windows dropped (Fig 6)",
}


# ============================================================================ input


def check_events(events: pl.DataFrame, source: str) -> None:
    """Reject machine_events rows the analysis cannot interpret, naming ``source`` and the 1-based line.

    ``events`` must be in file order (as :func:`colocate.trace.read_table` returns it); the
    reader has already checked the types. Here: the event type is ADD, REMOVE or UPDATE and
    the time is not negative.
    """
    codes = [int(t) for t in MachineEventType]
    bad = events.with_row_index("_i").filter(~pl.col("event_type").is_in(codes) | (pl.col("time") < 0))
    if bad.height:
        row = bad.row(0, named=True)
        what = (
            f"event type {row['event_type']} is not one of {codes} (ADD, REMOVE, UPDATE)"
            if row["event_type"] not in codes
            else f"negative time {row['time']}"
        )
        raise TraceFormatError(source, what, int(row["_i"]) + 1)


def machine_count(events: pl.DataFrame) -> int:
    """Machines of the trace: distinct machine IDs with an ADD event (Beaumont §6's "12,000 machines")."""
    return int(events.filter(pl.col("event_type") == int(MachineEventType.ADD))["machine_id"].n_unique())


def event_counts(events: pl.DataFrame, n_windows: int) -> pl.DataFrame:
    """What the machine_events file holds (one row): machines (:func:`machine_count`), ADD, REMOVE and
    UPDATE events (UPDATEs are ignored), and REMOVEs outside the ``n_windows`` windows (not counted)."""
    t = pl.col("event_type")
    end = ORIGIN_US + n_windows * WINDOW_US
    return events.select(
        pl.col("machine_id").filter(t == int(MachineEventType.ADD)).n_unique().cast(pl.Int64).alias("machines"),
        (t == int(MachineEventType.ADD)).sum().cast(pl.Int64).alias("adds"),
        (t == int(MachineEventType.REMOVE)).sum().cast(pl.Int64).alias("removes"),
        (t == int(MachineEventType.UPDATE)).sum().cast(pl.Int64).alias("updates"),
        ((t == int(MachineEventType.REMOVE)) & ((pl.col("time") < ORIGIN_US) | (pl.col("time") >= end)))
        .sum().cast(pl.Int64).alias("removes_outside_windows"),
        pl.lit(n_windows, dtype=pl.Int64).alias("windows"),
    )


def removals(events: pl.DataFrame, n_windows: int) -> pl.DataFrame:
    """Every REMOVE with its 5-minute window and removal duration (Beaumont §6, Fig 7).

    Columns: ``time`` (µs), ``machine_id``, ``window`` (null outside the ``n_windows``
    windows from 600 s), ``readd_time`` (the machine's first ADD after the removal, in time
    order with file order breaking ties, so an ADD at the removal's own µs counts when it
    comes after it; null if none), ``duration_s`` (``inf`` when never re-added:
    right-censored at the trace end) and ``censored``. Sorted by time, then machine.
    """
    ev = (
        events.select(
            pl.col("time").cast(pl.Int64), pl.col("machine_id").cast(pl.Int64), pl.col("event_type").cast(pl.Int64)
        )
        .with_row_index("_row")
        .sort(["time", "_row"])
        .with_row_index("_seq")
    )
    rem = ev.filter(pl.col("event_type") == int(MachineEventType.REMOVE)).select("_seq", "time", "machine_id")
    adds = ev.filter(pl.col("event_type") == int(MachineEventType.ADD)).select(
        "machine_id", pl.col("_seq").alias("_add_seq"), pl.col("time").alias("readd_time")
    )
    joined = rem.join_asof(
        adds, left_on="_seq", right_on="_add_seq", by="machine_id", strategy="forward",
        allow_exact_matches=False, check_sortedness=False,
    ).sort(["time", "machine_id", "_seq"])
    w = (pl.col("time") - ORIGIN_US) // WINDOW_US
    return joined.select(
        "time",
        "machine_id",
        pl.when((pl.col("time") >= ORIGIN_US) & (w < n_windows)).then(w).otherwise(None).alias("window"),
        "readd_time",
        ((pl.col("readd_time") - pl.col("time")) / _US).fill_null(float("inf")).alias("duration_s"),
        pl.col("readd_time").is_null().alias("censored"),
    )


# ============================================================================ outstanding events


@dataclass(frozen=True)
class OutstandingCriterion:
    """Automatic detection of Beaumont §6's outstanding events: machines *reinserted together*.

    The paper's three events (two mass removals, one "flapping" event) share their end: many machines come back within
    seconds of each other, where an ordinary failure or a maintenance burst brings its machines back one by one (Fig 7).
    Re-adds at most ``together_s`` apart are chained; a chain with ``min_readds`` re-adds within ``together_s`` is an
    event, with the removals before them while a machine was up less than ``cycle_uptime_s``; an event is *flapping* at
    ``flapping_min_cycles`` removals per machine or more, else a *mass* removal. The defaults lie in the gaps the real
    trace shows.

    Method: docs/methods.md#outstanding-events.
    """

    together_s: float = 60.0
    min_readds: int = 15
    cycle_uptime_s: float = 3600.0
    flapping_min_cycles: float = 2.0

    def __post_init__(self) -> None:
        for key in ("together_s", "cycle_uptime_s", "flapping_min_cycles"):
            if not getattr(self, key) > 0:
                raise ValueError(f"OutstandingCriterion.{key} must be > 0, got {getattr(self, key)}")
        if self.min_readds < 2:
            raise ValueError(f"OutstandingCriterion.min_readds must be >= 2, got {self.min_readds}")


def readd_groups(rem: pl.DataFrame, together_s: float) -> pl.DataFrame:
    """Re-adds chained into groups, with the most re-adds of each group within ``together_s`` (step 1–2 of
    :class:`OutstandingCriterion`).

    A re-add is a distinct (``machine_id``, ``readd_time``) of :func:`removals` (two removals ended by the
    same ADD count once). Columns: ``machine_id``, ``readd_time``, ``readd_group`` (0, 1, … in time order:
    consecutive re-adds at most ``together_s`` apart share it) and ``peak_readds`` (the largest number
    of the group's re-adds in a closed interval of length ``together_s``). Sorted by time, then machine.
    """
    w = int(round(together_s * _US))
    ra = (
        rem.filter(pl.col("readd_time").is_not_null())
        .select("machine_id", "readd_time")
        .unique()
        .sort(["readd_time", "machine_id"])
    )
    t = ra["readd_time"].to_numpy().astype(np.int64)
    group = np.concatenate([[0], np.cumsum(np.diff(t) > w)]).astype(np.int64) if t.size else np.zeros(0, np.int64)
    # re-adds in [t_i, t_i + w]: the window never leaves the group (a gap > w ends it)
    in_window = np.searchsorted(t, t + w, side="right") - np.arange(t.size)
    peak = np.zeros(int(group.max()) + 1 if t.size else 0, dtype=np.int64)
    np.maximum.at(peak, group, in_window)
    return ra.with_columns(pl.Series("readd_group", group), pl.Series("peak_readds", peak[group]))


def _runs(rem: pl.DataFrame, cycle_uptime_s: float) -> pl.Series:
    """Run ids of removals in ``rem`` order: a machine's consecutive removals separated by less than
    ``cycle_uptime_s`` of up-time (from a re-add to the next removal) share one."""
    u = int(round(cycle_uptime_s * _US))
    key = rem.select("machine_id", "time", "readd_time").with_row_index("_o").sort(["machine_id", "time", "_o"])
    linked = (pl.col("machine_id") == pl.col("machine_id").shift(1)) & (
        (pl.col("time") - pl.col("readd_time").shift(1)) < u
    )
    key = key.with_columns((~linked.fill_null(False)).cum_sum().alias("_run"))
    return key.sort("_o")["_run"]


def detect_outstanding(rem: pl.DataFrame, criterion: OutstandingCriterion) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Outstanding events of Beaumont §6 by :class:`OutstandingCriterion`.

    Returns ``rem`` (sorted by time, then machine) with ``readd_group`` (its re-add's group of
    :func:`readd_groups`, null if never re-added), ``episode`` (the outstanding event, null
    unless in one) and ``outstanding`` added; and the episodes: the outstanding events
    (``episode`` = the smallest re-add group merged into it) then every other re-add group
    (``episode`` = its group), outstanding first, then by ``peak_readds`` and ``removals``,
    largest first. Columns: ``episode``, ``start_time``, ``end_time`` (first and last removal,
    µs), ``last_readd_time``, ``first_window``, ``last_window``, ``removals``, ``machines``,
    ``removals_per_machine``, ``readd_groups`` (bursts merged into the event; 1 otherwise),
    ``peak_readds``, ``median_duration_s``, ``kind`` (mass | flapping, null unless
    outstanding) and ``outstanding``.
    """
    burst = pl.col("peak_readds") >= criterion.min_readds
    rem = _with_readd_groups(rem, criterion.together_s)
    rem = _burst_events(rem, burst, criterion.cycle_uptime_s)
    rem = _merge_overlapping_events(rem)
    eps = _episodes(rem, burst, criterion.flapping_min_cycles)
    return rem.drop("_r", "_run", "_ev", "_until", "peak_readds"), eps


def _with_readd_groups(rem: pl.DataFrame, together_s: float) -> pl.DataFrame:
    """Steps 1–2: ``rem`` sorted by time, then machine, with its re-add's ``readd_group`` and ``peak_readds``
    (:func:`readd_groups`) and a row index ``_r``."""
    groups = readd_groups(rem, together_s)
    return (
        rem.sort(["time", "machine_id"])
        .join(groups.select("machine_id", "readd_time", "readd_group", "peak_readds"),
              on=["machine_id", "readd_time"], how="left", maintain_order="left")
        .with_row_index("_r")
    )


def _burst_events(rem: pl.DataFrame, burst: pl.Expr, cycle_uptime_s: float) -> pl.DataFrame:
    """Step 3: each removal's burst event ``_ev`` (a re-add group; null if none), with its run ``_run`` of
    :func:`_runs` and the run's last burst removal time ``_until``.

    A run with a burst removal goes to its last burst removal's group, up to that removal.
    """
    rem = rem.with_columns(_runs(rem, cycle_uptime_s).alias("_run"))
    last = (
        rem.filter(burst)
        .sort("time")
        .group_by("_run")
        .agg(pl.col("readd_group").last().alias("_ev"), pl.col("time").last().alias("_until"))
    )
    return rem.join(last, on="_run", how="left", maintain_order="left").with_columns(
        pl.when(pl.col("time") <= pl.col("_until")).then(pl.col("_ev")).otherwise(None).alias("_ev")
    )


def _merge_overlapping_events(rem: pl.DataFrame) -> pl.DataFrame:
    """Step 4: burst events whose spans overlap are one ``episode`` (their smallest ``_ev``); adds ``episode``
    and ``outstanding``.

    A span runs from the lower quartile of the event's removal times to its last re-add: the quartile keeps a
    stray removal (a machine down for hours that happens to come back in a burst) from stretching an event
    over unrelated ones.
    """
    spans = (
        rem.filter(pl.col("_ev").is_not_null())
        .group_by("_ev")
        .agg(pl.col("time").quantile(0.25, "lower").alias("_s"), pl.col("readd_time").max().alias("_e"))
        .sort(["_s", "_ev"])
    )
    s, e = spans["_s"].to_numpy(), spans["_e"].to_numpy()
    new = np.ones(s.size, dtype=bool)
    if s.size > 1:
        new[1:] = s[1:] > np.maximum.accumulate(e)[:-1]
    merged = np.cumsum(new) - 1
    first = spans.with_columns(pl.Series("_m", merged)).with_columns(pl.col("_ev").min().over("_m").alias("episode"))
    return rem.join(first.select("_ev", "episode"), on="_ev", how="left", maintain_order="left").with_columns(
        pl.col("episode").is_not_null().alias("outstanding")
    )


def _episodes(rem: pl.DataFrame, burst: pl.Expr, flapping_min_cycles: float) -> pl.DataFrame:
    """The episodes table of :func:`detect_outstanding`: the outstanding events (mass or flapping), then every
    other re-add group; outstanding first, then by ``peak_readds`` and ``removals``, largest first."""
    cols = ["episode", "start_time", "end_time", "last_readd_time", "first_window", "last_window", "removals",
            "machines", "removals_per_machine", "readd_groups", "peak_readds", "median_duration_s", "kind",
            "outstanding"]
    events = _summarise_episodes(rem.filter(pl.col("outstanding")), "episode", burst, outstanding=True).with_columns(
        pl.when(pl.col("removals_per_machine") >= flapping_min_cycles)
        .then(pl.lit("flapping")).otherwise(pl.lit("mass")).alias("kind")
    )
    others = _summarise_episodes(
        rem.filter(pl.col("readd_group").is_not_null() & ~burst.fill_null(False)), "readd_group", burst, outstanding=False
    ).with_columns(pl.lit(None, dtype=pl.String).alias("kind"))
    schema = {"episode": pl.Int64}
    eps = pl.concat([events.select(cols).cast(schema), others.select(cols).cast(schema)], how="vertical_relaxed")
    return eps.sort(["outstanding", "peak_readds", "removals", "start_time"], descending=[True, True, True, False])


def _summarise_episodes(df: pl.DataFrame, key: str, burst: pl.Expr, *, outstanding: bool) -> pl.DataFrame:
    """One row per ``key`` (renamed ``episode``): its removals' span, windows, counts, peak and median duration.

    Outstanding events count their burst re-add groups and take the peak over their burst removals only.
    """
    return df.group_by(key).agg(
        pl.col("time").min().alias("start_time"),
        pl.col("time").max().alias("end_time"),
        pl.col("readd_time").max().alias("last_readd_time"),
        pl.col("window").min().alias("first_window"),
        pl.col("window").max().alias("last_window"),
        pl.len().cast(pl.Int64).alias("removals"),
        pl.col("machine_id").n_unique().cast(pl.Int64).alias("machines"),
        pl.col("readd_group").filter(burst).n_unique().cast(pl.Int64).alias("readd_groups")
        if outstanding else pl.lit(1, dtype=pl.Int64).alias("readd_groups"),
        pl.col("peak_readds").filter(burst if outstanding else pl.lit(True)).max().cast(pl.Int64).alias("peak_readds"),
        pl.col("duration_s").median().alias("median_duration_s"),
    ).rename({key: "episode"}).with_columns(
        (pl.col("removals") / pl.col("machines")).alias("removals_per_machine"),
        pl.lit(outstanding).alias("outstanding"),
    )


def episode_report(episodes: pl.DataFrame, others: int = 5) -> pl.DataFrame:
    """The outstanding events and the ``others`` re-add groups with the highest peak below the threshold
    (to show the criterion's margin)."""
    return pl.concat([episodes.filter(pl.col("outstanding")), episodes.filter(~pl.col("outstanding")).head(others)])


# ============================================================================ counts per window


def window_counts(rem: pl.DataFrame, n_windows: int, maintenance_min_removals: int) -> pl.DataFrame:
    """Removals per 5-minute window (Beaumont §6).

    ``rem`` is :func:`detect_outstanding`'s output. Columns: ``window``, ``start_s`` (seconds
    since the trace start), ``removals`` (all), ``outstanding`` (in outstanding events),
    ``remaining`` (the others) and ``maintenance`` (``remaining`` ≥ ``maintenance_min_removals``:
    the paper's "all time windows with at least 10 removals are maintenance events").
    """
    inside = rem.filter(pl.col("window").is_not_null())
    w = inside["window"].to_numpy().astype(np.int64)
    out = inside["outstanding"].to_numpy()
    total = np.bincount(w, minlength=n_windows)[:n_windows]
    outstanding = np.bincount(w[out], minlength=n_windows)[:n_windows]
    remaining = total - outstanding
    return pl.DataFrame(
        {
            "window": np.arange(n_windows, dtype=np.int64),
            "start_s": (ORIGIN_US + np.arange(n_windows, dtype=np.int64) * WINDOW_US) // _US,
            "removals": total.astype(np.int64),
            "outstanding": outstanding.astype(np.int64),
            "remaining": remaining.astype(np.int64),
            "maintenance": remaining >= maintenance_min_removals,
        }
    )


def count_sets(counts: pl.DataFrame) -> dict[str, np.ndarray]:
    """The removal counts of the three :data:`SETS` of windows."""
    keep = ~counts["maintenance"].to_numpy()
    return {
        "all": counts["removals"].to_numpy(),
        "without_outstanding": counts["remaining"].to_numpy(),
        "without_maintenance": counts["remaining"].to_numpy()[keep],
    }


def histogram(sets: Mapping[str, np.ndarray]) -> pl.DataFrame:
    """Windows per number of removals k, one column per set (Beaumont §6's table); only k seen in some set."""
    top = max((int(x.max()) for x in sets.values() if x.size), default=0)
    cols = {f"windows_{name}": np.bincount(x.astype(np.int64), minlength=top + 1) for name, x in sets.items()}
    table = pl.DataFrame({"k": np.arange(top + 1, dtype=np.int64), **cols})
    return table.filter(pl.sum_horizontal(pl.exclude("k")) > 0)


def poisson_table(x: np.ndarray, k_max: int | None = None) -> pl.DataFrame:
    """Fig 6: windows with k removals against n·P(k) under Poisson(mean) (scipy), k = 0..max(x, k_max)."""
    x = np.asarray(x, dtype=np.int64)
    top = max(int(x.max()) if x.size else 0, k_max or 0)
    k = np.arange(top + 1)
    pmf = stats.poisson.pmf(k, x.mean()) if x.size else np.zeros(k.size)
    return pl.DataFrame({"k": k, "windows": np.bincount(x, minlength=top + 1), "expected": x.size * pmf, "pmf": pmf})


# ============================================================================ Poisson comparison


def failure_rate(mean_per_window: float, n_machines: int) -> dict[str, float]:
    """Per-machine failure rate per window and per hour, and the MTBF in hours (Beaumont §6).

    Failures are a Poisson process: the rate per hour is 12 × the rate per window, and
    the mean time between failures of one machine is its inverse.
    """
    per_window = mean_per_window / n_machines if n_machines else float("nan")
    per_hour = per_window * WINDOWS_PER_HOUR
    return {"rate_per_window": per_window, "rate_per_hour": per_hour, "mtbf_hours": 1 / per_hour if per_hour > 0 else float("inf")}


def set_statistics(
    sets: Mapping[str, np.ndarray], n_machines: int, maintenance_min_removals: int, tail_more_than: int
) -> pl.DataFrame:
    """One row per set of windows: the Poisson comparison of Beaumont §6.

    ``mean``, ``variance`` (ddof 1), ``dispersion_index`` (variance/mean; 1 under Poisson),
    ``windows_maintenance`` (≥ ``maintenance_min_removals`` removals) against
    ``expected_maintenance`` = n·P(X ≥ that) under Poisson(mean); ``windows_tail`` (>
    ``tail_more_than``) against ``expected_tail``; and :func:`failure_rate`.
    """
    out = []
    for name, x in sets.items():
        x = np.asarray(x, dtype=np.int64)
        n = x.size
        mean = float(x.mean()) if n else float("nan")
        var = float(x.var(ddof=1)) if n > 1 else float("nan")
        out.append(
            {
                "set": name,
                "description": SETS.get(name, name),
                "windows": n,
                "removals": int(x.sum()),
                "mean": mean,
                "variance": var,
                "dispersion_index": var / mean if mean > 0 else float("nan"),
                "windows_maintenance": int((x >= maintenance_min_removals).sum()),
                "expected_maintenance": n * float(stats.poisson.sf(maintenance_min_removals - 1, mean)),
                "windows_tail": int((x > tail_more_than).sum()),
                "expected_tail": n * float(stats.poisson.sf(tail_more_than, mean)),
                "machines": n_machines,
                **failure_rate(mean, n_machines),
            }
        )
    return pl.DataFrame(out)


@runtime_checkable
class DispersionTest(Protocol):
    """A test of H0 "the counts are Poisson" against extra (or too little) variance, two-sided.

    ``test(counts)`` returns ``(statistic, p-value)``; NaN when the counts are all zero.
    """

    name: ClassVar[str]

    def test(self, counts: np.ndarray) -> tuple[float, float]: ...


#: Tests of the Poisson hypothesis, by the name used in the dispersion table.
DISPERSION_TESTS: Registry[DispersionTest] = Registry("dispersion test", DispersionTest)


@DISPERSION_TESTS.register
@dataclass(frozen=True)
class IndexOfDispersion:
    """Fisher's index of dispersion test: D = Σ(x − x̄)²/x̄ ~ χ²(n − 1) under Poisson (scipy.stats.chi2)."""

    name: ClassVar[str] = "index_of_dispersion"

    def test(self, counts: np.ndarray) -> tuple[float, float]:
        x = np.asarray(counts, dtype=float)
        m = x.mean() if x.size else 0.0
        if x.size < 2 or m <= 0:
            return float("nan"), float("nan")
        d = float(((x - m) ** 2).sum() / m)
        df = x.size - 1
        p = 2 * min(stats.chi2.cdf(d, df), stats.chi2.sf(d, df))
        return d, float(min(p, 1.0))


@DISPERSION_TESTS.register
@dataclass(frozen=True)
class DeanScore:
    """Dean's score test of Poisson against negative-binomial dispersion (statsmodels' PoissonDiagnostic, "Dean B")."""

    name: ClassVar[str] = "dean_score"

    def test(self, counts: np.ndarray) -> tuple[float, float]:
        import statsmodels.api as sm
        from statsmodels.discrete.diagnostic import PoissonDiagnostic

        y = np.asarray(counts, dtype=float)
        if y.size < 2 or y.sum() <= 0:
            return float("nan"), float("nan")
        fit = sm.Poisson(y, np.ones((y.size, 1))).fit(disp=0)
        res = PoissonDiagnostic(fit).test_dispersion()
        i = list(res.method).index("Dean B")
        return float(res.statistic[i]), float(res.pvalue[i])


#: Every dispersion test the pipeline reports.
def dispersion_table(
    sets: Mapping[str, np.ndarray], tests: Sequence[DispersionTest] | None = None, alpha: float = 0.05
) -> pl.DataFrame:
    """Each dispersion test (all of :data:`DISPERSION_TESTS` by default) on each set: how far the counts are
    from Poisson (Beaumont §6's "some correlation")."""
    out = []
    for name, x in sets.items():
        for t in tests or DISPERSION_TESTS.defaults():
            s, p = t.test(x)
            out.append({"set": name, "test": t.name, "statistic": s, "pvalue": p, "reject": bool(p < alpha)})
    return pl.DataFrame(out, schema={"set": pl.String, "test": pl.String, "statistic": pl.Float64,
                                     "pvalue": pl.Float64, "reject": pl.Boolean})


# ============================================================================ durations (Fig 7)


def back_within(duration_s: np.ndarray, minutes: float) -> float:
    """Share of removals whose machine is back within ``minutes`` (Beaumont §6: 60% within 17 min).

    Never re-added machines (``inf``) count as not back.
    """
    d = np.asarray(duration_s, dtype=float)
    return float((d <= minutes * 60).mean()) if d.size else float("nan")


def duration_table(rem: pl.DataFrame, marks_min: Sequence[float]) -> pl.DataFrame:
    """Fig 7 at a few durations: the share of removals back within each mark, ordinary removals and all.

    ``ordinary`` leaves out the outstanding events' removals; the last row, ``never``, is the
    share never re-added (censored at the trace end).
    """
    all_d = rem["duration_s"].to_numpy()
    ord_d = rem.filter(~pl.col("outstanding"))["duration_s"].to_numpy()
    rows = [
        {"minutes": str(m), "back_ordinary": back_within(ord_d, m), "back_all": back_within(all_d, m)}
        for m in marks_min
    ]
    rows.append({"minutes": "never", "back_ordinary": float(np.isinf(ord_d).mean()) if ord_d.size else float("nan"),
                 "back_all": float(np.isinf(all_d).mean()) if all_d.size else float("nan")})
    return pl.DataFrame(rows)


# ============================================================================ summary


def measurements(
    stats_: pl.DataFrame,
    dispersion: pl.DataFrame,
    episodes: pl.DataFrame,
    rem: pl.DataFrame,
    back_within_minutes: float,
    maintenance_min_removals: int,
    tail_more_than: int,
) -> list[dict]:
    """What Beaumont §6 reports, as measured here, by the claim it answers (``workflow/papers/beaumont.tsv``)."""
    s = {r["set"]: r for r in stats_.iter_rows(named=True)}
    a, o, m = s["all"], s["without_outstanding"], s["without_maintenance"]
    out_ep = episodes.filter(pl.col("outstanding"))
    kinds = out_ep["kind"].value_counts().sort("kind")
    kind_text = ", ".join(f"{c} {k}" for k, c in sorted(kinds.iter_rows(), key=lambda r: r[0] != "mass")) or "none"
    ord_d = rem.filter(~pl.col("outstanding"))["duration_s"].to_numpy()
    all_d = rem["duration_s"].to_numpy()
    disp = {(r["set"], r["test"]): r for r in dispersion.iter_rows(named=True)}
    iod = disp.get(("without_maintenance", IndexOfDispersion.name))
    mm, t, back = maintenance_min_removals, tail_more_than, back_within_minutes
    return [
        measurement("beaumont.s6.windows", a["windows"]),
        measurement("beaumont.s6.mean_removals", a["mean"]),
        measurement("beaumont.s6.outstanding_events", f"{out_ep.height} ({kind_text})"),
        measurement("beaumont.s6.outstanding_removals", int(out_ep["removals"].sum())),
        measurement("beaumont.s6.mean_removals_without_outstanding", o["mean"]),
        measurement("beaumont.s6.maintenance_windows", o["windows_maintenance"], maintenance=mm),
        measurement("beaumont.s6.maintenance_expected", o["expected_maintenance"],
                    f"Poisson({o['mean']:.4g}) over {o['windows']} windows", maintenance=mm),
        measurement("beaumont.s6.remaining_windows", m["windows"]),
        measurement("beaumont.s6.mean_removals_remaining", m["mean"]),
        measurement("beaumont.fig6.tail", m["windows_tail"] / m["expected_tail"] if m["expected_tail"] else None,
                    f"{m['windows_tail']} observed, {m['expected_tail']:.3g} expected", tail=t),
        measurement("beaumont.s6.dispersion_index", m["dispersion_index"],
                    "1 under Poisson" + (f"; χ² p = {iod['pvalue']:.3g}" if iod else "")),
        measurement("beaumont.s6.rate_per_window", a["rate_per_window"], f"mean / {a['machines']} machines (IDs with an ADD)"),
        measurement("beaumont.s6.rate_per_window_remaining", m["rate_per_window"]),
        measurement("beaumont.s6.rate_per_hour_remaining", m["rate_per_hour"]),
        measurement("beaumont.s6.mtbf_remaining", m["mtbf_hours"]),
        measurement("beaumont.fig7.back_within_ordinary", f"{back_within(ord_d, back):.1%}", back=back),
        measurement("beaumont.fig7.back_within_all", f"{back_within(all_d, back):.1%}", back=back),
        measurement("beaumont.fig7.never_readded", f"{float(np.isinf(all_d).mean()):.1%}" if all_d.size else "nan"),
    ]
