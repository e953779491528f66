"""The packing stage end to end at the tiny scale (3 instances × 100 tasks): synthetic trace to figures."""

from __future__ import annotations

import re
import shutil

import numpy as np
import polars as pl
import pytest
import yaml

from colocate import measure
from test_packing import assert_packing_figures_show
from wfutil import (
    REPO,
    assert_config_rejected,
    judged,
    legend_texts,
    planned_rules,
    png_shape,
    snakemake,
    write_config,
)

pytestmark = pytest.mark.workflow

PACKING = {"instances": 3, "tasks_per_instance": 100}
FIGURES = ["fig7_machines", "fig8_m_vs_q", "fig9_gpa_error", "fig10_inst_vs_avg", "fig11_capacity",
           "fig12_clairvoyance", "fig13_rebalancing"]
TARGETS = ["results/synthetic-tiny/tables/packing.parquet", "results/synthetic-tiny/summary/packing.csv"] + [
    f"results/synthetic-tiny/figures/packing_{name}.png" for name in FIGURES + ["pareto"]
]
ADMISSION = ["results/synthetic-tiny/tables/admission.csv", "results/synthetic-tiny/summary/admission.csv", "results/synthetic-tiny/figures/admission_fig9_utilisation.png"]
RULES = {"packing_setting", "packing_table", "packing_figures"}


def job_counts(workdir, *targets) -> dict[str, int]:
    out = snakemake(workdir, *targets, "-n", "--quiet", "rules").stdout
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", out, re.M)} if "Nothing" not in out else {}


@pytest.fixture(scope="module")
def packing_run(tmp_path_factory):
    """The packing targets and what they need (trace → realizations), without the other stages."""
    work = tmp_path_factory.mktemp("packing")
    write_config(work, packing=PACKING)
    snakemake(work, *TARGETS, *ADMISSION)
    return work


def copy_with(packing_run, tmp_path, **packing):
    work = tmp_path / "w"
    shutil.copytree(packing_run, work, symlinks=True)
    write_config(work, packing={**PACKING, **packing})
    return work


def test_packing_table_figures_and_summary(packing_run):
    table = pl.read_parquet(packing_run / "results/synthetic-tiny/tables/packing.parquet")
    for col in ("instance", "estimator", "parameter", "algorithm", "rebalance", "capacity", "clairvoyance", "data",
                "m_abs", "m_norm", "m", "q", "q_machines", "utilisation_machines"):
        assert col in table.columns
    cells = table.select("estimator", "parameter", "algorithm", "rebalance", "capacity", "clairvoyance", "data").unique()
    assert cells.height == 178  # the default grid: §5.2–5.6 with our fit tests
    assert table["instance"].n_unique() == 3 and table.height == 3 * 178
    assert table["q"].is_between(0, 1).all() and (table["m_abs"] >= 1).all()
    assert set(table["estimator"]) == {"GPA", "Cantelli", "av", "perc", "Beta", "N-sigma", "RC-like", "max-pred", "Borg"}
    av1 = table.filter((pl.col("estimator") == "av") & (pl.col("parameter") == 1.0) & (pl.col("clairvoyance") == 1.0)
                       & (pl.col("capacity") == 1.0) & (pl.col("data") == "inst"))
    assert (av1["m"] >= 1).all()  # packing by full-clairvoyance means cannot beat the lower bound
    per_machine = table.with_columns(pl.col("q_machines").list.mean().alias("qm"))
    np.testing.assert_allclose(per_machine["qm"], per_machine["q"], rtol=1e-9)
    summary = pl.read_csv(packing_run / "results/synthetic-tiny/tables/packing_summary.csv")
    assert summary.height == 178 and (summary["instances"] == 3).all()
    measured = pl.read_csv(packing_run / "results/synthetic-tiny/summary/packing.csv", schema=measure.MEASUREMENT_COLUMNS)
    headline = judged(measured.to_dicts())  # as the summary judges it
    assert "GPA ρ=0.001: mean q" in headline["quantity"].to_list()
    assert not (headline["verdict"] == "not judged").any()
    # the figures the run saved, drawn again from its table: the default grid fills every panel (12)
    assert assert_packing_figures_show(table) == 12
    for name in FIGURES + ["pareto"]:
        assert min(png_shape(packing_run / f"results/synthetic-tiny/figures/packing_{name}.png")[:2]) > 200
    assert len(list((packing_run / "results/synthetic-tiny/logs/packing_setting").rglob("*.log"))) == 12
    assert len(list((packing_run / "results/synthetic-tiny/benchmarks/packing_setting").rglob("*.tsv"))) == 12


