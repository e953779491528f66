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
from colocate.sources import azure as az

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


# ----------------------------------------------------------------------------- the layout, map and reduce per VM


def test_readings_files_are_selected_as_the_dataset_names_them():
    assert az.select_readings("all", 3) == [f"vm_cpu_readings-file-{i}-of-3" for i in (1, 2, 3)]
    assert az.select_readings(2, 195) == ["vm_cpu_readings-file-1-of-195", "vm_cpu_readings-file-2-of-195"]
    assert az.select_readings([5, 1, 5], 125) == ["vm_cpu_readings-file-1-of-125", "vm_cpu_readings-file-5-of-125"]
    assert az.relpath("vmtable", "vmtable") == "vmtable/vmtable.csv.gz"
    for bad in (0, 196, [0], [1, 200], "some", []):
        with pytest.raises(ValueError, match="trace.azure.files"):
            az.select_readings(bad, 195)


def _readings(rows: list[tuple[int, str, float]]) -> pl.DataFrame:
    return pl.DataFrame({"timestamp": [t for t, _, _ in rows], "vmid": [v for _, v, _ in rows],
                         "min_cpu": [x / 2 for *_, x in rows], "max_cpu": [x * 2 for *_, x in rows],
                         "avg_cpu": [x for *_, x in rows]}, schema=az.READINGS_SCHEMA)


def _vmtable(vmids, cores="2", deployment=None) -> pl.DataFrame:
    n = len(vmids)
    return pl.DataFrame({"vmid": list(vmids), "deploymentid": deployment or [f"d-{v}" for v in vmids],
                         "vmcreated": [0] * n, "vmdeleted": [30 * 86_400] * n,
                         "vmcorecount": [cores] * n, "vmmemory": ["8"] * n})


def _reduce(records: pl.DataFrame, vmtable: pl.DataFrame, n_buckets: int = 1, host=(48.0, 384.0), long_min=1):
    """The shared reduce (colocate.prep.mapreduce.reduce_bucket) of every bucket of the contract's tables."""
    from colocate.prep import mapreduce

    pieces = az.entity_pieces(vmtable, *host, n_buckets)
    outs = [mapreduce.reduce_bucket(records.filter(pl.col("bucket") == b).drop("bucket"),
                                    pieces.filter(pl.col("bucket") == b).drop("bucket"), long_min) for b in range(n_buckets)]
    return {k: pl.concat([o[k] for o in outs]) for k in ("stats", "series", "counts")}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["a", "b", "c", "d", "e"]), st.floats(0.5, 100)),
                min_size=1, max_size=120, unique_by=lambda r: (r[0], r[1])),
       st.integers(1, 5), st.integers(1, 4))
