"""The CPU vs memory rules (Beaumont et al. §4.2) on the session's tiny run: content, truth, reruns, bad input."""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest
import yaml

from colocate.analysis import cpumem
from colocate.trace import synth
from wfutil import REPO, TINY, assert_config_rejected, bar_heights, legend_texts, planned_rules, png_shape, snakemake, tick_labels, write_config

pytestmark = pytest.mark.workflow

RULES = {"cpumem_classify", "cpumem_tables", "cpumem_figures"}
SHAPE_TO_CATEGORY = {"flat": "Flat", "two_cluster": "MultiFlat", "slope": "Slope", "badly_fitted": "BadlyFitted"}


def _defaults() -> cpumem.Settings:
    schema = yaml.safe_load((REPO / "workflow/schemas/cpumem.schema.yaml").read_text())["properties"]
    return cpumem.Settings(**{k: schema[k]["default"] for k in ("eps", "min_samples", "scaling", "r2_min", "cv_max", "flat_range_max", "min_points")})


def test_classes_fits_and_table_agree(tiny_run):
    s = _defaults()
    dominant = pl.read_parquet(tiny_run / "results/synthetic-tiny/jobs/dominant_jobs.parquet")
    classes = pl.read_parquet(tiny_run / "results/synthetic-tiny/cpumem/job_classes.parquet")
    fits = pl.read_parquet(tiny_run / "results/synthetic-tiny/cpumem/job_fits.parquet")
    # one row per dominant job; TooFewPoints exactly below min_points
    assert sorted(classes["job_id"]) == sorted(dominant["job_id"])
    assert ((classes["n_points"] < s.min_points) == (classes["category"] == cpumem.TOO_FEW)).all()
    assert (classes["n_points"] <= 5000).all()
    classified = classes.filter(pl.col("category") != cpumem.TOO_FEW)
    assert classified.height >= 40
    # every cluster's verdict follows from its r², CV and range; every job's category from its verdicts
    for r in fits.iter_rows(named=True):
        assert r["verdict"] == cpumem.cluster_verdict(r, s.r2_min, s.cv_max, s.flat_range_max)
    verdicts = fits.group_by("job_id").agg(pl.col("verdict").sort_by("cluster"))
    got = classified.join(verdicts, on="job_id", how="left").with_columns(pl.col("verdict").fill_null([]))
    for r in got.iter_rows(named=True):
        assert r["category"] == cpumem.job_category(r["verdict"]), r["job_id"]
        assert r["n_clusters"] == len(r["verdict"])
    assert fits.group_by("job_id").agg(pl.col("n_points").sum()).join(classified, on="job_id").select(
        (pl.col("n_points") <= pl.col("n_points_right")).all()
    ).item()
    # the table counts the same jobs
    table = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/beaumont_cpumem_shares.csv")
    overall = {r["category"]: r for r in table.filter(pl.col("scope") == "all").iter_rows(named=True)}
    counts = dict(classes.group_by("category").len().iter_rows())
    assert all(overall[c]["n_jobs"] == counts.get(c, 0) for c in (*cpumem.CATEGORIES, cpumem.TOO_FEW))
    assert sum(overall[c]["share_of_fitted"] for c in cpumem.FITTED) == pytest.approx(1.0)
    per_class = table.filter(pl.col("scope") != "all").group_by("category").agg(pl.col("n_jobs").sum())
    assert dict(per_class.iter_rows()) == {c: overall[c]["n_jobs"] for c in overall}


def test_the_tiny_run_recovers_the_synthetic_shapes(tiny_run):
    """The tiny trace regenerated with its truth: the classified jobs' categories are the injected shapes."""
    seed = yaml.safe_load((tiny_run / "config.yaml").read_text())["trace"]["seed"]
    truth = synth.generate(synth.SynthParams.from_dict(TINY), seed, truth=True)["truth_jobs"]
    classes = pl.read_parquet(tiny_run / "results/synthetic-tiny/cpumem/job_classes.parquet").filter(pl.col("category") != cpumem.TOO_FEW)
    joined = classes.join(truth.select("job_id", "memory_shape"), on="job_id", how="inner")
    assert joined.height == classes.height
    agree = (joined["memory_shape"].replace_strict(SHAPE_TO_CATEGORY) == joined["category"]).mean()
    # ≈ 99% at the default scale; the tiny run has ~70 classified jobs, so one or two misses cost 3%
    assert agree >= 0.9


