"""The placement rules (Tantawi & Steinder) end to end at a small size, through `python -m snakemake`.

The paper's experiment runs in a module-scoped temporary directory (it needs no trace); the
trace-driven run is checked on the session's tiny run of the whole pipeline (``tiny_run``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from wfutil import snakemake, write_config

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
        assert (run / f"results/synthetic-tiny/figures/placement_{name}.png").stat().st_size > 10_000
    replay = pl.read_csv(run / "results/synthetic-tiny/tables/placement_replay.csv")
    assert replay["identical_log"].all() and replay["identical_snapshot"].all()
    nb = json.loads((run / "results/synthetic-tiny/notebooks/04_placement.ipynb").read_text())
    assert any(c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
    summary = pl.read_csv(run / "results/synthetic-tiny/summary/placement.csv", schema_overrides={"paper": pl.String, "ours": pl.String})
    row = summary.filter(pl.col("quantity") == "Table II % Reject ABP").row(0, named=True)
    assert row["paper"] == "0.33%" and row["ours"].endswith("%") and "replicates" in row["note"]  # % on both sides
    bsa = pl.read_csv(run / "results/synthetic-tiny/tables/placement_bsa.csv")
    assert ((bsa["agreement"] > 0.5) & (bsa["agreement"] <= 1)).all()


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
        "placement_run", "placement_tables", "placement_figures", "placement_bsa", "placement_summary", "notebook_placement"
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
    assert (tiny_run / "results/synthetic-tiny/figures/placement_trace.png").stat().st_size > 10_000
    summary = (tiny_run / "results/synthetic-tiny/summary.md").read_text()
    assert "## Placement (Tantawi & Steinder)" in summary and "## Placement, trace-driven" in summary
