"""Job × window aggregates of shards that are not time-ordered (the Google 2019 trace): each shard's records of the
aggregates, sorted by window (mapreduce.usage_window_rows), reduced a chunk of windows at a time over every shard
(mapreduce.reduce_job_windows), are the aggregates of the whole table, exactly; the per-shard aggregates merged as for
2011 (jobs.merge_job_windows) are not."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from colocate import io, trace
from colocate.analysis import jobs
from colocate.prep import mapreduce
from colocate.sources.contract import TABLES

W = trace.WINDOW_US
T0 = trace.TRACE_START_US
F32 = pl.Float32()


def usage_frame(job, task, window, cpu, mem) -> pl.DataFrame:
    """Usage records in the contract's columns: one per (job, task, window, cpu, mem), in the order given."""
    start = [T0 + int(w) * W for w in window]
    return pl.DataFrame(
        {"start_time": start, "end_time": [s + W for s in start], "job_id": job, "task_index": task,
         "machine_id": [1] * len(start), "cpu_rate": cpu, "canonical_memory_usage": mem,
         "maximum_cpu_rate": cpu, "sampled_cpu_usage": cpu},
        schema={"start_time": pl.Int64, "end_time": pl.Int64, "job_id": pl.Int64, "task_index": pl.Int64,
                "machine_id": pl.Int64, "cpu_rate": F32, "canonical_memory_usage": F32, "maximum_cpu_rate": F32,
                "sampled_cpu_usage": F32},
    )


def whole_aggregates(usage: pl.DataFrame) -> pl.DataFrame:
    return mapreduce.job_window_aggregates(usage.lazy().with_columns(mapreduce.window_expr())).collect()


def chunked(paths, n_windows: int, chunk: int) -> pl.DataFrame:
    """The reduce as google2019.smk runs it: one chunk of windows at a time, over every shard's file."""
    scan = pl.scan_parquet([str(p) for p in paths])
    parts = [mapreduce.reduce_job_windows(scan, lo, min(lo + chunk, n_windows)) for lo in range(0, n_windows, chunk)]
    return pl.concat(parts)


def mapped(shards, tmp: Path, row_group: int) -> list[Path]:
    """Each shard through the 2019 map: its window records written as the rule writes them, ``row_group`` rows a group."""
    paths = []
    for k, shard in enumerate(shards):
        rows, _ = mapreduce.usage_window_rows(shard, np.array([], dtype=np.int32))
        assert rows["window"].is_sorted()
        paths.append(tmp / f"shard-{k}.parquet")
        io.write_parquet(rows, paths[-1], row_group_size=row_group)
    return paths


@st.composite
def split_trace(draw):
    """Records of a few jobs' tasks over some windows, each in a shard drawn at random (so that every shard holds
    rows from across the span, in no time order, and a task's records of one window may sit in several shards);
    CPU and memory in 64ths, so that a sum is exact in any order."""
    n = draw(st.integers(1, 120))
    n_windows = draw(st.integers(1, 12))
    ints = lambda lo, hi: st.lists(st.integers(lo, hi), min_size=n, max_size=n)  # noqa: E731
    job, task, window = draw(ints(1, 4)), draw(ints(0, 3)), draw(ints(0, n_windows - 1))
    cpu, mem = draw(ints(0, 128)), draw(ints(0, 64))
    shard = draw(ints(0, draw(st.integers(1, 5)) - 1))
    usage = usage_frame(job, task, window, [c / 64 for c in cpu], [m / 64 for m in mem])
    usage = usage.with_columns(job_id=pl.col("job_id") * 5_000_000_000)  # 2019's collection ids pass 2**32
    shards = [usage.filter(pl.Series(shard) == s) for s in range(max(shard) + 1)]
    return usage, [s for s in shards if s.height], n_windows, draw(st.integers(1, n_windows + 2)), draw(st.integers(1, 8))


@settings(max_examples=60, deadline=None)
@given(split_trace())
def test_the_chunked_reduce_of_interleaved_shards_is_the_whole_tables_aggregation(case):
    usage, shards, n_windows, chunk, row_group = case
    with tempfile.TemporaryDirectory() as tmp:
        got = chunked(mapped(shards, Path(tmp), row_group), n_windows, chunk)
    # exactly: n_tasks counts a task once however many shards hold its records of a window; the percentiles are
    # the whole window's; the sums are exact (64ths), whatever the order
    assert_frame_equal(got, whole_aggregates(usage), check_exact=True)
    assert dict(got.schema) == dict(TABLES["group_windows"].columns)  # the contract's table


