"""The pids cgroup a root sandbox puts its commands in: always made, whatever earlier processes
left behind (a leftover with the same name left root's commands without any process limit: a
sandbox check under load saw 40 of 40 processes start, limit 12), and leftovers swept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mca.sandbox.tasks import make_cgroup, sweep_cgroups


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_leftover_of_an_earlier_process_with_this_pid_never_takes_the_name(
    tmp_path: Path,
) -> None:
    for n in range(1, 3000):  # what a killed process of this pid could have left
        (tmp_path / f"mca-{os.getpid()}-{n}").mkdir()
    made = make_cgroup(tmp_path, 12)
    assert made is not None and made.parent == tmp_path
    assert (made / "pids.max").read_text() == "12"


def test_sweep_removes_the_empty_cgroups_of_processes_that_are_gone(tmp_path: Path) -> None:
    gone, alive = _dead_pid(), os.getppid()
    (tmp_path / f"mca-{gone}-1").mkdir()
    (tmp_path / f"mca-{gone}-2-a1b2c3").mkdir()
    (tmp_path / f"mca-{alive}-1").mkdir()  # its process may still move tasks into it
    busy = tmp_path / f"mca-{gone}-3"
    busy.mkdir()
    (busy / "task").write_text("")  # the kernel refuses to remove a cgroup with tasks
    (tmp_path / "other").mkdir()
    sweep_cgroups(tmp_path)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([f"mca-{alive}-1", f"mca-{gone}-3", "other"])
