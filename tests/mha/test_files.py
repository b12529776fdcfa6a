import errno
import os
import stat
import subprocess
import sys
import textwrap

from mha import files

OLD = {"kept": True}
FILE_LIMIT = 4096  # bytes a child may write to any one file: the old file fits, the new one does not


def test_atomic_write_replaces_content_and_uses_normal_permissions(tmp_path):
    target = tmp_path / "out" / "report.json"
    files.write_json(target, {"b": 1, "a": [1, 2]})
    files.write_json(target, {"a": 3})
    assert target.read_text() == '{\n  "a": 3\n}\n'
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]  # no temp file left behind


def write_past_the_file_size_limit(target) -> subprocess.CompletedProcess:
    """write_json of a payload larger than FILE_LIMIT, in a child whose writes stop at FILE_LIMIT bytes.

    The first FILE_LIMIT bytes reach the disk and the next write fails with EFBIG, as a full disk
    would fail it: the write breaks halfway, not before it starts.
    """
    child = textwrap.dedent(f"""
        import resource, signal, sys
        from mha import files
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG from write() instead of a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, ({FILE_LIMIT}, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            files.write_json(sys.argv[1], {{"big": "x" * {4 * FILE_LIMIT}}})
        except OSError as exc:
            sys.exit(exc.errno)
    """)
    return subprocess.run([sys.executable, "-c", child, str(target)], capture_output=True, text=True, timeout=60)


def test_a_write_that_fails_halfway_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "metrics.json"
    files.write_json(target, OLD)
    old_text = target.read_text()
    proc = write_past_the_file_size_limit(target)
    assert proc.returncode == errno.EFBIG, proc.stderr  # the write itself failed
    assert target.read_text() == old_text
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]
