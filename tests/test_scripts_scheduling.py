"""Rule scripts of packing, admission, periodicity, placement and the summary, run without Snakemake.

Each script is loaded with :func:`colocate.rulescript.load` and called with
:func:`colocate.rulescript.call` on small files built here; params are those of its rule, with the
config schema's defaults (workflow/schemas/*.schema.yaml) where the rule reads config.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from colocate import insufficient, io, measure, rulescript
from colocate.report import summary
from colocate.scheduling import packing_grid as pg
from colocate.scheduling import placement_runs as pr
from colocate.scheduling import placement_workload as pw
from test_placement import TABLE_I, _summary_inputs
from wfutil import PAPERS, REPO, judged

SCRIPTS = REPO / "workflow" / "scripts"
#: A capabilities record constructed in the shape of trace/capabilities.json: every file of each table read.
TINY_CAPABILITIES = """{"trace": "the synthetic 2011 trace", "entity": "task", "group": "job", "span_windows": 576,
 "coverage": [{"table": "task_usage", "read": 3, "of": 3, "whole": true, "maps_to": ["usage_records"],
               "files": ["part-00000-of-00003", "part-00001-of-00003", "part-00002-of-00003"]}],
 "read": {"usage_records": {"rows": 146597, "first_window": 0, "last_window": 575, "first_h": 0.0, "last_h": 47.92}}}"""

# ----------------------------------------------------------------------------- packing_setting, packing_table

N_TASKS, N_REAL = 40, 60
#: The rule's params from packing.schema.yaml's defaults (instances and tasks_per_instance are smaller here).
PACKING_PARAMS = {"seed": 2017, "max_failures": 5, "fit_options": {"beta_threshold": 0.8, "max_pred_percentile": 99},
                  "estimator_options": {}}


def realizations(tmp_path, seed=3):
    """inst/avg .npy, the realizations' task table and task_stats: N_TASKS tasks × N_REAL realizations."""
    rng = np.random.default_rng(seed)
    inst = rng.beta(2.0, 8.0, (N_TASKS, N_REAL)).astype(np.float32)  # CPU usage in [0, 1]
    avg = (0.5 * inst + 0.5 * inst.mean(axis=1, keepdims=True)).astype(np.float32)
    np.save(tmp_path / "inst.npy", inst)
    np.save(tmp_path / "avg.npy", avg)
    keys = {"job_id": np.arange(N_TASKS, dtype=np.int64) // 4, "task_index": np.arange(N_TASKS, dtype=np.int64) % 4}
    # rows shuffled on disk: the script sorts them
    order = rng.permutation(N_TASKS)
    pl.DataFrame({"row": np.arange(N_TASKS), **keys, "n_records": np.full(N_TASKS, N_REAL)})[order].write_parquet(tmp_path / "tasks.parquet")
    pl.DataFrame({**keys, "cpu_request": rng.uniform(0.05, 0.3, N_TASKS)}).write_parquet(tmp_path / "task_stats.parquet")
    return inst, {k: tmp_path / f for k, f in
                  (("inst", "inst.npy"), ("avg", "avg.npy"), ("tasks", "tasks.parquet"), ("stats", "task_stats.parquet"))}


def packing_setting_params(capacity: float, instances: int, tasks_per_instance: int) -> dict:
    """Params of one setting (inst, clairvoyance 1, ``capacity``) with GPA, av and max (perc 100), FF and BF."""
    cells = pg.expand_grid({"GPA": [0.05], "av": [1.0], "perc": [100]},
                           {"x": {"estimators": "all", "capacity": [capacity], "algorithm": ["FF", "BF"]}})
    setting = pg.settings(cells).row(0, named=True)
    return PACKING_PARAMS | {"setting": setting, "cells": pg.cells_of(cells, setting),
                             "instances": instances, "tasks_per_instance": tasks_per_instance}


@pytest.mark.parametrize("capacity", [1.0, 2.0])
def test_packing_setting_uses_at_least_the_lower_bound_and_max_never_overloads(tmp_path, capacity):
    script = rulescript.load(SCRIPTS / "packing_setting.py")
    inst, inputs = realizations(tmp_path)
    params = packing_setting_params(capacity, instances=3, tasks_per_instance=30)
    out = tmp_path / "setting.parquet"
    rulescript.call(script, inputs=inputs, outputs=[out], params=params, log=tmp_path / "setting.log")
    result = pl.read_parquet(out)
    assert result.height == 3 * 6  # instances × cells (3 estimators × 2 algorithms)
    rows = pg.instances(N_TASKS, 3, 30, PACKING_PARAMS["seed"])
    for k in range(3):
        bound = math.ceil(inst[rows[k]].astype(np.float64).mean(axis=1).sum() / capacity)
        cells = result.filter(pl.col("instance") == k)
        assert (cells["m_norm"] == bound).all()
        assert (cells["m_abs"] >= bound).all(), cells.select("label", "algorithm", "m_abs")
    # packing by each task's max (perc 100) with full clairvoyance never overloads a machine
    assert (result.filter(pl.col("estimator") == "perc")["q"] == 0).all()
    assert (result["capacity"] == capacity).all()
    assert "setting" in (tmp_path / "setting.log").read_text()


def test_packing_setting_passes_a_status_input_on_and_packing_table_follows(tmp_path):
    _, inputs = realizations(tmp_path)
    upstream = insufficient.Status("Janus §3, realizations", "only 1 long task", "≥ 100 long tasks")
    insufficient.write_status([inputs["tasks"]], upstream)
    setting = rulescript.load(SCRIPTS / "packing_setting.py")
    out = tmp_path / "setting.parquet"
    rulescript.call(setting, inputs=inputs, outputs=[out], params=packing_setting_params(1.0, 2, 10),
                    log=tmp_path / "setting.log")
    status = insufficient.read_status(out)
    assert status == upstream.downstream(setting.ANALYSIS)
    assert status.origin == "Janus §3, realizations" and status.reason == "only 1 long task"

    table = rulescript.load(SCRIPTS / "packing_table.py")
    outputs = {"table": tmp_path / "packing.parquet", "csv": tmp_path / "packing_summary.csv",
               "summary": tmp_path / "summary_packing.csv"}
    rulescript.call(table, inputs=[out], outputs=outputs, params={}, log=tmp_path / "table.log")
    for path in outputs.values():
        assert insufficient.read_status(path) == upstream.downstream(table.ANALYSIS)


def test_packing_table_stacks_the_settings_and_summarises_each_cell(tmp_path):
    inst, inputs = realizations(tmp_path)
    setting = rulescript.load(SCRIPTS / "packing_setting.py")
    parts = []
    for capacity in (2.0, 1.0):
        parts.append(tmp_path / f"c{capacity}.parquet")
        rulescript.call(setting, inputs=inputs, outputs=[parts[-1]], params=packing_setting_params(capacity, 2, 20),
                        log=tmp_path / "setting.log")
    outputs = {"table": tmp_path / "packing.parquet", "csv": tmp_path / "packing_summary.csv",
               "summary": tmp_path / "summary_packing.csv"}
    rulescript.call(rulescript.load(SCRIPTS / "packing_table.py"), inputs=parts, outputs=outputs, log=tmp_path / "t.log")
    table = pl.read_parquet(outputs["table"])
    assert table.height == 2 * 2 * 6  # settings × instances × cells
    # sorted by instance, then by cell (estimator, parameter, algorithm, rebalance, capacity, …)
    assert table.select("instance", "estimator", "algorithm", "capacity").head(4).rows() == [
        (0, "GPA", "BF", 1.0), (0, "GPA", "BF", 2.0), (0, "GPA", "FF", 1.0), (0, "GPA", "FF", 2.0)]
    assert table["instance"].is_sorted()
    cells = pl.read_csv(outputs["csv"])
    assert cells.height == 2 * 6 and (cells["instances"] == 2).all()
    one = cells.filter((pl.col("estimator") == "av") & (pl.col("algorithm") == "BF") & (pl.col("capacity") == 1.0))
    assert one["m_abs_mean"].item() == pytest.approx(table.filter(
        (pl.col("estimator") == "av") & (pl.col("algorithm") == "BF") & (pl.col("capacity") == 1.0))["m_abs"].mean())
    measured = pl.read_csv(outputs["summary"], schema=measure.MEASUREMENT_COLUMNS)  # judged by the summary
    assert "janus.f9.gpa_q_slo95" in measured["id"].to_list()
    assert "GPA ρ=0.05: mean q" in judged(measured.to_dicts())["quantity"].to_list()


# ----------------------------------------------------------------------------- placement_run

#: Table I of Tantawi & Steinder on 6 nodes and 200 requests; the rest is the rule's params with
#: placement.schema.yaml's defaults.
SMALL_TABLE_I = {
    **TABLE_I,
    "nodes": 6,
    "phases": [
        {"types": ["A"], "requests": 40},
        {"types": ["A", "B"], "requests": 60},
        {"types": ["A", "B", "C"], "requests": 100},
    ],
    "warmup": 20,
    "snapshot_pod": 150,
}
POLICIES = {"PACK": "pack", "SPREAD": "spread", "XBAL": "xbalance", "ABP": "abp"}


def placement_run_params(replicate: int) -> dict:
    specs = pw.policy_specs(list(POLICIES.values()), SMALL_TABLE_I["resources"], "gpu", [1, 0, -2], "placement")
    return {"experiment": SMALL_TABLE_I, "specs": specs, "seed": 2018, "alpha": 0.005, "optimiser": "exhaustive",
            "tie_break": "first", "bsa": None, "replicate": replicate}


def test_placement_run_logs_every_request_of_every_policy_and_one_snapshot_row_per_node(tmp_path):
    params = placement_run_params(replicate=2)
    outputs = {"requests": tmp_path / "requests.parquet", "snapshot": tmp_path / "snapshot.parquet"}
    rulescript.call(rulescript.load(SCRIPTS / "placement_run.py"), inputs={}, outputs=outputs, params=params,
                    log=tmp_path / "run.log")
    requests, snapshot = pl.read_parquet(outputs["requests"]), pl.read_parquet(outputs["snapshot"])
    nodes, n = SMALL_TABLE_I["nodes"], 200
    assert requests.height == len(POLICIES) * n and (requests["replicate"] == 2).all()
    for policy in POLICIES:
        log = requests.filter(pl.col("policy") == policy)
        assert log["request"].to_list() == list(range(n))
        # every request is either accepted on a node or rejected (node -1)
        assert log["accepted"].null_count() == 0
        assert log.filter(pl.col("accepted"))["node"].is_between(0, nodes - 1).all()
        assert (log.filter(~pl.col("accepted"))["node"] == -1).all()
    assert snapshot.height == len(POLICIES) * nodes and (snapshot["replicate"] == 2).all()
    assert snapshot.group_by("policy").agg(pl.col("node").sort()).sort("policy")["node"].to_list() == [list(range(nodes))] * 4
    assert snapshot.select(pl.col("^u_.*$").is_between(0, 1).all()).row(0) == (True, True, True)
    # the replicate param chooses the stream: the same as the library's replicate 2, not replicate 0
    exp = pw.Experiment.from_config(SMALL_TABLE_I)
    again, _ = pr.run_replicate(exp, params["specs"], seed=2018, replicate=2, alpha=0.005)
    assert requests.equals(again)
    other, _ = pr.run_replicate(exp, params["specs"], seed=2018, replicate=0, alpha=0.005)
    assert not requests.drop("replicate").equals(other.drop("replicate"))
    text = (tmp_path / "run.log").read_text()
    for policy in POLICIES:
        rejected = int((~requests.filter((pl.col("policy") == policy) & (pl.col("request") >= 20))["accepted"]).sum())
        assert f"replicate 2 {policy}: {rejected} of {n - 20} rejected" in text


def test_placement_summary_writes_measurements_the_summary_judges(tmp_path):
    """The part is measurements (colocate.measure), judged against tantawi.tsv as the summary rule judges it."""
    inputs = {}
    bsa = pl.DataFrame({"policy": ["ABP"], "decisions": [100], "agreements": [90], "agreement": [0.9], "budget": [16],
                        "nodes": [32], "reject_pct_exhaustive": [0.5], "reject_pct_bsa": [0.6]})
    for name, frame in (_summary_inputs(1.1) | {"bsa": bsa}).items():
        inputs[name] = tmp_path / f"{name}.csv"
        frame.write_csv(inputs[name])
    out = tmp_path / "placement.csv"
    rulescript.call(rulescript.load(SCRIPTS / "placement_summary.py"), inputs=inputs, outputs=[out], log=tmp_path / "s.log")
    rows = {r["quantity"]: r for r in judged(pl.read_csv(out, schema=measure.MEASUREMENT_COLUMNS).to_dicts()).iter_rows(named=True)}
    pack = rows["Table II % Reject PACK"]
    assert (pack["paper"], pack["ours"], pack["verdict"], pack["claim"]) == ("0.46%", "1%", "within", "tantawi.t2.reject_pct.pack")
    assert rows["BSA agreement with the exact argmin, ABP"]["verdict"] == "no paper value"


def test_placement_figures_draw_the_papers_one_run_from_its_claims():
    """The replicates figure marks the paper's one run per policy: Table II's % reject, read from tantawi.tsv."""
    figures = rulescript.load(SCRIPTS / "placement_figures.py")
    assert figures.paper_reject_pct(PAPERS / "tantawi.tsv") == {"PACK": 0.46, "SPREAD": 4.72, "XBAL": 0.43, "ABP": 0.33}


# ----------------------------------------------------------------------------- summary


def table_row(markdown: str, quantity: str) -> list[str]:
    """The cells after ``quantity`` in the Markdown table row that starts with it."""
    (line,) = [line for line in markdown.splitlines() if line.startswith(f"| {quantity} |")]
    return [cell.strip() for cell in line.strip().strip("|").split("|")][1:]


def test_summary_renders_the_parts_and_lists_the_analyses_that_lacked_data(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    measure.measurements([measure.measurement("janus.f9.gpa_q_slo95", 0.0412345, "§5.2")]).write_csv(parts / "packing.csv")
    measure.measurements([measure.measurement("tantawi.t2.reject_pct.abp", 0.35),
                          measure.measurement("tantawi.t2.reject_pct.pack", 0.5)]).write_csv(parts / "placement.csv")
    lacking = insufficient.Status("Beaumont §5.2 and §8.2, headline numbers", "no long-running job", "≥ 1 job alive all trace",
                                  origin="Beaumont Table 4, Fourier periodicity (§5.2)")
    insufficient.write_status([parts / "periodicity.csv"], lacking)
    figure = insufficient.Status("Beaumont §5.2, spectra and phases", "no long-running job", "≥ 1 job alive all trace",
                                 origin="Beaumont Table 4, Fourier periodicity (§5.2)")
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    insufficient.write_status([outputs / "spectra.png"], figure)
    pl.DataFrame({"x": [1]}).write_csv(outputs / "table.csv")
    io.write_parquet(pl.DataFrame({"x": [1]}), outputs / "result.parquet")
    md, csv = tmp_path / "summary.md", tmp_path / "summary.csv"
    (tmp_path / "cross.md").write_text("## Across traces\n\n| a | b |\n")
    (tmp_path / "capabilities.json").write_text(TINY_CAPABILITIES)
    inputs = {"parts": [parts / n for n in ("packing.csv", "periodicity.csv", "placement.csv")],
              "outputs": [outputs / n for n in ("spectra.png", "table.csv", "result.parquet")],
              "sections": [tmp_path / "cross.md"], "capabilities": tmp_path / "capabilities.json",
              "claims": sorted(PAPERS.glob("*.tsv")), "causes": sorted((PAPERS / "causes").glob("*.md")),
              "series": [tmp_path / "series_coverage.csv"]}
    pl.DataFrame({"tasks": [4], "windows_spanned": [10], "windows_present": [8], "share_pooled": [0.8],
                  "share_median": [0.75], "share_p10": [0.5], "complete": [0.25]}).write_csv(inputs["series"][0])
    rulescript.call(rulescript.load(SCRIPTS / "summary.py"), inputs=inputs, outputs={"table": csv, "page": md},
                    params={"run": "synthetic-tiny", "synthetic": True, "another_trace": None, "scale": "tiny",
                            "settings": [["scale", "tiny", "default"]]},
                    log=tmp_path / "summary.log")
    text = md.read_text()
    assert "Run: `synthetic-tiny`" in text
    # the settings changed from the defaults, then what was read with the series' coverage
    assert text.index("- `scale`: `\"tiny\"` (default `\"default\"`)") < text.index("## What this run read")
    assert "The 4 long tasks' series hold 80.0% of the five-minute windows" in text
    assert text.index("## What this run read") < text.index("## Agreement") and "| task_usage | 3 of 3 | 0–2 |" in text
    # the parts in order, numbers to 4 significant digits; the status part is not a section
    assert text.index("## Stochastic packing") < text.index("## Placement") < text.index("## Analyses this trace cannot support")
    assert text.endswith("\n## Across traces\n\n| a | b |\n")  # a Markdown section is appended as it is
    assert table_row(text, "GPA ρ=0.05: mean q")[:2] == ["≈ 0.05 (ρ)", "0.04123"]
    assert table_row(text, "Table II % Reject PACK")[:2] == ["0.46%", "0.5%"]
    # one row per cause, naming both analyses it stopped
    assert ("| Beaumont Table 4, Fourier periodicity (§5.2) | no long-running job | ≥ 1 job alive all trace | "
            "Beaumont §5.2 and §8.2, headline numbers; Beaumont §5.2, spectra and phases |") in text
    assert text.count("no long-running job") == 1
    assert "2 parts, 2 analyses lacked data" in (tmp_path / "summary.log").read_text()
    # summary.csv: one row per quantity, compared within the default factor of 1.5
    table = pl.read_csv(csv, schema=summary.COLUMNS)
    assert table["quantity"].to_list() == ["GPA ρ=0.05: mean q", "Table II % Reject ABP", "Table II % Reject PACK"]
    # judged from the claims: GPA's q against ρ = 0.05 ± 60%; a % reject without replicates within the default ×1.5
    assert table["within"].to_list() == [True, True, True] and table["tolerance"].to_list()[1:] == ["×1.5"] * 2
    assert table["claim"].to_list() == ["janus.f9.gpa_q_slo95", "tantawi.t2.reject_pct.abp", "tantawi.t2.reject_pct.pack"]
