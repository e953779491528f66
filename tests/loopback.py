"""A loopback HTTP server for the download tests: serves a directory, and misbehaves on request (drops,
stalls, corrupt bytes, ignored ranges, HTTP errors), recording every request and its Range header."""

from __future__ import annotations

import contextlib
import hashlib
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote


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


@dataclass
class Bucket:
    root: Path
    url: str = ""
    misbehave: dict[str, Misbehaviour] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)

    def data(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def sha(self, rel: str) -> str:
        return hashlib.sha256(self.data(rel)).hexdigest()

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
        path = bucket.root / rel
        if not path.is_file():
            self.send_error(404)
            return
        data = bytearray(path.read_bytes())
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
