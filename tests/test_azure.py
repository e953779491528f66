"""Readers of the Azure VM traces (issue 16's first step): the real V1 and V2 files shipped in the repo, the per-VM
summary against the vmtable's own columns, and a clear error for each kind of bad input."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colocate.trace import TraceFormatError
from colocate.trace import azure as az

SAMPLE = Path(__file__).resolve().parents[1] / "workflow" / "data" / "azure-vm-sample"
V2_READINGS = SAMPLE / "v2" / "vm_cpu_readings-20vms.csv.gz"
V2_VMTABLE = SAMPLE / "v2" / "vmtable-20vms.csv.gz"
V1_READINGS = SAMPLE / "v1" / "vm_cpu_readings-file-1-of-125-head100.csv.gz"
V1_VMTABLE = SAMPLE / "v1" / "vmtable-head10.csv.gz"


def test_the_shipped_sample_is_the_real_files():
    """The copy in the repo is byte for byte what its SHA256SUM lists (the files as Microsoft published them)."""
    for line in (SAMPLE / "SHA256SUM").read_text().splitlines():
        digest, name = line.split()
        assert hashlib.sha256((SAMPLE / name).read_bytes()).hexdigest() == digest, name


def test_v2_readings_reproduce_their_vmtable_columns():
    """The V2 sample's 20 VMs over 30 days: avgcpu is the mean of avg (to rounding), maxcpu the maximum of max and
    p95maxcpu the 95th percentile of max (higher neighbour), exactly."""
    readings = az.read_readings(V2_READINGS)
    assert readings.height == 172_684 and readings["vmid"].n_unique() == 20
    assert readings["timestamp"].min() == 0 and readings["timestamp"].max() == 2_591_400
    table = az.read_vmtable(V2_VMTABLE)
    got = az.vm_summary(readings).join(table, on="vmid", suffix="_vmtable", how="full", coalesce=True)
    assert got.height == 20 and got["avgcpu"].null_count() == 0 and got["avgcpu_vmtable"].null_count() == 0
    np.testing.assert_allclose(got["avgcpu"], got["avgcpu_vmtable"], rtol=0, atol=1e-12)
    assert (got["maxcpu"] == got["maxcpu_vmtable"]).all() and (got["p95maxcpu"] == got["p95maxcpu_vmtable"]).all()
    # slots t = 0 … 2,591,400 s: 8,639; 0-18 missing per VM, 96 in all (the sample's README)
    assert got["readings"].max() <= 8639 and 8639 * 20 - got["readings"].sum() == 96


def test_v2_vmtable_keeps_its_buckets_and_v1_its_numbers_and_spelling():
    v2 = az.read_vmtable(V2_VMTABLE)
    assert v2.height == 20 and set(v2["category"]) <= {"Delay-insensitive", "Interactive"}
    assert set(v2["vmcorecount"]) <= {"2", "4", "8"} and not v2["vmmemory"].str.ends_with("\r").any()
    assert (v2["lifetime_s"] == v2["vmdeleted"] - v2["vmcreated"]).all()
    v1 = az.read_vmtable(V1_VMTABLE)
    assert v1.height == 10 and v1["vmcategory"].to_list().count("Unkown") == 2  # read as it is ...
    assert v1.filter(pl.col("vmcategory") == "Unkown")["category"].unique().to_list() == ["Unknown"]  # ... and named
    assert set(v1["vmmemory"]) == {"0.75", "1.75", "56"} and set(v1["vmcorecount"]) == {"1", "8"}
    first = v1.row(0, named=True)
    assert (first["vmcreated"], first["vmdeleted"], first["maxcpu"], first["lifetime_s"]) == (0, 2_591_700, 99.369869, 2_591_700)


def test_v1_readings_are_read_with_their_six_decimals():
    r = az.read_readings(V1_READINGS)
    assert r.height == 100 and r["vmid"].n_unique() == 100 and r["timestamp"].unique().to_list() == [0]
    assert r.row(0) == (0, "+ZcrOp5/c/fJ6mVgP5qMZlOAGDwyjaaDNM0WoWOt2IDb47gT0UwK9lFwkPQv3C7Q", 2.052803, 3.911587, 2.86979)


def _write(path: Path, lines: list[str], eol: str = "\r\n") -> Path:
    with gzip.open(path, "wb") as fh:
        fh.write("".join(line + eol for line in lines).encode())
    return path


GOOD = ["0,a,1.0,3.0,2.0", "300,a,1.5,4.0,2.5", "0,b,0,1,0.5"]


def test_crlf_and_lf_files_read_alike(tmp_path):
    crlf = az.read_readings(_write(tmp_path / "crlf.csv.gz", GOOD))
    lf = az.read_readings(_write(tmp_path / "lf.csv.gz", GOOD, eol="\n"))
    assert crlf.equals(lf) and crlf["vmid"].to_list() == ["a", "a", "b"]


@pytest.mark.parametrize(
    "line, match",
    [
        ("600,a,1.0,3.0", r"bad\.csv\.gz:3: expected 5 fields for vm_cpu_readings, found 4"),
        ("600,a,1.0,3.0,2.0,9", r"bad\.csv\.gz:3: expected 5 fields for vm_cpu_readings, found 6"),
        ("6o0,a,1.0,3.0,2.0", r"bad\.csv\.gz:3: column 'timestamp' \(Int64\) cannot parse '6o0'"),
        ("600,a,,3.0,2.0", r"bad\.csv\.gz:3: column 'min_cpu' is empty"),
        ("601,a,1.0,3.0,2.0", r"bad\.csv\.gz:3: vm_cpu_readings: timestamp is not a multiple of 300 s"),
        ("600,a,1.0,3.0,4.0", r"bad\.csv\.gz:3: vm_cpu_readings: min ≤ avg ≤ max does not hold"),
    ],
)
def test_a_malformed_reading_names_its_file_and_line(tmp_path, line, match):
    with pytest.raises(TraceFormatError, match=match):
        az.read_readings(_write(tmp_path / "bad.csv.gz", GOOD[:2] + [line]))


def test_a_vmtable_with_an_unknown_category_or_a_bad_number_names_its_line(tmp_path):
    row = "vm{i},sub,dep,0,600,90.0,10.0,50.0,{category},2,4"
    good = [row.format(i=i, category="Interactive") for i in range(2)]
    with pytest.raises(TraceFormatError, match=r"vt\.csv\.gz:3: vmtable: unknown vmcategory 'Batch'"):
        az.read_vmtable(_write(tmp_path / "vt.csv.gz", good + [row.format(i=9, category="Batch")]))
    with pytest.raises(TraceFormatError, match=r"vt2\.csv\.gz:2: column 'vmdeleted' \(Int64\) cannot parse 'never'"):
        az.read_vmtable(_write(tmp_path / "vt2.csv.gz", good[:1] + [good[1].replace(",600,", ",never,")]))


def test_a_truncated_file_is_named(tmp_path):
    whole = _write(tmp_path / "whole.csv.gz", GOOD * 2000).read_bytes()
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(TraceFormatError, match=r"cut\.csv\.gz: truncated or corrupt gzip"):
        az.read_readings(cut)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.floats(0, 100, allow_nan=False)), min_size=1, max_size=80))
def test_vm_summary_matches_numpy(rows):
    """Brute force: per VM, numpy's mean, max and 95th percentile ('higher') of its slots."""
    readings = pl.DataFrame({"timestamp": [300 * i for i in range(len(rows))], "vmid": [v for v, _ in rows],
                             "min_cpu": [0.0] * len(rows), "max_cpu": [x for _, x in rows],
                             "avg_cpu": [x / 2 for _, x in rows]}, schema=az.READINGS_SCHEMA)
    got = az.vm_summary(readings)
    assert got["vmid"].to_list() == sorted({v for v, _ in rows})
    for row in got.iter_rows(named=True):
        xs = np.array([x for v, x in rows if v == row["vmid"]])
        assert row["readings"] == xs.size and row["maxcpu"] == xs.max()
        assert row["p95maxcpu"] == np.percentile(xs, 95, method="higher")
        assert row["avgcpu"] == pytest.approx(np.mean(xs / 2), rel=1e-12, abs=1e-12)