def test_readings_mapped_per_file_and_reduced_per_bucket_give_each_vm_its_series(rows, n_files, n_buckets):
    """Readings split over files in any way, mapped to the contract's usage records per file (usage_records) and
    reduced per bucket by the shared reduce, give each VM its readings exactly, as shares of the host (avg % / 100 ×
    2 cores / 48), at its slot's window on the canonical clock, with the maximum for inst; and its statistics those
    of its readings (mean of avg: the vmtable's avgcpu, computed by vm_summary, over 2,400)."""
    from colocate.sources.contract import ORIGIN_US, WINDOW_US

    rows = [(300 * t, v, x) for t, v, x in rows]
    vmtable = _vmtable(sorted({v for _, v, _ in rows} | {"idle"}))
    tasks = az.vm_tasks(vmtable)
    which = np.random.default_rng(len(rows)).integers(0, n_files, len(rows))
    records = pl.concat([az.usage_records(_readings([r for r, w in zip(rows, which) if w == f]), tasks, 48, n_buckets)
                         for f in range(n_files)])
    out = _reduce(records, vmtable, n_buckets)
    got = out["series"].join(tasks, on=["job_id", "task_index"]).sort("vmid", "start_time")
    whole = _readings(rows).sort("vmid", "timestamp")
    assert got["vmid"].to_list() == whole["vmid"].to_list()
    assert got["start_time"].to_list() == [ORIGIN_US + t // 300 * WINDOW_US for t in whole["timestamp"]]
    np.testing.assert_allclose(got["avg"], whole["avg_cpu"] / 100 * 2 / 48, rtol=1e-6)
    np.testing.assert_allclose(got["inst"], whole["max_cpu"] / 100 * 2 / 48, rtol=1e-6)
    stats = out["stats"].join(tasks, on=["job_id", "task_index"]).sort("vmid")
    summary = az.vm_summary(whole)
    np.testing.assert_allclose(stats["avg_mean"], summary["avgcpu"] / 2400, rtol=1e-6)
    assert stats["n_records"].to_list() == summary["readings"].to_list()
    # a VM of the vmtable without readings is an entity without usage: not a task with usage
    assert int(out["counts"]["tasks_with_usage"].sum()) == summary.height
    assert stats["cpu_request"].to_list() == pytest.approx([2 / 48] * summary.height)


def test_a_slot_read_twice_in_a_file_is_an_error_naming_the_vm_and_time(tmp_path):
    readings = _readings([(0, "a", 1.0), (300, "a", 2.0), (300, "a", 3.0)])
    with pytest.raises(ValueError, match=r"VM a has two readings at t = 300 s"):
        az.usage_records(readings, az.vm_tasks(_vmtable(["a"])), 48, 1)


def test_whole_span_entities_are_read_from_the_first_to_the_last_window():
    from colocate.analysis import periodicity as pe

    spans = pl.DataFrame({"job_id": [0, 1, 2, 3, 4], "task_index": [0] * 5,
                          "n_windows": [100, 90, 90, 80, 99], "first_window": [0, 10, 0, 0, 0],
                          "last_window": [99, 99, 89, 99, 99], "class": [pe.ENTITY_CLASS] * 5})
    assert pe.whole_span_entities(spans, 100, 1.0, None, 0)["job_id"].to_list() == [0]
    assert pe.whole_span_entities(spans, 100, 0.99, None, 0)["job_id"].to_list() == [0, 4]
    assert pe.whole_span_entities(spans, 100, 0.8, None, 0)["job_id"].to_list() == [0, 3, 4]
    one = pe.whole_span_entities(spans, 100, 0.8, 2, 3)
    assert one.height == 2 and one.equals(pe.whole_span_entities(spans, 100, 0.8, 2, 3)) and one["job_id"].is_sorted()
    with pytest.raises(ValueError, match="min_coverage"):
        pe.whole_span_entities(spans, 100, 0, None, 0)


def test_a_daily_sinusoid_vm_gives_its_ratio_through_the_pipeline_path():
    """Known answer through the contract's map → the shared reduce → entity_spans → whole_span_entities →
    entity_groups → Beaumont §5.2's analyse: a VM with avg = 40 + 10·cos(2π t / day − 60°) has a daily ratio of
    0.25 and its peak at 60°, its usage a share of the host (4 of 48 cores); a VM read only half the month is not
    analysed."""
    from colocate.analysis import periodicity as pe

    t = np.arange(0, 30 * 86_400, 300)
    avg = 40 + 10 * np.cos(2 * np.pi * (t + 150) / 86_400 - np.radians(60))
    half = t.size // 2
    readings = pl.DataFrame({"timestamp": np.r_[t, t[:half]], "vmid": ["sine"] * t.size + ["short"] * half,
                             "min_cpu": np.r_[avg, avg[:half]] - 1, "max_cpu": np.r_[avg, avg[:half]] + 1,
                             "avg_cpu": np.r_[avg, avg[:half]]}, schema=az.READINGS_SCHEMA)
    vmtable = _vmtable(["short", "sine"], cores="4")
    tasks = az.vm_tasks(vmtable)
    series = _reduce(az.usage_records(readings, tasks, 48, 1), vmtable)["series"]
    chosen = pe.whole_span_entities(pe.entity_spans([series.lazy()]), t.size, 0.99, None, 0)
    assert chosen.join(tasks, on=["job_id", "task_index"])["vmid"].to_list() == ["sine"]
    dominant, windows = pe.entity_groups(chosen, series.join(chosen, on=["job_id", "task_index"], how="semi"))
    assert dominant["class"].to_list() == [pe.ENTITY_CLASS] and windows.height == t.size
    np.testing.assert_allclose(windows["cpu_sum"], avg / 100 * 4 / 48, rtol=1e-6)
    res = pe.analyse(dominant, windows, t.size, classes=(pe.ENTITY_CLASS,), min_coverage=0.99)
    row = res["components"].row(0, named=True)
    assert row["daily_ratio"] == pytest.approx(0.25, abs=1e-6) and row["daily_phase_deg"] == pytest.approx(60, abs=1e-3)
    assert row["noise_ratio"] == pytest.approx(0, abs=1e-6)


def test_rows_from_another_trace_are_shown_but_not_judged():
    from colocate.report import summary
    from colocate.report.compare import Compare

    part = summary.rows("S", [("daily ratio", "0.268", 0.03, "median", Compare(item="Table 4"))])
    assert part["within"].item() is False
    other = summary.another_trace(part, "Azure V2")
    assert other["within"].item() is None and other["tolerance"].item() is None
    assert other["note"].item().startswith("median; Azure V2") and other["ours_value"].item() == pytest.approx(0.03)


def test_vms_become_entities_of_their_deployment_as_shares_of_a_host():
    """Known answer: each VM is an entity of its deployment (ranked by vmid), its usage and request shares of a host of
    48 cores / 384 GB (50% of 2 cores is 1/48 of the host; a VM without a core count counts 1), its creation and
    deletion on the canonical clock, never failing."""
    from colocate.sources.contract import ORIGIN_US, WINDOW_US

    vmtable = pl.DataFrame({"vmid": ["v3", "v1", "v2", "v4"], "deploymentid": ["d2", "d1", "d1", "d3"],
                            "vmcreated": [0, 300, 0, 600], "vmdeleted": [900, 1200, 3000, 900],
                            "vmcorecount": ["4", "2", ">24", "x"], "vmmemory": ["8", "4", ">64", "2"]})
    tasks = az.vm_tasks(vmtable)
    assert tasks.rows() == [("v1", 0, 0, 2.0), ("v2", 0, 1, 24.0), ("v3", 1, 0, 4.0), ("v4", 2, 0, None)]
    pieces = az.entity_pieces(vmtable, 48, 384, 1).sort("job_id", "task_index")
    assert pieces["cpu_request"].to_list() == pytest.approx([2 / 48, 24 / 48, 4 / 48, 1 / 48])
    assert pieces["memory_request"].to_list() == pytest.approx([4 / 384, 64 / 384, 8 / 384, 2 / 384])
    assert pieces["first_time"].to_list() == [ORIGIN_US + s * 1_000_000 for s in (300, 0, 0, 600)]
    assert not pieces["failing"].any() and pieces["priority"].is_null().all()
    readings = pl.DataFrame({"timestamp": [0, 900, 300, 0], "vmid": ["v1", "v2", "v4", "v9"], "min_cpu": [0.0] * 4,
                             "max_cpu": [100.0] * 4, "avg_cpu": [50.0, 10.0, 20.0, 30.0]}, schema=az.READINGS_SCHEMA)
    got = az.usage_records(readings, tasks, 48, 1).sort("job_id", "task_index")
    assert got["cpu_rate"].to_list() == pytest.approx([1 / 48, 2.4 / 48, 0.2 / 48])  # v9 is not in the vmtable
    assert got["start_time"].to_list() == [ORIGIN_US, ORIGIN_US + 3 * WINDOW_US, ORIGIN_US + WINDOW_US]
    assert got["sampled_cpu_usage"].to_list() == pytest.approx([2 / 48, 24 / 48, 1 / 48])
    with pytest.raises(ValueError, match="positive"):
        az.entity_pieces(vmtable, 0, 384, 1)


def test_feasible_sizes_are_those_the_tasks_reach_on_average():
    from colocate.analysis import aggregate

    records = pl.DataFrame({"job_id": [0, 1, 2], "task_index": [0, 0, 0], "records": [100, 100, 50]})
    kept, skipped, running = aggregate.feasible_sizes(records, 0, 99, [1, 2, 3, 18])
    assert (kept, skipped, running) == ([1, 2], [3, 18], 2.5)


def test_each_vm_carries_janus_statistics_with_the_max_for_inst():
    """Known answer through the shared reduce: a VM of 48 cores (a whole host) at avg 10, 30 (%) with max 20, 60 has
    avg mean 0.2, std 0.1, inst (max) mean 0.4, std 0.2, and its inst histogram puts half its readings in bin 20 and
    half in bin 60; 100 % of a host is the last bin."""
    readings = pl.DataFrame({"timestamp": [0, 300, 0], "vmid": ["a", "a", "b"], "min_cpu": [0.0, 0.0, 0.0],
                             "max_cpu": [20.0, 60.0, 100.0], "avg_cpu": [10.0, 30.0, 100.0]}, schema=az.READINGS_SCHEMA)
    vmtable = _vmtable(["a", "b"], cores="48")
    from colocate.prep import mapreduce

    out = mapreduce.reduce_bucket(az.usage_records(readings, az.vm_tasks(vmtable), 48, 1).drop("bucket"),
                                  az.entity_pieces(vmtable, 48, 384, 1).drop("bucket"), 1)
    a = out["stats"].row(0, named=True)
    assert (a["avg_mean"], a["avg_std"], a["inst_mean"], a["inst_std"]) == pytest.approx((0.2, 0.1, 0.4, 0.2), abs=1e-6)
    hist = np.asarray(out["hist"]["inst_hist"].to_list())
    assert hist.shape == (2, 100) and hist[0, 20] == hist[0, 60] == 0.5 and hist[1, 99] == 1.0


def test_section_3_6_sizes_are_those_with_enough_distinct_sets():
    """Known answer: 1,000 draws of sets of 20 VMs repeat a set under 1% of the time when C(20, N) ≥ 49,950:
    C(20, 10) = 184,756 and C(20, 7) = 77,520 do; C(20, 6) = 38,760 and C(20, 17) = 1,140 do not, and 25 VMs
    cannot be drawn at all. One draw of all 20 is one set: kept."""
    from colocate.analysis import characterise as ch
    from colocate.insufficient import InsufficientData

    assert ch.distinct_sizes(20, [6, 7, 10, 17, 25], 1000) == ([7, 10], [6, 17, 25])
    assert ch.distinct_sizes(20, [20], 1) == ([20], [])
    kept, skipped = ch.total_usage_sizes(20, [10, 20], [10, 50], [10, 20, 500], 1000)
    assert kept == {"table1": [10], "fig6": [10], "fig5": [10, 20]} and skipped == {"table1": [20], "fig6": [50], "fig5": [500]}
    with pytest.raises(InsufficientData, match="20 tasks"):
        ch.total_usage_sizes(20, [50], [10], [10], 1000)


# ----------------------------------------------------------------------------- VMs as placement requests


def test_vms_become_placement_requests_with_their_sizes_and_lifetimes():
    vmtable = pl.DataFrame({"vmid": ["a", "b", "c", "d"], "deploymentid": ["d1", "d1", "d2", "d3"],
                            "vmcreated": [600, 0, 300, 900], "vmdeleted": [1200, 2400, 9000, 900],
                            "vmcorecount": ["2", ">24", "4", "1"], "vmmemory": ["1.75", ">64", "8", "2"]})
    r = az.vm_requests(vmtable, span_end_s=3000)
    # d lives 0 s: left out; c outlives the trace's end: censored there; V2's ">k" buckets count as k
    assert r.select("submit", "cpu_request", "memory_request", "lifetime").rows() == [
        (0, 24.0, 64.0, 2400.0), (300_000_000, 4.0, 8.0, 2700.0), (600_000_000, 2.0, 1.75, 600.0)]
    nodes = az.hosts(3, 16, 128)
    assert nodes["cpus"].to_list() == [16.0] * 3
    with pytest.raises(ValueError, match="hosts"):
        az.hosts(0, 16, 128)


def test_vm_requests_replay_at_the_offered_load_and_huge_hosts_reject_none():
    """The stream is scaled to the offered CPU load exactly; a VM larger than every host is counted, not offered;
    on hosts 100× the load nothing is rejected by any policy."""
    from colocate.scheduling.placement import stream
    from colocate.scheduling.placement_runs import run_trace
    from colocate.scheduling.placement_workload import placeable, replay_requests

    rng = np.random.default_rng(3)
    n = 300
    vmtable = pl.DataFrame({"vmid": [f"v{i}" for i in range(n)], "deploymentid": [f"d{i // 3}" for i in range(n)],
                            "vmcreated": np.sort(rng.integers(0, 86_400, n)), "vmdeleted": 86_400 + rng.integers(0, 86_400, n),
                            "vmcorecount": rng.choice(["1", "2", "4", "64"], n).tolist(), "vmmemory": ["4"] * n})
    nodes = az.hosts(4, 48, 384)
    cap = nodes.select("cpus", "memory").to_numpy()
    eligible, too_big = placeable(az.vm_requests(vmtable), cap)
    assert too_big == int((vmtable["vmcorecount"] == "64").sum()) and eligible.height == n - too_big
    requests, facts = replay_requests(eligible, too_big, cap, n_requests=150, offered_load=0.5, rng=stream(1, 0, "t"))
    assert requests.height == 150 and facts["offered_cpu_load"] == 0.5
    span = requests["time"].max() - requests["time"].min()
    offered = float((requests["d_cpu"] * requests["lifetime"]).sum()) / (span * cap[:, 0].sum())
    assert offered == pytest.approx(0.5, rel=1e-9)
    from colocate.scheduling.placement_workload import policy_specs

    specs = policy_specs(["pack", "spread", "abp"], ["cpu", "memory"], "cpu", [1.0, 1.0], "placement.trace")
    big = az.hosts(4, 48 * 100, 384 * 100)
    log = run_trace(requests, big, specs, seed=1, alpha=0.5, tie_break="first")
    assert log["policy"].unique().sort().to_list() == ["ABP", "PACK", "SPREAD"] and log["accepted"].all()


# ----------------------------------------------------------------------------- Janus §3.6 on VMs (the rule script)


def _total_usage(tmp_path, mu, sigma, sizes, seed=3):
    """Run the shared characterise_janus_total_usage.py on entities whose realizations are Gaussian draws N(mu_i,
    sigma_i²), as a VM trace's would be."""
    from colocate import rulescript

    rng = np.random.default_rng(seed)
    inst = (mu[:, None] + sigma[:, None] * rng.standard_normal((mu.size, 2000))).astype(np.float32)
    np.save(tmp_path / "inst.npy", inst)
    keys = {"job_id": np.arange(mu.size), "task_index": np.zeros(mu.size, dtype=np.int64)}
    pl.DataFrame({"row": np.arange(mu.size, dtype=np.uint32), **keys}).write_parquet(tmp_path / "tasks.parquet")
    pl.DataFrame({**keys, "inst_mean": mu, "inst_std": sigma}).write_parquet(tmp_path / "long.parquet")
    script = rulescript.load(Path(__file__).resolve().parents[1] / "workflow/scripts/characterise_janus_total_usage.py")
    (tmp_path / "out").mkdir()  # as Snakemake makes an output's directory
    out = {name: tmp_path / "out" / f"{name}.{ext}" for name, ext in (("samples", "parquet"), ("table1", "csv"),
                                                                      ("fig6_table", "csv"), ("fig6", "png"))}
    rulescript.call(script, inputs={"inst": tmp_path / "inst.npy", "tasks": tmp_path / "tasks.parquet",
                                    "long": tmp_path / "long.parquet", "series": []},
                    outputs=out, params={"table1_sizes": sizes, "fig6_sizes": sizes, "percentiles": [95.0, 99.0, 99.9],
                                         "repetitions": 200, "table1_realizations": 2000, "alpha": 0.05, "seed": 7},
                    log=tmp_path / "total_usage.log")
    return out


def test_sums_of_gaussian_vms_are_found_gaussian_with_their_moments(tmp_path):
    """Known answer: 40 VMs with Gaussian usage (μ_i 0.5-4, σ_i 0.1-1): a total of 10 is Gaussian, so A-D
    rejects about α = 5% of sets (below 15%: the 200 sets share VMs, so their tests are not independent), the mean
    total is 10 × the mean μ_i within 4 sd, and N(Σμ_i, Σσ_i²) hits the 95th-99.9th percentiles (median error < 2%)."""
    rng = np.random.default_rng(0)
    mu, sigma = rng.uniform(0.5, 4.0, 40), rng.uniform(0.1, 1.0, 40)
    out = _total_usage(tmp_path, mu, sigma, [10])
    table1 = pl.read_csv(out["table1"])
    assert table1["N"].to_list() == [10] and table1["ad_rejection"].item() < 0.15
    sd = np.sqrt(10 * mu.var() * 30 / 39 / 200)
    assert abs(table1["mean_total"].item() - 10 * mu.mean()) < 4 * sd
    assert (pl.read_csv(out["fig6_table"])["median"].abs() < 0.02).all()


def test_too_few_vms_for_any_size_are_said_not_failed(tmp_path):
    from colocate import insufficient

    out = _total_usage(tmp_path, np.full(8, 1.0), np.full(8, 0.2), [10, 50])
    status = insufficient.read_status(out["table1"])
    assert status is not None and "8 tasks with realizations" in status.reason and "N = 10" in status.needs
    assert insufficient.read_status(out["fig6"]) is not None


def test_the_real_v1_files_map_to_the_contract_with_their_own_units():
    """V1 gives cores as an integer and memory in GB (0.75, 1.75, …): the real V1 head files map to entities whose
    requests are those numbers over the host's. The head of the readings file holds other VMs than the 10-row
    vmtable: with none listed, every reading is dropped (not failed); with each given a real V1 row's sizes, every
    reading maps, its mean and maximum in shares of the host."""
    vmtable = az.read_vmtable(V1_VMTABLE)
    pieces = az.entity_pieces(vmtable, 48, 384, 4)
    assert pieces.height == vmtable["vmid"].n_unique() == 10
    got = pieces.join(az.vm_tasks(vmtable), on=["job_id", "task_index"]).join(vmtable, on="vmid").sort("vmid")
    np.testing.assert_allclose(got["cpu_request"], got["vmcorecount"].cast(pl.Float64) / 48, rtol=1e-6)
    np.testing.assert_allclose(got["memory_request"], got["vmmemory"].cast(pl.Float64) / 384, rtol=1e-6)
    readings = az.read_readings(V1_READINGS)
    assert az.usage_records(readings, az.vm_tasks(vmtable), 48, 4).height == 0
    ids = readings["vmid"].unique().sort()
    listed = pl.concat([vmtable.head(1).drop("vmid").with_columns(vmid=pl.lit(v)) for v in ids]).select(vmtable.columns)
    records = az.usage_records(readings, az.vm_tasks(listed), 48, 4)
    assert records.height == readings.height == 100 and records["bucket"].is_sorted()
    cores = float(vmtable["vmcorecount"][0])
    both = records.sort("start_time", "job_id", "task_index")
    want = readings.join(az.vm_tasks(listed), on="vmid").sort("timestamp", "job_id", "task_index")
    np.testing.assert_allclose(both["cpu_rate"], want["avg_cpu"] / 100 * cores / 48, rtol=1e-6)
    np.testing.assert_allclose(both["sampled_cpu_usage"], want["max_cpu"] / 100 * cores / 48, rtol=1e-6)
