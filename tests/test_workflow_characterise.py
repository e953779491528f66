"""The characterisation rules (Janus & Rzadca §3, Unuvar et al. §IV) in the tiny workflow run."""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest

from colocate import insufficient
from wfutil import assert_config_rejected, planned_rules, snakemake, write_config

pytestmark = pytest.mark.workflow

JANUS_FIGURES = [
    "janus_fig1_sampling", "janus_fig2_std_cdf", "janus_fig3_std_vs_mean", "janus_s34_time_invariance",
    "janus_fig4_centroids", "janus_fig4_elbow", "janus_fig5_totals", "janus_fig6_percentiles",
]
UNUVAR_FIGURES = ["unuvar_fig4_beta_fit", "unuvar_fig7_beta_fit", "unuvar_gaussian_vs_beta"]
#: The rules of workflow/rules/characterise.smk (other stages may be planned for their own reasons).
RULES = {
    "janus_fig1_sampling", "janus_variability", "janus_time_invariance", "janus_clusters", "janus_elbow",
    "janus_total_usage", "janus_fig5_totals", "janus_summary", "unuvar_aggregates", "unuvar_beta_fit",
    "unuvar_sweep", "notebook_characterisation",
}


def test_characterisation_outputs(tiny_run):
    for name in JANUS_FIGURES + UNUVAR_FIGURES:
        png = tiny_run / f"results/synthetic-tiny/figures/{name}.png"
        assert png.stat().st_size > 10_000, name
    long = pl.read_parquet(tiny_run / "results/synthetic-tiny/tasks/long_tasks.parquet")
    clusters = pl.read_parquet(tiny_run / "results/synthetic-tiny/characterise/task_clusters.parquet")
    assert clusters.height == long.height and clusters["cluster"].n_unique() == 16
    shares = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/janus_fig4_cluster_shares.csv")
    assert shares["share"].sum() == pytest.approx(1.0)
    fig1 = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/janus_fig1_sampling.csv")
    assert fig1["k"][0] == 1 and fig1["n"][0] == long.height
    s34 = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/janus_s34_time_invariance.csv")
    assert s34["delta"].to_list() == [12, 24, 36] and ((s34["share"] > 0) & (s34["share"] < 1)).all()
    # tiny: 200 tasks have realizations, so Table 1 keeps N ≤ 200
    table1 = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/janus_table1_normality.csv")
    assert table1["N"].to_list() == [10, 20, 30, 50, 100, 150]  # the tiny preset's table1_sizes
    assert ((table1["ad_rejection"] >= 0) & (table1["ad_rejection"] <= 1)).all()
    lines = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/janus_fig3_trend_lines.csv")
    assert lines["kind"].to_list() == ["inst", "avg"]
    sources = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/unuvar_aggregates.csv")
    assert sources["size"].to_list() == [18, 49, 88, 154]
    assert set(sources["source"]) <= {"machines", "realizations"}
    aggs = pl.read_parquet(tiny_run / "results/synthetic-tiny/characterise/unuvar_aggregates.parquet")
    peaks = aggs.group_by("size").agg(pl.col("utilisation").max())["utilisation"].to_numpy()
    assert np.allclose(peaks, 0.9)
    ks = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/unuvar_table6_ks.csv")
    assert ((ks["ks_p"] >= 0) & (ks["ks_p"] <= 1)).all()
    nb = (tiny_run / "results/synthetic-tiny/notebooks/02_characterisation.ipynb").read_text()
    assert '"output_type"' in nb and "Traceback" not in nb  # the executed copy, without errors
    summary = (tiny_run / "results/synthetic-tiny/summary.md").read_text()
    assert "## Task characterisation (Janus & Rzadca §3)" in summary
    assert "## Aggregated utilisation, Beta fit (Unuvar et al. §IV)" in summary
    assert "| Fig 3: inst std-vs-mean slope | 0.36 |" in summary


def test_a_characterisation_setting_reruns_only_what_reads_it(tiny_run, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    write_config(work, characterise={"unuvar": {"threshold": 0.85}})
    assert planned_rules(work) & RULES == {"unuvar_beta_fit", "unuvar_sweep", "notebook_characterisation"}
    write_config(work, characterise={"janus": {"windows": [12, 24]}})
    assert planned_rules(work) & RULES == {"janus_time_invariance", "janus_summary", "notebook_characterisation"}


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"janus": {"kmeans_k": 0}}, "kmeans_k"),
        ({"unuvar": {"source": "racks"}}, "source"),
        ({"janus": {"kmeans": 16}}, "kmeans"),
        ({"janus": {"table1_sizes": [1000, 2000]}}, "table1_sizes"),
    ],
)
def test_invalid_characterisation_config_is_rejected_naming_the_key(tmp_path, section, key):
    assert_config_rejected(tmp_path, key, characterise=section)


def test_bad_sizes_fail_the_job_naming_the_parameter(tiny_run, tmp_path):
    """A window Δ longer than every series fails its job naming Δ (delta) and leaves no output; k larger
    than the number of long tasks is too little data, not bad input: k-means writes its outputs with the
    reason, naming k."""
    work = tmp_path / "w"
    shutil.copytree(tiny_run, work, symlinks=True)
    write_config(work, characterise={"janus": {"windows": [100_000], "kmeans_k": 100_000}})
    res = snakemake(work, "--keep-going", "results/synthetic-tiny/tables/janus_s34_time_invariance.csv",
                    "results/synthetic-tiny/characterise/task_clusters.parquet", check=False)
    assert res.returncode != 0
    s34_log = (work / "results/synthetic-tiny/logs/characterise/janus_time_invariance.log").read_text()
    out = res.stdout + res.stderr
    assert "delta" in s34_log + out and "100000" in s34_log + out
    assert "k=100000" in (work / "results/synthetic-tiny/logs/characterise/janus_clusters.log").read_text()
    assert not (work / "results/synthetic-tiny/tables/janus_s34_time_invariance.csv").exists()
    status = insufficient.read_status(work / "results/synthetic-tiny/characterise/task_clusters.parquet")
    assert status is not None and "k=100000 is larger than the number of tasks" in status.reason