def test_a_window_split_across_shards_is_exact_where_per_shard_aggregates_merged_are_not(tmp_path):
    # job 7's task 0 has records of window 0 in both shards, task 1 in one: 3 tasks' CPU 0.1, 0.2, 0.3, 0.4, 0.5
    a = usage_frame([7, 7, 7], [0, 1, 0], [0, 0, 1], [0.1, 0.2, 0.5], [0.01, 0.01, 0.01])
    b = usage_frame([7, 7, 7], [0, 2, 0], [1, 0, 0], [0.6, 0.3, 0.4], [0.01, 0.01, 0.01])
    got = chunked(mapped([a, b], tmp_path, 2), 2, 1)
    w0 = got.filter(pl.col("window") == 0).row(0, named=True)
    cpu = np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32).astype(np.float64)
    assert w0["n_tasks"] == 3 and w0["n_records"] == 4
    assert w0["cpu_p10"] == np.quantile(cpu, 0.1) and w0["cpu_p90"] == np.quantile(cpu, 0.9)
    # per shard, then merged as the 2011 path merges a window cut by a shard boundary: task 0 counted twice, the
    # percentiles of one shard's piece only
    per_shard = pl.concat([mapreduce.map_task_usage(s, 4, np.array([], dtype=np.int32))[1] for s in (a, b)])
    merged = jobs.merge_job_windows(per_shard).filter(pl.col("window") == 0).row(0, named=True)
    assert merged["n_tasks"] == 4 and merged["cpu_p90"] != w0["cpu_p90"]


