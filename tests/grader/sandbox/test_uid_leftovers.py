"""A uid's check before it is handed out: a listing of the places open to all, never a walk of the disk."""

import os
import time

from grader.sandbox import uid_leftovers

from ..conftest import needs_system

UID = 987_654_321  # no account: the files below are given to it by chown, as root

pytestmark = needs_system(os.geteuid() != 0, "needs root to give files to another uid")


def _tree(tmp_path):
    """A place open to all holding: a file of UID, a folder open to all with UID's file inside, and a closed
    folder (other users may pass it, not write in it) with a folder open to all, UID's file inside, and
    thousands of other files beside it."""
    place = tmp_path / "place"
    (place / "open").mkdir(parents=True)
    (place / "closed" / "open_inside").mkdir(parents=True)
    for folder, mode in ((place, 0o1777), (place / "open", 0o1777), (place / "closed", 0o755),
                         (place / "closed" / "open_inside", 0o1777)):
        folder.chmod(mode)
    for i in range(3000):
        (place / "closed" / f"other{i}").write_text("")
    mine = [place / "mine", place / "open" / "deep", place / "closed" / "open_inside" / "hidden"]
    for path in mine:
        path.write_text("left behind")
        os.chown(path, UID, UID)
    return place, mine


def test_a_uids_check_finds_what_it_made_where_every_user_may_write_without_walking_other_users_folders(tmp_path):
    place, (mine, deep, hidden) = _tree(tmp_path)
    start = time.perf_counter()
    found = uid_leftovers.entries_of(UID, (str(place),))
    listing = time.perf_counter() - start
    assert sorted(found) == sorted([str(mine), str(deep)])
    # the walk that removes a uid's leftovers after its run goes through the closed folder too
    assert sorted(uid_leftovers.files_of(UID, (str(place),))) == sorted([str(mine), str(deep), str(hidden)])
    assert uid_leftovers.held_by(UID, (str(place),)) == found
    assert listing < 0.05, listing  # a few folders listed, not the 3,000 files beside them


def test_a_fresh_uid_holds_nothing_in_the_known_places():
    assert uid_leftovers.held_by(UID) == []
