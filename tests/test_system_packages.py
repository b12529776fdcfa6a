"""scripts/system-packages.sh: apt only for missing binaries, as root or via sudo, else one line saying what to do.

apt-get, sudo and id are stand-ins on PATH that log their arguments, so nothing is installed here.
"""

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "system-packages.sh"


def stub(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def run(tmp_path: Path, *pairs: str, uid: int, sudo_works: bool | None) -> tuple[subprocess.CompletedProcess, str]:
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir(exist_ok=True)
    stub(bin_dir, "id", f"echo {uid}")
    stub(bin_dir, "apt-get", f'echo "apt-get $*" >> {log}')
    if sudo_works is not None:
        stub(bin_dir, "sudo", f'[ "$*" = "-n true" ] && exit {0 if sudo_works else 1}; echo "sudo $1" >> {log}; '
                              'shift; "$@"')
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    proc = subprocess.run(["sh", str(SCRIPT), *pairs], capture_output=True, text=True, env=env, timeout=60)
    return proc, log.read_text() if log.exists() else ""


def test_present_binaries_need_no_apt(tmp_path):
    proc, calls = run(tmp_path, "/bin/sh=dash", uid=1000, sudo_works=False)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == "" and calls == ""


def test_as_root_only_the_missing_packages_are_installed(tmp_path):
    proc, calls = run(tmp_path, "/bin/sh=dash", "/nonexistent/chromium=chromium", "/nonexistent/bwrap=bubblewrap",
                      uid=0, sudo_works=None)
    assert proc.returncode == 0, proc.stderr
    assert calls.splitlines() == ["apt-get update -qq", "apt-get install -y -qq chromium bubblewrap"]


def test_without_root_a_passwordless_sudo_installs(tmp_path):
    proc, calls = run(tmp_path, "/nonexistent/bwrap=bubblewrap", uid=1000, sudo_works=True)
    assert proc.returncode == 0, proc.stderr
    assert "apt-get install -y -qq bubblewrap" in calls and calls.startswith("sudo -n")


def test_without_root_or_sudo_one_line_names_what_to_install(tmp_path):
    proc, calls = run(tmp_path, "/nonexistent/chromium=chromium", "/nonexistent/bwrap=bubblewrap",
                      uid=1000, sudo_works=False)
    assert proc.returncode == 1 and calls == ""
    assert proc.stderr.count("\n") == 1 and "sudo apt-get install -y chromium bubblewrap" in proc.stderr
