"""The Google 2019 trace's readers (issue 45) on its real rows: the verbatim instance_usage line of cell a and 7,835
real collection_events of one user, converted here from their BigQuery CSV to the download format (quoted
INT64s, NULLs absent, arrays), with hand-computed answers; and each kind of bad line refused naming it."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, strategies as st

from colocate.prep.mapreduce import TASK_EVENT_COLUMNS, USAGE_COLUMNS, map_task_events
from colocate.sources import contract
from colocate.sources import google2019 as g
from wfutil import REPO

DATA = REPO / "workflow/data/google-2019-reference"
LINE = DATA / "instance_usage-000000000000.first_line.json"
EVENTS_CSV = DATA / "collection_events.one_user.bq_pandas.csv.gz"


def test_the_shipped_files_are_the_ones_listed():
    import hashlib

    listed = dict(reversed(line.split()) for line in (DATA / "SHA256SUM").read_text().splitlines())
    assert set(listed) == {p.name for p in DATA.iterdir()} - {"SHA256SUM"}
    for name, digest in listed.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


def test_the_verbatim_instance_usage_line_reads_as_written():
    u = g.read_instance_usage(LINE)
    assert u.height == 1
    row = u.row(0, named=True)
    # INT64s quoted in the file, integers here
    assert (row["start_time"], row["end_time"], row["collection_id"], row["instance_index"], row["machine_id"]) == (
        1_838_400_000_000, 1_838_700_000_000, 330_587_238_433, 111, 23_624_491_139)
    assert (row["alloc_collection_id"], row["collection_type"]) == (330_587_160_469, 0)
    assert row["average_usage"] == {"cpus": 0.008392333984375, "memory": 0.0094757080078125}
    # random_sample_usage records CPU only: its memory is absent in the file, null here
    assert row["random_sample_usage"] == {"cpus": 0.016632080078125, "memory": None}
    assert len(row["cpu_usage_distribution"]) == 11 and len(row["tail_cpu_usage_distribution"]) == 9
    # a window of 5 minutes, 20.9 days into the trace (shards are not time-ordered)
    assert row["end_time"] - row["start_time"] == 300_000_000
    assert row["start_time"] / 86_400e6 == pytest.approx(21.28, abs=0.01)


def test_instance_usage_maps_to_the_contracts_usage_records():
    from colocate.prep.mapreduce import bucket_records

    rec = bucket_records(g.task_usage(g.read_instance_usage(LINE)), 16)  # as the map writes them
    contract.check_table("usage_records", rec.schema, LINE)
    row = rec.row(0, named=True)
    assert (row["job_id"], row["task_index"], row["machine_id"]) == (330_587_238_433, 111, 23_624_491_139)
    # the 5-minute mean, the 1-s random sample and the maximum, in float32 as the contract keeps them
    assert row["cpu_rate"] == pytest.approx(0.008392333984375) and row["sampled_cpu_usage"] == pytest.approx(0.016632080078125)
    assert row["maximum_cpu_rate"] == pytest.approx(0.04791259765625)
    assert row["canonical_memory_usage"] == pytest.approx(0.0094757080078125)
    assert row["bucket"] == (330_587_238_433 * 1_000_003 + 111) % 16


def download_format(rows: list[dict[str, str]]) -> str:
    """BigQuery's CSV rows (via pandas) as the trace's JSON lines: INT64s quoted, empty fields absent, the id list an
    array of quoted INT64s (pandas wrote it as "[a b]")."""
    out = []
    for r in rows:
        obj = {}
        for k, v in r.items():
            if k == "start_after_collection_ids":
                obj[k] = v.strip("[]").split()
            elif v != "":
                obj[k] = v  # every field of CollectionEvent but the list is an INT64 or a string: quoted
        out.append(json.dumps(obj, separators=(",", ":")))
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def events_rows():
    with gzip.open(EVENTS_CSV, "rt", newline="") as f:
        return list(csv.DictReader(f))


def test_real_collection_events_read_through_the_same_reader(tmp_path, events_rows):
    path = tmp_path / "collection_events-000000000000.json.gz"
    with gzip.open(path, "wt") as f:
        f.write(download_format(events_rows))
    ev = g.read_collection_events(path)
    assert ev.height == 7835 == len(events_rows)
    assert ev.schema["time"] == pl.Int64 and ev.schema["start_after_collection_ids"] == pl.List(pl.String)
    # values as the CSV holds them, nulls where it is empty
    assert ev["collection_id"].to_list() == [int(r["collection_id"]) for r in events_rows]
    assert ev["alloc_collection_id"].null_count() == sum(r["alloc_collection_id"] == "" for r in events_rows) == 7744
    assert ev["missing_type"].null_count() == 7835
    assert ev["start_after_collection_ids"].list.len().to_list() == [len(r["start_after_collection_ids"].strip("[]").split())
                                                                     for r in events_rows]
    # this user's priorities: 200 (production) 7,349 times; 103, 105, 115 and 119 (other); 360 (monitoring)
    classes = dict(ev.group_by("class").len().iter_rows())
    assert classes == {"production": 7349, "other": 433 + 40 + 8 + 2, "monitoring": 3}


def test_the_real_lines_percentiles_give_its_window_moments():
    """The verbatim row's 20 percentiles, read as a piecewise-linear quantile function: its mean and variance against a
    fine numerical integral of the same function, and the mean beside the row's own 5-minute average (the trace
    measures both from the same 1-s samples: the linear top decile puts it 6.6% higher here)."""
    import numpy as np

    row = json.loads(LINE.read_text())
    levels = sorted(g.DISTRIBUTION_LEVELS["cpu_usage_distribution"] + g.DISTRIBUTION_LEVELS["tail_cpu_usage_distribution"])
    values = sorted(row["cpu_usage_distribution"] + row["tail_cpu_usage_distribution"])
    curve = np.interp(np.linspace(0, 1, 400_001), levels, values)
    m = g.window_moments(g.read_instance_usage(LINE)).row(0, named=True)
    assert (m["job_id"], m["task_index"], m["window"]) == (330_587_238_433, 111, (1_838_400_000_000 - 600_000_000) // 300_000_000)
    assert m["within_mean"] == pytest.approx(curve.mean(), rel=1e-5) and m["within_var"] == pytest.approx(curve.var(), rel=1e-4)
    assert m["within_mean"] == pytest.approx(row["average_usage"]["cpus"], rel=0.1)
    assert m["sampled_cpu_usage"] == pytest.approx(row["random_sample_usage"]["cpus"])


@given(st.integers(min_value=-5, max_value=460))
def test_each_priority_falls_in_its_tier(priority):
    got = pl.select(g.priority_class(pl.lit(priority))).item()
    want = next((name for name, lo, hi in g.PRIORITY_TIERS if lo <= priority <= hi), None)
    assert got == want
    assert (got is None) == (priority < 0 or priority > 450)


def test_the_tiers_cover_0_to_450_without_overlap():
    bounds = [(lo, hi) for _, lo, hi in g.PRIORITY_TIERS]
    assert bounds[0][0] == 0 and bounds[-1][1] == 450
    assert all(b[0] == a[1] + 1 for a, b in zip(bounds, bounds[1:]))
    assert {name for name, *_ in g.PRIORITY_TIERS} <= set(contract.CLASSES)


def _lines(tmp_path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def _varied_lines(n: int) -> list[str]:
    """The verbatim line, its instance index and start time varied, so that each row can be told apart."""
    good = LINE.read_text().strip()
    return [good.replace('"instance_index":"111"', f'"instance_index":"{i}"').replace(
        '"start_time":"1838400000000"', f'"start_time":"{1838400000000 + i}"') for i in range(n)]


@pytest.mark.parametrize("name", ["instance_usage-000000000002.json", "instance_usage-000000000002.json.gz"])
def test_chunks_of_a_small_size_are_the_whole_read(tmp_path, name):
    path = _lines(tmp_path, name, _varied_lines(50))
    whole = g.read_instance_usage(path)
    assert whole.height == 50 and whole["instance_index"].to_list() == list(range(50))
    line = len(_varied_lines(1)[0]) + 1  # lines 1-10 are this long, the others 1 or 2 bytes longer
    for chunk, heights in [(1, {1}), (line, {1}), (3 * line, {2, 3, 4}), (10**6, {50})]:
        chunks = list(g.iter_instance_usage(path, chunk_bytes=chunk))
        assert {c.height for c in chunks} <= heights  # a block ends at its last newline, the rest goes on
        assert pl.concat(chunks).equals(whole)


def test_a_last_line_without_its_newline_is_read(tmp_path):
    path = tmp_path / "instance_usage-000000000003.json"
    path.write_text("\n".join(_varied_lines(3)))  # no newline at the end
    assert [c.height for c in g.iter_instance_usage(path, chunk_bytes=100)] == [1, 1, 1]


@pytest.mark.parametrize(("edit", "needle"), [
    (lambda line: line[:-10], r":7: instance_usage: not a JSON object"),
    (lambda line: line.replace('"collection_id":', '"collection_id":"x"'), r":7: instance_usage: not a JSON object"),
    (lambda line: line.replace('"machine_id":"', '"machine_id":"m'), r":7: instance_usage: machine_id is not an INT64"),
    (lambda line: line.replace('"sample_rate":0.996666669845581', '"sample_rate":"high"'),
     r":7: instance_usage: sample_rate is not a number \('high'\)"),
    (lambda line: line.replace("[0.0004711151123046875,", "["), r":7: instance_usage: cpu_usage_distribution has 10 values, not 11"),
])
def test_a_bad_line_in_a_later_chunk_is_named_by_its_line_in_the_file(tmp_path, edit, needle):
    lines = _varied_lines(9)
    lines[6] = edit(lines[6])
    path = _lines(tmp_path, "instance_usage-000000000004.json.gz", lines)
    chunk = 2 * len(lines[0]) + 1  # chunks of lines 1, 2-3, 4-5, 6-7, 8-9: line 7 is the 4th chunk's second row
    with pytest.raises(contract.TraceFormatError, match=r"instance_usage-000000000004\.json\.gz" + needle):
        list(g.iter_instance_usage(path, chunk_bytes=chunk))
    with pytest.raises(contract.TraceFormatError, match=needle):
        g.read_instance_usage(path)


def test_a_truncated_gzip_is_named(tmp_path):
    path = _lines(tmp_path, "instance_usage-000000000005.json.gz", _varied_lines(20))
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(contract.TraceFormatError, match=r"instance_usage-000000000005\.json\.gz: truncated or corrupt gzip"):
        g.read_instance_usage(path)


@pytest.mark.parametrize("content", [b"", b"\n\n"])
def test_an_empty_file_is_one_empty_frame_with_the_schema(tmp_path, content):
    path = tmp_path / "instance_usage-000000000006.json.gz"
    path.write_bytes(gzip.compress(content))
    chunks = list(g.iter_instance_usage(path))
    assert len(chunks) == 1 and chunks[0].height == 0
    assert g.read_instance_usage(path).schema == g.read_instance_usage(LINE).schema
    assert g.task_usage(chunks[0]).columns == USAGE_COLUMNS and g.window_moments(chunks[0]).height == 0


# ============================================================================ the maps to the contract


def jsonl(tmp_path, name: str, rows: list[dict]) -> Path:
    path = tmp_path / name
    with gzip.open(path, "wt") as f:
        f.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))
    return path


def test_instance_events_map_to_2011s_task_events_with_the_contracts_types(tmp_path):
    def ev(time, type_, index, **kw):
        return {"time": str(time), "type": str(type_), "collection_id": "7", "scheduling_class": "1",
                "collection_type": kw.pop("ctype", "0"), "priority": "200", "instance_index": str(index),
                "machine_id": kw.pop("machine", "0"), "resource_request": {"cpus": 0.25, "memory": 0.125}, **kw}

    rows = [ev(0, 0, 0), ev(5, 1, 0), ev(6, 2, 0), ev(700, 3, 0, machine="42"), ev(900, 5, 0, machine="42"),
            ev(1000, 0, 1), ev(1001, 7, 1), ev(1002, 3, 0, ctype="1", machine="42")]  # the last one an alloc set's
    events = g.task_events(g.read_instance_events(jsonl(tmp_path, "instance_events-000000000000.json.gz", rows)))
    # QUEUE (1), ENABLE (2) and the alloc set's row left out; SCHEDULE 3 → 1, FAIL 5 → 3, KILL 7 → 5
    assert events["time"].to_list() == [0, 700, 900, 1000, 1001]
    assert events["event_type"].to_list() == [0, 1, 3, 0, 5]
    assert events["machine_id"].to_list() == [None, 42, 42, None, None]  # NO_MACHINE (0) is no machine
    assert events.columns == list(TASK_EVENT_COLUMNS)
    assert events["cpu_request"].dtype == pl.Float32 and events["cpu_request"].to_list() == [0.25] * 5
    pieces = map_task_events(events, 4)
    failing = dict(zip(pieces["task_index"], pieces["failing"]))
    assert failing == {0: True, 1: True}  # FAIL and KILL make an instance failing (Janus §3.1)


def test_collection_events_keep_jobs_apart_from_alloc_sets(tmp_path, events_rows):
    path = tmp_path / "collection_events-000000000000.json.gz"
    with gzip.open(path, "wt") as f:
        f.write(download_format(events_rows))
    jobs = g.job_events(g.read_collection_events(path))
    want = [r for r in events_rows if r["collection_type"] == "0" and r["type"] not in ("1", "2")]
    assert jobs.height == len(want) and jobs.height < len(events_rows)
    assert sorted(set(jobs["job_id"])) == sorted({int(r["collection_id"]) for r in want})
    alloc_sets = {int(r["collection_id"]) for r in events_rows if r["collection_type"] == "1"}
    assert alloc_sets and not alloc_sets & set(jobs["job_id"])
    assert set(jobs["event_type"]) <= {int(e) for e in contract.EventType}


def test_machine_events_are_put_in_time_order_and_a_bad_type_named(tmp_path):
    def m(time, mid, type_):
        return {"time": str(time), "machine_id": str(mid), "type": str(type_), "capacity": {"cpus": 0.5, "memory": 0.25},
                "platform_id": "p"}

    a = jsonl(tmp_path, "machine_events-000000000000.json.gz", [m(900, 2, 2), m(0, 1, 1)])
    b = jsonl(tmp_path, "machine_events-000000000001.json.gz", [m(0, 2, 1), m(1200, 2, 1), m(50, 1, 3)])
    events = g.machine_events(pl.concat([g.read_machine_events(a), g.read_machine_events(b)]))
    assert events.select("time", "machine_id", "event_type").rows() == [(0, 1, 0), (0, 2, 0), (50, 1, 2), (900, 2, 1),
                                                                         (1200, 2, 0)]
    bad = jsonl(tmp_path, "machine_events-000000000002.json.gz", [m(0, 1, 1), m(10, 1, 0)])
    with pytest.raises(contract.TraceFormatError, match=r"machine_events-000000000002\.json\.gz:2: .*type 0 is not ADD"):
        g.read_machine_events(bad)
    neg = jsonl(tmp_path, "machine_events-000000000003.json.gz", [m(-5, 1, 1)])
    with pytest.raises(contract.TraceFormatError, match=r"000000000003\.json\.gz:1: machine_events: time -5 is negative"):
        g.read_machine_events(neg)


# ============================================================================ the 2019 format, written


def test_written_lines_quote_int64s_nest_records_and_leave_nulls_out(tmp_path):
    df = pl.DataFrame({"time": [5, 6], "user": ["u", None], "x": [0.5, None]}).select(
        pl.col("time").cast(pl.String), "user", pl.struct(pl.col("x").alias("cpus"), pl.lit(None, pl.Float64).alias("memory")).alias("usage"))
    path = tmp_path / "t.json.gz"
    g.write_json_lines(df, path)
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    assert lines == ['{"time":"5","user":"u","usage":{"cpus":0.5}}', '{"time":"6"}']  # an all-NULL record is absent
    first = path.read_bytes()
    g.write_json_lines(df, path)
    assert path.read_bytes() == first  # deterministic bytes (gzip mtime 0)


@given(n=st.integers(1, 5), rows=st.integers(0, 60), seed=st.integers(0, 2**16), loose=st.sampled_from([0.0, 0.25, 1.0]))
def test_scatter_deals_every_row_once_in_blocks_not_in_time_order(n, rows, seed, loose):
    import numpy as np

    df = pl.DataFrame({"t": np.arange(rows) * 7, "i": np.arange(rows)})
    shards = g.scatter(df, "t", n, np.random.default_rng(seed), loose=loose)
    assert len(shards) == n
    assert sorted(pl.concat(shards)["i"].to_list()) == list(range(rows))
    again = g.scatter(df, "t", n, np.random.default_rng(seed), loose=loose)
    assert all(a.equals(b) for a, b in zip(shards, again))  # seeded
    for shard in shards:  # rows of a block in time order; without loose rows, a shard is a few runs of consecutive rows
        runs = 1 + sum(1 for a, b in zip(shard["i"], shard["i"][1:]) if b != a + 1)
        assert shard.height == 0 or loose > 0 or runs <= 3


def test_scatter_splits_the_rows_of_a_time_across_shards():
    """The trace's shards are not stretches of time: the rows of one window (here, of one time) are in several
    shards, so that only a reduce over every shard gives a window's aggregates. Without loose rows, none is split."""
    import numpy as np

    df = pl.DataFrame({"t": np.repeat(np.arange(200), 10), "i": np.arange(2000)})
    split = lambda shards: pl.concat([s.with_columns(pl.lit(k).alias("shard")) for k, s in enumerate(shards)]).group_by(  # noqa: E731
        "t").agg(pl.col("shard").n_unique())["shard"]
    assert (split(g.scatter(df, "t", 3, np.random.default_rng(4), loose=0)) == 1).all()
    shares = split(g.scatter(df, "t", 3, np.random.default_rng(4)))
    assert 0.5 < (shares > 1).mean() < 1  # most times' rows in two or three shards, at the default share
    with pytest.raises(ValueError, match="loose must be in"):
        g.scatter(df, "t", 3, np.random.default_rng(4), loose=1.5)


