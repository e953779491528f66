"""colocate.trace.lock (trust on first download) against a loopback HTTP server (fully offline)."""

from __future__ import annotations

import gzip
import hashlib
import multiprocessing
import random
import tempfile
import threading
import zlib
from pathlib import Path

import pytest
from loopback import Bucket, Misbehaviour, serve
from hypothesis import given, settings
from hypothesis import strategies as st

from colocate.trace import TraceFormatError
from colocate.trace.lock import LockMismatch, _write_lock, fetch_locked, read_lock, record

REL = "vm_cpu_readings-file-1-of-3.csv.gz"
HEADER_LINE = "relpath\tsha256\tsize\n"


def readings(seed: int, rows: int = 3000) -> bytes:
    """A gzip-compressed, headerless CRLF readings file (timestamp, vmid, min, max, avg), like Azure's."""
    rnd = random.Random(seed)
    lines = []
    for i in range(rows):
        lo = rnd.uniform(0, 50)
        hi = lo + rnd.uniform(0, 50)
        lines.append(f"{300 * (i // 10)},{rnd.randbytes(16).hex()},{lo:.6f},{hi:.6f},{(lo + hi) / 2:.6f}\r\n")
    return gzip.compress("".join(lines).encode(), mtime=0)


def verify_readings(path: Path) -> None:
    """What the real caller passes: decompress the whole gzip, then check every row has five fields."""
    try:
        text = gzip.decompress(path.read_bytes()).decode()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise TraceFormatError(path, f"truncated or corrupt gzip ({exc})") from exc
    for lineno, line in enumerate(text.split("\r\n")[:-1], start=1):
        if len(line.split(",")) != 5:
            raise TraceFormatError(path, f"expected 5 fields, found {len(line.split(','))}", lineno)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ----------------------------------------------------------------------------- loopback server


@pytest.fixture
def server(tmp_path):
    """The shared loopback server of the download tests, serving one readings file (tests/loopback.py)."""
    root = tmp_path / "served"
    root.mkdir()
    (root / REL).write_bytes(readings(1))
    with serve(root) as bucket:
        yield bucket


def served(bucket: Bucket, rel: str = REL) -> bytes:
    return (bucket.root / rel).read_bytes()


def serve_bytes(bucket: Bucket, data: bytes, rel: str = REL) -> bytes:
    (bucket.root / rel).write_bytes(data)
    return data


@pytest.fixture
def sleeps():
    return []


def fetch(server: Bucket, tmp_path: Path, sleeps: list, rel: str = REL, verify=verify_readings, **kw) -> str:
    kw = {"retries": 2, "backoff": 0.5, "timeout": 5, **kw}
    return fetch_locked(
        f"{server.url}/{rel}", tmp_path / "raw" / rel, tmp_path / "azure.lock", rel, verify, sleep=sleeps.append, **kw
    )


def assert_no_leftovers(dest: Path) -> None:
    assert not dest.exists()
    assert not dest.with_name(dest.name + ".part").exists()


# ----------------------------------------------------------------------------- fetch_locked


def test_first_download_records_sha_and_size(server, tmp_path, sleeps):
    data = served(server)
    seen: list[tuple[int, int | None]] = []
    assert fetch(server, tmp_path, sleeps, progress=lambda d, t: seen.append((d, t))) == "recorded"
    dest = tmp_path / "raw" / REL
    assert dest.read_bytes() == data
    assert not dest.with_name(dest.name + ".part").exists()
    lock = tmp_path / "azure.lock"
    assert lock.read_text() == f"{HEADER_LINE}{REL}\t{sha(data)}\t{len(data)}\n"
    assert read_lock(lock) == {REL: (sha(data), len(data))}
    assert seen[-1] == (len(data), len(data))
    assert server.ranges(REL) == [None] and sleeps == []


def test_second_fetch_matches_and_leaves_lock_unchanged(server, tmp_path, sleeps):
    assert fetch(server, tmp_path, sleeps) == "recorded"
    lock = tmp_path / "azure.lock"
    before = lock.read_bytes()
    dest = tmp_path / "raw" / REL
    dest.unlink()
    verified: list[Path] = []
    assert fetch(server, tmp_path, sleeps, verify=verified.append) == "matched"
    assert dest.read_bytes() == served(server)
    assert lock.read_bytes() == before
    assert verified == []  # the lock, not verify, vouches for a recorded file
    assert server.ranges(REL) == [None, None]
    # dest present and matching: nothing is fetched
    assert fetch(server, tmp_path, sleeps) == "matched"
    assert server.ranges(REL) == [None, None]
    assert lock.read_bytes() == before


