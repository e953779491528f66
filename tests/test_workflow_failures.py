"""The machine-failure rules (Beaumont et al. §6) end to end, through `python -m snakemake`.

The tiny run of the whole pipeline (``tiny_run``) is checked for content; a hand-made
machine_events file laid out like the real trace (source ``local``, 8352 windows, REMOVE rows
with empty fields, UPDATE rows) is run with hand-computed answers; a malformed file and a bad
config value must fail with an error naming the file and line or the config key, leaving no output.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from wfutil import TINY, assert_config_rejected, bar_heights, png_shape, snakemake, synthetic_trace, write_config

from colocate import trace

pytestmark = pytest.mark.workflow

TABLES = Path("results/local-trace/tables")  # runs of local_workdir: a local trace in tmp_path/trace
TINY_TABLES = Path("results/synthetic-tiny/tables")
REMOVAL_OUTPUTS = [
    "results/local-trace/failures/removals.parquet",
    "results/local-trace/failures/removals_per_window.parquet",
    "results/local-trace/tables/beaumont_outstanding_events.csv",
]


def read_summary(path: Path) -> dict[str, dict]:
    s = pl.read_csv(path, schema_overrides={"paper": pl.String, "ours": pl.String, "note": pl.String})
    return {r["quantity"]: r for r in s.iter_rows(named=True)}


# ============================================================================ the tiny run


def test_tiny_run_counts_every_removal_once(tiny_run):
    windows = pl.read_parquet(tiny_run / "results/synthetic-tiny/failures/removals_per_window.parquet")
    n = round(TINY["days"] * 288)
    assert windows["window"].to_list() == list(range(n))
    ev = trace.read_table(synthetic_trace(tiny_run) / "machine_events/part-00000-of-00001.csv.gz", "machine_events")
    rem_times = ev.filter(pl.col("event_type") == 1)["time"].to_numpy()
    want = np.bincount((rem_times - trace.TRACE_START_US) // trace.WINDOW_US, minlength=n)
    assert windows["removals"].to_list() == want.tolist()
    assert (windows["removals"] == windows["outstanding"] + windows["remaining"]).all()
    assert (windows["maintenance"] == (windows["remaining"] >= 10)).all()

    hist = pl.read_csv(tiny_run / TINY_TABLES / "beaumont_failures_histogram.csv")
    assert hist["windows_all"].sum() == hist["windows_without_outstanding"].sum() == n
    assert hist["windows_without_maintenance"].sum() == n - int(windows["maintenance"].sum())
    for col, values in (("windows_all", windows["removals"]), ("windows_without_outstanding", windows["remaining"])):
        counted = dict(zip(*np.unique(values.to_numpy(), return_counts=True)))
        assert dict(hist.select("k", col).filter(pl.col(col) > 0).iter_rows()) == counted


def test_tiny_run_finds_the_synthetic_outstanding_events(tiny_run):
    ep = pl.read_csv(tiny_run / TINY_TABLES / "beaumont_outstanding_events.csv")
    out = ep.filter(pl.col("outstanding"))
    # the tiny trace keeps synth's default outstanding events: 2 mass removals, 1 flapping event
    assert sorted(out["kind"].to_list()) == ["flapping", "mass", "mass"]
    # each is a burst of machines re-added together (>= 15 within a minute); every other re-add group peaks lower
    assert (out["peak_readds"] >= 15).all() and (ep.filter(~pl.col("outstanding"))["peak_readds"] < 15).all()
    assert (out.filter(pl.col("kind") == "flapping")["removals_per_machine"] >= 2).all()
    # the mass removals take tens of minutes; their machines stay down for a while (synth: 20 minutes after the last)
    mass = out.filter(pl.col("kind") == "mass")
    assert ((mass["end_time"] - mass["start_time"]) >= 20 * 60 * 1_000_000).all() and (mass["median_duration_s"] > 1200).all()


def test_tiny_run_poisson_comparison_and_rate(tiny_run):
    poisson = pl.read_csv(tiny_run / TINY_TABLES / "beaumont_failures_poisson.csv")
    stats = {r["set"]: r for r in pl.read_csv(tiny_run / TINY_TABLES / "beaumont_failures_stats.csv").iter_rows(named=True)}
    kept = stats["without_maintenance"]
    assert poisson["windows"].sum() == kept["windows"]
    # expected counts are n·pmf over k = 0..max: they sum to n less the Poisson tail beyond max
    assert kept["windows"] * 0.99 < poisson["expected"].sum() <= kept["windows"]
    assert stats["all"]["mean"] > stats["without_outstanding"]["mean"] >= kept["mean"]
    # synth injects 0.747e-4 per machine and window: ≈ 540 removals over 2 days (negative binomial with
    # variance/mean 1.41: sd ≈ 5%); 20% is 4 sd
    assert kept["rate_per_window"] == pytest.approx(0.747e-4, rel=0.2)
    assert kept["mtbf_hours"] == pytest.approx(1 / (12 * kept["rate_per_window"]))
    disp = pl.read_csv(tiny_run / TINY_TABLES / "beaumont_failures_dispersion.csv")
    assert disp.filter(pl.col("set") == "all")["reject"].all()  # the outstanding events are as far from Poisson as it gets
    durations = pl.read_csv(tiny_run / TINY_TABLES / "beaumont_failures_durations.csv", schema_overrides={"minutes": pl.String})
    back17 = durations.filter(pl.col("minutes") == "17").row(0, named=True)
    # the outstanding events' machines stay down 1-20 min (flapping) or 20-50 min (mass): in the 2-day tiny trace
    # they are half the removals, and pull the share of all removals back within 17 minutes down (≈ 0.5)
    assert 0.5 < back17["back_ordinary"] < 0.75 and 0.3 < back17["back_all"] < back17["back_ordinary"]
    for name in ("beaumont_fig6_poisson", "beaumont_fig7_removal_durations"):
        assert min(png_shape(tiny_run / f"results/synthetic-tiny/figures/{name}.png")[:2]) > 200


def test_tiny_run_figures_show_the_tables(tiny_run):
    """Figs 6 and 7 drawn from the run's tables (as failures_analysis draws them) show the histogram's counts
    against n·Poisson(mean) recomputed with scipy, and the removal-duration ECDFs ending where the durations
    table puts the share never re-added, with the dots at its 17-minute shares.

    Catches a panel drawn from another set of windows (maintenance kept in (a)), an expected count off its
    Poisson (a mean over the wrong windows), and censored removals counted as back within the trace.
    """
    import matplotlib.pyplot as plt
    from scipy import stats

    from colocate.figures import failures as figures

    minutes, trace_minutes = 17, TINY["days"] * 288 * 5  # failures.back_within_minutes (default); the trace
    hist = pl.read_csv(tiny_run / TINY_TABLES / "beaumont_failures_histogram.csv")
    fig6 = pl.read_csv(tiny_run / TINY_TABLES / "beaumont_failures_poisson.csv")

    def poisson(column: str) -> pl.DataFrame:
        """The histogram's windows per k = 0..max, beside n·Poisson(k; mean) from scipy."""
        h = hist.filter(pl.col(column) > 0)
        windows = np.zeros(int(h["k"].max()) + 1)
        windows[h["k"].to_numpy()] = h[column].to_numpy()
        k, n = np.arange(windows.size), windows.sum()
        return pl.DataFrame({"k": k, "windows": windows, "expected": n * stats.poisson.pmf(k, (k * windows).sum() / n)})

    remaining, kept = poisson("windows_without_maintenance"), poisson("windows_without_outstanding")
    assert fig6["windows"].to_list() == remaining["windows"].to_list()
    np.testing.assert_allclose(fig6["expected"], remaining["expected"], rtol=1e-9)
    fig = figures.fig6_poisson(fig6, kept, 10)  # failures.maintenance_min_removals (default)
    for ax, want in zip(fig.axes, (remaining, kept)):
        bars = bar_heights(ax, by_position=True)  # hue 0: actual, 1: expected; position = k
        assert len(bars) == 2 * want.height
        assert [bars[(0, k)] for k in range(want.height)] == want["windows"].to_list()
        np.testing.assert_allclose([bars[(1, k)] for k in range(want.height)], want["expected"], rtol=1e-9)
        assert f"{int(want['windows'].sum())} windows" in ax.get_title() and ax.get_yscale() == "log"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["actual", "expected (Poisson)"]
    plt.close(fig)

    rem = pl.read_parquet(tiny_run / "results/synthetic-tiny/failures/removals.parquet")
    durations = pl.read_csv(tiny_run / TINY_TABLES / "beaumont_failures_durations.csv", schema_overrides={"minutes": pl.String})
    shares = {r["minutes"]: r for r in durations.iter_rows(named=True)}
    fig = figures.fig7_removal_durations(rem, minutes, trace_minutes)
    (ax,) = fig.axes
    curves = {len(line.get_xdata()) - 1: line for line in ax.lines if line.get_drawstyle() == "steps-post"}
    for group, column in ((rem.filter(~pl.col("outstanding")), "back_ordinary"), (rem, "back_all")):
        line = curves[group.height]  # one ECDF step per removal
        x, y = line.get_xdata()[1:], line.get_ydata()[1:]
        d = group["duration_s"].to_numpy() / 60
        np.testing.assert_allclose(x, np.sort(np.where(np.isinf(d), 10 * trace_minutes, d)))
        # where the axis ends (the trace's length), the curve is 1 − the share never re-added
        assert y[x <= trace_minutes].max() == pytest.approx(1 - shares["never"][column])
        dots = [ln.get_ydata()[0] for ln in ax.lines if ln.get_marker() == "o"]
        assert shares[str(minutes)][column] == pytest.approx(dots[0 if column == "back_ordinary" else 1])
    plt.close(fig)


