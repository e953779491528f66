"""colocate.trace.download against a loopback HTTP server that misbehaves on demand (fully offline)."""

from __future__ import annotations

import gzip
import hashlib
import logging
import random
import runpy
import socket
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from loopback import Bucket, Misbehaviour, serve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colocate.trace.download import (
    DownloadError,
    check_url,
    download,
    lookup_sha256,
    parse_sha256sum,
    progress_logger,
    select_shards,
    sha256_file,
    verify_file,
    verify_tree,
)

SCRIPT = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "trace_download.py"

SHARD = "task_usage/part-00001-of-00500.csv.gz"
FILES = {  # relative path -> size of the random payload before gzip
    "job_events/part-00000-of-00500.csv.gz": 3_000,
    "task_usage/part-00000-of-00500.csv.gz": 40_000,
    SHARD: 60_000,
    "machine_events/part-00000-of-00001.csv.gz": 1_000,
}


# ----------------------------------------------------------------------------- loopback bucket


def write_bucket(root: Path) -> None:
    rnd = random.Random(2011)
    lines = []
    for rel, size in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(rnd.randbytes(size), mtime=0))
        lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {rel}")
    (root / "SHA256SUM").write_text("\n".join(lines) + "\n")
    (root / "schema.csv").write_text("file pattern,field number,content,format,mandatory\n")


@pytest.fixture
def bucket(tmp_path):
    root = tmp_path / "bucket"
    write_bucket(root)
    with serve(root) as b:
        yield b


@pytest.fixture
def sleeps():
    return []


def fetch(bucket: Bucket, rel: str, dest: Path, sha: str | None, sleeps: list, **kw) -> None:
    kw = {"retries": 4, "backoff": 0.5, "timeout": 5, "chunk_size": 4096, **kw}
    download(f"{bucket.url}/{rel}", dest, sha, sleep=sleeps.append, **kw)


def assert_no_leftovers(dest: Path) -> None:
    assert not dest.exists()
    assert not dest.with_name(dest.name + ".part").exists()


# ----------------------------------------------------------------------------- parse_sha256sum

HASH_A = "a" * 64
HASH_B = "0123456789ABCDEF" * 4


def test_parse_sha256sum_good():
    text = (
        "\ufeff"
        f"{HASH_A}  job_events/part-00000-of-00500.csv.gz\r\n"
        "\n"
        "# a comment\n"
        f"{HASH_B} *task_usage/part-00001-of-00500.csv.gz\n"
        f"{HASH_A} ./schema.csv   \n"
        f"{HASH_A}  job_events/part-00000-of-00500.csv.gz\n"  # repeated, same digest: fine
    )
    assert parse_sha256sum(text) == {
        "job_events/part-00000-of-00500.csv.gz": HASH_A,
        "task_usage/part-00001-of-00500.csv.gz": HASH_B.lower(),
        "schema.csv": HASH_A,
    }
    assert parse_sha256sum("") == {}


@pytest.mark.parametrize(
    "bad",
    [
        "abc  task_usage/part-00000-of-00500.csv.gz",  # short hash
        "g" * 64 + "  x.csv.gz",  # not hex
        HASH_A,  # no path
        HASH_A + "  ",  # blank path
        HASH_A + "x  file",  # 65 characters
        HASH_A + "\tfile",  # tab separator
        "SHA256 (file) = " + HASH_A,  # BSD style
        HASH_A + "  /etc/passwd",  # absolute
        HASH_A + "  task_usage/../../x",  # escapes the root
    ],
)
def test_parse_sha256sum_malformed_names_line(bad):
    with pytest.raises(ValueError, match=r"line 2\b"):
        parse_sha256sum(f"{HASH_A}  ok.csv.gz\n{bad}\n")


def test_parse_sha256sum_conflicting_duplicate():
    with pytest.raises(ValueError, match=r"line 2: 'f' is listed twice"):
        parse_sha256sum(f"{HASH_A}  f\n{HASH_B}  f\n")


