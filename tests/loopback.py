"""A loopback HTTP server for the download tests: serves a directory, and misbehaves on request (drops,
stalls, corrupt bytes, ignored ranges, HTTP errors, wrong or missing x-goog-hash, an object replaced
mid-download), recording every request and its Range header.

With ``Bucket.goog_hash`` set it sends, as Google Cloud Storage does, the whole object's hashes in
``x-goog-hash`` on every 200 and 206 response, computed here independently of the client: CRC32C by the
pure-Python table of :func:`crc32c`, MD5 by hashlib."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1  # Castagnoli polynomial, reflected
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of ``data``, byte-wise by table: pure Python, a reference for the client's C library."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def goog_hashes(data: bytes) -> dict[str, str]:
    """``{"crc32c": ..., "md5": ...}`` of ``data`` as GCS writes them: base64 of the big-endian CRC32C and the MD5."""
    return {
        "crc32c": base64.b64encode(crc32c(data).to_bytes(4, "big")).decode(),
        "md5": base64.b64encode(hashlib.md5(data).digest()).decode(),
    }


@dataclass
class Misbehaviour:
    """What the server does wrong for one path; counts refer to the n-th request of that path."""

    drop_at: int | list[int] | None = None  # absolute byte offset at which to close the connection
    drops: int = 1  # ... on this many first requests (a list gives one offset per request)
    stall: float = 0.0  # instead of closing, stall this long (client times out)
    corrupt: int = 0  # serve wrong bytes on this many first requests (-1: always)
    ignore_range: bool = False  # always answer 200 with the full body
    status: int | None = None  # answer this HTTP error ...
    status_times: int = -1  # ... on this many first requests (-1: always)
    retry_after: str | None = None
    # x-goog-hash value sent instead of the true one: a str on every request, a list one per request (the true one
    # beyond it); "" sends no x-goog-hash
    goog_hash: str | list[str] | None = None
    replace: bytes | None = None  # the object's bytes become these once the first request has read it


@dataclass
class Bucket:
    root: Path
    url: str = ""
    misbehave: dict[str, Misbehaviour] = field(default_factory=dict)
    goog_hash: tuple[str, ...] = ()  # hashes sent in x-goog-hash ("crc32c", "md5"); () sends none (as the 2011 bucket)
    goog_hash_lines: bool = False  # one x-goog-hash line per hash instead of one comma-separated line
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    def data(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def sha(self, rel: str) -> str:
        return hashlib.sha256(self.data(rel)).hexdigest()

    def goog_hash_lines_for(self, data: bytes, mb: Misbehaviour, n: int) -> list[str]:
        """The x-goog-hash header lines for the ``n``-th request of an object of bytes ``data``."""
        override = mb.goog_hash[n] if isinstance(mb.goog_hash, list) and n < len(mb.goog_hash) else mb.goog_hash
        if isinstance(override, str):
            return [override] if override else []
        pairs = [f"{name}={value}" for name, value in goog_hashes(data).items() if name in self.goog_hash]
        if self.goog_hash_lines or not pairs:
            return pairs
        return [",".join(pairs)]

    def ranges(self, rel: str) -> list[str | None]:
        with self.lock:
            return [r for p, r in self.requests if p == rel]

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.misbehave.clear()


class Handler(BaseHTTPRequestHandler):
    timeout = 5  # bound every server-side socket operation

    def log_message(self, format, *args):  # keep pytest output clean
        pass

    def do_GET(self):
        bucket: Bucket = self.server.bucket  # type: ignore[attr-defined]
        rel = unquote(self.path.split("?", 1)[0].lstrip("/"))
        rng = self.headers.get("Range")
        with bucket.lock:
            n = sum(1 for p, _ in bucket.requests if p == rel)
            bucket.requests.append((rel, rng))
            mb = bucket.misbehave.get(rel, Misbehaviour())
        if mb.status is not None and (mb.status_times < 0 or n < mb.status_times):
            self.send_response(mb.status)
            if mb.retry_after is not None:
                self.send_header("Retry-After", mb.retry_after)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if rel.startswith("storage/v1/b/"):  # GCS's JSON API: an object listing, two objects a page
            self.send_listing(bucket, rel)
            return
        path = bucket.root / rel
        if not path.is_file():
            self.send_error(404)
            return
        data = bytearray(path.read_bytes())
        goog_hash = bucket.goog_hash_lines_for(bytes(data), mb, n)  # the object's, not what is sent
        if mb.replace is not None and n == 0:
            path.write_bytes(mb.replace)  # before this response ends, so the next request sees it
        if mb.corrupt < 0 or n < mb.corrupt:
            data[len(data) // 2] ^= 0xFF
        start, status = 0, 200
        if rng and not mb.ignore_range:
            assert rng.startswith("bytes=") and rng.endswith("-"), rng
            start = int(rng[len("bytes=") : -1])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        body = bytes(data[start:])
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        for line in goog_hash:
            self.send_header("x-goog-hash", line)
        self.end_headers()
        if isinstance(mb.drop_at, list):
            drop_at = mb.drop_at[n] if n < len(mb.drop_at) else None
        else:
            drop_at = mb.drop_at if n < mb.drops else None
        if drop_at is not None:
            self.wfile.write(body[: max(0, drop_at - start)])
            self.wfile.flush()
            if mb.stall:
                bucket.stop.wait(mb.stall)
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body)


    def send_listing(self, bucket: "Bucket", rel: str) -> None:
        import json
        from urllib.parse import parse_qs

        name = rel.split("/")[3]  # storage/v1/b/<bucket>/o
        query = {k: v[0] for k, v in parse_qs(self.path.split("?", 1)[1] if "?" in self.path else "").items()}
        names = sorted(p.name for p in (bucket.root / name).glob(f"{query.get('prefix', '')}*") if p.is_file())
        at = int(query.get("pageToken", 0))
        page = {"items": [{"name": n, "size": str((bucket.root / name / n).stat().st_size),
                           **{("md5Hash" if k == "md5" else k): v for k, v in goog_hashes((bucket.root / name / n).read_bytes()).items()}}
                          for n in names[at : at + 2]]}
        if at + 2 < len(names):
            page["nextPageToken"] = str(at + 2)
        body = json.dumps(page).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def serve(root: Path):
    bucket = Bucket(root)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.bucket = bucket  # type: ignore[attr-defined]
    bucket.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield bucket
    finally:
        bucket.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
        assert not thread.is_alive(), "loopback server did not stop"
