"""Download of the public Google cluster trace 2011 bucket: SHA-256 verified and resumable.

:func:`download` streams one object to ``<dest>.part``, resumes a dropped transfer, verifies the bytes (against the
bucket's ``SHA256SUM`` manifest, or the hashes Google Cloud Storage sends) and only then renames the file, so a file
under its final name is always complete and verified. :func:`verify_tree` checks a copy the user holds. Only
``https://`` is fetched (the manifest is trusted through TLS alone), and ``http://`` to a loopback address for the
offline tests (:func:`check_url`).

The bucket, the server's hashes, resumption and retries: docs/methods.md#downloads.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import logging
import operator
import os
import re
import time
import ipaddress
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path, PurePosixPath

import google_crc32c

from colocate.trace import SINGLE_FILE_TABLES, TABLES, shard_name

log = logging.getLogger(__name__)

#: Number of shards of each multi-file table.
SHARDS_PER_TABLE = 500
#: Upper bound of one backoff sleep, in seconds.
MAX_BACKOFF = 300.0

#: ``progress(bytes_done, bytes_total)``; ``bytes_total`` is None when the server does not say.
ProgressFn = Callable[[int, int | None], None]

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
# "<hash>  <path>" (text mode), "<hash> *<path>" (binary mode) or "<hash> <path>".
_SUM_LINE = re.compile(r"([0-9a-fA-F]{64}) [ *]?(\S.*)")
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
_READ_BLOCK = 1 << 20

#: The response header in which Google Cloud Storage sends an object's hashes.
GOOG_HASH = "x-goog-hash"
#: Suffix of the file written beside a ``dest`` verified against the server's hashes: the hashes it matched.
HASHES_SUFFIX = ".x-goog-hash"


class DownloadError(RuntimeError):
    """A file that could not be downloaded: names the URL and why (checksums or last error).

    On a checksum mismatch ``expected`` and ``actual`` are set: the SHA-256 hex digests when only the SHA-256
    differs, else the hashes that differ as ``name=value`` pairs joined by commas (``crc32c=…,md5=…``, base64 as
    in ``x-goog-hash``). Both are None for any other failure.
    """

    def __init__(
        self,
        message: str,
        *,
        url: str,
        expected: str | None = None,
        actual: str | None = None,
    ):
        super().__init__(message)
        self.url = url
        self.expected = expected
        self.actual = actual


# ----------------------------------------------------------------------------- URLs


def check_url(url: str, what: str = "trace.url") -> str:
    """``url`` if it may be fetched: https, or plain http to a loopback address; else ``ValueError``.

    The message names ``what`` (the config key the URL comes from).
    """
    try:
        parts = urllib.parse.urlsplit(str(url))
        host = parts.hostname
    except ValueError as e:
        raise ValueError(f"{what}: {url!r} is not a valid URL ({e})") from None
    scheme = parts.scheme.lower()
    if scheme == "https" and host:
        return url
    if scheme == "http" and host and _is_loopback(host):
        return url
    if scheme == "http" and host:
        why = "plain http:// is allowed only to a loopback address (127.0.0.1, localhost, ::1)"
    elif not scheme:
        why = "it has no scheme"
    elif not host and scheme in ("http", "https"):
        why = "it has no host"
    else:
        why = f"the {scheme}:// scheme is not supported"
    raise ValueError(
        f"{what}: {url!r} is rejected: {why}; the trace and its SHA256SUM manifest are fetched "
        "over https:// only"
    )


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to a URL :func:`check_url` accepts (no https -> http downgrade)."""

    def http_error_302(self, req, fp, code, msg, headers):
        # checked before urllib's own scheme check, which would raise a (retried) HTTPError
        location = headers.get("location") or headers.get("uri")
        if location:
            check_url(urllib.parse.urljoin(req.full_url, location), what=f"redirect from {req.full_url}")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


_OPENER = urllib.request.build_opener(_CheckedRedirects)


# ----------------------------------------------------------------------------- manifest


