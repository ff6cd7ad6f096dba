"""Each attempt runs through mca's command path inside the sandbox, once per mechanism this
machine has, and is judged on disk, on the wire and in /proc, never by its message."""

from __future__ import annotations

import dataclasses
import os
import shlex
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mca.sandbox.box import Sandbox
from mca.sandbox.probe import probe
from mca.sandbox.properties import Prop, expected
from mca.sandbox.rights import Grant
from tests.sandbox.cases import ATTEMPTS, LEGIT, Attempt
from tests.sandbox.mechanisms import chosen, used
from tests.sandbox.world import World, all_files_text, build_world, wait_gone

pytestmark = pytest.mark.slow  # each attempt in a real sandbox, under every mechanism

# The sandboxes to try each attempt in (tests/sandbox/mechanisms.py: every distinct one this
# system can give, or only the probe's pick under a CI confinement and as the ordinary user).
MECHANISMS = chosen()
LANDLOCK_ONLY = probe(namespaces=False)


@pytest.fixture(params=sorted(MECHANISMS) or ["none"])
def world(request: pytest.FixtureRequest, world_root: Path) -> Iterator[World]:
    if request.param == "none":
        pytest.skip("no sandbox mechanism on this system")
    mech = MECHANISMS[request.param]
    used(mech)
    w = build_world(world_root, mech)
    yield w
    w.sandbox.close()
    w.listener.close()


def judge(world: World, attempt: Attempt, before: dict[str, object], output: str) -> list[str]:
    """Everything the oracle finds wrong after an attempt."""
    wrong = []
    after = world.snapshot()
    for part in ("outside", "home", "git", "nested", "mca"):
        if after[part] != before[part]:
            wrong.append(f"{part}/ changed")
    if (world.ws / "GOT").exists():
        wrong.append("the attempt reported success (GOT)")
    texts = [output, *all_files_text(world.ws)]
    wrong += [f"secret {s[:12]}… leaked" for s in world.secrets if any(s in t for t in texts)]
    wrong += [
        f"secret {s[:12]}… leaked backwards"
        for s in world.secrets
        if any(s[::-1] in t for t in texts)
    ]
    if world.listener.received:
        wrong.append(f"the listener received {world.listener.received!r}")
    if os.path.lexists(f"/tmp/mca-escape-{world.token}") or os.path.lexists(
        f"/dev/shm/mca-escape-{world.token}"
    ):
        wrong.append("a marker reached the real /tmp or /dev/shm")
    left = wait_gone(world)
    if left:
        wrong.append(f"survivors: {left}")
    return wrong


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=[a.id for a in ATTEMPTS])
def test_attempt_is_blocked_or_harmless(world: World, attempt: Attempt) -> None:
    if not attempt.held_by(world.sandbox.mechanisms):
        pytest.xfail(f"a documented gap without {attempt.needs} (docs/security.md: Where mca runs)")
    before = world.snapshot()
    outcome = world.run(attempt.command)
    assert judge(world, attempt, before, outcome.output) == [], outcome.output


@pytest.mark.parametrize("case", LEGIT, ids=[c[0] for c in LEGIT])
def test_legitimate_work_still_works(world: World, case: tuple[str, str, str]) -> None:
    _, command, expected = case
    outcome = world.run(command)
    assert outcome.code == 0, outcome.output
    assert expected in outcome.output


def test_the_network_granted_for_one_command_reaches_the_listener(world: World) -> None:
    """The network right given to one command (the person's yes to a second run): UDP, TCP
    and IPv6 sockets work in it, in every kind of sandbox; the commands before and after it,
    without the right, reach nothing (each kind of command has a filter of its own)."""
    send = (
        "python3 -c \"import socket as s; s.socket(s.AF_INET, s.SOCK_DGRAM).sendto(b'{token}',"
        " ('127.0.0.1', {udp})); s.socket(s.AF_INET6, s.SOCK_DGRAM).sendto(b'{token}',"
        " ('::ffff:127.0.0.1', {udp})); s.create_connection(('127.0.0.1', {port}))"
        ".sendall(b'{token}')\""
    )
    # (what a TCP connection sent may not be there yet when the listener takes it)
    heard = [b"tcp-connect", f"udp:{world.token}".encode(), f"udp:{world.token}".encode()]

    def received() -> list[bytes]:
        return sorted(
            b"tcp-connect" if g.startswith(b"tcp") else g for g in world.listener.received
        )

    assert world.run(send).code != 0 and world.listener.received == []
    outcome = world.run(send, grant=Grant(network=True))
    assert outcome.code == 0, outcome.output
    deadline = time.monotonic() + 5
    while received() != heard and time.monotonic() < deadline:
        time.sleep(0.05)
    assert received() == heard
    assert world.run(send).code != 0 and received() == heard


