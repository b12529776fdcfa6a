"""Download a file and verify its sha256, leaving either the verified file or nothing at the target.

Sources are tried in order: the mirror named by MHA_DATA_MIRROR (a local path, a file:// URL or an
http(s):// URL), then the canonical URL. Each download streams into a temp file beside the target
with a socket timeout, is checked for length (Content-Length) and sha256, and only then renamed over
the target. Transient failures (timeouts, connection errors, truncated bodies, HTTP 5xx) are retried
with exponential backoff; permanent ones (HTTP 4xx, checksum mismatch) are not.
"""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MIRROR_ENV = "MHA_DATA_MIRROR"
CHUNK = 1 << 16


class FetchError(Exception):
    """A download failed: one line saying what happened and what to do. ``transient``: a retry may succeed."""

    def __init__(self, text: str, transient: bool = False):
        super().__init__(text)
        self.transient = transient


@dataclass(frozen=True)
class FetchResult:
    path: Path
    source: str
    sha256: str
    size: int
    attempts: int


def _describe(url: str) -> str:
    return url if "://" in url else f"file {url}"


def _connect_timeout(url: str, timeout: float) -> str:
    return f"timed out after {timeout:g} s connecting to {url}; retry later or set {MIRROR_ENV}"


def _open(url: str, timeout: float):
    """(stream, expected length or None) for a URL or local path."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme in ("", "file"):
        path = Path(urllib.request.url2pathname(parsed.path) if parsed.scheme == "file" else url)
        try:
            return path.open("rb"), path.stat().st_size
        except OSError as exc:
            raise FetchError(f"cannot read {path}: {exc.strerror or exc}; check the path in {MIRROR_ENV}") from None
    if parsed.scheme not in ("http", "https"):
        raise FetchError(f"unsupported URL scheme {parsed.scheme!r} in {url}; use a local path, file://, http:// "
                         "or https://")
    try:
        response = urllib.request.urlopen(url, timeout=timeout)  # noqa: S310 (scheme checked above)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise FetchError(f"HTTP 404 Not Found: {url} does not exist; check data.url in params.yaml or "
                             f"{MIRROR_ENV}") from None
        raise FetchError(f"HTTP {exc.code} {exc.reason} from {url}", transient=exc.code >= 500) from None
    except urllib.error.URLError as exc:
        if not isinstance(exc.reason, (socket.timeout, TimeoutError)):
            raise FetchError(f"network unreachable: cannot connect to {url} ({exc.reason}); set {MIRROR_ENV} to a "
                             "local copy of the file (a path, file:// or http(s):// URL)", transient=True) from None
        raise FetchError(_connect_timeout(url, timeout), transient=True) from None
    except TimeoutError:
        raise FetchError(_connect_timeout(url, timeout), transient=True) from None
    length = response.headers.get("Content-Length")
    return response, int(length) if length and length.isdigit() else None


def _download_once(url: str, target: Path, sha256: str, timeout: float) -> tuple[str, int]:
    """Stream url into a temp file beside target; rename it into place only if it verifies."""
    stream, expected_size = _open(url, timeout)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    digest, size = hashlib.sha256(), 0
    try:
        with stream, os.fdopen(fd, "wb") as out:
            while True:
                try:
                    chunk = stream.read1(CHUNK)  # what has arrived, so a stall is a timeout
                except TimeoutError:
                    raise FetchError(f"timed out after {timeout:g} s reading {url} ({size:,} bytes received); "
                                     f"retry later or set {MIRROR_ENV}", transient=True) from None
                except Exception as exc:  # noqa: BLE001 - http.client.IncompleteRead, ConnectionResetError, …
                    raise FetchError(f"truncated body from {url}: the connection broke after {size:,} bytes "
                                     f"({type(exc).__name__}); retry", transient=True) from None
                if not chunk:
                    break
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if expected_size is not None and size != expected_size:
            raise FetchError(f"truncated body from {url}: got {size:,} of {expected_size:,} bytes; retry",
                             transient=size < expected_size)
        actual = digest.hexdigest()
        if actual != sha256.lower():
            raise FetchError(f"checksum mismatch for {_describe(url)}: expected sha256 {sha256.lower()}, got {actual} "
                             f"({size:,} bytes); the file is not the expected corpus, check the source or "
                             "data.sha256")
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the corpus is not
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return actual, size


def sources(url: str, mirror: str | None = None) -> list[str]:
    """The mirror (when given) first, then the canonical URL."""
    return [s for s in (mirror, url) if s]


def fetch(
    url: str,
    target: str | Path,
    sha256: str,
    *,
    mirror: str | None = None,
    timeout: float = 30.0,
    retries: int = 3,
    backoff: float = 1.0,
    log: Callable[[str], None] = lambda line: None,
) -> FetchResult:
    """Fetch the first source that yields a verified file; ``log`` is told of each failed attempt.
    Raises FetchError naming the last failure."""
    target = Path(target)
    if target.exists() and _sha256_of(target) == sha256.lower():
        return FetchResult(target, str(target), sha256.lower(), target.stat().st_size, 0)
    # Never leave an unverified file at the target, even an old one: DVC would cache it.
    target.unlink(missing_ok=True)
    errors: dict[str, FetchError] = {}
    attempts = 0
    for source in sources(url, mirror):
        for attempt in range(1, retries + 1):
            attempts += 1
            try:
                actual, size = _download_once(source, target, sha256, timeout)
                return FetchResult(target, source, actual, size, attempts)
            except FetchError as exc:
                log(f"attempt {attempt}/{retries} from {_describe(source)} failed: {exc}")
                errors[source] = exc
                if not exc.transient or attempt == retries:
                    break
                time.sleep(backoff * 2 ** (attempt - 1))
    last = errors[url] if url in errors else errors[mirror]
    if mirror and url and mirror != url and mirror in errors:
        # one line still, but the mirror's failure is usually the one to fix
        raise FetchError(f"{errors[mirror]} (then the canonical URL failed too: {last})")
    raise last


def _sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