def parse_sha256sum(text: str) -> dict[str, str]:
    """Parse ``sha256sum`` output into ``{relative path: lowercase hex digest}``.

    Accepts ``<hash>  <path>``, ``<hash> *<path>`` and ``<hash> <path>``; blank
    lines and ``#`` comments are skipped. A malformed line, an unsafe path
    (absolute or with ``..``) or a path listed twice with different digests
    raises ``ValueError`` naming the line number.
    """
    out: dict[str, str] = {}
    for lineno, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _SUM_LINE.fullmatch(line)
        if m is None:
            shown = raw if len(raw) <= 100 else raw[:97] + "..."
            raise ValueError(
                f"SHA256SUM line {lineno}: expected '<64 hex digits>  <path>', got {shown!r}"
            )
        digest, path = m.group(1).lower(), _clean_relpath(m.group(2), lineno)
        if out.get(path, digest) != digest:
            raise ValueError(
                f"SHA256SUM line {lineno}: {path!r} is listed twice with different checksums"
            )
        out[path] = digest
    return out


def _clean_relpath(path: str, lineno: int) -> str:
    p = PurePosixPath(path)
    if p.is_absolute() or ".." in p.parts or "\\" in path or str(p) in ("", "."):
        raise ValueError(f"SHA256SUM line {lineno}: unsafe or empty path {path!r}")
    return str(p)  # drops a leading "./"


def lookup_sha256(manifest: str | Path, relpath: str) -> str:
    """The digest of ``relpath`` in the ``SHA256SUM`` file ``manifest``.

    Raises ``ValueError`` naming the manifest when it is malformed or does not list ``relpath``.
    """
    manifest = Path(manifest)
    try:
        sums = parse_sha256sum(manifest.read_text(encoding="utf-8"))
    except ValueError as e:
        raise ValueError(f"{manifest}: {e}") from None
    try:
        return sums[relpath]
    except KeyError:
        raise ValueError(
            f"{relpath} is not listed in the checksum manifest {manifest} ({len(sums)} entries)"
        ) from None


# ----------------------------------------------------------------------------- shard selection


def select_shards(table: str, selection: str | int | list[int], total: int) -> list[str]:
    """Relative paths (``table/part-NNNNN-of-MMMMM.csv.gz``) of the selected shards of ``table``.

    ``selection`` is ``"all"``, an int K (the first K shards) or a list of shard
    indices (returned in ascending order). Single-file tables always give their
    one file, whatever the selection. Invalid selections raise ``ValueError``.
    """
    if table not in TABLES:
        raise ValueError(f"unknown trace table {table!r}; known: {', '.join(TABLES)}")
    if table in SINGLE_FILE_TABLES:
        return [f"{table}/{shard_name(0, 1)}"]
    if isinstance(total, bool) or not isinstance(total, int) or total < 1:
        raise ValueError(f"{table}: total shard count must be a positive integer, got {total!r}")
    return [f"{table}/{shard_name(i, total)}" for i in _indices(table, selection, total)]


def _indices(table: str, selection: object, total: int) -> list[int]:
    what = f"{table}: shard selection"
    if isinstance(selection, str):
        if selection == "all":
            return list(range(total))
        raise ValueError(f"{what} must be 'all', a count or a list of indices, got {selection!r}")
    if isinstance(selection, (list, tuple)):
        if not selection:
            raise ValueError(f"{what} is an empty list")
        indices = [_as_index(what, x) for x in selection]
        bad = [i for i in indices if not 0 <= i < total]
        if bad:
            raise ValueError(f"{what}: indices {bad} out of range 0..{total - 1}")
        dups = sorted({i for i in indices if indices.count(i) > 1})
        if dups:
            raise ValueError(f"{what}: duplicate indices {dups}")
        return sorted(indices)
    k = _as_index(what, selection)
    if not 1 <= k <= total:
        raise ValueError(f"{what}: count {k} must be between 1 and {total}")
    return list(range(k))