@pytest.mark.parametrize("keep_old", [False, True], ids=["dest deleted", "dest tampered"])
def test_changed_server_file_raises_lock_mismatch(server, tmp_path, sleeps, keep_old):
    old = served(server)
    assert fetch(server, tmp_path, sleeps) == "recorded"
    lock = tmp_path / "azure.lock"
    before = lock.read_bytes()
    dest = tmp_path / "raw" / REL
    if keep_old:
        dest.write_bytes(old[:-1] + b"x")  # a local copy that no longer matches is fetched again
    else:
        dest.unlink()
    new = serve_bytes(server, readings(2))
    with pytest.raises(LockMismatch) as info:
        fetch(server, tmp_path, sleeps)
    message = str(info.value)
    for part in (str(lock), REL, sha(old), sha(new), f"size {len(old)}", f"size {len(new)}", "changed", "delet"):
        assert part in message, part
    assert info.value.recorded == (sha(old), len(old))
    assert info.value.actual == (sha(new), len(new))
    assert isinstance(info.value, ValueError)
    assert_no_leftovers(dest)
    assert lock.read_bytes() == before
    # accepting the new version: delete its line, fetch again
    lock.write_text(HEADER_LINE)
    assert fetch(server, tmp_path, sleeps) == "recorded"
    assert read_lock(lock) == {REL: (sha(new), len(new))}


def test_dropped_connection_is_resumed_and_recorded(server, tmp_path, sleeps):
    data = served(server)
    half = len(data) // 2
    server.misbehave[REL] = Misbehaviour(drop_at=half)
    assert fetch(server, tmp_path, sleeps) == "recorded"
    dest = tmp_path / "raw" / REL
    assert dest.read_bytes() == data
    assert server.ranges(REL) == [None, f"bytes={half}-"]
    assert sleeps == [0.5]
    assert read_lock(tmp_path / "azure.lock") == {REL: (sha(data), len(data))}
    assert not dest.with_name(dest.name + ".part").exists()


