"""The Google 2019 trace as a source (issue 45), end to end at the tiny scale: the synthetic model written in the 2019
format runs the whole DAG and gives the 2011 path's per-task statistics on the same model; the inst-sampling analysis
(beyond the papers) has its table, figure and rows; a cell is downloaded from a loopback bucket, listed, verified
against the CRC32C and MD5 it sends, resumed after a drop, and a corrupt object is refused by name."""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest

from colocate.sources import google2019 as g
from loopback import Misbehaviour, serve
from wfutil import png_shape, snakemake, write_config

pytestmark = pytest.mark.workflow

RESULTS = "results/synthetic2019-tiny"
KEY = ["job_id", "task_index"]


@pytest.fixture(scope="module")
def run2019(tmp_path_factory):
    work = tmp_path_factory.mktemp("g19")
    write_config(work, trace={"source": "synthetic2019"})
    snakemake(work)
    return work


def trace_root(work):
    (root,) = sorted((work / "resources/trace").glob("synthetic2019-*"))
    return root


def test_the_2019_path_gives_the_2011_paths_task_statistics_on_the_same_model(run2019, tiny_run):
    a = pl.read_parquet(tiny_run / "results/synthetic-tiny/tasks/task_stats.parquet").sort(KEY)
    b = pl.read_parquet(run2019 / RESULTS / "tasks/task_stats.parquet").sort(KEY)
    assert a.height == b.height > 1000 and a.select(KEY).equals(b.select(KEY))
    for column in a.columns:
        if column == "priority":  # 2011's priorities in the 2019 tiers of the same class
            assert b[column].to_list() == [g.PRIORITY_FROM_2011[p] for p in a[column]]
        elif a[column].dtype.is_float():  # the same records summed in another order: equal to rounding
            np.testing.assert_allclose(b[column].to_numpy(), a[column].to_numpy(), rtol=1e-9, atol=1e-15)
        else:
            assert a[column].equals(b[column]), column


def test_the_2019_path_gives_the_2011_paths_dominant_jobs_windows_on_the_same_model(run2019, tiny_run):
    # the job × window aggregates reduced over every shard (2019's shards are not time-ordered) are the 2011 map's of
    # its time-ordered shards: D's rows and the per-window totals the same, floats to the sums' order
    for name, key in (("dominant_windows", ["job_id", "window"]), ("window_totals", ["window"])):
        a = pl.read_parquet(tiny_run / f"results/synthetic-tiny/jobs/{name}.parquet").sort(key)
        b = pl.read_parquet(run2019 / RESULTS / f"jobs/{name}.parquet").sort(key)
        assert a.height == b.height > 0 and a.schema == b.schema and a.select(key).equals(b.select(key)), name
        for column in a.columns:
            if a[column].dtype.is_float():
                np.testing.assert_allclose(b[column].to_numpy(), a[column].to_numpy(), rtol=1e-9, atol=1e-15,
                                           err_msg=f"{name}.{column}")
            else:
                assert a[column].equals(b[column]), f"{name}.{column}"
    # and the files it is reduced from hold each (job, window) once
    chunks = pl.read_parquet(sorted((run2019 / RESULTS / "reduce/job_windows").glob("chunk-*.parquet")))
    assert chunks.height > 0 and not chunks.select(pl.struct("job_id", "window").is_duplicated().any()).item()
    # the shards split windows (as the trace's do), so that the equality can fail: of D's (job, window)s, many have
    # records in two or more shards, where aggregates per shard, merged, would take the percentiles from one piece
    shards = sorted((run2019 / RESULTS / "map/instance_usage").glob("*/window_records.parquet"))
    pieces = pl.concat([pl.read_parquet(f, columns=["job_id", "window"]).unique() for f in shards]).group_by("job_id", "window").len()
    d = pl.read_parquet(run2019 / RESULTS / "jobs/dominant_windows.parquet").join(pieces, on=["job_id", "window"])
    assert len(shards) >= 3 and (d["len"] > 1).mean() > 0.3


