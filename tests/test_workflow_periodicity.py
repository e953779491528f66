"""The periodicity rules (Beaumont et al. §5.2, §8.2) on the session's tiny run, bad config and bad input."""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest
import yaml

from wfutil import REPO, assert_config_rejected, bar_heights, box_medians, png_shape, snakemake, tick_labels

pytestmark = pytest.mark.workflow

#: The section's defaults, as the rules see them (tiny sets none of them).
SCHEMA = yaml.safe_load((REPO / "workflow/schemas/periodicity.schema.yaml").read_text())["properties"]
DEFAULTS = {k: v["default"] for k, v in SCHEMA.items() if k != "packing"}
CAPACITIES = SCHEMA["packing"]["properties"]["capacities"]["default"]
N_WINDOWS = 2 * 288  # the tiny scale: 2 days


@pytest.fixture(scope="module")
def inputs(tiny_run):
    dom = pl.read_parquet(tiny_run / "results/synthetic-tiny/jobs/dominant_jobs.parquet")
    win = pl.read_parquet(tiny_run / "results/synthetic-tiny/jobs/dominant_windows.parquet")
    return dom, win


def series_of(win: pl.DataFrame, job_ids: list[int]) -> np.ndarray:
    """The jobs' CPU per window (jobs × N_WINDOWS), straight from the dominant_windows rows; every window present."""
    rows = win.filter(pl.col("job_id").is_in(job_ids)).with_columns(
        pl.col("job_id").replace_strict({j: i for i, j in enumerate(job_ids)}).alias("row")
    )
    x = np.full((len(job_ids), N_WINDOWS), np.nan)
    x[rows["row"].to_numpy(), rows["window"].to_numpy()] = rows["cpu_sum"].to_numpy()
    assert not np.isnan(x).any()  # jobs that run the whole trace, min_coverage 1: nothing to fill
    return x


def fft_reference(x: np.ndarray) -> dict[str, np.ndarray]:
    """Table 4's ratios of two-day series from their full DFT (numpy.fft), by hand.

    Two days: the day (288 windows, bin 2) is the noise's periodic basis, and its profile is exactly the even
    bins; the long-term sinusoid (period 2 days) is bin 1, orthogonal to them, so the backfitting stops at
    once. Hourly: bin 48; daily: bin 2 with peak phase π/288 − arg X₂; long term: bin 1; amplitude 2|X_k|/n.
    The noise is what is left, every odd bin but 1 and n − 1: by Parseval Σr² = Σ|X_k|²/n, over the
    n − 288 − 2 degrees of freedom left after the profile and the sinusoid.
    """
    n = x.shape[1]
    X = np.fft.fft(x, axis=1)
    mean = x.mean(axis=1)
    odd = np.arange(n) % 2 == 1
    odd[[1, n - 1]] = False
    noise = np.sqrt((np.abs(X[:, odd]) ** 2).sum(axis=1) / n / (n - 288 - 2))
    return {
        "mean": mean,
        "hourly_ratio": 2 * np.abs(X[:, 48]) / n / mean,
        "daily_ratio": 2 * np.abs(X[:, 2]) / n / mean,
        "long_term_ratio": 2 * np.abs(X[:, 1]) / n / mean,
        "noise_ratio": noise / mean,
        "daily_phase_deg": np.degrees(np.mod(np.pi / 288 - np.angle(X[:, 2]), 2 * np.pi)),
    }


