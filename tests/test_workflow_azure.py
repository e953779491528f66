"""The Azure VM traces through the workflow (issue 16): the shipped sample offline, a local copy in the dataset's
layout, and a download from a loopback server pinned in the lock file."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from loopback import serve

from colocate import insufficient

from wfutil import REPO, assert_config_rejected, azure_dataset_layout as dataset_layout, planned_rules, snakemake, write_config

pytestmark = pytest.mark.workflow

@pytest.fixture(scope="module")
def sample_run(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("azure-sample")
    write_config(work, trace={"source": "azure-sample"})
    snakemake(work)
    return work / "results/azure-sample-tiny"


def test_the_azure_sample_runs_offline_end_to_end(sample_run):
    table4 = pl.read_csv(sample_run / "tables/beaumont_table4_fourier.csv")
    assert table4.filter(pl.col("statistic") == "jobs")["daily"].item() == 20  # every VM is read all month
    # the shared reduce keeps every VM as a long entity, and its statistics are its readings': the vmtable's avgcpu is
    # the mean of its avg readings, here a share of a host of 48 cores (× 48 / its cores × 100 gives it back)
    from colocate.sources import azure

    vmtable = pl.read_parquet(sample_run / "azure/vmtable.parquet")
    stats = pl.read_parquet(sample_run / "tasks/task_stats.parquet").join(azure.vm_tasks(vmtable), on=["job_id", "task_index"])
    both = stats.join(vmtable, on="vmid")
    assert both.height == 20 == vmtable.height and both["is_long"].all()
    assert ((both["avg_mean"] * 48 / both["cores"] * 100 - both["avgcpu"]).abs() / both["avgcpu"]).max() < 1e-5
    # the summary shows Azure beside the paper's Google numbers, without judging them
    summary = pl.read_csv(sample_run / "summary.csv")
    assert summary.height > 30 and summary["within"].is_null().all()
    azure_rows = summary.filter(pl.col("section").str.starts_with("Periodicity and periodic packing"))
    daily = azure_rows.filter(pl.col("quantity") == "Table 4 daily ratio, median")
    assert daily["paper_value"].item() == pytest.approx(0.268)
    assert daily["ours_value"].item() == pytest.approx(table4.filter(pl.col("statistic") == "50%")["daily"].item(), rel=1e-3)
    assert (sample_run / "figures/beaumont_fourier_spectra.png").stat().st_size > 10_000
    # what does not apply is said, by the mechanism that says what lacks data, naming the capability lacked
    page = (sample_run / "summary.md").read_text().split("## Analyses this trace cannot support")[1]
    for analysis in ("Machine failures (Beaumont et al. §6)", "Dominant jobs by priority class (Beaumont et al. §3-5.1)",
                     "CPU against memory usage (Beaumont et al. §4.2)", "Co-location density per machine (issue 13)",
                     "Job durations (Beaumont et al. §5.1, Table 3)", "Janus Fig 1, sampled inst against the 5-minute mean (§3.2)",
                     "One 1-s sample against the window's distribution (beyond the papers)"):
        assert analysis in page, analysis
    assert page.count("not applicable to the shipped Azure V2 sample (20 VMs): needs ") == 7
    assert "needs machine_events (the Azure VM traces record VMs, not the hosts they run on" in page
    capabilities = json.loads((sample_run / "trace/capabilities.json").read_text())
    assert capabilities["has"] == ["arrivals", "entities", "usage_series"] and capabilities["usage"] == "max"
    # the 20 VMs were all created before the trace began: no arrival process to replay, and the run says so
    placement = insufficient.read_status(sample_run / "tables/placement_trace.csv")
    assert placement is not None and "all submitted at the same instant" in placement.reason
    # the Google-only maps do not run, and the paper's own Table I workload is not rerun here
    assert not (sample_run / "map/task_usage").exists() and not (sample_run / "tables/placement_table2.csv").exists()


def test_the_sample_vms_are_aggregated_as_unuvar_does_and_larger_sets_are_said_impossible(sample_run):
    sets = pl.read_csv(sample_run / "tables/unuvar_aggregates.csv")
    assert sets.filter(pl.col("size") == 18)["source"].item() == "trace"
    assert sets.filter(pl.col("size") == 18)["mean_tasks"].item() == pytest.approx(18, abs=1.0)
    skipped = sets.filter(pl.col("source") == "none")
    assert skipped["size"].to_list() == [49, 88, 154]
    assert skipped["note"].str.contains("20.0 at a time").all() and skipped["note"].str.contains("realizations of 20 tasks").all()
    util = pl.read_parquet(sample_run / "characterise/unuvar_aggregates.parquet")
    assert util["size"].unique().to_list() == [18] and util["utilisation"].max() == pytest.approx(0.9)
    rows = pl.read_csv(sample_run / "summary.csv").filter(pl.col("section").str.contains("Unuvar"))
    assert "§IV-C: K-S D, 18 tasks (trace)" in rows["quantity"].to_list() and rows["within"].is_null().all()


def test_janus_section_3_runs_on_the_vms_with_the_max_for_inst(sample_run):
    lines = pl.read_csv(sample_run / "tables/janus_fig3_trend_lines.csv")
    assert lines["kind"].to_list() == ["inst", "avg"] and (lines["n_tasks"] == 20).all()
    assert (lines["slope"] > 0).all()
    # 20 VMs are too few for 16 clusters of typical shapes: said, with what would do
    shares = insufficient.read_status(sample_run / "tables/janus_fig4_cluster_shares.csv")
    assert shares is not None and "20 long tasks for k = 16 clusters" in shares.reason
    fig2 = pl.read_csv(sample_run / "tables/janus_fig2_std.csv")
    assert fig2.filter(pl.col("kind") == "inst")["share_above_other"].item() == 1.0  # the max varies more than avg
    rows = pl.read_csv(sample_run / "summary.csv").filter(pl.col("section").str.contains("Janus & Rzadca §3\\)"))
    assert "Fig 3: inst std-vs-mean slope" in rows["quantity"].to_list() and rows["within"].is_null().all()
    assert not any(q.startswith("Fig 1") for q in rows["quantity"])  # no sampled inst: Fig 1 does not apply


def test_janus_section_3_6_sums_the_vms_and_skips_sizes_with_too_few_distinct_sets(sample_run):
    """Table 1 and Figs 5-6 on the 20 VMs: of the tiny scale's sizes only N = 10 has 100 distinct sets. The mean
    total over 100 random sets of 10 is 10 × the VMs' mean μ_i, within 4 sd of a sample mean drawn without
    replacement; each VM's realizations average its own μ_i (a share of a 48-core host) within 5 σ_i/√R."""
    import numpy as np

    vms = pl.read_parquet(sample_run / "realizations/tasks.parquet").sort("row").join(
        pl.read_parquet(sample_run / "tasks/long_tasks.parquet"), on=["job_id", "task_index"], maintain_order="left")
    inst = np.load(sample_run / "realizations/inst.npy")
    assert inst.shape == (20, 500)
    mu, sigma = vms["inst_mean"].to_numpy(), vms["inst_std"].to_numpy()
    assert (np.abs(inst.mean(axis=1) - mu) <= 5 * sigma / np.sqrt(500) + 1e-6).all()
    assert 2 < 48 * mu.sum() < 40  # 0.1-2 cores each at their 5-minute max, as shares of 48 cores
    table1 = pl.read_csv(sample_run / "tables/janus_table1_normality.csv")
    assert table1["N"].to_list() == [10] and table1["samples"].item() == 100
    n, size = 20, 10
    sd = np.sqrt(size * mu.var() * (n - size) / (n - 1) / 100)
    assert abs(table1["mean_total"].item() - size * mu.mean()) < 4 * sd
    fig6 = pl.read_csv(sample_run / "tables/janus_fig6_percentiles.csv")
    assert fig6["N"].to_list() == [10] * 3 and fig6["percentile"].to_list() == [95.0, 99.0, 99.9]
    assert (sample_run / "figures/janus_fig5_totals.png").stat().st_size > 10_000
    rows = pl.read_csv(sample_run / "summary.csv").filter(pl.col("section").str.contains("Janus & Rzadca §3\\)"))
    assert "Table 1: A-D rejection rate, N = 10" in rows["quantity"].to_list() and rows["within"].is_null().all()
    cross = pl.read_csv(sample_run / "tables/cross_trace.csv")
    assert cross.filter(pl.col("quantity") == "Table 1: A-D rejection rate, N = 10")["value"].item() == table1["ad_rejection"].item()


