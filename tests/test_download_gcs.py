"""colocate.trace.download verified against the hashes Google Cloud Storage sends (x-goog-hash), against the
loopback server (fully offline). Expected CRC32Cs come from pure-Python references, not from google_crc32c."""

from __future__ import annotations

import base64
import gzip
import hashlib
import random
import runpy
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loopback import Bucket, Misbehaviour, crc32c, goog_hashes, serve

from colocate.trace.download import DownloadError, download, hashes_path, parse_goog_hash

SCRIPT = Path(__file__).resolve().parents[1] / "workflow" / "scripts" / "google2019_download.py"

OBJ = "clusterdata_2019_a/instance_usage-000000000000.json.gz"
SMALL = "clusterdata_2019_a/machine_events-000000000000.json.gz"
KNOWN = "clusterdata_2019_a/check.txt"  # b"123456789": the CRC-32C check value
#: CRC-32C of b"123456789" (the catalogued check value) as GCS writes it: base64 of its 4 big-endian bytes.
KNOWN_CRC32C = "4waSgw=="
KNOWN_MD5 = "JfnnlDI7RTiF9RgfG2JNCw=="  # base64 of md5(b"123456789") = 25f9e794323b453885f5181f1b624d0b


def crc32c_bitwise(data: bytes) -> int:
    """CRC-32C bit by bit, straight from the definition (reflected Castagnoli polynomial 0x82F63B78)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture
def bucket(tmp_path):
    root = tmp_path / "bucket"
    rnd = random.Random(2019)
    for rel, size in [(OBJ, 60_000), (SMALL, 3_000)]:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(gzip.compress(rnd.randbytes(size), mtime=0))
    (root / KNOWN).write_bytes(b"123456789")
    with serve(root) as b:
        b.goog_hash = ("crc32c", "md5")
        yield b


@pytest.fixture
def sleeps():
    return []


def fetch(bucket: Bucket, rel: str, dest: Path, sleeps: list, **kw) -> None:
    kw = {"retries": 4, "backoff": 0.5, "timeout": 5, "chunk_size": 4096, **kw}
    download(f"{bucket.url}/{rel}", dest, None, server_hashes=True, sleep=sleeps.append, **kw)


def recorded(dest: Path) -> str:
    return hashes_path(dest).read_text().strip()


def header(hashes: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in hashes.items())


def corrupted(data: bytes) -> bytes:  # as the loopback's Misbehaviour(corrupt=...) serves it
    b = bytearray(data)
    b[len(b) // 2] ^= 0xFF
    return bytes(b)


def assert_no_leftovers(dest: Path) -> None:
    assert not dest.exists()
    assert not dest.with_name(dest.name + ".part").exists()
    assert not hashes_path(dest).exists()


# ----------------------------------------------------------------------------- references


def test_crc32c_references_agree_with_the_check_value():
    assert crc32c_bitwise(b"123456789") == 0xE3069283
    assert base64.b64encode((0xE3069283).to_bytes(4, "big")).decode() == KNOWN_CRC32C
    rnd = random.Random(7)
    for data in [b"", b"a", b"123456789", bytes(32), b"\xff" * 32, rnd.randbytes(300)]:
        assert crc32c(data) == crc32c_bitwise(data)  # the loopback's table against the definition
    assert goog_hashes(b"123456789") == {"crc32c": KNOWN_CRC32C, "md5": KNOWN_MD5}


def test_known_object_records_the_check_value(bucket, tmp_path, sleeps):
    """google_crc32c, as the client uses it, gives the catalogued check value in GCS's form."""
    dest = tmp_path / KNOWN
    fetch(bucket, KNOWN, dest, sleeps)
    assert dest.read_bytes() == b"123456789"
    assert recorded(dest) == f"crc32c={KNOWN_CRC32C},md5={KNOWN_MD5}"


# ----------------------------------------------------------------------------- parse_goog_hash


def test_parse_goog_hash_forms():
    both = {"crc32c": KNOWN_CRC32C, "md5": KNOWN_MD5}
    assert parse_goog_hash([f"crc32c={KNOWN_CRC32C},md5={KNOWN_MD5}"]) == both
    assert parse_goog_hash([f"crc32c={KNOWN_CRC32C}", f"md5={KNOWN_MD5}"]) == both  # two header lines
    assert parse_goog_hash([f" md5={KNOWN_MD5} , CRC32C={KNOWN_CRC32C} ,"]) == both
    assert parse_goog_hash([f"crc32c={KNOWN_CRC32C}"]) == {"crc32c": KNOWN_CRC32C}  # a composite object
    assert parse_goog_hash([f"crc32c={KNOWN_CRC32C},sha512=xyz"]) == {"crc32c": KNOWN_CRC32C}