def _as_index(what: str, x: object) -> int:
    if isinstance(x, bool):
        raise ValueError(f"{what}: expected an integer, got {x!r}")
    try:
        return operator.index(x)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(
            f"{what} must be 'all', a count or a list of integer indices, got {x!r}"
        ) from None


# ----------------------------------------------------------------------------- verification


def sha256_file(path: str | Path) -> str:
    """Lowercase hex SHA-256 of the file at ``path``."""
    return Digests.of_file(path, ["sha256"]).values()["sha256"]


def _b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode("ascii")


#: The digests a download can be checked against, by name: a new hasher, and its value as written where it is
#: published (SHA-256 in lowercase hex as by ``sha256sum``; CRC32C, 4 big-endian bytes, and MD5 in base64 as in
#: ``x-goog-hash``).
_ALGORITHMS: dict[str, tuple[Callable[[], object], Callable[[object], str]]] = {
    "sha256": (hashlib.sha256, lambda h: h.hexdigest()),
    "crc32c": (google_crc32c.Checksum, lambda h: _b64(h.digest())),
    "md5": (lambda: hashlib.md5(usedforsecurity=False), lambda h: _b64(h.digest())),
}
_LABELS = {"sha256": "SHA-256", "crc32c": "crc32c", "md5": "md5"}
#: The hashes ``x-goog-hash`` may carry, and the length of each in bytes.
_GOOG_HASH_BYTES = {"crc32c": 4, "md5": 16}


class Digests:
    """Running digests of one file's bytes, by name (``"sha256"``, ``"crc32c"``, ``"md5"``), fed chunk by chunk."""

    def __init__(self, names: Iterable[str]):
        self._hashers = {name: _ALGORITHMS[name][0]() for name in names}

    @classmethod
    def of_file(cls, path: str | Path, names: Iterable[str]) -> Digests:
        """The digests ``names`` of the whole file at ``path`` (not read when ``names`` is empty)."""
        digests = cls(names)
        if not digests._hashers:
            return digests
        with open(path, "rb") as f:
            while block := f.read(_READ_BLOCK):
                digests.update(block)
        return digests

    def update(self, chunk: bytes) -> None:
        for hasher in self._hashers.values():
            hasher.update(chunk)

    def values(self) -> dict[str, str]:
        """``{name: value}``, each written as where it is published (hex SHA-256, base64 CRC32C and MD5)."""
        return {name: _ALGORITHMS[name][1](hasher) for name, hasher in self._hashers.items()}


def parse_goog_hash(values: Iterable[str]) -> dict[str, str]:
    """The hashes in the ``x-goog-hash`` header(s) of a GCS response: ``{"crc32c": b64[, "md5": b64]}``.

    ``values`` are the header's values: one ``crc32c=<b64>,md5=<b64>``, or one line per hash. Other algorithms
    are ignored. ``ValueError`` when there is no header, it has no crc32c, a value is not the base64 of a digest
    of the right length, or a hash is given twice with different values.
    """
    values = list(values)
    if not values:
        raise ValueError(f"the server sent no {GOOG_HASH}")
    out: dict[str, str] = {}
    for item in (i.strip() for value in values for i in value.split(",")):
        name, _, b64 = item.partition("=")
        name = name.strip().lower()
        if name not in _GOOG_HASH_BYTES:
            continue
        try:
            digest = base64.b64decode(b64.strip(), validate=True)
        except ValueError:
            digest = b""
        if len(digest) != _GOOG_HASH_BYTES[name]:
            raise ValueError(f"the server sent a malformed {GOOG_HASH}: {name}={b64.strip()!r}")
        if out.setdefault(name, _b64(digest)) != _b64(digest):
            raise ValueError(f"the server sent {name} twice with different values in {GOOG_HASH}")
    if "crc32c" not in out:
        raise ValueError(f"the server sent an {GOOG_HASH} without crc32c: {', '.join(values)!r}")
    return out