def test_every_contract_table_the_2019_source_writes_has_the_contracts_columns(run2019):
    from colocate import io
    from colocate.sources.contract import TABLES

    run = run2019 / RESULTS
    layout = {"usage_records": "map/instance_usage/*/records.parquet", "entity_pieces": "map/instance_events/*/pieces.parquet",
              "group_windows": "reduce/job_windows/chunk-*.parquet",
              "sampled_windows": "map/instance_usage/*/sampled_windows.parquet",
              "window_moments": "map/instance_usage/*/window_moments.parquet",
              "group_events": "map/collection_events/*.parquet", "machine_events": "map/machine_events.parquet",
              "placement_events": "map/placement_events.parquet"}
    assert set(layout) == set(TABLES)
    for table, pattern in layout.items():
        files = sorted(run.glob(pattern))
        assert files, table
        frame = io.read_contract(files, table)
        assert frame.height > 0 and list(frame.columns) == list(TABLES[table].columns)
    assert io.read_contract([run / "map/machine_events.parquet"], "machine_events")["time"].is_sorted()


def test_the_shards_are_not_time_ordered_and_ints_are_quoted(run2019):
    import gzip
    import json

    files = sorted((trace_root(run2019) / "instance_usage").glob("*.json.gz"))
    firsts = [json.loads(gzip.open(f, "rt").readline()) for f in files]
    starts = [int(r["start_time"]) for r in firsts]
    assert all(isinstance(r["start_time"], str) and isinstance(r["average_usage"], dict) for r in firsts)
    columns = [g.read_instance_usage(f)["start_time"] for f in files]
    # some shard does not begin at the earliest time of the trace, or is not sorted within
    assert starts != sorted(starts) or any(not c.is_sorted() for c in columns) or min(starts) > min(c.min() for c in columns)


def test_the_summary_names_the_trace_and_judges_nothing_against_the_papers(run2019):
    md = (run2019 / RESULTS / "summary.md").read_text()
    assert "the synthetic trace in the 2019 format (the 2011-calibrated model)" in md
    assert "No row is judged against the papers on this run." in md
    rows = pl.read_csv(run2019 / RESULTS / "summary.csv", infer_schema_length=0)
    assert not rows.filter(pl.col("verdict").is_in(["within", "outside"])).height
    beyond = rows.filter(pl.col("claim").str.starts_with("beyond.sampling"))
    assert beyond.height == 3 + 2 * 3  # tasks, the ratio's median and share, GPA's q at three ρ with either variance


def test_the_inst_sampling_analysis_has_its_table_figure_and_rows(run2019):
    tasks = pl.read_csv(run2019 / RESULTS / "tables/sampling_tasks.csv")
    long = pl.read_parquet(run2019 / RESULTS / "tasks/long_tasks.parquet")
    assert 0 < tasks.height <= long.height and (tasks["windows"] >= 24).all()
    # the implied variance is the within and between variances summed (law of total variance)
    np.testing.assert_allclose(tasks["implied_std"] ** 2, tasks["within_std"] ** 2 + tasks["between_std"] ** 2, rtol=1e-9)
    np.testing.assert_allclose(tasks["ratio"], tasks["inst_std"] / tasks["implied_std"], rtol=1e-9)
    packing = pl.read_csv(run2019 / RESULTS / "tables/sampling_packing.csv")
    assert packing.height == 6 and set(packing["variance_from"]) == {"inst samples", "window distributions"}
    assert png_shape(run2019 / RESULTS / "figures/sampling_inst_vs_distribution.png")[2] in (3, 4)


def test_a_2011_run_says_the_inst_sampling_analysis_does_not_apply(tiny_run):
    na = pl.read_csv(tiny_run / "results/synthetic-tiny/not_applicable/inst_sampling.csv")
    assert "does not record the distribution of an entity's 1-s CPU samples" in na.row(0, named=True)["reason"]


def test_a_cells_download_is_planned_shard_by_shard(tmp_path):
    write_config(tmp_path, trace={"source": "google2019", "google2019": {"cell": "b", "shards": {"instance_usage": [3, 7]}}})
    out = snakemake(tmp_path, "-n").stdout
    for name in ("instance_usage/instance_usage-000000000003.json.gz", "instance_usage/instance_usage-000000000007.json.gz",
                 "instance_events/instance_events-000000000000.json.gz", "machine_events/machine_events-000000000000.json.gz"):
        assert f"resources/trace/google2019-b/{name}" in out
    for rule in ("download_google2019", "map_instance_usage", "inst_sampling", "summary"):
        assert f"rule {rule}:" in out or f"localrule {rule}:" in out, rule
    assert not (tmp_path / "resources").exists()


def served_cell(run2019, root):
    """The synthetic 2019 trace as cell a's bucket: its objects flat under clusterdata_2019_a/."""
    bucket = root / "clusterdata_2019_a"
    bucket.mkdir(parents=True)
    for f in trace_root(run2019).glob("*/*.json.gz"):
        shutil.copy(f, bucket / f.name)
    return bucket