def _flip_middle(data: bytes) -> bytes:
    b = bytearray(data)
    b[len(b) // 2] ^= 0xFF
    return bytes(b)


@pytest.mark.parametrize(
    ("mangle", "match"),
    [
        (lambda d: d[: len(d) // 2], r"truncated or corrupt gzip"),
        (_flip_middle, r"truncated or corrupt gzip"),
        (lambda d: gzip.compress(b"0,vm,1.0,2.0,1.5\r\n300,vm,1.0\r\n", mtime=0), r":2: expected 5 fields, found 3"),
    ],
    ids=["truncated gzip", "corrupt gzip", "short row"],
)
def test_verify_failure_propagates_and_records_nothing(server, tmp_path, sleeps, mangle, match):
    serve_bytes(server, mangle(served(server)))
    dest = tmp_path / "raw" / REL
    with pytest.raises(TraceFormatError, match=match) as info:
        fetch(server, tmp_path, sleeps)
    assert REL in str(info.value)
    assert_no_leftovers(dest)
    assert read_lock(tmp_path / "azure.lock") == {}


def test_edited_lock_size_is_a_mismatch(server, tmp_path, sleeps):
    data = served(server)
    lock = tmp_path / "azure.lock"
    lock.write_text(f"{HEADER_LINE}{REL}\t{sha(data)}\t{len(data) + 1}\n")
    with pytest.raises(LockMismatch, match=r"size .*lock file was edited"):
        fetch(server, tmp_path, sleeps)
    assert_no_leftovers(tmp_path / "raw" / REL)


# ----------------------------------------------------------------------------- record / read_lock


def test_record_is_idempotent_and_refuses_a_different_file(tmp_path):
    lock, f = tmp_path / "sub" / "azure.lock", tmp_path / "f"
    f.write_bytes(b"first")
    assert record(lock, "a/f.gz", f) == (sha(b"first"), 5)
    text = lock.read_text()
    assert record(lock, "a/f.gz", f) == (sha(b"first"), 5)
    assert lock.read_text() == text
    f.write_bytes(b"second!")
    with pytest.raises(LockMismatch) as info:
        record(lock, "a/f.gz", f)
    message = str(info.value)
    assert str(lock) in message and "a/f.gz" in message and "delet" in message
    assert sha(b"first") in message and sha(b"second!") in message and "size 5" in message and "size 7" in message
    assert lock.read_text() == text
    for bad in ("", " ", "a\tb", "a\nb", "a\rb"):
        with pytest.raises(ValueError, match="relpath"):
            record(lock, bad, f)


def _record_many(lock: str, prefix: str, n: int, scratch: str) -> None:
    """Record ``n`` files ``<prefix>-<i>`` in ``lock`` (top level: a spawned process runs it)."""
    for i in range(n):
        f = Path(scratch) / f"{prefix}-{i}"
        f.write_bytes(f"{prefix} {i}".encode())
        record(Path(lock), f"{prefix}-{i}", f)


def test_concurrent_records_keep_every_entry(tmp_path):
    lock = tmp_path / "azure.lock"
    n = 15
    ctx = multiprocessing.get_context("spawn")  # separate processes, as Snakemake jobs are
    procs = [ctx.Process(target=_record_many, args=(str(lock), f"p{k}", n, str(tmp_path))) for k in range(3)]
    threads = [threading.Thread(target=_record_many, args=(lock, f"t{k}", n, tmp_path)) for k in range(6)]
    for w in procs + threads:
        w.start()
    for w in procs + threads:
        w.join(timeout=60)
    assert [p.exitcode for p in procs] == [0] * len(procs)
    entries = read_lock(lock)
    expected = {f"{w}-{i}" for w in [f"p{k}" for k in range(3)] + [f"t{k}" for k in range(6)] for i in range(n)}
    assert set(entries) == expected
    assert all(entries[r] == (sha(r.replace("-", " ").encode()), len(r)) for r in entries)
    rels = [line.split("\t")[0] for line in lock.read_text().splitlines()[1:]]
    assert rels == sorted(rels)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".azure.lock")) == []  # no temp files


def test_read_lock_missing_and_empty(tmp_path):
    assert read_lock(tmp_path / "none.lock") == {}
    (tmp_path / "empty.lock").write_text("")
    assert read_lock(tmp_path / "empty.lock") == {}
    (tmp_path / "header.lock").write_text(HEADER_LINE + "\n")
    assert read_lock(tmp_path / "header.lock") == {}


GOOD = f"a.gz\t{'a' * 64}\t12"


@pytest.mark.parametrize(
    "bad",
    [
        "a.gz\tabc\t12",  # short digest
        f"a.gz\t{'g' * 64}\t12",  # not hex
        f"a.gz\t{'a' * 64}",  # two fields
        f"a.gz\t{'a' * 64}\t12\textra",  # four fields
        f"a.gz\t{'a' * 64}\t-1",  # negative size
        f"a.gz\t{'a' * 64}\t1.5",  # not an integer
        f"\t{'a' * 64}\t12",  # empty relpath
        f"a.gz  {'a' * 64}  12",  # spaces, not tabs
        f"a.gz\t{'b' * 64}\t12",  # a.gz again, with a different digest
    ],
)
def test_read_lock_malformed_line_names_lock_and_line(tmp_path, bad):
    lock = tmp_path / "azure.lock"
    lock.write_text(f"{HEADER_LINE}{GOOD}\n{bad}\n")
    with pytest.raises(ValueError, match=rf"{lock} line 3\b"):
        read_lock(lock)


def test_read_lock_requires_the_header(tmp_path):
    lock = tmp_path / "azure.lock"
    lock.write_text(f"{GOOD}\n")
    with pytest.raises(ValueError, match=rf"{lock} line 1: expected the header"):
        read_lock(lock)


RELPATHS = st.text(min_size=1, max_size=30).filter(lambda r: r.strip() and not set(r) & set("\t\n\r"))


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        RELPATHS,
        st.tuples(st.binary(min_size=32, max_size=32).map(bytes.hex), st.integers(0, 2**40)),
        max_size=8,
    )
)
def test_read_lock_round_trips_what_is_written(entries):
    with tempfile.TemporaryDirectory() as d:
        lock = Path(d) / "azure.lock"
        _write_lock(lock, entries)
        assert read_lock(lock) == entries
        rels = [line.split("\t")[0] for line in lock.read_text(encoding="utf-8").split("\n")[1:-1]]
        assert rels == sorted(entries)
