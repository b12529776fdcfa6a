"""The launchers and the Launcher protocol each of them keeps. No sandbox is started here."""

import pytest

from grader.sandbox.launch import DirectLauncher, Launcher, WarmServer, Watched


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
