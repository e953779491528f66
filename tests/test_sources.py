"""The source contract and the registry of trace sources (issue 43): every built-in source is checked alike, as
scikit-learn checks all its estimators; the science modules import nothing of any one trace."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from colocate import sources, trace
from colocate.registry import ConfigError
from colocate.sources import LOCAL_LAYOUTS, SOURCES, Setting, contract, resolve
from colocate.sources import azure as azure_sources
from colocate.sources import google2011, google2019

from wfutil import REPO, azure_dataset_layout

LIB = REPO / "workflow" / "colocate"
TINY_SYNTHETIC = yaml.safe_load((REPO / "workflow/schemas/scales.yaml").read_text())["tiny"]["synthetic"]


def trace_section(**over) -> dict:
    base = {"source": "synthetic", "seed": 1, "path": None, "url": "https://storage.googleapis.com/clusterdata-2011-2",
            "shards": "all", "tables": ["job_events", "task_events", "task_usage", "machine_events"],
            "azure": {"version": "v2", "url": None, "files": "all", "lock": None},
            "google2019": {"cell": "a", "url": "https://storage.googleapis.com",
                           "shards": {t: 1 for t in google2019.TRACE_TABLES}}}
    return {**base, **over}


def google2019_layout(root: Path, shards: dict[str, int]) -> Path:
    for table, n in shards.items():
        (root / table).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (root / table / f"{google2019.stem(table, i)}.json.gz").write_bytes(b"")
    return root


def google_layout(root: Path, shards: dict[str, int]) -> Path:
    for table, n in shards.items():
        (root / table).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (root / table / trace.shard_name(i, n)).write_bytes(b"")
    return root


def build(name: str, tmp_path: Path) -> sources.SourceBase:
    """Every built-in source, set up as a run would have it (local copies in ``tmp_path``)."""
    synthetic = {**TINY_SYNTHETIC, "days": 2} if name in ("synthetic", "synthetic2019") else None
    if name == "local-google2019":
        layout = google2019_layout(tmp_path / "g19", {"instance_usage": 3, "instance_events": 2, "machine_events": 1})
        section = trace_section(source="local", path=str(layout),
                                google2019={**trace_section()["google2019"], "shards": dict.fromkeys(google2019.TRACE_TABLES, "all")})
    elif name == "local-google2011":
        section = trace_section(source="local", path=str(google_layout(tmp_path / "g", {"task_events": 3, "machine_events": 1})))
    elif name == "local-azure":
        section = trace_section(source="local", path=str(azure_dataset_layout(tmp_path / "a", n_files=5)))
    else:
        section = trace_section(source=name)
    return resolve(Setting(section, "tiny", REPO, synthetic))


ALL = [*SOURCES.names(), *(f"local-{cls.family}" for cls in LOCAL_LAYOUTS)]


# ----------------------------------------------------------------------------- the contract


def test_the_contract_classes_are_the_papers_and_a_source_maps_its_priorities_to_them():
    frame = pl.DataFrame({"priority": [0, 9, 11, 5, 42]})
    got = frame.select(contract.class_expr(trace.PRIORITY_CLASSES))["class"].to_list()
    assert got == ["gratis", "production", "infrastructure", "other", None]  # a priority the map lacks: null
    # another trace's tiers map to the same names (the 2019 trace's, for instance)
    tiers = {"gratis": range(0, 100), "other": range(100, 120), "production": range(120, 360), "monitoring": range(360, 451)}
    assert pl.DataFrame({"priority": [99, 115, 200, 400]}).select(contract.class_expr(tiers))["class"].to_list() == [
        "gratis", "other", "production", "monitoring"]
    with pytest.raises(ValueError, match="unknown class.*'batch'"):
        contract.class_expr({"batch": (1,)})


def test_the_2011_schema_codes_are_the_contracts_own():
    """The 2011 source maps its event codes and clock unchanged: the identity, by construction."""
    assert trace.EventType is contract.EventType and trace.MachineEventType is contract.MachineEventType
    assert trace.TRACE_START_US == contract.ORIGIN_US and trace.WINDOW_US == contract.WINDOW_US
    assert tuple(trace.PRIORITY_CLASSES) == contract.CLASSES
    assert sorted(p for ps in trace.PRIORITY_CLASSES.values() for p in ps) == list(range(12))
    assert [int(e) for e in contract.FAILING_EVENTS] == [2, 3, 5, 6]  # EVICT, FAIL, KILL, LOST (Janus §3.1)


@given(st.lists(st.integers(min_value=0, max_value=10**12), min_size=1, max_size=50))
def test_window_of_puts_a_time_in_the_window_that_covers_it(offsets):
    times = [contract.ORIGIN_US + o for o in offsets]
    windows = pl.DataFrame({"start_time": times}).select(contract.window_of())["window"].to_list()
    for t, w in zip(times, windows):
        assert contract.ORIGIN_US + w * contract.WINDOW_US <= t < contract.ORIGIN_US + (w + 1) * contract.WINDOW_US


def test_capabilities_say_what_is_missing_in_the_order_asked_and_refuse_unknown_names():
    caps = contract.Capabilities("a toy trace", frozenset({"entities", "usage_series"}),
                                 lacks_why={"machine_events": "it has no machines"})
    assert caps.missing(["machine_events", "entities", "priorities"]) == ["machine_events", "priorities"]
    assert caps.supports(["entities"]) and not caps.supports(["entities", "priorities"])
    with pytest.raises(ValueError, match="unknown capabilities \\['gpus'\\]"):
        caps.missing(["gpus"])
    with pytest.raises(ValueError, match="unknown capabilities"):
        contract.Capabilities("x", frozenset({"gpus"}))
    reason, needs = contract.not_applicable_reason(caps, ["entities", "machine_events"])
    assert reason == "not applicable to a toy trace: needs machine_events (it has no machines)"
    assert needs == contract.CAPABILITIES["machine_events"]
    with pytest.raises(ValueError, match="has every capability"):
        contract.not_applicable_reason(caps, ["entities"])
    record = json.loads(caps.to_json())
    assert record["has"] == ["entities", "usage_series"]
    assert set(record["lacks"]) == set(contract.CAPABILITIES) - {"entities", "usage_series"}


# ----------------------------------------------------------------------------- every source alike


@pytest.mark.parametrize("name", ALL)
def test_every_source_keeps_the_contract(name, tmp_path):
    source = build(name, tmp_path)
    assert isinstance(source, sources.Source)
    assert Path(source.rules).is_file() and Path(source.rules).name == f"{source.family}.smk"
    caps = source.capabilities()
    assert caps.trace and caps.units and caps.usage in ("inst", "max")
    read = {t for t in source.tables if source.stems(t)}
    # a capability is had exactly when a table that gives it is read
    assert caps.has == {c for t in read for c in source.gives.get(t, ())}
    # every capability it lacks is explained, and none it has
    assert set(caps.lacks_why) == set(contract.CAPABILITIES) - caps.has
    for cov in caps.coverage:
        assert cov.read == len(source.stems(cov.table)) and list(cov.files) == source.stems(cov.table)
        assert cov.of is None or cov.read <= cov.of
    assert source.stems("no_such_table") == []
    assert re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", source.run)  # a valid run name (config key run)


def rules_assigns(rules: Path) -> set[str]:
    """The contract tables' variables a rules file assigns at its top level."""
    return set(re.findall(r"^([A-Z_]+) = ", Path(rules).read_text(), re.M)) & {t.variable for t in contract.TABLES.values()}