def format_hashes(values: Mapping[str, str]) -> str:
    """``values`` as ``name=value`` pairs joined by commas (the form of ``x-goog-hash`` and of its record file)."""
    return ",".join(f"{name}={value}" for name, value in values.items())


def hashes_path(dest: str | Path) -> Path:
    """The record of the server's hashes that ``dest`` was verified against: ``<dest>.x-goog-hash``."""
    dest = Path(dest)
    return dest.with_name(dest.name + HASHES_SUFFIX)


def _read_recorded(dest: Path) -> dict[str, str] | None:
    """The hashes recorded beside ``dest`` (:func:`hashes_path`); None when there is no record or it is malformed."""
    try:
        return parse_goog_hash([hashes_path(dest).read_text(encoding="ascii").strip()])
    except (OSError, ValueError):
        return None


def verify_file(path: str | Path, sha256: str) -> bool:
    """Whether ``path`` exists and has SHA-256 ``sha256`` (case-insensitive)."""
    path = Path(path)
    return path.is_file() and sha256_file(path) == sha256.strip().lower()


def verify_tree(root: Path, manifest: Mapping[str, str], present_only: bool = True) -> list[str]:
    """Paths of ``manifest`` (relative to ``root``) whose file does not match its digest.

    With ``present_only`` (the default) missing files are skipped, so a partial
    copy of the bucket can be checked; otherwise they count as mismatches.
    """
    root = Path(root)
    bad: list[str] = []
    for rel in sorted(manifest):
        path = root / rel
        if not path.is_file():
            if not present_only:
                bad.append(rel)
            continue
        if not verify_file(path, manifest[rel]):
            bad.append(rel)
    return bad


# ----------------------------------------------------------------------------- progress


