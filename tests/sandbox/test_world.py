"""The oracles of the attempts' world judge what happened, at once and on any system: a process a
command left running is found by the marker it holds (no /proc), and whatever reached the
listener is counted when the verdict is taken, not when a thread ran."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

from mca.sandbox.probe import Mechanisms
from tests.sandbox.world import build_world, wait_gone


def test_a_detached_process_is_a_survivor_until_it_ends(tmp_path: Path) -> None:
    world = build_world(tmp_path, Mechanisms(0, False, None))
    try:
        assert world.survivors() == []
        # unsandboxed: the oracle is what is tested, so nothing may stop the escape
        script = world.command("setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $!")
        out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
        pid = int(out.stdout.strip())
        assert world.survivors() != []
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(world, 10) == []
    finally:
        world.sandbox.close()
        world.listener.close()


def test_the_listener_counts_what_reached_it_when_asked(tmp_path: Path) -> None:
    world = build_world(tmp_path, Mechanisms(0, False, None))
    listener = world.listener
    try:
        assert listener.received == []
        with socket.create_connection(("127.0.0.1", listener.tcp_port)) as c:
            c.sendall(b"hello")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.sendto(b"dgram", ("127.0.0.1", listener.udp_port))
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as x:
            x.connect(str(world.sockets["run"]))
        got = listener.received
        assert any(g.startswith(b"tcp-connect:") for g in got), got
        assert b"udp:dgram" in got and b"unix-connect:" + bytes(world.sockets["run"]) in got
    finally:
        world.sandbox.close()
        listener.close()


def test_the_world_names_no_place_of_the_host(tmp_path: Path) -> None:
    world = build_world(tmp_path, Mechanisms(0, False, None))
    policy = world.sandbox.policy
    try:
        assert all(p.startswith((str(tmp_path), "~", "$")) for p in policy.sockets)
        assert policy.shared_tmp == (str(tmp_path / "shared"),)
    finally:
        world.sandbox.close()
        world.listener.close()
