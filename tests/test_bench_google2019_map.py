"""bench/google2019_map.py at a tiny size: the shard it builds tiles the model's lines over fresh collection ids and
later windows, and reads back through the 2019 reader; the bench prints the reference, ours, the ratio and the peak."""

from __future__ import annotations

import subprocess
import sys

import pytest
from colocate.sources import google2019 as g
from wfutil import REPO

sys.path.insert(0, str(REPO / "bench"))
import google2019_map  # noqa: E402

pytestmark = pytest.mark.slow  # builds the benchmark's shards and runs the benchmark


def test_the_shard_tiles_the_models_lines_over_fresh_ids_and_later_windows(tmp_path):
    shard = tmp_path / "instance_usage-000000000000.json.gz"
    google2019_map.build_shard(shard, tiles=3, rows=200)
    gz, json_bytes, lines = google2019_map.shard_size(shard)
    usage = g.read_instance_usage(shard)
    assert lines == usage.height == 600 and gz == shard.stat().st_size and json_bytes > 600 * 500
    tiles = [usage.slice(200 * k, 200) for k in range(3)]
    step = 2 * google2019_map.DAY_US  # the tiny model's span: two days
    for k, tile in enumerate(tiles[1:], start=1):
        assert (tile["start_time"] - tiles[0]["start_time"]).unique().to_list() == [k * step]
        assert tile.drop("start_time", "end_time", "collection_id").equals(tiles[0].drop("start_time", "end_time", "collection_id"))
    ids = [set(t["collection_id"]) for t in tiles]
    assert not (ids[0] & ids[1] or ids[1] & ids[2] or ids[0] & ids[2])
    assert usage["cpu_usage_distribution"].list.len().drop_nulls().unique().to_list() == [11]  # the model's, as written
    assert 0 < g.window_moments(usage).height == usage["cpu_usage_distribution"].is_not_null().sum()


def test_the_bench_prints_both_walls_the_ratio_and_the_peak(tmp_path):
    res = subprocess.run([sys.executable, str(REPO / "bench" / "google2019_map.py"), "--tiles", "2", "--rows", "300",
                          "--repeat", "1", "--threads", "1", "--buckets", "4", "--keep", tmp_path / "iu.json.gz"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "600 rows" in out and "POLARS_MAX_THREADS=1" in out and "POLARS_MAX_THREADS=2" not in out
    for needle in ("gzip -dc", "map (rule)", "read alone", "ratio ours/gzip", "(target ≤ 1.5:", "peak RSS (map)",
                   "(target ≤ 1536 MB:"):
        assert needle in out, needle
