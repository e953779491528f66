"""The Google 2019 trace's readers (issue 45) on its real rows: the verbatim instance_usage line of cell a and 7,835
real collection_events of one user, converted here from their BigQuery CSV to the download format (quoted
INT64s, NULLs absent, arrays), with hand-computed answers; and each kind of bad line refused naming it."""

from __future__ import annotations

import csv
import gzip
import json

import polars as pl
import pytest
from hypothesis import given, strategies as st

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
    rec = g.usage_records(g.read_instance_usage(LINE), n_buckets=16)
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


@pytest.mark.parametrize(("edit", "needle"), [
    (lambda line: line[:-10], r":2: instance_usage: not a JSON object"),
    (lambda line: line.replace('"instance_index":"111"', '"instance_index":"a11"'), r":2: instance_usage: instance_index is not an INT64 \('a11'\)"),
    (lambda line: line.replace('"sample_rate":0.996666669845581', '"sample_rate":"high"'), r":2: instance_usage: sample_rate is not a number \('high'\)"),
    (lambda line: line.replace("[0.0004711151123046875,", "["), r":2: instance_usage: cpu_usage_distribution has 10 values, not 11"),
])
def test_a_bad_line_is_refused_naming_the_file_and_line(tmp_path, edit, needle):
    good = LINE.read_text().strip()
    path = tmp_path / "instance_usage-000000000001.json"
    path.write_text(good + "\n" + edit(good) + "\n")
    with pytest.raises(contract.TraceFormatError, match=r"instance_usage-000000000001\.json" + needle):
        g.read_instance_usage(path)