@pytest.mark.parametrize(
    ("values", "why"),
    [
        ([], "the server sent no x-goog-hash"),
        ([f"md5={KNOWN_MD5}"], "without crc32c"),
        (["crc32c=AAAAAAAA"], "malformed x-goog-hash: crc32c='AAAAAAAA'"),  # 6 bytes
        (["crc32c=4waSg"], "malformed"),  # not base64
        ([f"crc32c={KNOWN_CRC32C}", "crc32c=AAAAAA=="], "crc32c twice with different values"),
    ],
)
def test_parse_goog_hash_rejects(values, why):
    with pytest.raises(ValueError, match=why):
        parse_goog_hash(values)


# ----------------------------------------------------------------------------- download


@pytest.mark.parametrize(
    ("sent", "lines"), [(("crc32c", "md5"), False), (("crc32c", "md5"), True), (("crc32c",), False)]
)
def test_download_verifies_the_servers_hashes(bucket, tmp_path, sleeps, caplog, sent, lines):
    bucket.goog_hash, bucket.goog_hash_lines = sent, lines
    data = bucket.data(OBJ)
    dest = tmp_path / OBJ
    with caplog.at_level("INFO", logger="colocate.trace.download"):
        fetch(bucket, OBJ, dest, sleeps)
    assert dest.read_bytes() == data
    want = {k: v for k, v in goog_hashes(data).items() if k in sent}
    assert recorded(dest) == header(want)
    assert bucket.ranges(OBJ) == [None] and sleeps == []
    assert not dest.with_name(dest.name + ".part").exists()
    assert f"complete, {' and '.join(sent)} verified" in caplog.text


def test_drop_resumes_with_range_and_verifies(bucket, tmp_path, sleeps):
    data = bucket.data(OBJ)
    half = len(data) // 2
    bucket.misbehave[OBJ] = Misbehaviour(drop_at=half)
    dest = tmp_path / OBJ
    fetch(bucket, OBJ, dest, sleeps)
    assert dest.read_bytes() == data
    assert bucket.ranges(OBJ) == [None, f"bytes={half}-"]  # the 206 carried the whole object's hashes
    assert recorded(dest) == header(goog_hashes(data))
    assert sleeps == [0.5]


@pytest.mark.parametrize("why", ["corrupt bytes", "wrong crc32c"])
def test_mismatch_is_refused_by_name_leaving_nothing(bucket, tmp_path, sleeps, why):
    data = bucket.data(OBJ)
    true = goog_hashes(data)
    if why == "corrupt bytes":
        bucket.misbehave[OBJ] = Misbehaviour(corrupt=-1)
        expected, actual = true, goog_hashes(corrupted(data))
    else:
        wrong = {"crc32c": base64.b64encode(crc32c_bitwise(b"other").to_bytes(4, "big")).decode(), "md5": true["md5"]}
        bucket.misbehave[OBJ] = Misbehaviour(goog_hash=header(wrong))
        expected, actual = {"crc32c": wrong["crc32c"]}, {"crc32c": true["crc32c"]}
    dest = tmp_path / OBJ
    with pytest.raises(DownloadError) as info:
        fetch(bucket, OBJ, dest, sleeps, retries=3)
    message = str(info.value)
    assert f"{bucket.url}/{OBJ}" in message and "crc32c" in message
    for name in expected:
        assert f"{name} expected {expected[name]}, got {actual[name]}" in message
    assert ("md5" in message) == (why == "corrupt bytes")  # only the hashes that differ are named
    assert (info.value.expected, info.value.actual) == (header(expected), header(actual))
    assert_no_leftovers(dest)
    assert bucket.ranges(OBJ) == [None, None, None]  # each retry restarts from zero
    assert sleeps == [0.5, 1.0]


def test_corruption_once_recovers(bucket, tmp_path, sleeps):
    bucket.misbehave[OBJ] = Misbehaviour(corrupt=1)
    dest = tmp_path / OBJ
    fetch(bucket, OBJ, dest, sleeps)
    assert dest.read_bytes() == bucket.data(OBJ)
    assert bucket.ranges(OBJ) == [None, None] and sleeps == [0.5]