def test_components_are_the_whole_trace_production_jobs(tiny_run, inputs):
    """Table 4's rows are the production jobs alive in every window, and their ratios the DFT of their series."""
    dom, win = inputs
    comps = pl.read_parquet(tiny_run / "results/synthetic-tiny/periodicity/components.parquet")
    whole = dom.filter((pl.col("class") == "production") & pl.col("runs_whole_trace"))
    assert comps["job_id"].to_list() == whole["job_id"].sort().to_list()
    assert comps.height >= 1 and (comps["n_filled"] == 0).all()
    # each job's ratios and daily phase are its series' DFT bins, computed here by hand (catches a wrong bin
    # or period, a lost factor 2 of the amplitude, the phase's sign, the noise's degrees of freedom)
    ref = fft_reference(series_of(win, comps["job_id"].to_list()))
    phase = ref.pop("daily_phase_deg")
    for column, want in ref.items():
        np.testing.assert_allclose(comps[column].to_numpy(), want, rtol=1e-9, err_msg=column)
    turn = np.radians(comps["daily_phase_deg"].to_numpy() - phase)  # angles: equal modulo 360°
    np.testing.assert_allclose(np.angle(np.exp(1j * turn)), 0, atol=1e-9)
    sig = DEFAULTS["significance_ratio"]
    assert comps["daily_significant"].to_list() == (ref["daily_ratio"] > sig).tolist()
    assert comps["daily_strong"].to_list() == (ref["daily_ratio"] > DEFAULTS["strong_ratio"]).tolist()
    # 2 days: no weekly component, the noise against the daily profile, the daily pattern measured
    assert comps["weekly_ratio"].null_count() == comps.height
    assert set(comps["noise_period_h"]) == {24.0}
    assert comps["daily_ratio"].is_between(0, 2).all() and comps["noise_ratio"].min() > 0
    # each job's mean is its mean CPU over the trace (dominant_jobs' cpu_mean: alive in every window)
    means = comps.join(dom, on="job_id").select((pl.col("mean") - pl.col("cpu_mean")).abs().max()).item()
    assert means < 1e-9


def test_tables_are_consistent(tiny_run):
    comps = pl.read_parquet(tiny_run / "results/synthetic-tiny/periodicity/components.parquet")
    t4 = {r["statistic"]: r for r in pl.read_csv(tiny_run / "results/synthetic-tiny/tables/beaumont_table4_fourier.csv").iter_rows(named=True)}
    assert t4["jobs"]["daily"] == comps.height and t4["jobs"]["weekly"] == 0
    assert t4["50%"]["daily"] == pytest.approx(float(np.median(comps["daily_ratio"].to_numpy())))
    assert t4["50%"]["paper_daily"] == 0.268 and t4["max"]["paper_noise"] == 0.836
    weekly = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/beaumont_weekly_shape.csv")
    assert weekly.height == 0 and "low_days" in weekly.columns
    phases = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/beaumont_daily_phases.csv")
    assert sorted(phases["job_id"].to_list()) == sorted(comps.filter(pl.col("daily_ratio") >= 0.1)["job_id"].to_list())
    assert phases["deviation_deg"].is_between(0, 180).all()
    assert (phases["peak_hour"] * 15 - phases["daily_phase_deg"]).abs().max() < 1e-9


def test_packing_table_agrees_with_the_loads_and_the_series(tiny_run, inputs):
    """The table's counts and overload statistics follow from the machine loads written beside it, and those
    loads add up, window by window, to the packed jobs' series: every task is placed exactly once.

    Catches a task dropped or placed twice, a machine's load built from another job's series or task share,
    overload counted at ≥ C or over other windows, a lower bound off ⌈Σμ/C⌉, and tasks miscounted.
    """
    _, win = inputs
    table = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/beaumont_periodic_packing.csv")
    assert table.height == 3 * len(CAPACITIES)
    assert table["policy"].to_list() == ["peak", "phasor", "mean"] * len(CAPACITIES)
    assert (table["machines"] >= table["lower_bound"]).all()
    strict = table.filter(pl.col("policy").is_in(["peak", "phasor"]) & (pl.col("oversize") == 0))
    assert (strict["model_bound"] <= 1 + 1e-9).all()  # both keep every machine's daily model within C
    comps = pl.read_parquet(tiny_run / "results/synthetic-tiny/periodicity/components.parquet")
    total = series_of(win, comps["job_id"].to_list()).sum(axis=0)
    loads = pl.read_parquet(tiny_run / "results/synthetic-tiny/periodicity/packing_loads.parquet")
    tasks = int(np.maximum(1, np.round(comps["tasks_mean"].to_numpy())).sum())  # a job is max(1, round(tasks)) tasks
    for r in table.iter_rows(named=True):
        assert (r["tasks"], r["jobs"]) == (tasks, comps.height)
        assert r["lower_bound"] == np.ceil(comps["mean"].sum() / r["capacity"] - 1e-9)
        # the tiny run is small enough for the loads to hold every machine-window (machine by machine)
        ratio = loads.filter((pl.col("capacity") == r["capacity"]) & (pl.col("policy") == r["policy"]))["load_ratio"]
        per_machine = ratio.to_numpy().reshape(r["machines"], N_WINDOWS)
        np.testing.assert_allclose(per_machine.sum(axis=0) * r["capacity"], total, rtol=1e-9)
        above = per_machine > 1
        assert r["overload_share"] == pytest.approx(above.mean(), abs=1e-12)
        assert r["machines_overloaded"] == pytest.approx(above.any(axis=1).mean(), abs=1e-12)
        assert r["max_load"] == pytest.approx(per_machine.max(), rel=1e-9)
        assert r["mean_excess"] == pytest.approx((per_machine[above] - 1).mean() if above.any() else 0.0, rel=1e-9)


