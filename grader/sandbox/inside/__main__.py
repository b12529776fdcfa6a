"""The entry point inside the sandbox: ``python -I -S -B FOLDER MODE ...`` with this folder as FOLDER.

- ``serve CTL_FD``: the warm server under bubblewrap (``server.py``), forking one confined child per submission;
- ``direct IN_FD OUT_FD``: the trusted and uid modes, one plain process per submission, no namespaces.

Python puts FOLDER first on ``sys.path`` when it runs a folder, even in isolated mode; it is taken off again, so
that a student's helper module named ``wire.py`` or ``server.py`` is the student's, and the folder is loaded as
the package ``_grader_inside``, a name ``loading.forget_grader_modules`` takes out of ``sys.modules`` before the
student's code runs.
"""

import importlib.util
import json
import os
import sys

PACKAGE = "_grader_inside"


def _package(folder):
    spec = importlib.util.spec_from_file_location(PACKAGE, os.path.join(folder, "__init__.py"),
                                                  submodule_search_locations=[folder])
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    return package


def main():
    folder = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if not p or os.path.abspath(p) != folder]
    _package(folder)
    from _grader_inside import confinement, server, serving

    mode = sys.argv[1]
    if mode == "serve":
        ctl_fd = int(sys.argv[2])
        site_dirs = json.loads(os.environ.get("GRADER_SITE_DIRS", "[]"))
        preload = [p for p in os.environ.get("GRADER_PRELOAD", "").split(",") if p]
        server.serve(ctl_fd, site_dirs, preload)
    else:  # trusted and uid modes: one plain child process per submission, no namespaces
        confinement.first_to_die()
        confinement.own_session_keyring()
        serving.serve_submission(int(sys.argv[2]), int(sys.argv[3]))


if __name__ == "__main__":
    main()