def test_the_shards_of_a_large_table_are_not_time_ordered():
    import numpy as np

    df = pl.DataFrame({"t": np.arange(3000)})
    firsts = [s["t"][0] for s in g.scatter(df, "t", 4, np.random.default_rng(1))]
    assert firsts != sorted(firsts) or any(not s["t"].is_sorted() for s in g.scatter(df, "t", 4, np.random.default_rng(1)))


def test_2011_priorities_keep_their_class_in_the_2019_tiers_but_infrastructure():
    from colocate.trace import PRIORITY_CLASSES

    for cls, priorities in PRIORITY_CLASSES.items():
        for p in priorities:
            got = pl.select(g.priority_class(pl.lit(g.PRIORITY_FROM_2011[p]))).item()
            assert got == ("monitoring" if cls == "infrastructure" else cls), p


# ============================================================================ the same model in both formats

@pytest.fixture(scope="module")
def both_formats(tmp_path_factory):
    """The tiny synthetic model written as 2011 shards (one per table) and as 2019 shards (three per table, scattered),
    each read back through its own reader."""
    import numpy as np

    from colocate import trace
    from colocate.trace import synth
    from wfutil import TINY

    root = tmp_path_factory.mktemp("formats")
    tables = synth.generate(synth.SynthParams.from_dict(TINY), 11)
    priority = tables["task_events"].group_by("job_id").agg(pl.col("priority").sort_by("time").first())
    out = {}
    for table, old in g.FROM_2011.items():
        trace.write_table(tables[old], root / f"{old}.csv.gz", old)
        rows = g.from_2011(old, tables[old], priority)
        time = "start_time" if table == "instance_usage" else "time"
        shards = g.scatter(rows.with_columns(pl.col(time).cast(pl.Int64).alias("_t")), "_t", 3, np.random.default_rng(2))
        for i, shard in enumerate(shards):
            g.write_json_lines(shard.drop("_t"), root / f"{g.stem(table, i)}.json.gz")
        out[table] = (root / f"{old}.csv.gz", sorted(root.glob(f"{table}-*.json.gz")))
    return out