def test_summary_puts_the_papers_numbers_beside_ours(tiny_run):
    s = pl.read_csv(tiny_run / "results/synthetic-tiny/summary.csv", schema_overrides={"paper": pl.String, "ours": pl.String})
    rows = {r["quantity"]: r for r in s.filter(pl.col("section").str.starts_with("Periodicity")).iter_rows(named=True)}
    comps = pl.read_parquet(tiny_run / "results/synthetic-tiny/periodicity/components.parquet")
    assert rows["Table 4 daily ratio, median"]["paper"] == "0.268"
    assert float(rows["Table 4 daily ratio, median"]["ours"]) == pytest.approx(float(comps["daily_ratio"].median()), rel=1e-3)
    assert not rows["Table 4 weekly ratio, median"]["ours"] and "no whole week" in rows["Table 4 weekly ratio, median"]["note"]
    assert rows["daily phase within 60° of the circular mean"]["paper"] == "0.5"
    assert rows["share with significant weekly pattern"]["paper"] == "≈0.5 (about half)"
    assert {r["verdict"] for r in rows.values()} <= {"within", "outside", "count", "no paper value", "too little data"}
    assert any(q.startswith("machines used, C = 0.5") for q in rows)
    md = (tiny_run / "results/synthetic-tiny/summary.md").read_text()
    assert "Periodicity and periodic packing (Beaumont et al. §5.2, §8.2)" in md
    for name in ("beaumont_fourier_spectra", "beaumont_periodic_packing"):
        assert min(png_shape(tiny_run / f"results/synthetic-tiny/figures/{name}.png")[:2]) > 200


