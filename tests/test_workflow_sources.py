"""Adding a source (issue 43): a toy trace of a few entities, written by this test, enters through the contract as a
plug-in source (its module, its rules file and its map script, all written here); the analyses its capabilities
support are planned and run on it, the others are reported as not applicable, and no project file is touched."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from colocate import insufficient

from wfutil import planned_rules, snakemake, write_config

pytestmark = pytest.mark.workflow

#: The toy trace: 8 entities of 3 groups, each with 48 five-minute windows (4 h, so all long) of a known usage
#: (alternating 0.5 and 1.5 times its level: mean the level, population std half of it), and a known request.
ENTITIES = 8
WINDOWS = 48

SOURCE = '''
"""A toy trace: entities.csv (entity, group, request, created) and usage.csv (entity, window, avg, max)."""
from pathlib import Path

from colocate.sources import SourceBase


class Toy(SourceBase):
    name = "toy"
    family = "toy"
    label = "a toy trace"
    tables = ("entities", "usage")
    gives = {"entities": ("entities", "arrivals"), "usage": ("usage_series",)}
    maps = {"entities": ("entity_pieces",), "usage": ("usage_records",)}
    never_why = {"machine_events": "the toy has no machines"}
    entity, group, usage, units = "entity", "group", "max", "CPU as a share of a machine"
    suffix = ".csv"

    @property
    def root(self):
        return self.trace["path"]

    @property
    def rules(self):
        return str(Path(__file__).with_name("toy.smk"))

    @property
    def run(self):
        return f"toy-{self.scale}"

    @property
    def span_windows(self):
        return 48

    def _stems(self, table):
        return [table] if Path(self.root, table, f"{table}.csv").exists() else []

    def total(self, table):
        return 1
'''

RULES = '''
# The toy source's rules: one map of its two files to the contract's usage records and entity pieces.
USAGE_RECORDS = [f"{RESULTS}/map/toy/records.parquet"]
ENTITY_PIECES = [f"{RESULTS}/map/toy/pieces.parquet"]


rule toy_map:
    input:
        entities=trace_file("entities", "entities"),
        usage=trace_file("usage", "usage"),
    output:
        records=f"{RESULTS}/map/toy/records.parquet",
        pieces=f"{RESULTS}/map/toy/pieces.parquet",
    params:
        buckets=len(BUCKETS),
    log:
        f"{RESULTS}/logs/toy_map.log",
    benchmark:
        f"{RESULTS}/benchmarks/toy_map.tsv"
    threads: 1
    resources:
        mem_mb=300,
    script:
        "toy_map.py"
'''

MAP = '''
"""The toy's files as the contract's tables (the shapes the 2011 map writes)."""
import polars as pl

from colocate import io, rulescript
from colocate.prep.mapreduce import USAGE_COLUMNS, _EVENT_COUNT_COLUMNS, bucket_expr
from colocate.sources.contract import ORIGIN_US, WINDOW_US


def main(inputs, outputs, params, log):
    usage = pl.read_csv(inputs.usage)
    entities = pl.read_csv(inputs.entities)
    key = [pl.col("group").alias("job_id"), pl.col("entity").alias("task_index")]
    start = ORIGIN_US + pl.col("window") * WINDOW_US
    records = usage.join(entities, on="entity").select(
        start.alias("start_time"), (start + WINDOW_US).alias("end_time"), *key, pl.lit(None, pl.Int64).alias("machine_id"),
        pl.col("avg").cast(pl.Float32).alias("cpu_rate"), pl.lit(None, pl.Float32).alias("canonical_memory_usage"),
        pl.col("max").cast(pl.Float32).alias("maximum_cpu_rate"), pl.col("max").cast(pl.Float32).alias("sampled_cpu_usage"))
    assert records.columns == USAGE_COLUMNS
    io.write_parquet(records.with_columns(bucket_expr(params.buckets)), outputs.records)
    created = ORIGIN_US + pl.col("created") * WINDOW_US
    pieces = entities.select(*key, created.alias("first_time"), pl.lit(None, pl.Int64).alias("priority"),
                             pl.lit(None, pl.Int64).alias("scheduling_class"), pl.col("request").cast(pl.Float32).alias("cpu_request"),
                             pl.lit(None, pl.Float32).alias("memory_request"), created.alias("first_schedule"),
                             (created + 48 * WINDOW_US).alias("last_event"), pl.lit(False).alias("failing"),
                             *(pl.lit(0, pl.Int32).alias(c) for c in _EVENT_COUNT_COLUMNS.values()))
    io.write_parquet(pieces.with_columns(bucket_expr(params.buckets)), outputs.pieces)
    log.info("%d records of %d entities", records.height, pieces.height)


if __name__ == "__main__":
    rulescript.run(main, snakemake)  # noqa: F821
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy source's three files and its trace, and a run's directory configured to read it."""
    root = tmp_path_factory.mktemp("toy")
    plugin = root / "plugin"
    plugin.mkdir()
    (plugin / "toy_source.py").write_text(textwrap.dedent(SOURCE))
    (plugin / "toy.smk").write_text(textwrap.dedent(RULES))
    (plugin / "toy_map.py").write_text(textwrap.dedent(MAP))
    trace = root / "trace"
    for table in ("entities", "usage"):
        (trace / table).mkdir(parents=True)
    level = 0.01 * (1 + np.arange(ENTITIES))  # entity i uses (i + 1) % of a machine on average, twice that at its max
    wave = np.tile(1 + 0.5 * (-1.0) ** np.arange(WINDOWS), ENTITIES)
    pl.DataFrame({"entity": np.arange(ENTITIES), "group": np.arange(ENTITIES) % 3, "request": 2 * level,
                  "created": np.zeros(ENTITIES, dtype=np.int64)}).write_csv(trace / "entities/entities.csv")
    usage = pl.DataFrame({"entity": np.repeat(np.arange(ENTITIES), WINDOWS), "window": np.tile(np.arange(WINDOWS), ENTITIES)})
    usage.with_columns(avg=pl.Series(np.repeat(level, WINDOWS) * wave), max=pl.Series(np.repeat(2 * level, WINDOWS) * wave)).write_csv(
        trace / "usage/usage.csv")
    work = root / "work"
    work.mkdir()
    write_config(work, trace={"source": "toy_source:Toy", "path": str(trace)}, mapreduce={"long_min_records": 24})
    # the plug-in's directory ahead of whatever the run already imports from
    return work, {"PYTHONPATH": os.pathsep.join(p for p in (str(plugin), os.environ.get("PYTHONPATH")) if p)}, level