def test_a_vm_with_a_pure_daily_sinusoid_gives_its_ratio_through_beaumonts_decomposition():
    """Known answer (Beaumont §5.2 on a VM): avg = 40 + 10·cos(2π t / day − 60°) over 30 days has a daily ratio of
    0.25, its peak at 60°, and no hourly, weekly, long-term or noise component; a missing slot is filled by the
    time of day and changes nothing."""
    from colocate.analysis import periodicity

    t = np.arange(0, 30 * 86_400, 300)
    avg = 40 + 10 * np.cos(2 * np.pi * (t + 150) / 86_400 - np.radians(60))  # at the slot's mid-point
    keep = np.ones(t.size, dtype=bool)
    keep[1000] = False
    readings = pl.DataFrame({"timestamp": t[keep], "vmid": "vm", "min_cpu": avg[keep] - 1, "max_cpu": avg[keep] + 1,
                             "avg_cpu": avg[keep]}, schema=az.READINGS_SCHEMA)
    ids, x = az.vm_series(readings)
    assert ids == ["vm"] and x.shape == (1, t.size) and np.isnan(x[0, 1000]) and np.isnan(x).sum() == 1
    comps = periodicity.components(periodicity.fill_by_time_of_day(x), pl.DataFrame({"job_id": [0]}))
    row = comps.row(0, named=True)
    assert row["daily_ratio"] == pytest.approx(0.25, abs=1e-9) and row["daily_phase_deg"] == pytest.approx(60, abs=1e-6)
    for c in ("hourly", "weekly", "long_term", "noise"):
        assert row[f"{c}_ratio"] == pytest.approx(0, abs=1e-9), c


def test_the_real_vms_series_hold_every_reading():
    """The 20 real V2 VMs as Beaumont §5.2's input: every reading in its slot, NaN only where the trace has none."""
    readings = az.read_readings(V2_READINGS)
    ids, x = az.vm_series(readings)
    assert len(ids) == 20 and x.shape == (20, 8639) and np.isnan(x).sum() == 96
    first = readings.filter(pl.col("vmid") == ids[0]).sort("timestamp")
    np.testing.assert_array_equal(x[0, first["timestamp"].to_numpy() // 300], first["avg_cpu"].to_numpy())
