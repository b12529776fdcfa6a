"""fetch_data against a real HTTP server on 127.0.0.1, one route per way a download can fail."""

import hashlib
import http.server
import os
import socket
import threading
import time
from pathlib import Path

import pytest
import yaml

from mha import fetch

BODY = b"First Citizen:\nBefore we proceed any further, hear me speak.\n" * 200
SHA = hashlib.sha256(BODY).hexdigest()
REPO = Path(__file__).resolve().parents[2]


class Handler(http.server.BaseHTTPRequestHandler):
    hits: dict[str, int] = {}

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _send(self, body: bytes, length: int | None = None, status: int = 200) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client already gave up (timeout tests)
            pass

    def do_GET(self):
        Handler.hits[self.path] = Handler.hits.get(self.path, 0) + 1
        if self.path == "/ok":
            self._send(BODY)
        elif self.path == "/wrong":
            self._send(BODY.replace(b"Citizen", b"Senator"))
        elif self.path == "/truncated":
            self._send(BODY[: len(BODY) // 3], length=len(BODY))  # promise all, send a third, hang up
            self.close_connection = True
        elif self.path == "/slow-headers":
            time.sleep(1.5)
            self._send(BODY)
        elif self.path == "/slow-body":
            self.send_response(200)
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY[:100])
            self.wfile.flush()
            time.sleep(1.5)
            self.close_connection = True
        elif self.path == "/flaky":  # a 503 first, then the file: a transient error worth a retry
            if Handler.hits[self.path] == 1:
                self._send(b"busy", status=503)
            else:
                self._send(BODY)
        else:
            self._send(b"no such file", status=404)


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def closed_port_url():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now: connection refused
    return f"http://127.0.0.1:{port}/input.txt"


def quick(url, target, **kw):
    return fetch.fetch(url, target, SHA, timeout=kw.pop("timeout", 0.5), retries=kw.pop("retries", 2), backoff=0.01,
                       **kw)


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def test_success_streams_verifies_and_renames_into_place(server, tmp_path):
    target = tmp_path / "raw" / "corpus.txt"
    result = quick(f"{server}/ok", target)
    assert target.read_bytes() == BODY
    assert (result.sha256, result.size, result.source) == (SHA, len(BODY), f"{server}/ok")
    assert leftovers(target.parent) == ["corpus.txt"]  # no temp file left behind


def test_a_verified_file_already_in_place_is_kept_without_downloading(server, tmp_path, closed_port_url):
    target = tmp_path / "corpus.txt"
    target.write_bytes(BODY)
    assert quick(closed_port_url, target).attempts == 0
    assert target.read_bytes() == BODY


@pytest.mark.parametrize("scheme", ["path", "file", "http"])
def test_the_mirror_is_tried_first_and_the_canonical_url_is_not_needed(server, tmp_path, closed_port_url, scheme):
    local = tmp_path / "mirror.txt"
    local.write_bytes(BODY)
    mirror = {"path": str(local), "file": local.as_uri(), "http": f"{server}/ok"}[scheme]
    target = tmp_path / "out" / "corpus.txt"
    result = quick(closed_port_url, target, mirror=mirror)
    assert result.source == mirror and result.attempts == 1
    assert target.read_bytes() == BODY


def test_a_broken_mirror_falls_back_to_the_canonical_url(server, tmp_path):
    target = tmp_path / "corpus.txt"
    result = quick(f"{server}/ok", target, mirror=str(tmp_path / "missing.txt"))
    assert result.source == f"{server}/ok" and target.read_bytes() == BODY


def test_a_transient_http_error_is_retried_with_backoff(server, tmp_path):
    Handler.hits.pop("/flaky", None)
    lines = []
    result = quick(f"{server}/flaky", tmp_path / "corpus.txt", retries=3, log=lines.append)
    assert result.attempts == 2 and Handler.hits["/flaky"] == 2
    assert len(lines) == 1 and "HTTP 503" in str(lines[0])


@pytest.mark.parametrize(
    "route, expected, retried",
    [
        ("/missing", ["HTTP 404", "/missing"], False),
        ("/wrong", ["checksum mismatch", f"expected sha256 {SHA}", "got "], False),
        ("/truncated", ["truncated body", "of 12,200 bytes"], True),
        ("/slow-headers", ["timed out after 0.5 s"], True),
        ("/slow-body", ["timed out after 0.5 s reading", "100 bytes received"], True),
    ],
)
def test_each_failure_is_one_clear_line_and_leaves_nothing_at_the_target(server, tmp_path, route, expected, retried):
    target = tmp_path / "raw" / "corpus.txt"
    Handler.hits.pop(route, None)
    with pytest.raises(fetch.FetchError) as info:
        quick(f"{server}{route}", target)
    message = str(info.value)
    assert "\n" not in message
    for fragment in expected:
        assert fragment in message
    assert Handler.hits[route] == (2 if retried else 1)  # only transient errors are retried
    assert leftovers(target.parent) == []


def test_checksum_mismatch_shows_the_actual_digest(server, tmp_path):
    actual = hashlib.sha256(BODY.replace(b"Citizen", b"Senator")).hexdigest()
    with pytest.raises(fetch.FetchError, match=f"got {actual}"):
        quick(f"{server}/wrong", tmp_path / "corpus.txt")


def test_an_unreachable_network_suggests_the_mirror(tmp_path, closed_port_url):
    with pytest.raises(fetch.FetchError) as info:
        quick(closed_port_url, tmp_path / "corpus.txt")
    assert "network unreachable" in str(info.value) and "MHA_DATA_MIRROR" in str(info.value)


def test_a_stale_unverified_file_at_the_target_is_removed_on_failure(server, tmp_path):
    target = tmp_path / "corpus.txt"
    target.write_bytes(b"an old, wrong download")
    with pytest.raises(fetch.FetchError):
        quick(f"{server}/missing", target)
    assert not target.exists()


@pytest.fixture
def run_fetch(run_stage):
    """pipeline/fetch_data.py on the command line: ``run_fetch(tmp_path, url, mirror)`` -> (process, its --out)."""

    def run(tmp_path: Path, url: str, mirror: str | None):
        params = tmp_path / "params.yaml"
        # fetch_data reads data: alone; the other sections need only be there
        params.write_text(yaml.safe_dump({"data": {"url": url, "sha256": SHA, "val_fraction": 0.1}, "model": {},
                                          "train": {}, "report": {}, "lab": {}}))
        env = {k: v for k, v in os.environ.items() if k != fetch.MIRROR_ENV}
        if mirror:
            env[fetch.MIRROR_ENV] = mirror
        out = tmp_path / "data" / "raw.txt"
        proc = run_stage("fetch_data", "--params", params, "--out", out, "--timeout", "0.5", "--retries", "1",
                         env=env, timeout=60)
        return proc, out

    return run


def test_stage_failure_is_one_line_on_stderr_with_a_nonzero_exit(tmp_path, closed_port_url, run_fetch):
    proc, out = run_fetch(tmp_path, closed_port_url, None)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("fetch_data: network unreachable") and "MHA_DATA_MIRROR" in last
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_stage_fetches_from_the_mirror_in_the_environment(tmp_path, closed_port_url, run_fetch):
    local = tmp_path / "mirror.txt"
    local.write_bytes(BODY)
    proc, out = run_fetch(tmp_path, closed_port_url, str(local))
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == BODY and SHA in proc.stdout