def test_lookup_sha256(tmp_path):
    manifest = tmp_path / "SHA256SUM"
    manifest.write_text(f"{HASH_A}  {SHARD}\n")
    assert lookup_sha256(manifest, SHARD) == HASH_A
    with pytest.raises(ValueError, match=r"task_usage/part-00007-of-00500\.csv\.gz.*SHA256SUM"):
        lookup_sha256(manifest, "task_usage/part-00007-of-00500.csv.gz")
    manifest.write_text("nonsense\n")
    with pytest.raises(ValueError, match=r"SHA256SUM: SHA256SUM line 1"):
        lookup_sha256(manifest, SHARD)


# ----------------------------------------------------------------------------- select_shards


def test_select_shards_all_k_list():
    assert select_shards("task_usage", "all", 500)[:2] == [
        "task_usage/part-00000-of-00500.csv.gz",
        "task_usage/part-00001-of-00500.csv.gz",
    ]
    assert len(select_shards("task_usage", "all", 500)) == 500
    assert select_shards("job_events", 3, 500) == [
        f"job_events/part-0000{i}-of-00500.csv.gz" for i in range(3)
    ]
    assert select_shards("task_events", 500, 500)[-1] == "task_events/part-00499-of-00500.csv.gz"
    assert select_shards("task_events", [499, 7, 0], 500) == [
        "task_events/part-00000-of-00500.csv.gz",
        "task_events/part-00007-of-00500.csv.gz",
        "task_events/part-00499-of-00500.csv.gz",
    ]
    assert select_shards("task_constraints", (2,), 10) == ["task_constraints/part-00002-of-00010.csv.gz"]


@pytest.mark.parametrize("table", ["machine_events", "machine_attributes"])
@pytest.mark.parametrize("selection", ["all", 1, 3, [0], [5, 9]])
def test_select_shards_single_file_tables(table, selection):
    assert select_shards(table, selection, 500) == [f"{table}/part-00000-of-00001.csv.gz"]


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (0, "count 0 must be between 1 and 500"),
        (-3, "count -3 must be between 1 and 500"),
        (501, "count 501 must be between 1 and 500"),
        ([1, 500], r"indices \[500\] out of range 0\.\.499"),
        ([-1, 2], r"indices \[-1\] out of range"),
        ([3, 4, 3], r"duplicate indices \[3\]"),
        ([], "empty list"),
        ("some", "must be 'all', a count or a list"),
        (2.5, "must be 'all', a count or a list"),
        (None, "must be 'all', a count or a list"),
        (True, "expected an integer"),
        ([1, "2"], "must be 'all', a count or a list"),
    ],
)
def test_select_shards_rejects(selection, message):
    with pytest.raises(ValueError, match=r"task_usage: shard selection.*" + message):
        select_shards("task_usage", selection, 500)


def test_select_shards_unknown_table():
    with pytest.raises(ValueError, match="unknown trace table 'task_use'"):
        select_shards("task_use", "all", 500)


# ----------------------------------------------------------------------------- download


def test_download_manifest_then_shard(bucket, tmp_path, sleeps):
    manifest = tmp_path / "out" / "SHA256SUM"
    fetch(bucket, "SHA256SUM", manifest, None, sleeps)
    sums = parse_sha256sum(manifest.read_text())
    assert set(sums) == set(FILES)
    seen: list[tuple[int, int | None]] = []
    dest = tmp_path / "out" / SHARD
    fetch(bucket, SHARD, dest, sums[SHARD].upper(), sleeps, progress=lambda d, t: seen.append((d, t)))
    assert dest.read_bytes() == bucket.data(SHARD)
    assert not dest.with_name(dest.name + ".part").exists()
    size = len(bucket.data(SHARD))
    assert seen[0] == (0, size) and seen[-1] == (size, size)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert bucket.ranges(SHARD) == [None] and sleeps == []


def test_drop_mid_file_resumes_with_range(bucket, tmp_path, sleeps):
    data = bucket.data(SHARD)
    half = len(data) // 2
    bucket.misbehave[SHARD] = Misbehaviour(drop_at=half)
    dest = tmp_path / SHARD
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps)
    assert dest.read_bytes() == data
    assert bucket.ranges(SHARD) == [None, f"bytes={half}-"]
    assert sleeps == [0.5]
    assert not dest.with_name(dest.name + ".part").exists()


