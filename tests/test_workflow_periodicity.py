"""The periodicity rules (Beaumont et al. §5.2, §8.2) on the session's tiny run, bad config and bad input."""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest
import yaml

from wfutil import REPO, assert_config_rejected, snakemake

from colocate.analysis import periodicity as pe
from colocate.scheduling import periodic_packing as pp

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


def test_components_are_the_whole_trace_production_jobs(tiny_run, inputs):
    dom, win = inputs
    comps = pl.read_parquet(tiny_run / "results/synthetic-tiny/periodicity/components.parquet")
    whole = dom.filter((pl.col("class") == "production") & pl.col("runs_whole_trace"))
    assert comps["job_id"].to_list() == whole["job_id"].sort().to_list()
    assert comps.height >= 1
    # the rule is the library on the run's dominant jobs with the config's values
    again = pe.analyse(dom, win, N_WINDOWS, classes=DEFAULTS["classes"], min_coverage=DEFAULTS["min_coverage"],
                       significance_ratio=DEFAULTS["significance_ratio"], strong_ratio=DEFAULTS["strong_ratio"],
                       phase_min_ratio=DEFAULTS["phase_min_ratio"], spectra_jobs=DEFAULTS["spectra_jobs"])
    assert again["components"].equals(comps)
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


def test_packing_table_is_valid_and_reproducible(tiny_run, inputs):
    _, win = inputs
    table = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/beaumont_periodic_packing.csv")
    assert table.height == 3 * len(CAPACITIES)
    assert table["policy"].to_list() == ["peak", "phasor", "mean"] * len(CAPACITIES)
    assert (table["machines"] >= table["lower_bound"]).all()
    strict = table.filter(pl.col("policy").is_in(["peak", "phasor"]) & (pl.col("oversize") == 0))
    assert (strict["model_bound"] <= 1 + 1e-9).all()  # both keep every machine's daily model within C
    assert table["overload_share"].is_between(0, 1).all()
    comps = pl.read_parquet(tiny_run / "results/synthetic-tiny/periodicity/components.parquet")
    series, _ = pe.job_series(win, comps["job_id"].to_list(), N_WINDOWS)
    again, _ = pp.pack(comps, series, CAPACITIES)
    assert again.select(table.columns).with_columns(pl.col(pl.Float64).round(12)).equals(
        table.with_columns(pl.col(pl.Float64).round(12))
    )


def test_summary_puts_the_papers_numbers_beside_ours(tiny_run):
    s = pl.read_csv(tiny_run / "results/synthetic-tiny/summary/beaumont_periodicity.csv", schema_overrides={"paper": pl.String, "ours": pl.String})
    rows = {r["quantity"]: r for r in s.iter_rows(named=True)}
    assert rows["Table 4 daily ratio, median"]["paper"] == "0.268" and float(rows["Table 4 daily ratio, median"]["ours"]) > 0
    assert not rows["Table 4 weekly ratio, median"]["ours"] and "no whole week" in rows["Table 4 weekly ratio, median"]["note"]
    assert rows["daily phase within 60° of the circular mean"]["paper"] == "0.5"
    assert rows["share with significant weekly pattern"]["paper"] == "about 1/2"
    assert any(q.startswith("machines used, C = 0.5") for q in rows)
    md = (tiny_run / "results/synthetic-tiny/summary.md").read_text()
    assert "Periodicity and periodic packing (Beaumont et al. §5.2, §8.2)" in md
    for name in ("beaumont_fourier_spectra", "beaumont_periodic_packing"):
        assert (tiny_run / f"results/synthetic-tiny/figures/{name}.png").stat().st_size > 20_000


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
    assert not (work / "results/synthetic-tiny/tables/beaumont_table4_fourier.csv").exists()