def test_the_vms_are_packed_by_their_daily_phasors_as_shares_of_a_host(sample_run):
    table = pl.read_csv(sample_run / "tables/beaumont_periodic_packing.csv")
    assert table.height == 9 and set(table["policy"]) == {"peak", "phasor", "mean"} and (table["tasks"] == 20).all()
    # the 20 VMs use 0.1-1.2 cores each on average: a quarter of a 48-core host holds them all, never overloaded
    assert (table["machines"] == 1).all() and (table["overload_share"] == 0).all()
    comps = pl.read_parquet(sample_run / "periodicity/components.parquet")
    assert 2 < 48 * comps["mean"].sum() < 12  # cores: shares of the 48-core host, not percent


def test_the_cross_trace_table_fills_its_google_column_once_that_run_exists(sample_run):
    work = sample_run.parents[1]
    page = (sample_run / "summary.md").read_text()
    assert "## Across traces" in page and "results/synthetic-default/summary.csv does not exist" in page
    table = pl.read_csv(sample_run / "tables/cross_trace.csv")
    assert set(table["run"]) == {"azure-sample-tiny"} and table["quantity"].n_unique() >= 9
    # a Google run appears (here, the reference run's summary): only the cross-trace table and the page are redone
    (work / "results/synthetic-default").mkdir(parents=True)
    shutil.copy(REPO / "workflow/report/reference-summary.csv", work / "results/synthetic-default/summary.csv")
    assert planned_rules(work) == {"cross_trace", "summary", "all"}
    snakemake(work)
    table = pl.read_csv(sample_run / "tables/cross_trace.csv")
    reference = pl.read_csv(REPO / "workflow/report/reference-summary.csv")
    daily = reference.filter(pl.col("quantity") == "Table 4 daily ratio, median")["ours_value"].item()
    got = table.filter((pl.col("quantity") == "Table 4 daily ratio, median") & (pl.col("run") == "synthetic-default"))
    assert got["value"].item() == pytest.approx(daily) and got["trace"].item() == "synthetic model of Google 2011"
    assert ("| quantity | paper (Google 2011) | synthetic-default (synthetic model of Google 2011) | azure-sample-tiny "
            "(the shipped Azure V2 sample (20 VMs)) |") in (sample_run / "summary.md").read_text()
    # a 2019 run appears too (issue 45): its column, labelled by the trace its capabilities.json records
    label = "the synthetic trace in the 2019 format (the 2011-calibrated model)"
    (work / "results/synthetic2019-default/trace").mkdir(parents=True)
    shutil.copy(REPO / "workflow/report/reference-summary.csv", work / "results/synthetic2019-default/summary.csv")
    (work / "results/synthetic2019-default/trace/capabilities.json").write_text(json.dumps({"trace": label}))
    assert planned_rules(work) == {"cross_trace", "summary", "all"}
    snakemake(work)
    again = pl.read_csv(sample_run / "tables/cross_trace.csv")
    assert again["run"].unique(maintain_order=True).to_list() == ["synthetic-default", "synthetic2019-default", "azure-sample-tiny"]
    assert again.filter(pl.col("run") != "synthetic2019-default").equals(table)  # the other runs' rows unchanged
    assert set(again.filter(pl.col("run") == "synthetic2019-default")["trace"]) == {label}
    page = (sample_run / "summary.md").read_text()
    assert f"| synthetic2019-default ({label}) | azure-sample-tiny" in page and "does not exist" not in page