def test_a_cell_is_listed_downloaded_verified_resumed_and_mapped(run2019, tmp_path):
    bucket_dir = served_cell(run2019, tmp_path / "gcs")
    work = tmp_path / "w"
    work.mkdir()
    target = "clusterdata_2019_a/instance_usage-000000000001.json.gz"
    with serve(tmp_path / "gcs") as bucket:
        bucket.goog_hash = ("crc32c", "md5")
        bucket.misbehave[target] = Misbehaviour(drop_at=100_000)
        write_config(work, trace={"source": "google2019", "retries": 3, "backoff": 0.01, "google2019": {
            "url": bucket.url, "shards": dict.fromkeys(g.TRACE_TABLES, "all")}})
        snakemake(work, "results/google2019-a-tiny/tasks/task_stats.parquet")
        assert bucket.ranges(target)[0] is None and bucket.ranges(target)[1] == "bytes=100000-"  # resumed
    root = work / "resources/trace/google2019-a"
    got = sorted(p.name for p in root.glob("*/*.json.gz"))
    # every object the listing gives of the tables the per-task statistics read
    assert got == sorted(p.name for p in bucket_dir.iterdir() if p.name.startswith("instance_"))
    assert all((root / n.rsplit("-", 1)[0] / n).read_bytes() == (bucket_dir / n).read_bytes() for n in got)
    assert not list(root.rglob("*.part"))
    listed = (root / "listing/instance_usage.json").read_text()
    assert '"crc32c"' in listed and "instance_usage-000000000002.json.gz" in listed
    ours = pl.read_parquet(work / "results/google2019-a-tiny/tasks/task_stats.parquet")
    assert ours.equals(pl.read_parquet(run2019 / RESULTS / "tasks/task_stats.parquet"))  # the same trace, the same bytes


def test_a_corrupt_object_is_refused_by_name_and_nothing_is_left(run2019, tmp_path):
    served_cell(run2019, tmp_path / "gcs")
    work = tmp_path / "w"
    work.mkdir()
    with serve(tmp_path / "gcs") as bucket:
        bucket.goog_hash = ("crc32c", "md5")
        bucket.misbehave["clusterdata_2019_a/machine_events-000000000000.json.gz"] = Misbehaviour(corrupt=-1)
        write_config(work, trace={"source": "google2019", "retries": 2, "backoff": 0.01, "google2019": {"url": bucket.url}})
        res = snakemake(work, "resources/trace/google2019-a/machine_events/machine_events-000000000000.json.gz", check=False)
    assert res.returncode != 0
    log = (work / "resources/trace/google2019-a/logs/download/machine_events/machine_events-000000000000.log").read_text()
    assert "machine_events-000000000000.json.gz" in log and "crc32c expected" in log
    assert not list((work / "resources/trace/google2019-a").rglob("*.json.gz*"))


def test_a_part_of_the_shards_leaves_holes_in_every_series_and_the_rows_say_how_much(run2019, tmp_path):
    """One instance_usage shard of the synthetic cell's: it holds rows from across the span, so the series have holes,
    and every row depending on the usage read says so with the measured share."""
    root = trace_root(run2019)
    n = len(list((root / "instance_usage").glob("*.json.gz")))
    assert n >= 3
    write_config(tmp_path, trace={"source": "local", "path": str(root), "google2019": {"shards": {"instance_usage": [0]}}})
    snakemake(tmp_path, "--until", "summary")
    (run,) = (tmp_path / "results").iterdir()
    part = pl.read_csv(run / "tables/series_coverage.csv").row(0, named=True)
    whole = pl.read_csv(run2019 / RESULTS / "tables/series_coverage.csv").row(0, named=True)
    assert whole["share_pooled"] == 1.0 and whole["complete"] == 1.0
    # the synthetic shards are dealt blocks of time, and a quarter of the rows one by one (scatter): a long series
    # keeps most windows of its shard's blocks, more than 1/n of its windows (the long ones are those that kept most),
    # and the loose rows leave holes in nearly every one (shard 0 of 3: 39.1% of the windows, none whole)
    assert part["tasks"] > 0 and 1 / n < part["share_pooled"] < 0.8 and part["complete"] < 0.8
    rows = pl.read_csv(run / "summary.csv").filter(pl.col("note").str.contains("the series have holes"))
    assert rows.height > 20
    assert rows["note"].str.contains(f"series hold {part['share_pooled']:.1%} of their windows").all()
    assert f"series hold {part['share_pooled']:.1%} of the five-minute windows" in (run / "summary.md").read_text()
