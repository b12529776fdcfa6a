"""The launchers and the Launcher protocol each of them keeps. No sandbox is started here."""

import os
import signal
import time

import pytest

from grader.sandbox import launch
from grader.sandbox.child import Child
from grader.sandbox.launch import DirectLauncher, Launcher, WarmServer, Watched
from grader.sandbox.limits import MEMORY_KILLED, Limits


@pytest.mark.parametrize("make", [lambda: DirectLauncher(), lambda: WarmServer(packages=()),
                                  lambda: Watched(DirectLauncher())], ids=["direct", "warm_server", "watched"])
def test_every_launcher_has_all_the_session_asks_of_it(make):
    launcher = make()  # nothing starts until the first spawn
    try:
        asked = set(Launcher.__annotations__) | {n for n in vars(Launcher) if not n.startswith("_")}
        assert asked == {"site_dirs", "placement", "spawn", "alive", "close"}
        missing = {name for name in asked if not hasattr(launcher, name)}
        assert not missing, missing
        assert isinstance(launcher.site_dirs, list) and launcher.alive() in (True, False)
    finally:
        launcher.close()


def test_torch_is_preloaded_when_a_source_mentions_it_and_numpy_always():
    assert launch.preload_for([b"import numpy as np\n", b"import torch\n"]) == ("torch",)
    assert launch.preload_for([b"import numpy as np\n"]) == ()
    assert launch.preload_for([]) == ()
    assert launch.WarmServer(launch.preload_for([b"import torch"]), packages=()).preload == ("numpy", "torch")
    assert launch.WarmServer((), packages=()).preload == ("numpy",)


def test_each_mode_has_its_launcher_and_an_unknown_one_is_refused():
    made = [launch.launcher(mode, ("torch",), ()) for mode in ("trusted", "uid", "namespaces")]
    try:
        trusted, uid, namespaces = made
        assert type(trusted) is launch.DirectLauncher and not trusted.separate_uids
        assert type(uid) is launch.DirectLauncher and uid.separate_uids
        assert type(namespaces) is launch.WarmServer and launch.preloads_torch(namespaces)
        assert not launch.preloads_torch(trusted)  # a plain interpreter imports what it needs itself
    finally:
        for launcher in made:
            launcher.close()
    with pytest.raises(ValueError, match="isolation must be one of"):
        launch.launcher("docker", (), ())


@pytest.mark.sandbox  # starts a real child of the trusted launcher
def test_a_trusted_child_runs_under_the_limits_and_its_end_kills_its_whole_group():
    launcher = launch.DirectLauncher()
    try:
        child = launcher.spawn(Limits())
        assert isinstance(child, Child)
        assert child.end() == -signal.SIGKILL
    finally:
        launcher.close()


class _KilledForMemory:
    """A launcher whose children the kernel killed for want of memory, or did not: real pipes, a given end."""

    site_dirs: list = []
    placement = None

    def __init__(self, codes):
        self.codes = list(codes)
        self.spawned: list[Child] = []

    def spawn(self, limits):
        ends = [os.pipe() for _ in range(4)]
        for fd in (ends[0][0], ends[1][1], ends[2][1], ends[3][1]):
            os.close(fd)
        code = self.codes.pop(0)
        child = Child(ends[0][1], ends[1][0], ends[2][0], ends[3][0], lambda grace: code)
        self.spawned.append(child)
        return child

    def alive(self):
        return True

    def close(self):
        pass


def test_a_watched_launcher_counts_this_submissions_children_killed_for_memory_and_leaves_the_launchers_own():
    inner = _KilledForMemory([MEMORY_KILLED, -signal.SIGKILL, MEMORY_KILLED])
    watched = launch.Watched(inner)
    codes = [watched.spawn(Limits()).end() for _ in range(3)]
    assert codes == [MEMORY_KILLED, -signal.SIGKILL, MEMORY_KILLED]
    assert watched.memory_kills == 2
    # the launcher's own children are as it made them: the count is the watch's, not patched into them
    assert [child.stop_tree(0.0) for child in inner.spawned] == codes and watched.memory_kills == 2


@pytest.mark.sandbox  # starts a real child of the trusted launcher
def test_a_watched_real_child_that_ends_normally_is_not_counted():
    watched = launch.Watched(launch.DirectLauncher())
    try:
        child = watched.spawn(Limits())
        time.sleep(0.1)
        assert child.end() == -signal.SIGKILL and watched.memory_kills == 0
    finally:
        watched.launcher.close()
