import os
import stat

import pytest

from mha import files


def test_atomic_write_replaces_content_and_uses_normal_permissions(tmp_path):
    target = tmp_path / "out" / "report.json"
    files.write_json(target, {"b": 1, "a": [1, 2]})
    files.write_json(target, {"a": 3})
    assert target.read_text() == '{\n  "a": 3\n}\n'
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in target.parent.iterdir()] == ["report.json"]  # no temp file left behind


def test_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "metrics.json"
    files.write_json(target, {"kept": True})
    with pytest.raises(TypeError):
        files.write_json(target, {"bad": object()})
    assert target.read_text() == '{\n  "kept": true\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.json"]
