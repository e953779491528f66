"""Trust on first download: a lock file pinning the SHA-256 and size of each downloaded trace file.

Some public traces are published without checksums, so the bytes of a first download are checked by reading them
(the caller's ``verify``) and then pinned here: every later download must reproduce them exactly, or is refused
with :class:`LockMismatch`, instead of silently changing the results. To accept a new version of a file (after
checking why it changed), delete its line from the lock file and run again.

The check, the file's format and its locked, atomic rewrite: docs/methods.md#download-lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from colocate.trace.download import DownloadError, ProgressFn, download, sha256_file

__all__ = ["HEADER", "LockMismatch", "fetch_locked", "read_lock", "record"]

#: The lock file's header line (tab-separated).
HEADER = ("relpath", "sha256", "size")

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_SIZE = re.compile(r"[0-9]+")
# flock excludes other open file descriptions, also in this process; this lock covers file systems
# (some NFS setups) where flock is emulated with per-process POSIX locks.
_THREADS = threading.Lock()


class LockMismatch(ValueError):
    """A file whose SHA-256 or size differs from what the lock file recorded on its first download."""

    def __init__(
        self,
        lock: Path,
        relpath: str,
        recorded: tuple[str, int],
        actual: tuple[str | None, int | None],
        reason: str = "",
    ):
        self.lock = Path(lock)
        self.relpath = relpath
        self.recorded = recorded
        self.actual = actual
        sha, size = actual
        super().__init__(
            f"{relpath} does not match its entry in the lock file {lock}: recorded sha256 {recorded[0]} "
            f"size {recorded[1]}, actual sha256 {sha or 'unknown'} size "
            f"{size if size is not None else 'unknown'}"
            f"{f'; {reason}' if reason else ''}. If the new version is expected, accept it by deleting "
            f"the line of {relpath} from {lock} and running again (it is then verified and recorded anew)."
        )


# ----------------------------------------------------------------------------- lock file


def read_lock(lock: Path) -> dict[str, tuple[str, int]]:
    """``{relpath: (sha256, size)}`` recorded in ``lock`` ({} when it does not exist).

    Blank lines are skipped. A missing header, a line without three tab-separated fields, a digest that is not
    64 hex digits, a size that is not a non-negative integer or a relpath listed twice raises ``ValueError``
    naming the lock file and the line number.
    """
    lock = Path(lock)
    try:
        text = lock.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    # split on "\n" only: str.splitlines would also split on \x0b, \x1c, \u2028, … inside a relpath
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return {}
    if lines[0].rstrip("\r") != "\t".join(HEADER):
        raise ValueError(f"{lock} line 1: expected the header {_shown(chr(9).join(HEADER))}, got {_shown(lines[0])}")
    out: dict[str, tuple[str, int]] = {}
    for lineno, raw in enumerate(lines[1:], start=2):
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        if (
            len(fields) != 3
            or not fields[0]
            or not _HEX64.fullmatch(fields[1])
            or not _SIZE.fullmatch(fields[2])
        ):
            raise ValueError(
                f"{lock} line {lineno}: expected '<relpath><TAB><64 hex digits><TAB><size in bytes>', "
                f"got {_shown(raw)}"
            )
        relpath, entry = fields[0], (fields[1].lower(), int(fields[2]))
        if out.get(relpath, entry) != entry:
            raise ValueError(f"{lock} line {lineno}: {relpath!r} is listed twice with different entries")
        out[relpath] = entry
    return out


def _shown(text: str) -> str:
    return repr(text if len(text) <= 120 else text[:117] + "...")


def _write_lock(lock: Path, entries: dict[str, tuple[str, int]]) -> None:
    """Write ``entries`` to ``lock`` sorted by relpath, atomically (temporary file, fsync, ``os.replace``)."""
    lines = ["\t".join(HEADER)] + [f"{rel}\t{sha}\t{size}" for rel, (sha, size) in sorted(entries.items())]
    fd, tmp = tempfile.mkstemp(dir=lock.parent, prefix=f".{lock.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600
        os.replace(tmp, lock)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename durable
        dirfd = os.open(lock.parent, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)


@contextlib.contextmanager
def _locked(lock: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<lock>.flock`` (created if needed and never deleted)."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    sidecar = lock.with_name(lock.name + ".flock")
    with _THREADS:
        fd = os.open(sidecar, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the flock


def _check_relpath(relpath: str) -> None:
    if not relpath or not relpath.strip() or any(c in relpath for c in "\t\n\r"):
        raise ValueError(f"lock relpath must be non-blank without tabs or line breaks, got {relpath!r}")


def record(lock: Path, relpath: str, path: Path) -> tuple[str, int]:
    """Record the SHA-256 and size of the file at ``path`` as ``relpath`` in ``lock``; returns ``(sha256, size)``.

    An entry equal to it leaves the lock file untouched; a different one raises :class:`LockMismatch`.
    The read-modify-write holds the lock's ``flock``, so concurrent callers never lose entries.
    """
    lock, path = Path(lock), Path(path)
    _check_relpath(relpath)
    actual = (sha256_file(path), path.stat().st_size)
    with _locked(lock):
        entries = read_lock(lock)
        recorded = entries.get(relpath)
        if recorded == actual:
            return actual
        if recorded is not None:
            raise LockMismatch(lock, relpath, recorded, actual)
        entries[relpath] = actual
        _write_lock(lock, entries)
    return actual


# ----------------------------------------------------------------------------- download


def fetch_locked(
    url: str,
    dest: Path,
    lock: Path,
    relpath: str,
    verify: Callable[[Path], None],
    *,
    retries: int = 5,
    backoff: float = 1.0,
    timeout: float = 60,
    progress: ProgressFn | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Download ``url`` to ``dest`` and check it against (or pin it in) the lock file; ``"matched"`` or ``"recorded"``.

    With an entry for ``relpath`` in ``lock``: :func:`~colocate.trace.download.download` with the recorded
    SHA-256 (a ``dest`` that already matches is not fetched) and a size check; a file that differs raises
    :class:`LockMismatch` and leaves neither ``dest`` nor ``dest.part``. Returns ``"matched"``.

    Without an entry: download unchecked, then ``verify(dest)`` (gzip integrity and row schema); if it raises,
    ``dest`` is deleted and the error propagates, nothing being recorded. Otherwise the file is recorded
    (:func:`record`) and ``"recorded"`` returned.

    Network failures propagate as :class:`~colocate.trace.download.DownloadError` (a partial ``.part`` is kept,
    so the next call resumes it).
    """
    dest, lock = Path(dest), Path(lock)
    _check_relpath(relpath)
    part = dest.with_name(dest.name + ".part")
    kw = {"retries": retries, "backoff": backoff, "timeout": timeout, "sleep": sleep}
    entry = read_lock(lock).get(relpath)

    if entry is not None:
        seen: list[int] = []  # bytes of the last complete transfer: the actual size on a mismatch

        def track(done: int, total: int | None) -> None:
            if total is not None and done == total:
                seen.append(done)
            if progress is not None:
                progress(done, total)

        try:
            # a pinned file that differs twice has changed on the server: not worth `retries` full downloads
            download(url, dest, entry[0], progress=track, mismatch_retries=min(retries, 2), **kw)
        except DownloadError as e:
            if e.expected is None:
                raise
            _remove(dest, part)
            raise LockMismatch(
                lock, relpath, entry, (e.actual, seen[-1] if seen else None),
                reason=f"the file at {url} changed since it was first downloaded and recorded",
            ) from e
        size = dest.stat().st_size
        if size != entry[1]:
            _remove(dest, part)
            raise LockMismatch(
                lock, relpath, entry, (entry[0], size),
                reason="the SHA-256 matches but the size does not: the lock file was edited",
            )
        return "matched"

    download(url, dest, None, progress=progress, **kw)
    try:
        verify(dest)
    except BaseException:
        _remove(dest, part)
        raise
    try:
        record(lock, relpath, dest)
    except LockMismatch:  # another job recorded a different version meanwhile
        _remove(dest, part)
        raise
    return "recorded"


def _remove(*paths: Path) -> None:
    for p in paths:
        p.unlink(missing_ok=True)
