"""Download of the public Google cluster trace 2011 bucket: SHA-256 verified and resumable.

The bucket (its URL is the config key ``trace.url``) holds one
directory per table with ``part-NNNNN-of-00500.csv.gz`` shards (single-file
tables: ``part-00000-of-00001.csv.gz``), plus ``schema.csv`` and a ``SHA256SUM``
manifest at its root.

:func:`download` streams one object to ``<dest>.part``, resumes a dropped
transfer with an HTTP ``Range`` request, verifies the SHA-256 (computed while
streaming) and only then renames the ``.part`` to ``dest``, so a file under its
final name is always complete and verified. :func:`verify_tree` checks a
directory the user already holds (``trace.source: local``) against the manifest.

Every URL (and every redirect) must be ``https://``: the ``SHA256SUM`` manifest that the shards are
verified against is itself trusted only through TLS. Plain ``http://`` is allowed only to a loopback
address (127.0.0.1, localhost, ::1: the offline tests' server); ``file://`` and other schemes are
rejected (:func:`check_url`).
"""

from __future__ import annotations

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
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath

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


class DownloadError(RuntimeError):
    """A file that could not be downloaded: names the URL and why (checksums or last error)."""

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
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(_READ_BLOCK):
            h.update(block)
    return h.hexdigest()


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
    """A failure retrying cannot fix (HTTP 4xx other than 408/429)."""


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
) -> None:
    """Download ``url`` to ``dest``, verified against ``sha256`` (None: no check), resumably.

    The body streams to ``<dest>.part``. A dropped connection (an error mid-body
    or fewer bytes than announced) is resumed with ``Range: bytes=N-``; a
    server answering 200 instead of 206 restarts the file from zero. The
    SHA-256 is computed while streaming (re-hashing the kept prefix on resume);
    a mismatch deletes the ``.part`` and starts over. Only a complete, verified
    file is moved to ``dest`` (atomic ``os.replace``). A leftover ``.part`` of
    an earlier run is resumed. If ``dest`` already holds a file with the
    expected digest, nothing is fetched.

    Retries sleep ``backoff * 2**(n-1)`` seconds (or the server's
    ``Retry-After``). The call gives up with :class:`DownloadError` after
    ``mismatch_retries`` (default ``retries``) checksum mismatches, or after ``retries`` consecutive network
    failures that did not extend the ``.part`` (an attempt that made progress
    resets that count). HTTP 4xx other than 408/429 fails at once. A URL (or a redirect) that
    :func:`check_url` rejects raises ``ValueError`` before anything is fetched.
    """
    check_url(url)
    if retries < 1:
        raise ValueError(f"retries must be >= 1, got {retries}")
    expected = _expected_digest(url, sha256)
    dest = Path(dest)
    part = dest.with_name(dest.name + ".part")
    dest.parent.mkdir(parents=True, exist_ok=True)
    if expected is not None and verify_file(dest, expected):
        log.info("%s: already present and verified", dest)
        return

    attempt = failures = mismatches = 0
    while True:
        attempt += 1
        before = _size(part)
        retry_after: float | None = None
        try:
            digest = _attempt(url, part, timeout=timeout, chunk_size=chunk_size, progress=progress)
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
            if expected is None or digest == expected:
                _move_into_place(part, dest, verified=expected is not None)
                return
            part.unlink(missing_ok=True)
            mismatches += 1
            if mismatches >= (mismatch_retries or retries):
                raise DownloadError(
                    f"{url}: SHA-256 mismatch after {attempt} attempt(s): "
                    f"expected {expected}, got {digest}",
                    url=url,
                    expected=expected,
                    actual=digest,
                )
            why = f"SHA-256 mismatch (expected {expected}, got {digest}); restarting from zero"
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


def _move_into_place(part: Path, dest: Path, *, verified: bool) -> None:
    """Rename the complete ``part`` to ``dest`` (atomic ``os.replace``) and log it."""
    os.replace(part, dest)
    log.info("%s: complete%s", dest, ", SHA-256 verified" if verified else "")


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
    url: str, part: Path, *, timeout: float, chunk_size: int, progress: ProgressFn | None
) -> str:
    """One GET, appending to ``part`` from its current size; returns the digest of the whole file."""
    offset = _size(part)
    response = _open(url, part, offset, timeout)
    if response is None:  # the .part is already whole
        return sha256_file(part)
    with response:
        offset, total = _resume_point(url, part, response, offset)
        hasher = _prefix_hasher(part, offset)
        done = _stream_body(response, part, offset, total, hasher, chunk_size=chunk_size, progress=progress)
    if total is not None and done != total:
        if done > total:
            part.unlink(missing_ok=True)
        raise _Retry(f"connection closed after {done} of {total} bytes")
    return hasher.hexdigest()


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


def _prefix_hasher(part: Path, offset: int):
    """A SHA-256 hasher fed with the first ``offset`` bytes kept in ``part`` (the whole ``part``; none if 0)."""
    hasher = hashlib.sha256()
    if offset:
        with open(part, "rb") as f:
            while block := f.read(_READ_BLOCK):
                hasher.update(block)
    return hasher


def _stream_body(
    response: http.client.HTTPResponse, part: Path, offset: int, total: int | None, hasher, *, chunk_size: int,
    progress: ProgressFn | None,
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
                hasher.update(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)
        finally:
            f.flush()
            os.fsync(f.fileno())
    return done