def test_stalled_connection_times_out_and_resumes(bucket, tmp_path, sleeps):
    data = bucket.data(SHARD)
    bucket.misbehave[SHARD] = Misbehaviour(drop_at=1000, stall=3.0)
    dest = tmp_path / SHARD
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps, timeout=0.3)
    assert dest.read_bytes() == data
    assert bucket.ranges(SHARD) == [None, "bytes=1000-"]


def test_many_drops_with_progress_do_not_exhaust_retries(bucket, tmp_path, sleeps):
    """Each attempt extends the .part, so more drops than ``retries`` still finish."""
    data = bucket.data(SHARD)
    cuts = list(range(1000, len(data), len(data) // 6))
    bucket.misbehave[SHARD] = Misbehaviour(drop_at=cuts)
    dest = tmp_path / SHARD
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps, retries=2)
    assert dest.read_bytes() == data
    assert bucket.ranges(SHARD) == [None] + [f"bytes={c}-" for c in cuts]
    assert sleeps == [0.5] * len(cuts)  # progress resets the backoff


def test_drops_without_progress_exhaust_retries(bucket, tmp_path, sleeps):
    bucket.misbehave[SHARD] = Misbehaviour(drop_at=0, drops=99)
    dest = tmp_path / SHARD
    with pytest.raises(DownloadError, match=r"gave up after 3 .*connection closed after 0 of \d+ bytes"):
        fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps, retries=3)
    assert sleeps == [0.5, 1.0]


@pytest.mark.parametrize("why", ["corrupt server", "wrong manifest"])
def test_checksum_failure_raises_and_leaves_nothing(bucket, tmp_path, sleeps, why):
    if why == "corrupt server":
        bucket.misbehave[SHARD] = Misbehaviour(corrupt=-1)
    else:
        manifest = bucket.root / "SHA256SUM"
        bogus = hashlib.sha256(b"not the shard").hexdigest()
        manifest.write_text(manifest.read_text().replace(bucket.sha(SHARD), bogus))
    sums = parse_sha256sum(bucket.data("SHA256SUM").decode())
    expected = sums[SHARD]
    actual = hashlib.sha256(
        bucket.data(SHARD) if why == "wrong manifest" else corrupted(bucket.data(SHARD))
    ).hexdigest()
    dest = tmp_path / SHARD
    with pytest.raises(DownloadError) as info:
        fetch(bucket, SHARD, dest, expected, sleeps, retries=3)
    message = str(info.value)
    assert SHARD in message and expected in message and actual in message
    assert (info.value.expected, info.value.actual) == (expected, actual)
    assert_no_leftovers(dest)
    assert bucket.ranges(SHARD) == [None, None, None]  # every retry restarts from zero
    assert sleeps == [0.5, 1.0]


def corrupted(data: bytes) -> bytes:
    b = bytearray(data)
    b[len(b) // 2] ^= 0xFF
    return bytes(b)


def test_corruption_on_first_attempt_only_recovers(bucket, tmp_path, sleeps):
    bucket.misbehave[SHARD] = Misbehaviour(corrupt=1)
    dest = tmp_path / SHARD
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps)
    assert dest.read_bytes() == bucket.data(SHARD)
    assert bucket.ranges(SHARD) == [None, None] and sleeps == [0.5]


def test_server_ignoring_range_restarts_from_zero(bucket, tmp_path, sleeps):
    data = bucket.data(SHARD)
    bucket.misbehave[SHARD] = Misbehaviour(drop_at=len(data) // 3, ignore_range=True)
    dest = tmp_path / SHARD
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps)
    assert dest.read_bytes() == data
    assert bucket.ranges(SHARD) == [None, f"bytes={len(data) // 3}-"]  # asked, got 200


def test_404_is_final(bucket, tmp_path, sleeps):
    rel = "task_usage/part-00499-of-00500.csv.gz"
    dest = tmp_path / rel
    with pytest.raises(DownloadError, match=r"part-00499-of-00500\.csv\.gz: HTTP 404 .*not retried"):
        fetch(bucket, rel, dest, HASH_A, sleeps)
    assert bucket.ranges(rel) == [None] and sleeps == []
    assert_no_leftovers(dest)


def test_403_is_final(bucket, tmp_path, sleeps):
    bucket.misbehave[SHARD] = Misbehaviour(status=403)
    with pytest.raises(DownloadError, match="HTTP 403"):
        fetch(bucket, SHARD, tmp_path / SHARD, None, sleeps)
    assert len(bucket.ranges(SHARD)) == 1