def test_the_2019_path_reads_the_models_usage_as_the_2011_path_does(both_formats):
    from colocate import trace

    old, new = both_formats["instance_usage"]
    key = ["job_id", "task_index", "start_time"]
    a = trace.read_table(old, "task_usage", USAGE_COLUMNS, float_dtype=pl.Float32).sort(key)
    b = pl.concat([g.task_usage(g.read_instance_usage(p)) for p in new]).sort(key)
    assert a.height > 10_000
    assert a.equals(b)  # every value, to the bit


def test_the_2019_path_reads_the_models_events_as_the_2011_path_does(both_formats):
    from colocate import trace

    old, new = both_formats["instance_events"]
    key = ["time", "job_id", "task_index", "event_type"]
    a = trace.read_table(old, "task_events", TASK_EVENT_COLUMNS, float_dtype=pl.Float32)
    a = a.with_columns(pl.col("priority").replace_strict(g.PRIORITY_FROM_2011)).sort(key)
    b = pl.concat([g.task_events(g.read_instance_events(p)) for p in new]).sort(key)
    assert a.equals(b)
    old, new = both_formats["collection_events"]
    a = trace.read_table(old, "job_events", ["time", "job_id", "event_type"]).sort("time", "job_id", "event_type")
    b = pl.concat([g.job_events(g.read_collection_events(p)) for p in new]).sort("time", "job_id", "event_type")
    assert a.equals(b)
    old, new = both_formats["machine_events"]
    a = trace.read_table(old, "machine_events").sort("time", "machine_id", "event_type")
    b = g.machine_events(pl.concat([g.read_machine_events(p) for p in new])).sort("time", "machine_id", "event_type")
    assert a.equals(b)
    assert g.machine_events(pl.concat([g.read_machine_events(p) for p in new]))["time"].is_sorted()