def test_figures_examples_and_summary(tiny_run):
    classes = pl.read_parquet(tiny_run / "results/synthetic-tiny/cpumem/job_classes.parquet")
    examples = pl.read_parquet(tiny_run / "results/synthetic-tiny/cpumem/fig3_examples.parquet")
    picked = dict(examples.group_by("category").agg(pl.col("job_id").first()).iter_rows())
    assert picked == {c: j for c, j in cpumem.pick_examples(classes).items() if j is not None}
    for cat, job in picked.items():
        row = classes.filter(pl.col("job_id") == job).row(0, named=True)
        assert row["category"] == cat and examples.filter(pl.col("job_id") == job).height == row["n_points"]
    for name in ("beaumont_fig3_cpu_memory", "beaumont_cpumem_shares"):
        assert min(png_shape(tiny_run / f"results/synthetic-tiny/figures/{name}.png")[:2]) > 200
    summary = pl.read_csv(tiny_run / "results/synthetic-tiny/summary.csv", schema_overrides={"paper": pl.String, "ours": pl.String})
    papers = dict(summary.filter(pl.col("section") == "CPU vs memory (Beaumont et al. §4.2)").select("quantity", "paper").iter_rows())
    assert papers["Flat (share of fitted jobs)"] == "67%" and papers["Slope (share of fitted jobs)"] == "26.5%"
    assert papers["BadlyFitted (share of classified jobs)"] == "≈50% (about half)"
    assert "## CPU vs memory (Beaumont et al. §4.2)" in (tiny_run / "results/synthetic-tiny/summary.md").read_text()


def test_figures_show_the_examples_fits_and_shares(tiny_run):
    """Fig 3 drawn from the run's example points and fits shows each category's job: its every point, and per
    cluster the fitted line, which is numpy's least squares on that cluster's points; the shares figure's bars
    are the table's shares (of the fitted jobs for Flat, MultiFlat, Slope; of the classified for BadlyFitted).

    Catches a panel showing another job or a subset of its points, a line of another cluster or fitted on
    other points (e.g. the noise included), and a bar showing the wrong share or scope.
    """
    import matplotlib.pyplot as plt

    from colocate.figures import cpumem as figures

    examples = pl.read_parquet(tiny_run / "results/synthetic-tiny/cpumem/fig3_examples.parquet")
    fits = pl.read_parquet(tiny_run / "results/synthetic-tiny/cpumem/job_fits.parquet")
    fig = figures.fig3_cpu_memory(examples, fits)
    assert len(fig.axes) == len(cpumem.CATEGORIES)
    for ax, cat in zip(fig.axes, cpumem.CATEGORIES):
        part = examples.filter(pl.col("category") == cat)
        if part.height == 0:
            assert not ax.collections and ax.texts[0].get_text() == f"no {cat} job in this run"
            continue
        (dots,) = ax.collections
        xy, want = np.asarray(dots.get_offsets()), part.select("cpu_rate", "canonical_memory_usage").to_numpy()
        np.testing.assert_array_equal(xy[np.lexsort(xy.T[::-1])], want[np.lexsort(want.T[::-1])])
        job = part["job_id"][0]
        assert f"job {job}, {part.height} points" in ax.get_title()
        lines = {line.get_label().split(":")[0]: line for line in ax.lines if line.get_label().startswith("fit ")}
        clusters = sorted(c for c in part["cluster"].unique() if c >= 0)
        assert sorted(lines) == [f"fit {c}" for c in clusters]
        for c in clusters:
            pts = part.filter(pl.col("cluster") == c)
            slope, intercept = np.polyfit(pts["cpu_rate"].to_numpy(), pts["canonical_memory_usage"].to_numpy(), 1)
            row = fits.filter((pl.col("job_id") == job) & (pl.col("cluster") == c)).row(0, named=True)
            assert (row["n_points"], row["slope"], row["intercept"]) == (pts.height, pytest.approx(slope), pytest.approx(intercept))
            x, y = lines[f"fit {c}"].get_xdata(), lines[f"fit {c}"].get_ydata()
            assert list(x) == [0.0, pts["cpu_rate"].max()] and np.allclose(y, intercept + slope * np.asarray(x))
    plt.close(fig)

    table = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/beaumont_cpumem_shares.csv")
    fig = figures.shares(table)
    (ax,) = fig.axes
    scopes = table["scope"].unique(maintain_order=True).to_list()
    counted = table.filter(pl.col("category").is_in(cpumem.CATEGORIES)).group_by("scope").agg(pl.col("n_jobs").sum())
    assert legend_texts(ax) == [f"{s} ({dict(counted.iter_rows())[s]} jobs)" for s in scopes] + ["paper"]
    want = {}
    for r in table.filter(pl.col("category").is_in(cpumem.CATEGORIES)).iter_rows(named=True):
        share = r["share_of_fitted"] if r["category"] in cpumem.FITTED else r["share_of_classified"]
        if share is not None:
            want[(scopes.index(r["scope"]), r["category"])] = share
    assert tick_labels(ax) == list(cpumem.CATEGORIES) and bar_heights(ax) == pytest.approx(want)
    plt.close(fig)


