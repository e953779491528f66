"""The placement rules (Tantawi & Steinder) end to end at a small size, through `python -m snakemake`.

The paper's experiment runs in a module-scoped temporary directory (it needs no trace); the
trace-driven run is checked on the session's tiny run of the whole pipeline (``tiny_run``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from colocate import measure
from wfutil import judged, png_shape, snakemake, tick_labels, write_config

pytestmark = pytest.mark.workflow

#: A short version of the paper's experiment: 600 requests in the paper's proportions, 3 replicates.
SMALL = {
    "replicates": 3,
    "phases": [
        {"types": ["A"], "requests": 100},
        {"types": ["A", "B"], "requests": 200},
        {"types": ["A", "B", "C"], "requests": 300},
    ],
    "snapshot_pod": 590,
}
EXPERIMENT = [
    "results/synthetic-tiny/summary/placement.csv",
    "results/synthetic-tiny/figures/placement_fig1_load_trajectory.png",
    "results/synthetic-tiny/tables/placement_replay.csv",
    "results/synthetic-tiny/notebooks/04_placement.ipynb",
]


def planned(workdir: Path, *targets: str) -> set[str]:
    out = snakemake(workdir, *targets, "-n", "--quiet", "rules").stdout
    if "Nothing to be done" in out:
        return set()
    rules = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] != "total":
            rules.add(parts[0])
    return rules


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("placement")
    write_config(workdir, placement=SMALL)
    snakemake(workdir, *EXPERIMENT)
    return workdir


def test_tables_figures_notebook_and_summary(run):
    t2 = pl.read_csv(run / "results/synthetic-tiny/tables/placement_table2.csv")
    assert t2.columns == ["measure", "resource", "PACK", "SPREAD", "XBAL", "ABP"]
    reject = t2.filter(pl.col("measure") == "% Reject").row(0, named=True)
    assert reject["SPREAD"] > 0  # fragmentation: Spread loses GPU-4 pods (Table III)
    t3 = pl.read_csv(run / "results/synthetic-tiny/tables/placement_table3.csv", schema_overrides={"gpu demand": pl.String})
    assert t3["gpu demand"].to_list() == ["0", "1", "2", "3", "4", "Total"]
    assert t3.filter(pl.col("gpu demand") == "0").select("PACK", "SPREAD", "XBAL", "ABP").sum_horizontal().item() == 0
    reps = pl.read_csv(run / "results/synthetic-tiny/tables/placement_replicates.csv")
    assert set(reps["n"]) == {3}
    tests = pl.read_csv(run / "results/synthetic-tiny/tables/placement_tests.csv")
    assert tests["baseline"].to_list() == ["PACK", "SPREAD", "XBAL"]
    for name in ("fig1_load_trajectory", "fig2_stdev", "fig3_snapshot", "fig4_error", "reject_replicates"):
        assert min(png_shape(run / f"results/synthetic-tiny/figures/placement_{name}.png")[:2]) > 200
    replay = pl.read_csv(run / "results/synthetic-tiny/tables/placement_replay.csv")
    assert replay["identical_log"].all() and replay["identical_snapshot"].all()
    nb = json.loads((run / "results/synthetic-tiny/notebooks/04_placement.ipynb").read_text())
    assert any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
    measured = pl.read_csv(run / "results/synthetic-tiny/summary/placement.csv", schema=measure.MEASUREMENT_COLUMNS)
    summary = {r["quantity"]: r for r in judged(measured.to_dicts()).iter_rows(named=True)}
    row = summary["Table II % Reject ABP"]
    assert row["paper"] == "0.33%" and row["ours"].endswith("%") and "replicates" in row["note"]  # % on both sides
    # 540 requests after the warm-up, not the paper's 3,940; 3 replicates cannot make a paired test significant
    assert summary["Table III rejections total, ABP"]["verdict"] == "too little data"
    assert summary["% reject of ABP against SPREAD (paired over 3 replicates)"]["verdict"] == "too little data"
    assert all(r["reads_trace"] is False for r in summary.values())
    bsa = pl.read_csv(run / "results/synthetic-tiny/tables/placement_bsa.csv")
    assert ((bsa["agreement"] > 0.5) & (bsa["agreement"] <= 1)).all()


def test_figures_show_the_runs_and_tables(run):
    """Figs 1–4 and the replicates figure drawn from replicate 0's log and snapshot and the tables (as
    placement_figures draws them) show them: the utilisation and its StDev per pod and resource, ABP's γ's
    and their gap, the snapshot's nodes sorted by GPU whose mean is the log's utilisation at that pod, each
    replicate's rejections with the interval's mean, itself the mean over the metrics table's replicates.

    Catches a figure of another policy (Figs 1, 4 show ABP), resources swapped between lines or bars, a
    snapshot taken after another pod, nodes left unsorted, and a replicates table out of step with the metrics.
    """
    import matplotlib.pyplot as plt
    from matplotlib.collections import PathCollection

    from colocate.figures import placement as figs
    from colocate.scheduling.placement_analysis import snapshot_figure_input

    r = run / "results/synthetic-tiny"
    requests = pl.read_parquet(r / "placement/runs/rep-0/requests.parquet")
    snapshot = pl.read_parquet(r / "placement/runs/rep-0/snapshot.parquet")
    resources = [c.removeprefix("mu_") for c in requests.columns if c.startswith("mu_")]
    assert resources == ["cpu", "memory", "gpu"]  # Table I
    policies = requests["policy"].unique(maintain_order=True).to_list()
    abp = requests.filter(pl.col("policy") == "ABP")
    pod = abp["request"].to_numpy() + 1

    fig = figs.fig1_load_trajectory(abp, resources)
    (ax,) = fig.axes
    assert [line.get_label() for line in ax.lines[:3]] == ["CPU", "Memory", "GPU"]  # then the phase boundaries
    for line, res in zip(ax.lines, resources):
        assert np.array_equal(line.get_xdata(), pod) and np.array_equal(line.get_ydata(), abp[f"mu_{res}"].to_numpy())
    plt.close(fig)

    fig = figs.fig2_stdev(requests, resources, policies)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == policies
    for ax, policy in zip(panels, policies):
        g = requests.filter(pl.col("policy") == policy)
        for line, res in zip(ax.lines, resources):
            assert np.array_equal(line.get_ydata(), g[f"sd_{res}"].to_numpy()), (policy, res)
    plt.close(fig)

    util = snapshot_figure_input(snapshot, resources)
    fig = figs.fig3_snapshot(util, resources, SMALL["snapshot_pod"])
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == len(policies) == snapshot["policy"].n_unique()
    for ax, policy in zip(panels, util):
        nodes = snapshot.filter(pl.col("policy") == policy)
        bars = np.array([b.get_height() for b in ax.patches]).reshape(len(resources), -1).T  # node × resource
        assert sorted(map(tuple, bars)) == sorted(nodes.select(f"u_{x}" for x in resources).iter_rows())
        assert (np.diff(bars[:, 2]) >= 0).all()  # sorted by GPU first
        # the snapshot is the cluster after pod snapshot_pod: its mean is the log's utilisation at that pod
        at = requests.filter((pl.col("policy") == policy) & (pl.col("request") == SMALL["snapshot_pod"] - 1))
        assert bars.mean(axis=0) == pytest.approx([at[f"mu_{x}"].item() for x in resources])
        assert f"GPU {at['mu_gpu'].item():.2f}" in ax.get_title()
    plt.close(fig)

    warmup = 60  # placement.warmup (default)
    fig = figs.fig4_error(abp, "gpu", warmup)
    a, b = fig.axes
    post = abp.filter(pl.col("request") >= warmup)
    for line, column in zip(a.lines, ("gamma_dem", "gamma_sys", "mu_gpu")):
        assert np.array_equal(line.get_ydata(), post[column].to_numpy()), column
    gap = np.concatenate([dots.get_offsets()[:, 1] for dots in b.collections])
    assert len(b.collections) == post["phase"].n_unique()
    np.testing.assert_allclose(np.sort(gap), np.sort((post["gamma_dem"] - post["gamma_sys"]).abs().to_numpy()))
    plt.close(fig)

    metrics = pl.read_csv(r / "tables/placement_metrics.csv")
    ci = pl.read_csv(r / "tables/placement_replicates.csv")
    reject = metrics.filter(pl.col("metric") == "reject_pct")
    fig = figs.fig_replicates(metrics, ci, policies)
    (ax,) = fig.axes
    assert tick_labels(ax) == policies
    dots = [c for c in ax.collections if isinstance(c, PathCollection)]  # one per policy, between the error bars
    assert len(dots) == len(policies)
    for i, (policy, d) in enumerate(zip(policies, dots)):
        v = reject.filter(pl.col("policy") == policy)["value"].to_numpy()
        assert np.allclose(np.sort(d.get_offsets()[:, 1]), np.sort(v)) and np.all(np.abs(d.get_offsets()[:, 0] - i) <= 0.15)
        row = ci.filter((pl.col("policy") == policy) & (pl.col("metric") == "reject_pct")).row(0, named=True)
        # both tables are written to 6 digits (placement_runs.rounded)
        assert row["n"] == v.size == SMALL["replicates"] and row["mean"] == pytest.approx(v.mean(), abs=1e-6)
        assert row["ci_low"] <= row["mean"] <= row["ci_high"] and [row["min"], row["max"]] == pytest.approx([v.min(), v.max()], abs=1e-6)
    means = [float(c.lines[0].get_ydata()[0]) for c in ax.containers]  # the error bars' centres
    assert means == pytest.approx([ci.filter((pl.col("policy") == p) & (pl.col("metric") == "reject_pct"))["mean"].item() for p in policies])
    plt.close(fig)


def test_rerun_is_a_no_op_config_changes_rerun_what_reads_them_and_bytes_repeat(run, tmp_path):
    assert planned(run, *EXPERIMENT) == set()
    work = tmp_path / "w"
    shutil.copytree(run, work, symlinks=True)
    # the same config gives the same bytes
    out = "results/synthetic-tiny/placement/runs/rep-1/requests.parquet"
    before = (work / out).read_bytes()
    snakemake(work, "--forcerun", "placement_run", "--", out)
    assert (work / out).read_bytes() == before
    # α feeds ABP, the tables and BSA; the figures only through the tables
    write_config(work, placement=SMALL | {"alpha": 0.001})
    assert planned(work, *EXPERIMENT) == {
        "placement_run", "placement_tables", "placement_figures", "placement_bsa", "placement_summary", "notebook_placement",
        "normalise_notebook",
    }
    # a BSA setting reruns only the BSA comparison (and the summary that quotes it)
    write_config(work, placement=SMALL | {"bsa": {"samples": 3}})
    assert planned(work, *EXPERIMENT) == {"placement_bsa", "placement_summary"}


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"pod_types": {"A": {"demand": [2, 24, 0], "load": 0.15}, "C": {"demand": [40, 96, 4], "load": 0.2}}}, "placement.pod_types.C.demand"),
        ({"snapshot_pod": 5000}, "placement.snapshot_pod"),
        ({"policies": ["pack", "bestfit"]}, "bestfit"),
    ],
)
def test_bad_config_fails_before_any_job_naming_the_key(tmp_path, change, key):
    write_config(tmp_path, placement=SMALL | change)
    res = snakemake(tmp_path, "-n", *EXPERIMENT, check=False)
    assert res.returncode != 0
    assert key in res.stdout + res.stderr
    assert not (tmp_path / "results").exists()


def test_trace_driven_run(tiny_run):
    table = pl.read_csv(tiny_run / "results/synthetic-tiny/tables/placement_trace.csv")
    assert table["policy"].to_list() == ["PACK", "SPREAD", "XBAL", "ABP"]
    assert (table["requests"] > 0).all() and (table["reject_pct"] < 50).all()
    facts = dict(pl.read_csv(tiny_run / "results/synthetic-tiny/tables/placement_trace_workload.csv").iter_rows())
    assert facts["offered_cpu_load"] == pytest.approx(0.55) and facts["requests"] >= table["requests"][0]
    # the figure drawn from the run's log: one line per policy and resource, and the table's rejections as bars,
    # recounted here from the log after the warm-up (catches a figure or table counting the warm-up's requests)
    import matplotlib.pyplot as plt

    from colocate.figures import placement as figs

    log = pl.read_parquet(tiny_run / "results/synthetic-tiny/placement/trace/log.parquet")
    warmup = int(log["request"].max()) + 1 - table["requests"][0]
    assert warmup == 60  # placement.trace.warmup (default)
    post = log.filter(pl.col("request") >= warmup)
    recount = post.group_by("policy", maintain_order=True).agg(pl.len(), (~pl.col("accepted")).sum().alias("rejected"))
    assert recount.rows() == table.select("policy", "requests", "rejected").rows()
    policies = table["policy"].to_list()
    fig = figs.fig_trace(log, policies, warmup=warmup)
    mu, sd, bars = fig.axes
    assert len(mu.lines) == len(sd.lines) == 2 * len(policies)
    for line in mu.lines:
        policy, resource = line.get_label().split()
        g = post.filter(pl.col("policy") == policy)
        assert np.array_equal(line.get_ydata(), g[f"mu_{resource.lower()}"].to_numpy()), line.get_label()
    assert tick_labels(bars) == policies
    assert [b.get_height() for b in bars.patches] == pytest.approx(table["reject_pct"].to_list(), abs=1e-6)  # CSV: 6 digits
    plt.close(fig)
    assert min(png_shape(tiny_run / "results/synthetic-tiny/figures/placement_trace.png")[:2]) > 200
    summary = (tiny_run / "results/synthetic-tiny/summary.md").read_text()
    assert "## Placement (Tantawi & Steinder)" in summary and "## Placement, trace-driven" in summary