def test_persistent_503_gives_up_with_backoff(bucket, tmp_path, sleeps):
    bucket.misbehave[SHARD] = Misbehaviour(status=503)
    dest = tmp_path / SHARD
    with pytest.raises(DownloadError, match=r"part-00001-of-00500\.csv\.gz: gave up after 4 .*HTTP 503"):
        fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps, backoff=1.0)
    assert len(bucket.ranges(SHARD)) == 4
    assert sleeps == [1.0, 2.0, 4.0]
    assert_no_leftovers(dest)


@pytest.mark.parametrize("status", [408, 429, 500, 503])
def test_transient_status_then_success(bucket, tmp_path, sleeps, status):
    bucket.misbehave[SHARD] = Misbehaviour(status=status, status_times=2, retry_after="7")
    dest = tmp_path / SHARD
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps)
    assert dest.read_bytes() == bucket.data(SHARD)
    assert sleeps == [7.0, 7.0]  # Retry-After wins over the shorter backoff


def test_connection_refused_gives_up(tmp_path, sleeps):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DownloadError, match=r"gave up after 2 .*last error: .*(Refused|refused)"):
        download(f"http://127.0.0.1:{port}/{SHARD}", tmp_path / SHARD, None,
                 retries=2, backoff=0, timeout=2, sleep=sleeps.append)


def test_leftover_part_from_earlier_run_is_resumed(bucket, tmp_path, sleeps):
    data = bucket.data(SHARD)
    dest = tmp_path / SHARD
    dest.parent.mkdir(parents=True)
    dest.with_name(dest.name + ".part").write_bytes(data[:12345])
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps)
    assert dest.read_bytes() == data
    assert bucket.ranges(SHARD) == ["bytes=12345-"] and sleeps == []


def test_corrupt_leftover_part_restarts_from_scratch(bucket, tmp_path, sleeps):
    data = bucket.data(SHARD)
    dest = tmp_path / SHARD
    dest.parent.mkdir(parents=True)
    dest.with_name(dest.name + ".part").write_bytes(b"\0" * 100)
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps)
    assert dest.read_bytes() == data
    assert bucket.ranges(SHARD) == ["bytes=100-", None]


def test_complete_leftover_part_gets_416_and_is_verified(bucket, tmp_path, sleeps):
    data = bucket.data(SHARD)
    dest = tmp_path / SHARD
    dest.parent.mkdir(parents=True)
    dest.with_name(dest.name + ".part").write_bytes(data)
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps)
    assert dest.read_bytes() == data
    assert bucket.ranges(SHARD) == [f"bytes={len(data)}-"] and sleeps == []


def test_verified_destination_is_not_fetched_again(bucket, tmp_path, sleeps):
    dest = tmp_path / SHARD
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps)
    fetch(bucket, SHARD, dest, bucket.sha(SHARD), sleeps)
    assert len(bucket.ranges(SHARD)) == 1


def test_bad_expected_digest_is_rejected_before_fetching(bucket, tmp_path, sleeps):
    with pytest.raises(ValueError, match="not 64 hex digits"):
        fetch(bucket, SHARD, tmp_path / SHARD, "abc", sleeps)
    assert bucket.ranges(SHARD) == []


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    cut=st.floats(0, 1),
    ignore_range=st.booleans(),
    chunk_size=st.sampled_from([1, 977, 4096, 1 << 20]),
)
def test_any_drop_point_yields_the_exact_bytes(bucket, tmp_path, cut, ignore_range, chunk_size):
    rel = "job_events/part-00000-of-00500.csv.gz"
    data = bucket.data(rel)
    drop_at = round(cut * len(data))
    bucket.reset()
    bucket.misbehave[rel] = Misbehaviour(drop_at=drop_at, ignore_range=ignore_range)
    dest = Path(tempfile.mkdtemp(dir=tmp_path)) / rel
    download(f"{bucket.url}/{rel}", dest, bucket.sha(rel), retries=3, backoff=0,
             timeout=5, chunk_size=chunk_size, sleep=lambda s: None)
    assert dest.read_bytes() == data
    assert not dest.with_name(dest.name + ".part").exists()
    ranges = bucket.ranges(rel)
    if 0 < drop_at < len(data):
        assert ranges == [None, f"bytes={drop_at}-"]