def progress_logger(
    label: str,
    logger: logging.Logger | None = None,
    *,
    interval: float = 5.0,
    clock: Callable[[], float] = time.monotonic,
) -> ProgressFn:
    """A ``progress`` callable logging ``label: 45.0/90.2 MB (50%)`` at most every ``interval`` s.

    The first call and the call that completes the file are always logged.
    """
    logger = logger or log
    last = [float("-inf")]

    def report(done: int, total: int | None) -> None:
        now = clock()
        finished = total is not None and done >= total
        if not finished and now - last[0] < interval:
            return
        last[0] = now
        if total:
            logger.info("%s: %.1f/%.1f MB (%d%%)", label, done / 1e6, total / 1e6, 100 * done // total)
        else:
            logger.info("%s: %.1f MB", label, done / 1e6)

    return report


# ----------------------------------------------------------------------------- download


class _Retry(Exception):
    """A transient failure: retry (resuming from what the .part holds)."""

    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.retry_after = retry_after


class _Final(Exception):
    """A failure retrying cannot fix (HTTP 4xx other than 408/429, a response without the server's hashes)."""


class _Expected:
    """What one download is verified against: a SHA-256 known upfront, and/or (``server_hashes``) the hashes that
    every response's ``x-goog-hash`` gives. The one place that knows which digests a download computes."""

    def __init__(self, url: str, sha256: str | None, server_hashes: bool):
        self.url = url
        self.upfront = {"sha256": _expected_digest(url, sha256)} if sha256 is not None else {}
        self.server_hashes = server_hashes
        self.sent: dict[str, str] | None = None  # the x-goog-hash of this download's latest response
        if server_hashes and google_crc32c.implementation != "c":
            log.warning("google_crc32c has no C extension here: CRC32C checks will be slow")

    @property
    def values(self) -> dict[str, str]:
        """``{name: expected value}`` as far as known (the server's hashes once a response gave them)."""
        return {**self.upfront, **(self.sent or {})}

    def known(self) -> bool:
        """Whether all that the file is checked against is known (server hashes: once a response sent them)."""
        return not self.server_hashes or self.sent is not None

    def describe(self) -> str:
        """The hashes checked, for the log: ``"SHA-256"``, ``"crc32c and md5"``, ``""`` when none."""
        return " and ".join(_LABELS[name] for name in self.values)

    def take(self, headers, part: Path, offset: int) -> None:
        """Read the server's hashes from a response (200 or 206) whose body lands in ``part`` from ``offset``.

        Raises :class:`_Final` when the response has no usable ``x-goog-hash``. Hashes that differ from an earlier
        response's mean the object was replaced: a resumed ``part`` (``offset`` > 0) holds bytes of the old one, so
        it is deleted and :class:`_Retry` raised; a body from byte 0 is wholly the new object's.
        """
        if not self.server_hashes:
            return
        try:
            sent = parse_goog_hash(headers.get_all(GOOG_HASH) or [])
        except ValueError as e:
            raise _Final(str(e)) from None
        previous, self.sent = self.sent, sent
        if previous is None or previous == sent:
            return
        changed = (
            f"the object changed during the download ({GOOG_HASH} was {format_hashes(previous)}, "
            f"now {format_hashes(sent)})"
        )
        if offset:
            part.unlink(missing_ok=True)
            raise _Retry(f"{changed}; restarting from zero")
        log.info("%s: %s", self.url, changed)

    def mismatches(self, actual: Mapping[str, str]) -> dict[str, tuple[str, str]]:
        """``{name: (expected, actual)}`` of each hash that differs (empty: verified)."""
        return {name: (value, actual[name]) for name, value in self.values.items() if actual[name] != value}

    def present(self, dest: Path) -> bool:
        """Whether ``dest`` already holds the verified file: its bytes match the SHA-256 and, with server hashes,
        the hashes recorded beside it when it was verified (a file without that record is not trusted)."""
        if not (self.upfront or self.server_hashes) or not dest.is_file():
            return False
        expected = dict(self.upfront)
        if self.server_hashes:
            recorded = _read_recorded(dest)
            if recorded is None:
                log.info("%s: present without a record of its %s; downloading again", dest, GOOG_HASH)
                return False
            expected.update(recorded)
        if Digests.of_file(dest, expected).values() != expected:
            log.info("%s: present but does not match %s; downloading again", dest, format_hashes(expected))
            return False
        return True

    def record(self, dest: Path) -> None:
        """With server hashes: write the hashes the file was verified against beside ``dest`` (atomically)."""
        if self.server_hashes and self.sent is not None:
            path = hashes_path(dest)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(format_hashes(self.sent) + "\n", encoding="ascii")
            os.replace(tmp, path)


def download(
    url: str,
    dest: Path,
    sha256: str | None,
    *,
    retries: int = 5,
    backoff: float = 1.0,
    timeout: float = 60,
    chunk_size: int = 1 << 20,
    progress: ProgressFn | None = None,
    sleep: Callable[[float], None] = time.sleep,
    mismatch_retries: int | None = None,
    server_hashes: bool = False,
) -> None:
    """Download ``url`` to ``dest``, verified against ``sha256`` and/or the server's hashes (neither: no check),
    resumably.

    The body streams to ``<dest>.part``, is resumed after a dropped connection and verified while streaming; only a
    complete, verified file is moved to ``dest``, and a ``dest`` that already holds it is not fetched again. The call
    gives up with :class:`DownloadError` after ``retries`` network failures without progress or ``mismatch_retries``
    checksum mismatches; a URL that :func:`check_url` rejects raises ``ValueError``.

    Resumption, hashes and retries in full: docs/methods.md#downloads.
    """
    check_url(url)
    if retries < 1:
        raise ValueError(f"retries must be >= 1, got {retries}")
    expected = _Expected(url, sha256, server_hashes)
    dest = Path(dest)
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if expected.present(dest):
        log.info("%s: already present and verified", dest)
        return

    attempt = failures = mismatches = 0
    while True:
        attempt += 1
        before = _size(part)
        retry_after: float | None = None
        try:
            actual = _attempt(url, part, expected, timeout=timeout, chunk_size=chunk_size, progress=progress)
        except _Final as e:
            part.unlink(missing_ok=True)
            raise DownloadError(f"{url}: {e} (not retried)", url=url) from e.__cause__
        except _Retry as e:
            failures = 1 if _size(part) > before else failures + 1
            retry_after = e.retry_after
            if failures >= retries:
                raise DownloadError(
                    f"{url}: gave up after {attempt} attempt(s), {failures} in a row without "
                    f"progress; last error: {e}",
                    url=url,
                ) from e.__cause__
            why = str(e)
        else:
            wrong = expected.mismatches(actual)
            if not wrong:
                expected.record(dest)
                _move_into_place(part, dest, verified=expected.describe())
                return
            part.unlink(missing_ok=True)
            mismatches += 1
            detail = "; ".join(f"{_LABELS[name]} expected {want}, got {got}" for name, (want, got) in wrong.items())
            if mismatches >= (mismatch_retries or retries):
                raise DownloadError(
                    f"{url}: checksum mismatch after {attempt} attempt(s): {detail}",
                    url=url,
                    expected=_mismatched(wrong, 0),
                    actual=_mismatched(wrong, 1),
                )
            why = f"checksum mismatch ({detail}); restarting from zero"
        delay = _backoff_delay(backoff, failures + mismatches, retry_after)
        log.warning("%s: attempt %d failed: %s; retrying in %.1f s", url, attempt, why, delay)
        sleep(delay)


def _expected_digest(url: str, sha256: str | None) -> str | None:
    """``sha256`` in lowercase without surrounding blanks (None stays None); ``ValueError`` unless 64 hex digits."""
    if sha256 is None:
        return None
    expected = sha256.strip().lower()
    if not _HEX64.fullmatch(expected):
        raise ValueError(f"{url}: expected SHA-256 is not 64 hex digits: {sha256!r}")
    return expected


def _mismatched(wrong: Mapping[str, tuple[str, str]], which: int) -> str:
    """The expected (``which`` 0) or actual (1) values of the hashes in ``wrong``, for :class:`DownloadError`."""
    if list(wrong) == ["sha256"]:
        return wrong["sha256"][which]
    return format_hashes({name: pair[which] for name, pair in wrong.items()})


def _move_into_place(part: Path, dest: Path, *, verified: str) -> None:
    """Rename the complete ``part`` to ``dest`` (atomic ``os.replace``) and log it (``verified``: hashes checked)."""
    os.replace(part, dest)
    log.info("%s: complete%s", dest, f", {verified} verified" if verified else "")


def _backoff_delay(backoff: float, retry: int, retry_after: float | None) -> float:
    """Seconds before retry number ``retry`` (1, 2, …): ``backoff * 2**(retry-1)``, at least the server's
    ``Retry-After``, both capped at :data:`MAX_BACKOFF`."""
    delay = min(backoff * 2 ** (retry - 1), MAX_BACKOFF)
    if retry_after is not None:
        delay = max(delay, min(retry_after, MAX_BACKOFF))
    return delay


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _describe(e: BaseException) -> str:
    if isinstance(e, urllib.error.HTTPError):
        return f"HTTP {e.code} {e.reason}"
    if isinstance(e, urllib.error.URLError):
        return f"{type(e.reason).__name__}: {e.reason}"
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to the exponential backoff


def _attempt(
    url: str, part: Path, expected: _Expected, *, timeout: float, chunk_size: int, progress: ProgressFn | None
) -> dict[str, str]:
    """One GET, appending to ``part`` from its current size; returns the digests of the whole file that
    ``expected`` checks (:meth:`Digests.values`)."""
    offset = _size(part)
    response = _open(url, part, offset, timeout)
    if response is None:  # the .part is already whole
        if not expected.known():
            part.unlink(missing_ok=True)
            raise _Retry(f"the .part is whole but no response has sent its {GOOG_HASH} yet; restarting from zero")
        return Digests.of_file(part, expected.values).values()
    with response:
        offset, total = _resume_point(url, part, response, offset)
        expected.take(response.headers, part, offset)
        digests = Digests.of_file(part, expected.values) if offset else Digests(expected.values)
        done = _stream_body(response, part, offset, total, digests, chunk_size=chunk_size, progress=progress)
    if total is not None and done != total:
        if done > total:
            part.unlink(missing_ok=True)
        raise _Retry(f"connection closed after {done} of {total} bytes")
    return digests.values()


def _open(url: str, part: Path, offset: int, timeout: float) -> http.client.HTTPResponse | None:
    """The response to a GET of ``url`` from byte ``offset`` (a ``Range`` request when > 0); None when the
    server says the ``part`` of ``offset`` bytes is already whole (HTTP 416 with ``Content-Range: bytes */offset``).

    Raises :class:`_Final` for HTTP 4xx other than 408/429, else :class:`_Retry` (after deleting ``part`` on
    any other 416).
    """
    headers = {
        # Get the stored bytes: without this, GCS gunzips objects stored with
        # Content-Encoding: gzip ("decompressive transcoding"), breaking checksums and Range.
        "Accept-Encoding": "gzip",
        "User-Agent": "colocate-download/1",
    }
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        return _OPENER.open(request, timeout=timeout)
    except urllib.error.HTTPError as e:
        e.close()
        if e.code == 416 and offset:
            if (e.headers.get("Content-Range") or "").strip().endswith(f"/{offset}"):
                return None
            part.unlink(missing_ok=True)
            raise _Retry(f"HTTP 416 for a resume at byte {offset}; restarting from zero") from e
        if 400 <= e.code < 500 and e.code not in (408, 429):
            raise _Final(_describe(e)) from e
        raise _Retry(_describe(e), _retry_after(e.headers)) from e
    except (OSError, http.client.HTTPException) as e:
        raise _Retry(_describe(e)) from e


def _resume_point(url: str, part: Path, response: http.client.HTTPResponse, offset: int) -> tuple[int, int | None]:
    """Where the body starts and the whole file's size (None if unknown), from the response's status.

    206: the asked ``offset`` (a ``Content-Range`` starting elsewhere deletes ``part`` and retries);
    200: zero (the server ignored the ``Range``); any other status retries.
    """
    if response.status == 206:
        m = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range") or "")
        if m is None or int(m.group(1)) != offset:
            part.unlink(missing_ok=True)
            raise _Retry(
                f"bad Content-Range {response.headers.get('Content-Range')!r} for a resume "
                f"at byte {offset}; restarting from zero"
            )
        return offset, (int(m.group(3)) if m.group(3) != "*" else int(m.group(2)) + 1)
    if response.status == 200:
        if offset:
            log.info("%s: server ignored the Range request; restarting from zero", url)
        length = response.headers.get("Content-Length")
        return 0, (int(length) if length and length.isdigit() else None)
    raise _Retry(f"unexpected HTTP status {response.status}")


def _stream_body(
    response: http.client.HTTPResponse, part: Path, offset: int, total: int | None, digests: Digests, *,
    chunk_size: int, progress: ProgressFn | None,
) -> int:
    """Append the body to ``part`` (truncated first when ``offset`` is 0), hashing and reporting progress;
    returns the bytes ``part`` then holds. A read error raises :class:`_Retry`; what arrived is kept (fsync'd)."""
    done = offset
    if progress is not None:
        progress(done, total)
    with open(part, "ab" if offset else "wb") as f:
        try:
            while True:
                try:
                    # read1: what has arrived (<= chunk_size), so a timeout loses nothing
                    chunk = response.read1(chunk_size)
                except (OSError, http.client.HTTPException) as e:
                    raise _Retry(f"connection lost after {done} bytes: {_describe(e)}") from e
                if not chunk:
                    break
                f.write(chunk)
                digests.update(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)
        finally:
            f.flush()
            os.fsync(f.fileno())
    return done
