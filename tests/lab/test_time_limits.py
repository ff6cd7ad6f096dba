"""A check's time limit is the child's time on the CPU, not the grader machine's load: a
child the machine starved is waited for (up to STARVED times), one that loops or sleeps is
not."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from mca.lab.channel import STARVED, late, tree_usage


def test_within_its_time_nobody_is_late() -> None:
    assert not late(0.5, 1.0, cpu=0.5, runnable=True)


def test_a_loop_is_late_once_it_used_its_time_on_the_cpu() -> None:
    assert late(1.2, 1.0, cpu=1.0, runnable=True)


def test_a_starved_child_is_waited_for() -> None:
    assert not late(3.0, 1.0, cpu=0.3, runnable=True)  # a loaded machine, not a slow answer
    assert late(STARVED, 1.0, cpu=0.3, runnable=True)  # but not for ever


def test_a_sleeping_or_stopped_child_is_late_at_once() -> None:
    assert late(1.0, 1.0, cpu=0.0, runnable=False)


@pytest.mark.skipif(
    not os.access(f"/proc/{os.getpid()}/stat", os.R_OK),
    reason="/proc cannot be read here: the grader's time alone decides (tree_usage is 0)",
)
def test_tree_usage_counts_a_busy_grandchild() -> None:
    code = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n    t = time.time()\n    while time.time() - t < 5: pass\n"
        "    os._exit(0)\n"
        "time.sleep(5)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        cpu = 0.0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and cpu < 0.3:
            time.sleep(0.05)
            cpu = tree_usage(proc.pid)[0]
        assert cpu >= 0.3  # the grandchild's time, seen from the parent's pid
    finally:
        proc.kill()
        proc.wait()
    assert tree_usage(proc.pid) == (0.0, False)  # gone: time alone decides