def test_tiny_run_summary_puts_the_paper_beside_ours(tiny_run):
    """The analysis measures (summary/beaumont_failures.csv names each claim by its id); the summary judges."""
    measured = pl.read_csv(tiny_run / "results/synthetic-tiny/summary/beaumont_failures.csv")
    assert measured.columns == ["id", "value", "text", "note", "values", "status"] and "paper" not in measured.columns
    assert measured["id"].str.starts_with("beaumont.").all()
    s = read_summary(tiny_run / "results/synthetic-tiny/summary.csv")
    assert s["mean removals per window, outstanding events removed"]["paper"] == "1.005"
    assert s["windows with ≥ 10 removals (maintenance)"]["paper"] == "38"
    assert s["outstanding events"]["ours"] == "3 (2 mass, 1 flapping)"
    assert s["MTBF (hours), remaining windows"]["paper"] == "about 1000"
    assert float(s["MTBF (hours), remaining windows"]["ours"]) > 500
    assert s["removed machines back within 17 min, ordinary removals"]["ours"].endswith("%")
    assert "## Machine failures (Beaumont et al. §6)" in (tiny_run / "results/synthetic-tiny/summary.md").read_text()


# ============================================================================ a file laid out like the real trace


def write_machine_events(root: Path, lines: list[str]) -> None:
    path = root / "machine_events" / "part-00000-of-00001.csv.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))