def test_figures_show_the_tables(tiny_run):
    """The two figures drawn from the run's tables (as the rule scripts draw them) show those tables: one
    spectrum per job of the spectra table, Table 4's boxes at the components' medians with a dot per job,
    the phases on the circle and their deviations' ECDF; machines and overload bars per capacity and policy,
    the ⌈Σc/C⌉ marks, and one load ECDF per policy and capacity.

    Catches a panel drawn from the wrong column or policy (hue order), a job or component lost on the way
    (e.g. ratios of 0 or NaN dropped from the wrong panel), and an empty panel where the table has rows.
    """
    import matplotlib.pyplot as plt

    from colocate.figures import periodicity as figs

    r = tiny_run / "results/synthetic-tiny"
    spectra, comps = pl.read_parquet(r / "periodicity/spectra.parquet"), pl.read_parquet(r / "periodicity/components.parquet")
    weekly = pl.read_csv(r / "tables/beaumont_weekly_shape.csv", schema_overrides={"low_days": pl.String})
    phases = pl.read_csv(r / "tables/beaumont_daily_phases.csv")
    fig = figs.fourier_spectra(spectra, comps, weekly, phases, DEFAULTS["significance_ratio"], DEFAULTS["phase_limits_deg"])
    ax_s, ax_t, ax_w, ax_p, ax_e = fig.axes[:5]
    curves = [line for line in ax_s.lines if len(line.get_xdata()) > 2]
    assert len(curves) == spectra["job_id"].n_unique() == min(comps.height, DEFAULTS["spectra_jobs"])
    for (job,), g in spectra.group_by("job_id"):
        g = g.sort("period_h")
        assert sum(np.array_equal(c.get_xdata(), g["period_h"]) and np.allclose(c.get_ydata(), g["ratio"]) for c in curves) == 1, job
    shown = {"hourly": "hourly", "daily": "daily", "long term": "long_term", "noise": "noise"}  # weekly: none in 2 days
    assert tick_labels(ax_t) == list(shown)
    ratios = {k: comps[f"{c}_ratio"].drop_nulls().filter(comps[f"{c}_ratio"].drop_nulls() > 0) for k, c in shown.items()}
    assert box_medians(ax_t) == pytest.approx({(0, k): float(v.median()) for k, v in ratios.items()})
    assert [len(dots.get_offsets()) for dots in ax_t.collections] == [v.len() for v in ratios.values()]
    assert [t.get_text() for t in ax_w.texts] == ["the trace holds no whole week"]
    (dots,) = ax_p.collections
    np.testing.assert_allclose(dots.get_offsets(), np.c_[np.radians(phases["daily_phase_deg"]), phases["daily_ratio"]])
    ecdf = next(line for line in ax_e.lines if line.get_drawstyle() == "steps-post")
    np.testing.assert_allclose(ecdf.get_xdata()[1:], np.sort(phases["deviation_deg"].to_numpy()))
    plt.close(fig)

    table = pl.read_csv(r / "tables/beaumont_periodic_packing.csv")
    loads = pl.read_parquet(r / "periodicity/packing_loads.parquet")
    fig = figs.periodic_packing(table, loads)
    ax_m, ax_o, *bottom = fig.axes
    order = ["peak", "phasor", "mean"]  # the hue order
    for ax, column in ((ax_m, "machines"), (ax_o, "overload_share")):
        want = {(order.index(p), str(c)): float(v) for c, p, v in table.select("capacity", "policy", column).iter_rows()}
        assert bar_heights(ax) == pytest.approx(want), column
    marks = sorted(float(seg[0][1]) for lc in ax_m.collections for seg in lc.get_segments())
    assert marks == sorted(table.group_by("capacity").agg(pl.col("lower_bound").first())["lower_bound"].cast(pl.Float64).to_list())
    assert len(bottom) == len(CAPACITIES)
    for ax, cap in zip(bottom, CAPACITIES):
        steps = sorted(tuple(line.get_xdata()[1:]) for line in ax.lines if line.get_drawstyle() == "steps-post")
        want = sorted(tuple(np.sort(g["load_ratio"].to_numpy())) for _, g in loads.filter(pl.col("capacity") == cap).group_by("policy"))
        assert len(steps) == 3 and all(np.allclose(a, b) for a, b in zip(steps, want)), cap
    plt.close(fig)


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"min_coverage": 0}, "min_coverage"),
        ({"classes": ["prod"]}, "classes"),
        ({"packing": {"capacities": [0.5, -1]}}, "capacities"),
        ({"significance_ratio": "high"}, "significance_ratio"),
    ],
)
def test_invalid_config_is_rejected_naming_the_key(tmp_path, section, key):
    assert_config_rejected(tmp_path, key, periodicity=section)


def test_bad_dominant_windows_fail_naming_the_file_and_leave_no_output(tiny_run, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    path = work / "results/synthetic-tiny/jobs/dominant_windows.parquet"
    pl.read_parquet(path).drop("cpu_sum").write_parquet(path)
    res = snakemake(work, "results/synthetic-tiny/periodicity/components.parquet", "--rerun-triggers", "mtime", check=False)
    assert res.returncode != 0
    assert "results/synthetic-tiny/jobs/dominant_windows.parquet: missing column(s) cpu_sum" in (work / "results/synthetic-tiny/logs/periodicity/components.log").read_text() + res.stderr
    assert not (work / "results/synthetic-tiny/periodicity/components.parquet").exists()
    assert not (work / "results/synthetic-tiny/tables/beaumont_weekly_shape.csv").exists()