def test_the_azure_sample_run_is_complete(sample_run):
    res = snakemake(sample_run.parents[1], "-n")
    assert "Nothing to be done" in res.stdout + res.stderr


def test_the_admission_controller_says_when_the_vms_are_too_few_or_arrive_at_once(sample_run):
    """The 20 sample VMs cannot make the paper's 154 running: said, with what would do (the Azure source offers the
    controller the trace's VMs, not realizations of month-long VMs). At 15 running, they all predate the trace, so
    there is no arrival process: said too (the last test of the module: it changes the run's config)."""
    status = insufficient.read_status(sample_run / "tables/admission.csv")
    assert status is not None and "run 20.0 at a time on average, fewer than mean_running = 154" in status.reason
    assert "admission controller" in (sample_run / "summary.md").read_text().split("## Analyses this trace cannot support")[1]
    work = sample_run.parents[1]
    snakemake(work, "--config", 'packing={"admission": {"mean_running": 15}}')
    status = insufficient.read_status(sample_run / "tables/admission.csv")
    assert status is not None and "all arrive at once" in status.reason


@pytest.fixture
def azure_server(tmp_path):
    """The dataset layout served from 127.0.0.1 as the Azure blob container (shut down after the test)."""
    site = tmp_path / "site"
    dataset_layout(site / "trace_data")
    with serve(site) as bucket:  # the download tests' loopback server (tests/loopback.py)
        yield bucket.url, site / "trace_data"