def t_us(window: int, offset_s: float = 0) -> int:
    return trace.TRACE_START_US + window * trace.WINDOW_US + int(offset_s * 1_000_000)


def hand_made_lines() -> list[str]:
    """100 machines over the real trace's 8352 windows.

    window 0: 2 removals (machine 1 back after 100 s, machine 2 after 17 min + 1 s);
    window 100: 12 removals back after 30 min (maintenance);
    windows 200-201: a mass removal, machines 20..79 one every 10 s, all back in window 203 within 30 s;
    window 8351 (the last): machine 90 removed, never back; machine 95 gets UPDATEs (ignored).
    """
    add = lambda t, m: f"{t},{m},0,hashplatform,0.5,0.4995"  # noqa: E731
    rem = lambda t, m: f"{t},{m},1,,,"  # noqa: E731 — REMOVE rows have empty fields, as in the trace
    ev = [(0, add(0, m)) for m in range(1, 101)]
    ev += [(t_us(0, 0.5), rem(t_us(0, 0.5), 1)), (t_us(0, 100.5), add(t_us(0, 100.5), 1))]
    ev += [(t_us(0, 50), rem(t_us(0, 50), 2)), (t_us(0, 50 + 17 * 60 + 1), add(t_us(0, 50 + 17 * 60 + 1), 2))]
    for j, m in enumerate(range(3, 15)):
        ev += [(t_us(100, 20 * j), rem(t_us(100, 20 * j), m)), (t_us(100, 20 * j + 1800), add(t_us(100, 20 * j + 1800), m))]
    for j, m in enumerate(range(20, 80)):
        ev += [(t_us(200, 10 * j), rem(t_us(200, 10 * j), m)), (t_us(203, 0.5 * j), add(t_us(203, 0.5 * j), m))]
    ev += [(t_us(8351, 10), rem(t_us(8351, 10), 90)), (t_us(5000), f"{t_us(5000)},95,2,hashplatform,0.5,0.2493")]
    return [line for _, line in sorted(ev, key=lambda e: e[0])]