def test_a_threshold_reruns_the_classification_and_the_same_config_the_same_bytes(tiny_run, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    assert planned_rules(work) & RULES == set()
    out = work / "results/synthetic-tiny/cpumem/job_classes.parquet"
    before = out.read_bytes()
    snakemake(work, "--forcerun", "cpumem_classify", "--", "results/synthetic-tiny/cpumem/job_classes.parquet")
    assert out.read_bytes() == before
    write_config(work, cpumem={"cv_max": 0.5})
    assert planned_rules(work) & RULES == RULES
    snakemake(work, "results/synthetic-tiny/cpumem/job_classes.parquet")
    loose = pl.read_parquet(out)
    old = pl.read_parquet(tiny_run / "results/synthetic-tiny/cpumem/job_classes.parquet")
    # a looser CV threshold can only turn BadlyFitted jobs into fitted ones
    assert (loose["category"] == "BadlyFitted").sum() < (old["category"] == "BadlyFitted").sum()


@pytest.mark.parametrize(
    ("section", "key"),
    [({"scaling": "zscore"}, "scaling"), ({"eps": 0}, "eps"), ({"flat_range_max": 0.5}, "flat_range_max"), ({"epsilon": 1}, "epsilon")],
)
def test_invalid_cpumem_config_is_rejected_naming_the_key(tmp_path, section, key):
    assert_config_rejected(tmp_path, key, cpumem=section)


def test_a_bad_sampled_windows_file_fails_naming_it_and_writes_nothing(tiny_run, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    for f in (work / "results/synthetic-tiny/cpumem").glob("*.parquet"):
        f.unlink()
    bad = sorted((work / "results/synthetic-tiny/map/task_usage").glob("*/sampled_windows.parquet"))[0]
    pl.read_parquet(bad).drop("canonical_memory_usage").write_parquet(bad)
    res = snakemake(work, "results/synthetic-tiny/cpumem/job_classes.parquet", check=False)
    assert res.returncode != 0
    log = (work / "results/synthetic-tiny/logs/cpumem/classify.log").read_text() + res.stdout + res.stderr
    assert bad.parent.name in log and "canonical_memory_usage" in log
    assert not list((work / "results/synthetic-tiny/cpumem").glob("*.parquet"))