@pytest.mark.parametrize(
    ("goog_hash", "drop", "why"),
    [
        ("", False, "the server sent no x-goog-hash"),  # none on the 200
        (["crc32c_ok", ""], True, "the server sent no x-goog-hash"),  # the 200 had it, the resuming 206 not
        (f"md5={KNOWN_MD5}", False, "x-goog-hash without crc32c"),
    ],
)
def test_response_without_the_servers_hashes_is_refused(bucket, tmp_path, sleeps, goog_hash, drop, why):
    data = bucket.data(OBJ)
    if isinstance(goog_hash, list):
        goog_hash = [header(goog_hashes(data)) if g == "crc32c_ok" else g for g in goog_hash]
    bucket.misbehave[OBJ] = Misbehaviour(goog_hash=goog_hash, drop_at=len(data) // 2 if drop else None)
    dest = tmp_path / OBJ
    with pytest.raises(DownloadError, match=why) as info:
        fetch(bucket, OBJ, dest, sleeps)
    assert f"{bucket.url}/{OBJ}" in str(info.value) and "not retried" in str(info.value)
    assert len(bucket.ranges(OBJ)) == (2 if drop else 1)
    assert_no_leftovers(dest)


def test_without_server_hashes_the_header_is_not_needed(bucket, tmp_path, sleeps):
    bucket.goog_hash = ()
    dest = tmp_path / OBJ
    download(f"{bucket.url}/{OBJ}", dest, None, sleep=sleeps.append)
    assert dest.read_bytes() == bucket.data(OBJ) and not hashes_path(dest).exists()


def test_object_replaced_mid_download_restarts_from_zero(bucket, tmp_path, sleeps, caplog):
    old = bucket.data(OBJ)
    new = gzip.compress(random.Random(1).randbytes(60_000), mtime=0)  # as large: the resume is served
    half = len(old) // 2
    bucket.misbehave[OBJ] = Misbehaviour(drop_at=half, replace=new)
    dest = tmp_path / OBJ
    fetch(bucket, OBJ, dest, sleeps)
    assert dest.read_bytes() == new
    # the 206 at `half` brings the new object's hashes: its kept prefix is the old object's, so it starts over
    assert bucket.ranges(OBJ) == [None, f"bytes={half}-", None]
    assert recorded(dest) == header(goog_hashes(new))
    assert "the object changed during the download" in caplog.text and "restarting from zero" in caplog.text


def test_whole_leftover_part_without_hashes_restarts(bucket, tmp_path, sleeps):
    """A .part of an earlier run that is already whole gets a 416, which carries no x-goog-hash: start over."""
    data = bucket.data(OBJ)
    dest = tmp_path / OBJ
    dest.parent.mkdir(parents=True)
    dest.with_name(dest.name + ".part").write_bytes(data)
    fetch(bucket, OBJ, dest, sleeps)
    assert dest.read_bytes() == data
    assert bucket.ranges(OBJ) == [f"bytes={len(data)}-", None]


def test_leftover_part_is_resumed_and_rehashed(bucket, tmp_path, sleeps):
    data = bucket.data(OBJ)
    dest = tmp_path / OBJ
    dest.parent.mkdir(parents=True)
    dest.with_name(dest.name + ".part").write_bytes(data[:12345])
    fetch(bucket, OBJ, dest, sleeps)
    assert dest.read_bytes() == data
    assert bucket.ranges(OBJ) == ["bytes=12345-"] and sleeps == []


def test_present_verified_file_is_not_fetched(bucket, tmp_path, sleeps):
    dest = tmp_path / OBJ
    fetch(bucket, OBJ, dest, sleeps)
    bucket.reset()
    fetch(bucket, OBJ, dest, sleeps)
    assert bucket.ranges(OBJ) == []


@pytest.mark.parametrize("change", ["altered bytes", "no record", "bad record"])
def test_present_file_is_fetched_again_unless_it_verifies(bucket, tmp_path, sleeps, change):
    data = bucket.data(OBJ)
    dest = tmp_path / OBJ
    fetch(bucket, OBJ, dest, sleeps)
    if change == "altered bytes":
        dest.write_bytes(corrupted(data))  # same size
    elif change == "no record":
        hashes_path(dest).unlink()
    else:
        hashes_path(dest).write_text("crc32c=nonsense\n")
    bucket.reset()
    fetch(bucket, OBJ, dest, sleeps)
    assert bucket.ranges(OBJ) == [None]
    assert dest.read_bytes() == data and recorded(dest) == header(goog_hashes(data))


def test_sha256_and_server_hashes_together(bucket, tmp_path, sleeps):
    data = bucket.data(OBJ)
    dest = tmp_path / OBJ
    sha = hashlib.sha256(data).hexdigest()
    fetch(bucket, OBJ, dest, sleeps)  # server hashes only, then both: the present file verifies
    bucket.reset()
    download(f"{bucket.url}/{OBJ}", dest, sha, server_hashes=True, sleep=sleeps.append)
    assert bucket.ranges(OBJ) == []
    other = tmp_path / "other" / OBJ
    with pytest.raises(DownloadError, match=r"SHA-256 expected 0{64}, got " + sha) as info:
        download(f"{bucket.url}/{OBJ}", other, "0" * 64, server_hashes=True, retries=2, sleep=sleeps.append)
    assert "crc32c" not in str(info.value)  # the server's hashes matched
    assert (info.value.expected, info.value.actual) == ("0" * 64, sha)
    assert_no_leftovers(other)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0, 1), ignore_range=st.booleans(), chunk_size=st.sampled_from([1, 977, 1 << 20]))