# ----------------------------------------------------------------------------- verification


def test_verify_file_and_tree(bucket, tmp_path):
    root = bucket.root
    sums = parse_sha256sum((root / "SHA256SUM").read_text())
    assert verify_file(root / SHARD, sums[SHARD])
    assert verify_file(root / SHARD, sums[SHARD].upper())
    assert not verify_file(root / SHARD, HASH_A)
    assert not verify_file(root / "missing.csv.gz", HASH_A)
    assert sha256_file(root / SHARD) == sums[SHARD]
    assert verify_tree(root, sums) == []
    # a partial local copy: one shard missing, one damaged
    (root / "job_events/part-00000-of-00500.csv.gz").unlink()
    (root / SHARD).write_bytes(corrupted(bucket.data(SHARD)))
    assert verify_tree(root, sums) == [SHARD]
    assert verify_tree(root, sums, present_only=False) == [
        "job_events/part-00000-of-00500.csv.gz",
        SHARD,
    ]


# ----------------------------------------------------------------------------- progress logging


def test_progress_logger_throttles(caplog):
    now = [0.0]
    report = progress_logger(SHARD, logging.getLogger("test.progress"), interval=5, clock=lambda: now[0])
    total = 90_200_000
    with caplog.at_level(logging.INFO, logger="test.progress"):
        for t, done in [(0, 0), (1, 10_000_000), (4.9, 30_000_000), (5.0, 45_100_000),
                        (6, 60_000_000), (7, total)]:
            now[0] = t
            report(done, total)
        report(1_500_000, None)
    assert [r.getMessage() for r in caplog.records] == [
        f"{SHARD}: 0.0/90.2 MB (0%)",
        f"{SHARD}: 45.1/90.2 MB (50%)",
        f"{SHARD}: 90.2/90.2 MB (100%)",
    ]
    now[0] = 100
    with caplog.at_level(logging.INFO, logger="test.progress"):
        report(1_500_000, None)
    assert caplog.records[-1].getMessage() == f"{SHARD}: 1.5 MB"


# ----------------------------------------------------------------------------- the Snakemake script


def run_script(bucket: Bucket, tmp_path: Path, relpath: str, manifest: Path | None) -> tuple[Path, Path]:
    out = tmp_path / "resources" / "trace" / relpath
    logfile = tmp_path / "logs" / f"{relpath}.log"
    logfile.parent.mkdir(parents=True, exist_ok=True)
    snakemake = SimpleNamespace(
        params=SimpleNamespace(url=bucket.url + "/", relpath=relpath, retries=3, backoff=0.0),
        input=SimpleNamespace(manifest=str(manifest)) if manifest else SimpleNamespace(),
        output=[str(out)],
        log=[str(logfile)],
    )
    runpy.run_path(str(SCRIPT), init_globals={"snakemake": snakemake}, run_name="__main__")
    return out, logfile


def test_script_downloads_manifest_then_verified_shard(bucket, tmp_path):
    manifest, _ = run_script(bucket, tmp_path, "SHA256SUM", None)
    assert manifest.read_bytes() == bucket.data("SHA256SUM")
    bucket.misbehave[SHARD] = Misbehaviour(drop_at=5000)
    out, logfile = run_script(bucket, tmp_path, SHARD, manifest)
    assert out.read_bytes() == bucket.data(SHARD)
    text = logfile.read_text()
    assert f"{SHARD}: 0.0/" in text and "(100%)" in text
    assert "retrying" in text and "SHA-256 verified" in text
    assert bucket.ranges(SHARD) == [None, "bytes=5000-"]


def test_script_missing_manifest_entry(bucket, tmp_path):
    manifest, _ = run_script(bucket, tmp_path, "SHA256SUM", None)
    rel = "task_usage/part-00042-of-00500.csv.gz"
    with pytest.raises(ValueError, match=rf"{rel} is not listed in the checksum manifest .*SHA256SUM"):
        run_script(bucket, tmp_path, rel, manifest)
    assert bucket.ranges(rel) == []
    assert "is not listed" in (tmp_path / "logs" / f"{rel}.log").read_text()