def test_the_azure_source_downloads_pins_and_refuses_a_changed_file(azure_server, sample_run, tmp_path):
    """The sample's readings split over two time-ordered files, downloaded from a loopback server: pinned in the
    lock, Table 4 byte-identical to the sample's own run (every VM's series rebuilt across files), then a changed
    vmtable on the server is refused."""
    url, served = azure_server
    work = tmp_path / "w"
    work.mkdir()
    write_config(work, trace={"source": "azure", "retries": 2, "backoff": 0.01,
                              "azure": {"version": "v2", "url": url, "files": [1, 2]}})
    snakemake(work, "results/azure-v2-tiny/tables/beaumont_table4_fourier.csv", "results/azure-v2-tiny/azure/vmtable.parquet")
    table4 = work / "results/azure-v2-tiny/tables/beaumont_table4_fourier.csv"
    assert table4.read_bytes() == (sample_run / "tables/beaumont_table4_fourier.csv").read_bytes()
    assert sorted(p.name for p in (work / "results/azure-v2-tiny/map/vm_cpu_readings").glob("*.parquet")) == [
        "vm_cpu_readings-file-1-of-195.parquet", "vm_cpu_readings-file-2-of-195.parquet"]
    lock = pl.read_csv(work / "resources/trace/azure-v2.lock.tsv", separator="\t")
    assert lock["relpath"].to_list() == ["vm_cpu_readings/vm_cpu_readings-file-1-of-195.csv.gz",
                                         "vm_cpu_readings/vm_cpu_readings-file-2-of-195.csv.gz", "vmtable/vmtable.csv.gz"]
    assert lock["size"].to_list() == [(served / r).stat().st_size for r in lock["relpath"]]
    # the server's vmtable changes: a new download of it is refused, naming the lock file, and nothing is left
    (served / "vmtable/vmtable.csv.gz").write_bytes(gzip.compress(gzip.decompress((served / "vmtable/vmtable.csv.gz").read_bytes())[:-2] + b"\r\n"))
    (work / "resources/trace/azure-v2/vmtable/vmtable.csv.gz").unlink()
    res = snakemake(work, "resources/trace/azure-v2/vmtable/vmtable.csv.gz", check=False)
    assert res.returncode != 0
    log = (work / "resources/trace/azure-v2/logs/download/vmtable/vmtable.log").read_text()
    assert "azure-v2.lock.tsv" in log and "vmtable/vmtable.csv.gz" in log
    assert not (work / "resources/trace/azure-v2/vmtable/vmtable.csv.gz").exists()
    assert not list((work / "resources/trace/azure-v2").rglob("*.part"))


def test_the_azure_source_plans_the_selected_files_only(tmp_path):
    write_config(tmp_path, trace={"source": "azure", "azure": {"files": 3}})
    out = snakemake(tmp_path, "-n", "--quiet", "rules").stdout
    assert re.search(r"^download_azure\s+4\s*$", out, re.M)  # vmtable and readings files 1-3
    assert "map_task_usage" not in out and "placement_run" not in out


@pytest.mark.parametrize(
    ("sections", "key"),
    [
        ({"trace": {"source": "azure", "azure": {"files": 0}}}, "files"),
        ({"trace": {"source": "azure", "azure": {"url": "ftp://example.org/x"}}}, "trace.azure.url"),
    ],
)
def test_invalid_azure_config_is_rejected_naming_the_key(tmp_path, sections, key):
    assert_config_rejected(tmp_path, key, **sections)


@pytest.mark.parametrize(("instance", "key"), [
    ({"trace": {"source": "azure", "azure": {"version": "v3"}}}, "trace.azure.version"),
    ({"periodicity": {"entities": {"max_entities": 0}}}, "periodicity.entities.max_entities"),
    ({"azure": {"placement": {"host_cores": -4}}}, "azure.placement.host_cores"),
])
def test_the_schema_refuses_bad_azure_values_at_their_key(instance, key):
    """The checks the workflow runs at start-up (the two above show its message), in process."""
    import jsonschema

    from colocate.configtypes import config_schema

    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(config_schema(REPO / "workflow/schemas")).iter_errors(instance))
    assert error is not None and ".".join(map(str, error.absolute_path)) == key