@pytest.mark.parametrize("name", ALL)
def test_a_source_names_the_files_of_every_contract_table_its_capabilities_call_for(name, tmp_path):
    """A source that has what a contract table serves assigns that table's files in its rules file (the shared
    rules read them through it); common.smk starts every table empty, for a source that lacks it."""
    source = build(name, tmp_path)
    called_for = {t.variable for t in contract.TABLES.values() if source.capabilities().supports(t.serves)}
    assert called_for <= rules_assigns(source.rules)
    assert rules_assigns(REPO / "workflow/rules/common.smk") == {t.variable for t in contract.TABLES.values()}


def test_a_file_that_is_not_the_contract_table_is_refused_naming_it(tmp_path):
    """Each table's columns are checked before it is read: a missing column and another type are both named."""
    from colocate import io

    good = pl.DataFrame({"time": [1, 2], "machine_id": [7, 7], "event_type": [0, 1]})
    path = tmp_path / "machine_events.parquet"
    good.write_parquet(path)
    assert io.read_contract([path], "machine_events").equals(good)
    assert io.read_contract([], "machine_events").schema == pl.Schema(contract.TABLES["machine_events"].columns)
    good.drop("machine_id").with_columns(pl.col("event_type").cast(pl.Int32)).write_parquet(path)
    with pytest.raises(contract.TraceFormatError, match=r"machine_events\.parquet: not the contract's machine_events "
                       r"table: lacks column\(s\) \['machine_id'\]; event_type is Int32, not Int64"):
        io.read_contract([path], "machine_events")


@pytest.mark.parametrize("name", ["sample", "azure-sample", "local-google2011", "local-azure"])
def test_the_files_a_source_names_exist(name, tmp_path):
    source = build(name, tmp_path)
    files = [source.file(t, s) for t in source.tables for s in source.stems(t)]
    assert files and all(Path(f).is_file() for f in files)