def test_a_toy_source_plans_what_its_capabilities_support_and_not_the_rest(toy):
    work, env, _ = toy
    planned = planned_rules(work, env=env)
    assert {"toy_map", "reduce_bucket", "collect_tasks", "sample_realizations", "janus_variability", "unuvar_aggregates",
            "not_applicable", "summary"} <= planned
    # no other source's rules, and nothing that needs what the toy lacks
    assert not planned & {"map_task_usage", "map_task_events", "synthesize_trace", "azure_map_readings", "dominant_jobs",
                          "failures_analysis", "colocation_density", "cpumem_classify", "janus_fig1_sampling", "placement_run",
                          "placement_trace_run"}  # the toy maps no placement requests (placement_needs None)


def test_a_toy_source_runs_through_the_shared_reduce_and_says_what_does_not_apply(toy):
    work, env, level = toy
    run = work / "results/toy-tiny"
    snakemake(work, *(f"results/toy-tiny/{t}" for t in ("tasks/long_tasks.parquet", "not_applicable/failures.csv",
                                                         "tables/janus_fig3_trend_lines.csv", "trace/capabilities.json")), env=env)
    long = pl.read_parquet(run / "tasks/long_tasks.parquet").sort("task_index")
    # known answers: each entity's constant usage, its max for inst, its request, all long, none dropped
    assert long.height == ENTITIES and long["n_records"].to_list() == [WINDOWS] * ENTITIES
    np.testing.assert_allclose(long["avg_mean"], level, rtol=1e-6)
    np.testing.assert_allclose(long["inst_mean"], 2 * level, rtol=1e-6)
    np.testing.assert_allclose(long["cpu_request"], 2 * level, rtol=1e-6)
    np.testing.assert_allclose(long["avg_std"], level / 2, rtol=1e-5)
    status = insufficient.read_status(run / "not_applicable/failures.csv")
    assert status is not None and status.status == insufficient.NOT_APPLICABLE
    assert status.reason == "not applicable to a toy trace: needs machine_events (the toy has no machines)"
    lines = pl.read_csv(run / "tables/janus_fig3_trend_lines.csv")
    assert lines["n_tasks"].to_list() == [ENTITIES, ENTITIES]
    record = json.loads((run / "trace/capabilities.json").read_text())
    assert record["trace"] == "a toy trace" and record["has"] == ["arrivals", "entities", "usage_series"]
    # what was read of the contract's tables, from the map's footers: every record, windows 0..47
    assert record["read"]["usage_records"] == {"rows": ENTITIES * WINDOWS, "first_window": 0, "last_window": WINDOWS - 1,
                                               "first_h": 0.0, "last_h": round((WINDOWS - 1) / 12, 4)}
    assert record["read"]["entity_pieces"]["rows"] == ENTITIES and set(record["read"]) == {"usage_records", "entity_pieces"}
    assert {c["table"]: c["maps_to"] for c in record["coverage"]} == {"entities": ["entity_pieces"], "usage": ["usage_records"]}
    # the toy touched no project file: its three files live beside its trace
    assert not (Path(__file__).resolve().parents[1] / "workflow/rules/toy.smk").exists()
