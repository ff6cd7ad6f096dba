"""mca's children, found without reading every process on the system: the threads' `children`
lists agree with the full /proc walk, from any thread, and an orphan is still found and killed."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from mca.sandbox.tasks import children, children_of, kill_orphans, own_children, set_subreaper

pytestmark = pytest.mark.skipif(own_children() is None, reason="no /proc children lists here")


def _start(started: list[subprocess.Popen[bytes]]) -> None:
    started.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]))


def test_the_children_lists_agree_with_the_full_walk_for_children_of_every_thread() -> None:
    started: list[subprocess.Popen[bytes]] = []
    try:
        _start(started)
        worker = threading.Thread(target=_start, args=(started,))  # a child of another thread
        worker.start()
        worker.join()
        mine = {p.pid for p in started}
        assert mine <= set(own_children() or [])
        assert set(own_children() or []) == set(children_of().get(os.getpid(), []))
        assert children(os.getpid()) == frozenset(children_of().get(os.getpid(), []))
    finally:
        for p in started:
            p.kill()
            p.wait()


def test_an_orphan_is_found_through_the_lists_and_killed() -> None:
    """A command's daemonised grandchild becomes mca's child (mca is the subreaper); with
    nothing else new, kill_orphans must still find it, and it must end."""
    if not set_subreaper():
        pytest.skip("cannot become a subreaper here")
    before = children(os.getpid())
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(60)\n"
    subprocess.run([sys.executable, "-c", code], check=True)  # its parent ends: an orphan
    deadline = time.monotonic() + 10
    orphans: set[int] = set()
    while not orphans and time.monotonic() < deadline:
        orphans = set(own_children() or []) - before
        time.sleep(0.01)
    assert orphans, "the grandchild never became this process's child"
    kill_orphans(before, set(), threading.Lock())
    assert not set(own_children() or []) - before
    for pid in orphans:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