def test_the_sources_say_what_each_trace_records(tmp_path):
    google = build("synthetic", tmp_path).capabilities()
    assert google.has == set(contract.CAPABILITIES) - {"window_distributions"} and google.usage == "inst"
    assert google.entity == "task" and "does not record the distribution" in google.lacks_why["window_distributions"]
    google2019_ = build("synthetic2019", tmp_path).capabilities()
    assert google2019_.has == set(contract.CAPABILITIES) and google2019_.entity == "instance"
    azure = build("azure-sample", tmp_path).capabilities()
    assert azure.has == {"entities", "usage_series", "arrivals"} and azure.usage == "max" and azure.entity == "VM"
    assert "hosts" in azure.lacks_why["machine_events"]
    # a local 2011 copy with only task_events and machine_events lacks the usage and the job events, and says why
    local = build("local-google2011", tmp_path).capabilities()
    assert {"usage_series", "group_events"} <= set(local.lacks_why) and "no shards of task_usage" in local.lacks_why["usage_series"]
    assert {c.table: (c.read, c.of) for c in local.coverage}["task_events"] == (3, 3)


def test_a_selection_of_shards_is_covered_as_a_part_of_the_table(tmp_path):
    root = google_layout(tmp_path / "g", {"task_events": 5})
    source = resolve(Setting(trace_section(source="local", path=str(root), shards=[1, 3]), "tiny", REPO))
    assert source.stems("task_events") == ["part-00001-of-00005", "part-00003-of-00005"]
    assert not source.whole("task_events") and source.coverage("task_events").of == 5
    bucket = resolve(Setting(trace_section(source="google", shards=2, tables=["task_events"]), "paper", REPO))
    assert bucket.coverage("task_events").of == 500 and bucket.stems("task_usage") == []


def test_local_is_read_by_the_source_whose_layout_the_directory_has(tmp_path):
    assert isinstance(build("local-azure", tmp_path), azure_sources.Local)
    assert isinstance(build("local-google2011", tmp_path), google2011.Local)


@pytest.mark.parametrize(("section", "needle"), [
    ({"source": "local"}, "config key trace.path: required"),
    ({"source": "local", "path": "/no/such/dir"}, "config key trace.path: '/no/such/dir' is not a directory"),
    ({"source": "nowhere"}, "config key trace.source: unknown source 'nowhere'"),
    ({"source": "json:JSONDecoder"}, "config key trace.source: json:JSONDecoder is not a trace source"),
    ({"source": "no_such_module_xyz:Source"}, "config key trace.source: cannot import module"),
])
def test_a_source_that_cannot_work_is_refused_naming_the_key(section, needle):
    with pytest.raises(ConfigError, match=re.escape(needle)):
        resolve(Setting(trace_section(**section), "tiny", REPO))


def test_an_empty_local_directory_is_refused_naming_what_was_looked_for(tmp_path):
    with pytest.raises(ConfigError, match="config key trace.path: no trace table found under"):
        resolve(Setting(trace_section(source="local", path=str(tmp_path)), "tiny", REPO))


def test_a_table_the_download_leaves_out_is_said_to_be_left_out_by_its_key():
    bucket = resolve(Setting(trace_section(source="google", tables=["task_events", "task_usage"]), "paper", REPO))
    caps = bucket.capabilities()
    assert "machine_events" not in caps.has
    assert caps.lacks_why["machine_events"] == "config key trace.tables leaves out machine_events"
    reason, _ = contract.not_applicable_reason(caps, ["machine_events"])
    assert reason == "not applicable to Google 2011: needs machine_events (config key trace.tables leaves out machine_events)"


def test_a_plug_in_source_is_checked_against_the_whole_protocol():
    """A class that names itself a source but lacks what the workflow asks (root, run, rules, ...) is refused at
    start-up, naming the config key, not later with an AttributeError."""
    from colocate.registry import protocol_problems

    class Half:
        name, family, paper_trace, tables = "half", "half", False, ()

        def stems(self, table):
            return []

        def file(self, table, stem):
            return ""

        def capabilities(self):
            return None

    problems = protocol_problems(Half, sources.Source)
    assert any("root" in p for p in problems) and any("check" in p for p in problems)
    assert not protocol_problems(google2011.Sample, sources.Source)


def test_the_synthetic_trace_is_cached_per_model_and_seed(tmp_path):
    a = build("synthetic", tmp_path)
    b = resolve(Setting(trace_section(seed=2), "tiny", REPO, {**TINY_SYNTHETIC, "days": 2}))
    c = resolve(Setting(trace_section(), "tiny", REPO, {**TINY_SYNTHETIC, "days": 3}))
    assert len({a.root, b.root, c.root}) == 3 and a.root == build("synthetic", tmp_path).root
    assert a.span_windows == 2 * 288


# ----------------------------------------------------------------------------- the science knows no trace


@pytest.mark.parametrize("package", ["analysis", "figures", "scheduling", "report"])
def test_the_science_modules_import_nothing_of_one_trace(package):
    """The analyses take the contract's clock, events and classes; no trace module (issue 43)."""
    offenders = [p.name for p in sorted((LIB / package).glob("*.py"))
                 if re.search(r"^\s*(from colocate\.trace\b|from colocate import trace\b|import colocate\.trace\b)",
                              p.read_text(), re.M)]
    assert not offenders, f"{package}/ modules importing colocate.trace: {offenders}"