def test_admission_control_table_viii(packing_run):
    """Table VIII is the mean of the replicate streams; replicate 0's shares are the written utilisation series'
    shares above U*, and Fig 9 shows those series.

    Catches a table computed on other steps than the series written beside it (e.g. the warm-up kept),
    a > / ≥ slip at U*, and a figure showing another ε than the rule's (0.01) or unnormalised counts.
    """
    import matplotlib.pyplot as plt

    from colocate.figures import packing as figs
    from colocate.report import claims
    from wfutil import judged

    threshold = yaml.safe_load((REPO / "workflow/schemas/packing.schema.yaml").read_text())["properties"]["admission"][
        "properties"]["threshold"]["default"]
    table = pl.read_csv(packing_run / "results/synthetic-tiny/tables/admission.csv")
    assert table["eps"].to_list() == [0.005, 0.01, 0.02]
    assert (table["p_over_with"] <= table["p_over_without"]).all() and table["rejection"].is_between(0, 1).all()
    # source auto: the trace's sets where its long tasks run mean_running at a time, else realizations, saying why
    (source,) = table["source"].unique().to_list()
    assert source in ("trace", "realizations") and (source == "trace") == (table["note"].fill_null("") == "").all()
    # the table is the mean over the replicate streams (tiny: 2); the series written is replicate 0's
    each = pl.read_csv(packing_run / "results/synthetic-tiny/tables/admission_replicates.csv")
    assert each["replicate"].unique().sort().to_list() == [0, 1] and (table["replicates"] == 2).all()
    for m in ("p_over_with", "p_over_without", "rejection"):
        means = each.group_by("eps", maintain_order=True).agg(pl.col(m).mean())[m]
        assert table[m].to_list() == pytest.approx(means.to_list())
        assert (table[f"{m}_min"] <= table[m]).all() and (table[m] <= table[f"{m}_max"]).all()
    first = each.filter(pl.col("replicate") == 0)
    util = pl.read_parquet(packing_run / "results/synthetic-tiny/admission/utilisation.parquet")
    assert first["p_over_without"].to_list() == pytest.approx([float((util["without"] > threshold).mean())] * 3)
    for r in first.iter_rows(named=True):
        assert r["p_over_with"] == pytest.approx(float((util[f"eps={r['eps']:g}"] > threshold).mean()))
    # the controller only removes load: never above the uncontrolled utilisation at the same step
    assert all((util[f"eps={e:g}"] <= util["without"] + 1e-12).all() for e in table["eps"])
    # the summary part is the measurements, judged against workflow/papers/unuvar.tsv: per ε with the controller and
    # the rejected share, and the uncontrolled run once
    summary = judged(claims.read_measurements(packing_run / "results/synthetic-tiny/summary/admission.csv").to_dicts())
    assert summary.height == 7 and "10.83%" in summary["paper"].to_list()
    assert summary.filter(pl.col("quantity").str.contains("without"))["quantity"].to_list() == [
        "P(U > 0.8) without the controller (every ε)"]
    fig = figs.unuvar_fig9_utilisation(util, 0.01, threshold)  # the rule's parameters (admission_figure)
    (ax,) = fig.axes
    bins = np.linspace(0, 1, 51)
    heights = np.array([p.get_height() for p in ax.patches])
    assert heights.size == 2 * 50
    np.testing.assert_allclose(heights[:50], np.histogram(util["without"], bins, density=True)[0])
    np.testing.assert_allclose(heights[50:], np.histogram(util["eps=0.01"], bins, density=True)[0])
    assert [line.get_xdata()[0] for line in ax.lines] == [threshold] and "ε=0.01" in " ".join(legend_texts(ax))
    plt.close(fig)
    assert min(png_shape(packing_run / "results/synthetic-tiny/figures/admission_fig9_utilisation.png")[:2]) > 200


def test_changing_an_admission_bound_reruns_only_admission(packing_run, tmp_path):
    work = copy_with(packing_run, tmp_path, admission={"eps": [0.01]})
    assert planned_rules_for(work, *TARGETS, *ADMISSION) == {"admission_control", "admission_figure"}


def test_packing_is_deterministic(packing_run, tmp_path):
    work = copy_with(packing_run, tmp_path)
    setting = "results/synthetic-tiny/packing/data~inst/clairvoyance~1.0/capacity~5.0.parquet"
    (work / setting).unlink()
    snakemake(work, setting)
    assert pl.read_parquet(packing_run / setting).equals(pl.read_parquet(work / setting))


def test_second_invocation_has_nothing_to_do_for_packing(packing_run):
    assert not planned_rules(packing_run) & RULES


def planned_rules_for(workdir, *targets):
    out = snakemake(workdir, *targets, "-n", "--quiet", "rules").stdout
    return {m.group(1) for m in re.finditer(r"^(\w+)\s+\d+\s*$", out, re.M)} - {"total"}


def test_changing_max_failures_reruns_only_packing(packing_run, tmp_path):
    work = copy_with(packing_run, tmp_path, max_failures=3)
    assert planned_rules_for(work, *TARGETS) == RULES


def test_adding_a_capacity_runs_only_the_new_setting(packing_run, tmp_path):
    sections = {
        "5.2": {"estimators": "all", "algorithm": ["FF", "BF"]},
        "5.3": {"estimators": "all", "data": ["inst", "avg"]},
        "5.4": {"estimators": {"av": [1.25, 2.0], "GPA": [0.1, 0.001]}, "capacity": [0.5, 0.8, 1.0, 2.0, 3.0, 5.0],
                "rebalance": [True, False]},
        "5.5": {"estimators": {"GPA": "all", "av": "all"}, "clairvoyance": [0.001, 0.01, 0.1, 0.3, 0.5, 0.8, 1.0]},
        "5.6": {"estimators": "all", "rebalance": [True, False]},
    }
    work = copy_with(packing_run, tmp_path, sections=sections)
    counts = job_counts(work, *TARGETS)
    assert counts == {"packing_setting": 1, "packing_table": 1, "packing_figures": 1, "total": 3}


@pytest.mark.parametrize(
    ("packing", "needle"),
    [
        ({"tasks_per_instance": 1000}, "packing.tasks_per_instance"),
        ({"sections": {"5.4": {"estimators": {"Bogus": [1.0]}}}}, "section 5.4"),
        ({"estimators": {"GPA": [1.5]}}, "1.5"),
        ({"sections": {"5.5": {"clairvoyance": [0.0]}}}, "clairvoyance"),
        ({"max_failures": 0}, "max_failures"),
        ({"admission": {"eps": [0.0]}}, "eps"),
    ],
)
def test_bad_packing_config_is_rejected_naming_the_key(tmp_path, packing, needle):
    assert_config_rejected(tmp_path, needle, packing={**PACKING, **packing})