# ----------------------------------------------------------------------------- which URLs may be fetched


@pytest.mark.parametrize(
    "url",
    [
        "https://storage.googleapis.com/clusterdata-2011-2",
        "HTTPS://storage.googleapis.com/x/SHA256SUM",
        "http://127.0.0.1:8080/bucket",
        "http://127.5.6.7/",
        "http://localhost:9/x",
        "http://[::1]:8000/SHA256SUM",
    ],
)
def test_check_url_accepts_https_and_loopback_http(url):
    assert check_url(url) == url


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://storage.googleapis.com/clusterdata-2011-2", "plain http:// is allowed only to a loopback"),
        ("http://10.0.0.1/x", "plain http:// is allowed only to a loopback"),
        ("http://localhost.example.com/x", "plain http:// is allowed only to a loopback"),
        ("file:///data/clusterdata-2011-2", "the file:// scheme is not supported"),
        ("ftp://example.com/x", "the ftp:// scheme is not supported"),
        ("gs://clusterdata-2011-2", "the gs:// scheme is not supported"),
        ("storage.googleapis.com/clusterdata-2011-2", "it has no scheme"),
        ("https:///SHA256SUM", "it has no host"),
        ("http://[::1/x", "is not a valid URL"),
    ],
)
def test_check_url_rejects_naming_trace_url(url, why):
    with pytest.raises(ValueError) as e:
        check_url(url)
    assert str(e.value).startswith("trace.url: ") and why in str(e.value)
    assert repr(url) in str(e.value)


def test_download_refuses_a_file_url_before_fetching(tmp_path, sleeps):
    src = tmp_path / "SHA256SUM"
    src.write_text("0" * 64 + "  x\n")
    with pytest.raises(ValueError, match="trace.url: 'file://.*file:// scheme is not supported"):
        download(src.as_uri(), tmp_path / "out" / "SHA256SUM", None, sleep=sleeps.append)
    assert not (tmp_path / "out").exists() and sleeps == []


class _Redirect(BaseHTTPRequestHandler):
    """Redirects /away to the Location the test sets, /here to /home; /home answers b'home'."""

    location = ""

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        if self.path == "/home":
            self.send_response(200)
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"home")
            return
        self.send_response(302)
        self.send_header("Location", "/home" if self.path == "/here" else type(self).location)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def redirector():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Redirect)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("location", "why"),
    [("http://192.0.2.1/SHA256SUM", "plain http:// is allowed only to a loopback"), ("file:///etc/passwd", "file:// scheme")],
)
def test_download_refuses_a_redirect_off_https(redirector, tmp_path, sleeps, location, why):
    _Redirect.location = location
    with pytest.raises(ValueError, match=f"redirect from {redirector}/away: .*{why}"):
        download(f"{redirector}/away", tmp_path / "SHA256SUM", None, retries=1, sleep=sleeps.append)
    assert not list(tmp_path.iterdir())


def test_download_follows_a_redirect_it_accepts(redirector, tmp_path, sleeps):
    download(f"{redirector}/here", tmp_path / "f", hashlib.sha256(b"home").hexdigest(), sleep=sleeps.append)
    assert (tmp_path / "f").read_bytes() == b"home"


@pytest.mark.parametrize("url", ["file:///srv/clusterdata-2011-2", "http://storage.googleapis.com/clusterdata-2011-2"])
def test_script_refuses_the_manifest_over_an_unsafe_url(tmp_path, url):
    """The SHA256SUM that every shard is checked against is fetched over https only; the log says why."""
    logfile = tmp_path / "logs" / "SHA256SUM.log"
    logfile.parent.mkdir()
    out = tmp_path / "resources" / "SHA256SUM"
    snakemake = SimpleNamespace(
        params=SimpleNamespace(url=url, relpath="SHA256SUM", retries=1, backoff=0.0),
        input=SimpleNamespace(), output=[str(out)], log=[str(logfile)],
    )
    with pytest.raises(ValueError, match=r"^trace\.url: "):
        runpy.run_path(str(SCRIPT), init_globals={"snakemake": snakemake}, run_name="__main__")
    text = logfile.read_text()
    assert "Traceback" in text and "trace.url" in text and url in text
    assert not out.parent.exists()