@given(st.lists(st.tuples(st.integers(0, 10**12), st.none() | st.floats(0, 1), st.none() | st.floats(0, 1),
                          st.none() | st.text("abc", max_size=3)), min_size=1, max_size=30))
def test_written_lines_read_back_as_the_frame_with_its_nulls_left_out(tmp_path_factory, rows):
    """Any pattern of NULLs, at the top level or in a record (first, last or only field), is left out, and the rest
    reads back as written."""
    df = pl.DataFrame(rows, schema={"time": pl.Int64, "a": pl.Float64, "b": pl.Float64, "s": pl.String}, orient="row")
    df = df.select(pl.col("time").cast(pl.String), "s", pl.struct(pl.col("a").alias("cpus"), pl.col("b").alias("memory")).alias("usage"), "a")
    path = tmp_path_factory.mktemp("w") / "t.json.gz"
    g.write_json_lines(df, path)
    lines = [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]
    for got, row in zip(lines, df.iter_rows(named=True)):
        usage = {k: v for k, v in row["usage"].items() if v is not None}
        want = {"time": row["time"], **({"s": row["s"]} if row["s"] is not None else {}),
                **({"usage": usage} if usage else {}), **({"a": row["a"]} if row["a"] is not None else {})}
        assert got == want
    assert len(lines) == df.height