def local_workdir(tmp_path: Path, lines: list[str]) -> Path:
    root, workdir = tmp_path / "trace", tmp_path / "run"
    write_machine_events(root, lines)
    workdir.mkdir()
    write_config(workdir, trace={"source": "local", "path": str(root)})
    return workdir


def test_hand_made_real_layout_file_gives_the_hand_computed_answers(tmp_path):
    workdir = local_workdir(tmp_path, hand_made_lines())
    snakemake(workdir, "results/local-trace/summary/beaumont_failures.csv")
    hist = pl.read_csv(workdir / TABLES / "beaumont_failures_histogram.csv")
    assert hist.rows() == [(0, 8347, 8349, 8349), (1, 1, 1, 1), (2, 1, 1, 1), (12, 1, 1, 0), (30, 2, 0, 0)]
    ep = pl.read_csv(workdir / TABLES / "beaumont_outstanding_events.csv").filter(pl.col("outstanding"))
    assert ep.select("kind", "removals", "machines", "first_window", "last_window").rows() == [("mass", 60, 60, 200, 201)]
    stats = {r["set"]: r for r in pl.read_csv(workdir / TABLES / "beaumont_failures_stats.csv").iter_rows(named=True)}
    kept = stats["without_maintenance"]
    assert (kept["windows"], kept["removals"], kept["machines"]) == (8351, 3, 100)
    assert kept["rate_per_window"] == pytest.approx(3 / 8351 / 100)
    assert stats["without_outstanding"]["windows_maintenance"] == 1
    durations = pl.read_csv(workdir / TABLES / "beaumont_failures_durations.csv", schema_overrides={"minutes": pl.String})
    row = {r["minutes"]: r for r in durations.iter_rows(named=True)}
    # ordinary removals: 100 s, 17 min + 1 s, 12 × 30 min, never: 1 of 15 back within 17 min, 1 of 15 never
    assert row["17"]["back_ordinary"] == pytest.approx(1 / 15) and row["never"]["back_ordinary"] == pytest.approx(1 / 15)
    assert row["17"]["back_all"] == pytest.approx(61 / 75)


def test_malformed_machine_events_fails_naming_file_and_line(tmp_path):
    lines = hand_made_lines()
    lines[2] = "abc," + lines[2].split(",", 1)[1]  # a non-numeric time on line 3
    workdir = local_workdir(tmp_path, lines)
    res = snakemake(workdir, *REMOVAL_OUTPUTS, check=False)
    assert res.returncode != 0
    assert "machine_events/part-00000-of-00001.csv.gz:3" in res.stderr
    assert "time" in res.stderr
    for out in REMOVAL_OUTPUTS:
        assert not (workdir / out).exists()


def test_unknown_event_type_fails_naming_file_and_line(tmp_path):
    lines = hand_made_lines()
    lines[150] = lines[150].split(",")[0] + ",7,9,,,"  # event type 9 on line 151
    workdir = local_workdir(tmp_path, lines)
    res = snakemake(workdir, *REMOVAL_OUTPUTS, check=False)
    assert res.returncode != 0
    assert "part-00000-of-00001.csv.gz:151: event type 9" in res.stderr
    for out in REMOVAL_OUTPUTS:
        assert not (workdir / out).exists()


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"outstanding": {"min_readds": 1}}, "min_readds"),
        ({"outstanding": {"together_s": 0}}, "together_s"),
        ({"alpha": 1.5}, "alpha"),
        ({"maintenance_min": 10}, "maintenance_min"),
    ],
)
def test_bad_config_value_names_the_key(tmp_path, section, key):
    assert_config_rejected(tmp_path, key, failures=section)