def test_any_drop_point_yields_the_verified_bytes(bucket, tmp_path, cut, ignore_range, chunk_size):
    data = bucket.data(SMALL)
    drop_at = round(cut * len(data))
    bucket.reset()
    bucket.misbehave[SMALL] = Misbehaviour(drop_at=drop_at, ignore_range=ignore_range)
    dest = Path(tempfile.mkdtemp(dir=tmp_path)) / SMALL
    download(f"{bucket.url}/{SMALL}", dest, None, server_hashes=True, retries=3, backoff=0, timeout=5,
             chunk_size=chunk_size, sleep=lambda s: None)
    assert dest.read_bytes() == data and recorded(dest) == header(goog_hashes(data))
    if 0 < drop_at < len(data):
        assert bucket.ranges(SMALL) == [None, f"bytes={drop_at}-"]


# ----------------------------------------------------------------------------- the Snakemake script


def run_script(url: str, out: Path, logfile: Path) -> None:
    logfile.parent.mkdir(parents=True, exist_ok=True)
    snakemake = SimpleNamespace(
        params=SimpleNamespace(url=url, retries=3, backoff=0.0),
        input=SimpleNamespace(), output=[str(out)], log=[str(logfile)],
    )
    runpy.run_path(str(SCRIPT), init_globals={"snakemake": snakemake}, run_name="__main__")


def test_script_downloads_a_verified_object(bucket, tmp_path):
    bucket.misbehave[OBJ] = Misbehaviour(drop_at=5000)
    out = tmp_path / "resources" / "google2019" / "instance_usage-000000000000.json.gz"
    logfile = tmp_path / "logs" / "download.log"
    run_script(f"{bucket.url}/{OBJ}", out, logfile)
    assert out.read_bytes() == bucket.data(OBJ)
    text = logfile.read_text()
    assert f"{OBJ}: 0.0/" in text and "(100%)" in text
    assert "retrying" in text and "crc32c and md5 verified" in text
    assert bucket.ranges(OBJ) == [None, "bytes=5000-"]


def test_script_refuses_an_object_without_hashes(bucket, tmp_path):
    bucket.goog_hash = ()
    out = tmp_path / "out.json.gz"
    logfile = tmp_path / "logs" / "download.log"
    with pytest.raises(DownloadError, match="the server sent no x-goog-hash"):
        run_script(f"{bucket.url}/{OBJ}", out, logfile)
    assert "Traceback" in logfile.read_text() and OBJ in logfile.read_text()
    assert_no_leftovers(out)


def test_a_cells_listing_is_kept_with_its_bucket_and_listed_again_for_another(bucket, tmp_path, monkeypatch):
    """shards: "all" lists the bucket once and keeps the listing; a changed trace.google2019.url lists again (a
    listing of one bucket never stands for another's)."""
    import json

    from colocate.sources import Setting, resolve
    from colocate.sources import google2019 as g

    monkeypatch.chdir(tmp_path)  # the copy and its listing live under resources/ of the working directory
    section = {"source": "google2019", "google2019": {"cell": "a", "url": bucket.url,
                                                      "shards": dict.fromkeys(g.TRACE_TABLES, "all")}}
    source = resolve(Setting(section, "tiny", tmp_path))
    assert source.stems("instance_usage") == ["instance_usage-000000000000"]
    path = source.listing_path("instance_usage")
    kept = json.loads(path.read_text())
    assert kept["bucket"] == f"{bucket.url}/clusterdata_2019_a" and kept["objects"][0]["crc32c"]
    other = {"bucket": "https://mirror.example/clusterdata_2019_a", "objects": [{"name": "instance_usage-000000000009.json.gz"}]}
    for stale in (other, other["objects"]):  # another bucket's listing, and a listing that names none
        path.write_text(json.dumps(stale))
        again = resolve(Setting(section, "tiny", tmp_path))
        assert again.total("instance_usage") is None  # not this bucket's: not known until listed
        assert again.stems("instance_usage") == ["instance_usage-000000000000"] and again.total("instance_usage") == 1
        assert json.loads(path.read_text()) == kept