def _limits_only(world: World) -> None:
    """Limits do not depend on the Landlock ABI: once per kind of sandbox is enough."""
    if world.sandbox.mechanisms.landlock_abi not in (0, LANDLOCK_ONLY.landlock_abi):
        pytest.skip("the same limits as the 'landlock' case")


def _with_limit(world: World, processes: int) -> World:
    """The world with another process limit for its sandbox (the old one closed)."""
    world.sandbox.close()
    policy = dataclasses.replace(world.sandbox.policy, max_processes=processes)
    return dataclasses.replace(world, sandbox=Sandbox(policy, world.sandbox.mechanisms))


def test_a_fork_bomb_stops_at_the_limit(world: World) -> None:
    """A fork bomb stops at the limit, and nothing of it is left."""
    _limits_only(world)
    how = next(e for e in expected(world.sandbox.mechanisms, root=os.geteuid() == 0)
               if e.prop is Prop.PROCESSES)  # fmt: skip
    if not how.held:
        pytest.xfail(f"a documented gap here: {how.by} (docs/security.md: Where mca runs)")
    # A limit of 64 for the test (the mechanism is the same as at the default's 1,024, and a
    # thousand real processes cost seconds a run). Each child stays one process until it is
    # killed: what started is what ran at once; twice the limit tries past it. Forks in Python,
    # not bash's `&`, which retries a refused fork for 15 s before it gives up.
    world = _with_limit(world, 64)
    bomb = (
        "import os, resource\nfor i in range(128):\n    try:\n        pid = os.fork()\n"
        "    except OSError:\n        break\n    if pid == 0:\n"
        "        open('started', 'a').write('x')\n        os.execvp('sleep', ['sleep', '600'])\n"
        "print('limit', resource.getrlimit(resource.RLIMIT_NPROC)[0])"
    )
    outcome = world.run(f"python3 -c {shlex.quote(bomb)}", timeout=120)
    started = (world.ws / "started").read_text().count("x")
    if world.sandbox.mechanisms.user_namespaces or os.geteuid() == 0:
        assert 0 < started <= 64, outcome.output[-300:]  # its own count: exact
    else:
        # RLIMIT_NPROC counts every task of the user, counted at the start: those the user's
        # other programs end meanwhile (a parallel suite's bombs) leave as many more, so the
        # count is not exact; the limit the kernel enforces is set, and the bomb stopped
        limit = int(outcome.output.split("limit", 1)[1].split()[0])
        assert limit >= 0 and 0 < started < 128, outcome.output[-300:]
    assert wait_gone(world, 30) == []


def test_a_ten_gigabyte_file_is_refused(world: World) -> None:
    _limits_only(world)
    outcome = world.run(
        "truncate -s 10G big1; fallocate -l 10G big2; dd if=/dev/zero of=big3 bs=1M count=1"
        " seek=10239 2>/dev/null; true"
    )
    limit = world.sandbox.policy.max_file_bytes
    sizes = {p.name: p.stat().st_size for p in world.ws.glob("big*")}
    assert all(size <= limit for size in sizes.values()), (sizes, outcome.output)


def test_mca_home_is_neither_readable_nor_writable(world: World) -> None:
    mca_home = world.root / "mcahome"
    before = (mca_home / "config.toml").read_bytes()
    outcome = world.run("cat {mca_home}/config.toml; ls {mca_home}; echo x > {mca_home}/new; true")
    assert world.secrets[2] not in outcome.output
    assert (mca_home / "config.toml").read_bytes() == before
    assert not (mca_home / "new").exists()
