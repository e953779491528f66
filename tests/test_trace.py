"""Readers and writers of trace shards, on the real sample files of the 2011 trace."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colocate import trace

SAMPLE = Path(__file__).resolve().parents[1] / "workflow" / "data" / "google-2011-sample"
TASK_USAGE = SAMPLE / "task_usage" / "part-00000-of-00500.csv.gz"
TASK_EVENTS = SAMPLE / "task_events" / "part-00001-of-00500.csv.gz"
JOB_EVENTS = SAMPLE / "job_events" / "part-00001-of-00500.csv.gz"



@pytest.mark.parametrize(
    ("path", "table", "rows"),
    [(TASK_USAGE, "task_usage", 10_000), (TASK_EVENTS, "task_events", 77_776), (JOB_EVENTS, "job_events", 3_099)],
)
def test_reads_real_shards(path, table, rows):
    df = trace.read_table(path, table)
    assert df.height == rows
    assert df.columns == trace.column_names(table)
    assert dict(df.schema) == trace.polars_schema(table)


def test_real_task_usage_values():
    df = trace.read_table(TASK_USAGE, "task_usage")
    # the first row of the file, field by field
    first = df.row(0, named=True)
    assert first["start_time"] == 600_000_000 and first["end_time"] == 900_000_000
    assert first["job_id"] == 3418309 and first["task_index"] == 0 and first["machine_id"] == 4155527081
    assert first["cpu_rate"] == pytest.approx(0.001562)
    assert first["cycles_per_instruction"] == pytest.approx(2.445)
    assert first["sampled_cpu_usage"] == 0
    # one 5-minute window, usage normalised to the largest machine
    assert set(df["start_time"].unique()) == {600_000_000}
    assert df["sampled_cpu_usage"].max() <= 1
    # empty fields in the real file become nulls (CPI and MAI are sometimes missing)
    assert df["cycles_per_instruction"].null_count() > 0


def test_real_task_events_empty_fields_and_codes():
    df = trace.read_table(TASK_EVENTS, "task_events")
    assert df["missing_info"].null_count() == df.height  # always empty in this shard
    assert 0 < df["machine_id"].null_count() < df.height  # SUBMIT events have no machine
    assert set(df["event_type"].unique()) <= {int(e) for e in trace.EventType}
    assert df["priority"].is_between(0, 11).all()


def test_column_projection():
    df = trace.read_table(TASK_USAGE, "task_usage", ["job_id", "sampled_cpu_usage"])
    assert df.columns == ["job_id", "sampled_cpu_usage"]


def test_writer_reproduces_real_bytes():
    """Reading a real shard and writing it back gives the original bytes (the %.4g float format)."""
    original = gzip.decompress(TASK_EVENTS.read_bytes())
    df = trace.read_table(TASK_EVENTS, "task_events")
    assert trace.to_trace_csv(df, "task_events") == original


def test_writer_reproduces_real_task_usage_bytes():
    original = gzip.decompress(TASK_USAGE.read_bytes())
    df = trace.read_table(TASK_USAGE, "task_usage")
    assert trace.to_trace_csv(df, "task_usage") == original


# ----------------------------------------------------------------------------- errors


def _write(tmp_path: Path, text: str, name="part-00000-of-00001.csv.gz") -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()))
    return path


MACHINE_OK = "0,5,0,HASH=,0.5,0.2493\n"


def test_wrong_field_count_names_file_and_line(tmp_path):
    path = _write(tmp_path, MACHINE_OK + "300000000,6,1,,\n" + MACHINE_OK)
    with pytest.raises(trace.TraceFormatError) as err:
        trace.read_table(path, "machine_events")
    assert str(path) in str(err.value) and ":2:" in str(err.value) and "expected 6 fields" in str(err.value)
    assert err.value.line == 2


def test_too_many_fields(tmp_path):
    path = _write(tmp_path, MACHINE_OK * 3 + "0,7,0,HASH=,0.5,0.2493,9\n")
    with pytest.raises(trace.TraceFormatError) as err:
        trace.read_table(path, "machine_events")
    assert err.value.line == 4 and "found 7" in str(err.value)


def test_non_numeric_field(tmp_path):
    path = _write(tmp_path, MACHINE_OK + "0,5,0,HASH=,half,0.2493\n")
    with pytest.raises(trace.TraceFormatError) as err:
        trace.read_table(path, "machine_events")
    assert err.value.line == 2 and "'cpus'" in str(err.value) and "half" in str(err.value)


def test_missing_mandatory_value(tmp_path):
    path = _write(tmp_path, MACHINE_OK + "0,,0,HASH=,0.5,0.2493\n")
    with pytest.raises(trace.TraceFormatError) as err:
        trace.read_table(path, "machine_events")
    assert err.value.line == 2 and "machine_id" in str(err.value)


def test_truncated_gzip(tmp_path):
    data = gzip.compress((MACHINE_OK * 20000).encode())
    path = tmp_path / "part-00000-of-00001.csv.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(trace.TraceFormatError) as err:
        trace.read_table(path, "machine_events")
    assert str(path) in str(err.value) and "gzip" in str(err.value)


def test_not_gzip_at_all(tmp_path):
    path = tmp_path / "part-00000-of-00001.csv.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00garbage" * 50)
    with pytest.raises(trace.TraceFormatError) as err:
        trace.read_table(path, "machine_events")
    assert str(path) in str(err.value)


def test_unknown_table_and_column():
    with pytest.raises(ValueError, match="unknown trace table"):
        trace.column_names("tasks")
    with pytest.raises(ValueError, match="unknown column"):
        trace.read_table("x.csv.gz", "task_usage", ["nope"])


# ----------------------------------------------------------------------------- format


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(min_value=1e-12, max_value=1e12, allow_nan=False), min_size=1, max_size=50))
def test_format_g4_matches_c_printf(values):
    got = trace.format_g4(np.array(values)).to_list()
    assert got == ["%.4g" % v for v in values]


def test_format_g4_zero_nan_negative():
    assert trace.format_g4(np.array([0.0, np.nan, -0.25, 1.0])).to_list() == ["0", None, "-0.25", "1"]


def test_schema_csv_lists_every_column():
    lines = trace.schema_csv().strip().splitlines()
    assert lines[0] == "file pattern,field number,content,format,mandatory"
    assert len(lines) - 1 == sum(len(c) for c in trace.TABLES.values())
    assert "task_usage/part-?????-of-?????.csv.gz,20,sampled CPU usage,FLOAT,NO" in lines


def test_write_table_is_deterministic_and_round_trips(tmp_path):
    df = pl.DataFrame(
        {
            "time": [0, 600_000_000],
            "machine_id": [5, 6],
            "event_type": [0, 1],
            "platform_id": ["HASH=", None],
            "cpus": [0.5, None],
            "memory": [0.2493, None],
        }
    )
    a, b = tmp_path / "a.csv.gz", tmp_path / "b.csv.gz"
    trace.write_table(df, a, "machine_events")
    trace.write_table(df, b, "machine_events")
    assert a.read_bytes() == b.read_bytes()
    assert gzip.decompress(a.read_bytes()) == b"0,5,0,HASH=,0.5,0.2493\n600000000,6,1,,,\n"
    assert trace.read_table(a, "machine_events").equals(df)


def test_float32_reading_is_lossless_for_trace_values():
    """The trace prints 4 significant digits; float32 keeps 7, so rewriting gives the original bytes."""
    original = gzip.decompress(TASK_USAGE.read_bytes())
    df = trace.read_table(TASK_USAGE, "task_usage", float_dtype=pl.Float32)
    assert df.schema["cpu_rate"] == pl.Float32
    assert trace.to_trace_csv(df, "task_usage") == original