def test_many_made_up_vms_run_every_analysis_and_give_back_their_daily_share(tmp_path):
    """150 made-up VMs in the dataset's layout (a daily sinusoid of amplitude U(0, 0.4) of the mean, plus noise; 100
    of them all along, 50 arriving later): every analysis that applies runs, and Beaumont §5.2 recovers the share of
    the 100 whole-span VMs whose daily ratio exceeds 0.12, (0.4 − 0.12) / 0.4 = 0.70, within 3 binomial sd."""
    from wfutil import synthetic_azure_layout

    root = synthetic_azure_layout(tmp_path / "trace_data")
    work = tmp_path / "w"
    work.mkdir()
    write_config(work, trace={"source": "local", "path": str(root)},
                 packing={"instances": 2, "tasks_per_instance": 50, "admission": {"mean_running": 40}},
                 realizations={"n_tasks": 150, "n_realizations": 200})
    run = work / "results/local-trace_data"
    snakemake(work, *(f"results/local-trace_data/{f}" for f in ("tables/cross_trace.csv", "tables/packing.parquet",
                                                               "figures/packing_fig8_m_vs_q.png")))
    comps = pl.read_parquet(run / "periodicity/components.parquet")
    assert comps.height == 100
    share = comps["daily_significant"].mean()
    assert abs(share - 0.70) < 3 * (0.70 * 0.30 / 100) ** 0.5
    packing = pl.read_parquet(run / "tables/packing.parquet")
    assert {"GPA", "Cantelli", "perc"} <= set(packing["estimator"]) and packing["instance"].n_unique() == 2
    # Janus Fig 8 on the VMs, drawn by the same rule as on Google's tasks
    fig8 = run / "figures/packing_fig8_m_vs_q.png"
    assert insufficient.read_status(fig8) is None and fig8.stat().st_size > 20_000
    admission = pl.read_csv(run / "tables/admission.csv")
    assert admission["eps"].to_list() == [0.005, 0.01, 0.02] and (admission["source"] == "trace").all()
    assert admission.select(pl.col("p_over_with") <= pl.col("p_over_without") + 1e-12).to_series().all()
    placement = pl.read_csv(run / "tables/placement_trace.csv")
    assert set(placement["policy"]) >= {"PACK", "SPREAD"} and (placement["requests"] > 0).all()
    cross = pl.read_csv(run / "tables/cross_trace.csv")
    assert {"GPA ρ=0.01: mean q", "ε=0.01: rejected share", "% reject PACK", "Table 1: A-D rejection rate, N = 50"} <= set(cross["quantity"])
    table1 = pl.read_csv(run / "tables/janus_table1_normality.csv")
    assert table1["N"].to_list() == [10, 20, 30, 50, 100]  # 150 is every VM: one set, skipped


def test_the_real_v1_head_files_run_end_to_end_and_say_what_they_lack(tmp_path):
    """The shipped V1 files (100 readings, a 10-row vmtable of other VMs) as a local copy: no task is kept and 10
    requests cannot outlast the warm-up; the run completes and says so, and no notebook shows a traceback."""
    root = tmp_path / "trace_data"
    (root / "vm_cpu_readings").mkdir(parents=True)
    (root / "vmtable").mkdir()
    v1 = REPO / "workflow/data/azure-vm-sample/v1"
    shutil.copy(v1 / "vm_cpu_readings-file-1-of-125-head100.csv.gz", root / "vm_cpu_readings/vm_cpu_readings-file-1-of-125.csv.gz")
    shutil.copy(v1 / "vmtable-head10.csv.gz", root / "vmtable/vmtable.csv.gz")
    work = tmp_path / "w"
    work.mkdir()
    write_config(work, trace={"source": "local", "path": str(root), "azure": {"version": "v1"}})
    snakemake(work)
    run = work / "results/local-trace_data"
    page = (run / "summary.md").read_text().split("## Analyses this trace cannot support")[1]
    assert "no task was kept" in page and "the trace gives 10 placeable requests, no more than the warm-up of 60" in page
    assert "no entity has usage records" in page
    assert not [p.name for p in (run / "notebooks").glob("*.html") if "Traceback" in p.read_text()]