def test_the_window_records_row_groups_let_a_chunk_skip_the_rest_of_a_file(tmp_path):
    rng = np.random.default_rng(3)
    n = 5000
    usage = usage_frame(rng.integers(1, 50, n).tolist(), rng.integers(0, 9, n).tolist(),
                        rng.integers(0, 100, n).tolist(), rng.random(n).tolist(), rng.random(n).tolist())
    (path,) = mapped([usage], tmp_path, 500)
    meta = pq.read_metadata(path)
    k = [meta.schema.column(i).name for i in range(meta.num_columns)].index("window")
    spans = [(meta.row_group(g).column(k).statistics.min, meta.row_group(g).column(k).statistics.max)
             for g in range(meta.num_row_groups)]
    # sorted by window: the groups' ranges do not overlap, so a chunk of 10 windows reads at most 2 of 10 groups
    assert len(spans) == 10 and all(hi0 <= lo1 for (_, hi0), (lo1, _) in zip(spans, spans[1:]))
    assert max(sum(1 for lo, hi in spans if lo < c + 10 and hi >= c) for c in range(0, 100, 10)) <= 2
    # the rows of the groups a range may be in, from the footers (the chunk rule's memory): at least the range's
    for lo, hi in ((0, 10), (35, 36), (90, 200), (0, 100)):
        in_range = usage.filter(((pl.col("start_time") - T0) // W).is_between(lo, hi - 1)).height
        assert in_range <= io.rows_in_range([path], "window", lo, hi) <= in_range + 2 * 500
    assert io.rows_in_range([path], "window", 100, 110) == 0
    # and the chunked reduce of one shard equals its aggregation (the 2011 map's) up to the sums' order
    assert_frame_equal(chunked([path], 100, 7), mapreduce.map_task_usage(usage, 4, np.array([], np.int32))[1],
                       check_exact=False, rel_tol=1e-12)


def test_the_2019_maps_sampled_records_are_the_2011_maps():
    usage = usage_frame([3, 3, 4, 3], [0, 1, 0, 0], [0, 0, 2, 1], [0.25, 0.5, 0.75, 1.0], [0.5, 0.25, 0.5, 0.5])
    windows = np.array([0, 2], dtype=np.int32)
    rows, sampled = mapreduce.usage_window_rows(usage, windows)
    assert_frame_equal(sampled, mapreduce.map_task_usage(usage, 2, windows)[2], check_exact=True)
    assert rows.columns == mapreduce.WINDOW_RECORD_COLUMNS and rows["window"].to_list() == [0, 0, 1, 2]


def test_the_2011_map_gives_the_same_aggregates_as_before():
    # map_task_usage calls job_window_aggregates on its records: the same table as the aggregation written out
    usage = usage_frame([3, 3, 4, 3], [0, 1, 0, 0], [0, 0, 0, 1], [0.25, 0.5, 0.75, 1.0], [0.5, 0.25, 0.5, 0.5])
    _, jw, _ = mapreduce.map_task_usage(usage, 2, np.array([0], dtype=np.int32))
    expected = usage.lazy().with_columns(mapreduce.window_expr()).group_by("job_id", "window").agg(
        pl.col("task_index").n_unique().cast(pl.Int32).alias("n_tasks"), pl.len().cast(pl.Int32).alias("n_records"),
        pl.col("cpu_rate").cast(pl.Float64).sum().alias("cpu_sum"),
        pl.col("canonical_memory_usage").cast(pl.Float64).sum().alias("mem_sum"),
        pl.col("cpu_rate").cast(pl.Float64).quantile(0.1, "linear").alias("cpu_p10"),
        pl.col("cpu_rate").cast(pl.Float64).quantile(0.9, "linear").alias("cpu_p90"),
    ).sort("window", "job_id").collect()
    assert_frame_equal(jw, expected, check_exact=True)


def test_the_2019_rule_scripts_reduce_interleaved_json_shards_to_the_whole_tables_aggregates(tmp_path):
    # the synthetic 2019 trace deals whole stretches of time to its shards, so few of its windows are split; here
    # every window of every job is: the verbatim instance_usage line as 120 records, dealt to 3 shards in turn
    from colocate import rulescript
    from colocate.sources import google2019 as g
    from wfutil import REPO

    scripts = REPO / "workflow/scripts"
    line = g.read_instance_usage(REPO / "workflow/data/google-2019-reference/instance_usage-000000000000.first_line.json")
    rng = np.random.default_rng(7)
    n, n_windows = 120, 6
    window = rng.integers(0, n_windows, n)
    start = T0 + window * W
    rows = pl.concat([line] * n).with_columns(
        start_time=pl.Series(start), end_time=pl.Series(start + W),
        collection_id=pl.Series(rng.integers(1, 4, n) * 10**11), instance_index=pl.Series(rng.integers(0, 4, n)),
        average_usage=pl.struct(cpus=pl.Series(rng.integers(0, 64, n) / 64), memory=pl.Series(rng.integers(0, 64, n) / 64)),
    ).with_columns(pl.col(c).cast(pl.String) for c in g._USAGE_INTS)
    shards = []
    for s in range(3):
        shards.append(tmp_path / f"instance_usage-00000000000{s}.json.gz")
        g.write_json_lines(rows.gather(np.arange(s, n, 3)), shards[-1])
    map_usage = rulescript.load(scripts / "google2019_map_instance_usage.py")
    reduce = rulescript.load(scripts / "google2019_job_windows.py")
    window_records = []
    for s, shard in enumerate(shards):
        out = {k: tmp_path / f"map/{s}/{k}.parquet" for k in ("records", "window_records", "sampled", "moments")}
        rulescript.call(map_usage, inputs={"shard": str(shard)}, outputs=out, log=tmp_path / f"map-{s}.log",
                        params={"buckets": 4, "n_windows": n_windows, "windows_per_day": 2, "seed": 1})
        window_records.append(out["window_records"])
    chunks = []
    for lo in range(0, n_windows, 4):
        chunks.append(tmp_path / f"reduce/chunk-{lo}.parquet")
        rulescript.call(reduce, inputs={"rows": window_records}, outputs=[chunks[-1]], log=tmp_path / f"r-{lo}.log",
                        params={"lo": lo, "hi": min(lo + 4, n_windows)})
    got = io.read_contract(chunks, "group_windows")
    usage = [g.task_usage(g.read_instance_usage(s)) for s in shards]
    assert_frame_equal(got, whole_aggregates(pl.concat(usage)), check_exact=True)
    assert got["n_tasks"].max() > 1 and got.height > 10  # windows with several tasks, records in several shards
    # where each shard's aggregates, merged, are not
    merged = jobs.merge_job_windows(pl.concat([mapreduce.map_task_usage(u, 4, np.array([], np.int32))[1] for u in usage]))
    assert merged.select("job_id", "window").equals(got.select("job_id", "window"))
    assert (merged["n_tasks"] > got["n_tasks"]).any() and (merged["cpu_p90"] != got["cpu_p90"]).any()
