"""Student code in mca's sandbox: a hand-in cannot touch a classmate, the grader's output or the
network, and nothing it starts outlives it. Judged on disk, on the wire and in /proc, with an
oracle the hand-ins cannot reach; the audit hook (the second line) is bypassed on purpose by
the hand-ins that need a process, through a reference mca's own modules keep."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from mca.cli.args import parse_command
from mca.errors import McaError
from mca.lab.cli import run
from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits, Sandboxed
from mca.lab.outputs import row
from mca.sandbox.probe import Mechanisms, probe
from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST
from tests.lab.handins import SPAWN as HANDIN_SPAWN
from tests.leftovers import commands_left

pytestmark = pytest.mark.slow  # hand-ins in sandboxes

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
MECH = probe()
needs_sandbox = pytest.mark.skipif(not MECH.available, reason="no Landlock on this kernel")
LIMITS = Limits(seconds=60, check_seconds=10, memory_mb=1024)
SPAWN = HANDIN_SPAWN + "\nimport os, sys\n"  # a process started past the audit hook


def lab(argv: list[str], env: dict[str, str], mechanisms: Mechanisms | None = None) -> int:
    """`mca lab ARGV` with the sandbox's mechanisms given (not probed)."""
    args = parse_command(["lab", *argv])
    assert args is not None
    return run(args, env, mechanisms)


def _serve(listener: socket.socket, got: list[bytes]) -> None:
    listener.settimeout(0.2)
    while not got or got[-1] != b"stop":
        try:
            conn, _ = listener.accept()
            got.append(conn.recv(100) or b"connected")
            conn.close()
        except OSError:
            continue


def survivors(token: str) -> list[str]:
    """What the grading left running: the ended children whose group still holds a process,
    as mca's spawner counts them (no scan of /proc; a child in a PID namespace ends whole).
    The hand-ins' sleepers carry `token` only for a person reading a process list."""
    left = commands_left(0)
    return [f"{left} graded child(ren) left a process running"] if left else []


def rows_of(plan: Plan) -> dict[str, dict[str, Any]]:
    return {g.student: row(g) for g in grade(plan)}


def digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@needs_sandbox
def test_hand_ins_cannot_reach_each_other_the_grader_or_the_network(tmp_path: Path) -> None:
    token = secrets.token_hex(6)
    subs, out = tmp_path / "class", tmp_path / "grades.csv"
    out.write_text("the grader's file\n")
    listener = socket.create_server(("127.0.0.1", 0))
    port, got = listener.getsockname()[1], list[bytes]()
    serving = threading.Thread(target=_serve, args=(listener, got), daemon=True)
    serving.start()
    honest = STARTER + ALL_HONEST + f"\n# secret answer {token}\n"
    attack = f"""
import os, glob
SEEN = []
for _p in glob.glob({str(subs)!r} + "/*/exercises.py") + [{str(out)!r}]:
    try:
        SEEN.append(open(_p).read()[-60:])
    except OSError as e:
        SEEN.append(type(e).__name__)
    try:
        open(_p, "w").write("sabotaged")
    except OSError:
        pass
try:  # past the audit hook where it can be passed (see tests/lab/handins.py)
    _spawn(sys.executable, "-c", "import time\\n"
           "time.sleep(3)\\n"
           "open({str(out)!r}, 'w').write('forged,ok,14/14')  # {token}")
    _spawn(sys.executable, "-c", "import socket\\n"
           "socket.create_connection(('127.0.0.1', {port})).send(b'leak')")
except OSError:
    pass
def judge_triggers(skills, sentence, paths):
    raise RuntimeError(repr(SEEN))
"""
    for name, text in {"alice": honest, "mallory": STARTER + SPAWN + attack}.items():
        (subs / name).mkdir(parents=True)
        (subs / name / "exercises.py").write_text(text)
    before = digest(subs)
    rows = rows_of(Plan(REPO, subs, jobs=2, limits=LIMITS, mechanisms=MECH, deny=(out,)))
    assert digest(subs) == before
    assert rows["alice"]["total"] == 10 and rows["alice"]["status"] == "ok"
    assert rows["mallory"]["status"] == "ok"
    assert "crashed: RuntimeError" in rows["mallory"]["failures"]
    failures = rows["mallory"]["failures"]
    # refused (Landlock), or not there at all (a view of its own: mca/sandbox/view.py)
    assert token not in failures
    assert "PermissionError" in failures or "FileNotFoundError" in failures
    deadline = time.monotonic() + 5
    while survivors(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert survivors(token) == []
    assert out.read_text() == "the grader's file\n"
    got.append(b"stop")
    serving.join(timeout=5)
    listener.close()
    assert got == [b"stop"]


# Code with no audit hook at all, in the sandbox the lab gives a hand-in: it reports what it
# could do on the pipe the grader reads, and leaves children behind that try again later.
RAW = """
import json, os, socket, sys, time
found = {{}}
def attempt(name, fn):
    try:
        fn()
        found[name] = "done"
    except OSError as e:
        found[name] = type(e).__name__
attempt("read a classmate", lambda: open({alice!r}).read())
attempt("write the csv", lambda: open({out!r}, "w").write("forged"))
attempt("connect", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
forks = 0
for _ in range(10):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        sys.argv[0] = "{token}"
        time.sleep(3)
        for path in ({out!r}, {marker!r}):
            try:
                open(path, "w").write("survived")
            except OSError:
                pass
        os._exit(0)
    forks += 1
found["forks"] = forks
os.write(int(sys.argv[2]), json.dumps(found).encode() + b"\\n")
"""


@needs_sandbox
def test_without_the_audit_hook_the_sandbox_still_holds(tmp_path: Path) -> None:
    token = secrets.token_hex(6)
    (tmp_path / "class" / "alice").mkdir(parents=True)
    alice = tmp_path / "class" / "alice" / "exercises.py"
    alice.write_text(STARTER)
    out, marker = tmp_path / "grades.csv", tmp_path / f"marker-{token}"
    out.write_text("the grader's file\n")
    listener = socket.create_server(("127.0.0.1", 0))
    code = RAW.format(
        alice=str(alice),
        out=str(out),
        port=listener.getsockname()[1],
        token=token,
        marker=str(marker),
    )
    launcher = Sandboxed(
        LIMITS,
        MECH,
        tmp_path / "lab",
        [tmp_path / "class", out],
        tmp_path / "mca",
        tmp_path,
        command=lambda fds: [sys.executable, "-c", code, token, str(fds[1])],
    )
    (tmp_path / "lab").mkdir()
    send_r, send_w = os.pipe()
    read_r, read_w = os.pipe()
    with tempfile.TemporaryFile() as err:
        proc = launcher.start((send_r, read_w), err)
        os.close(read_w)
        with os.fdopen(read_r, "rb") as answers:
            found = json.loads(answers.readline() or b"{}")
        launcher.stop(proc)
        launcher.close()
    os.close(send_r)
    os.close(send_w)
    listener.settimeout(0.5)
    with pytest.raises(TimeoutError):
        listener.accept()
    listener.close()
    assert found["read a classmate"] in ("PermissionError", "FileNotFoundError")  # or covered
    assert found["write the csv"] in ("PermissionError", "OSError", "FileNotFoundError")
    assert found["connect"] != "done"
    # the sandbox's own two tasks come first; without a user namespace RLIMIT_NPROC counts all
    # of the user's tasks, counted at the start, and those that end meanwhile (a parallel
    # suite's) leave as many more: there the ten are stopped short, not at an exact count
    if MECH.user_namespaces or os.geteuid() == 0:
        assert found["forks"] <= LIMITS.processes - 2
    else:
        assert found["forks"] < 10
    deadline = time.monotonic() + 5
    while survivors(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert survivors(token) == []
    assert out.read_text() == "the grader's file\n" and not marker.exists()


def test_grading_without_a_sandbox_is_refused_unless_asked_for(tmp_path: Path) -> None:
    (tmp_path / "class" / "bob").mkdir(parents=True)
    (tmp_path / "class" / "bob" / "exercises.py").write_text(STARTER)
    none = Mechanisms(0, False, None)
    argv = ["grade", str(tmp_path / "class")]
    with pytest.raises(McaError, match="--unsandboxed"):
        lab(argv, {"HOME": str(tmp_path)}, none)
    # asked for, it runs each hand-in as an account made for it, or says why it cannot
    # (tests/lab/test_account.py grades that way)
    with pytest.raises(McaError, match="--unsandboxed runs each hand-in as the account"):
        lab([*argv, "--unsandboxed"], {"HOME": str(tmp_path)}, none)


@needs_sandbox
def test_a_looping_or_dying_hand_in_gets_a_fresh_sandbox_for_its_next_check(
    tmp_path: Path,
) -> None:
    subs = tmp_path / "class"
    loops = (
        "\ndef apply_gates(hits, budget, render, in_context, held=None):\n"
        "    while True:\n        pass\n"
    )
    dies = "\nimport os\ndef split_frontmatter(text):\n    os._exit(7)\n"
    for name, text in {"loops": loops, "dies": dies}.items():
        (subs / name).mkdir(parents=True)
        (subs / name / "exercises.py").write_text(STARTER + ALL_HONEST + text)
    limits = Limits(seconds=60, check_seconds=3, memory_mb=1024)  # 1 s: an import under load
    rows = rows_of(Plan(REPO, subs, seeds=1, limits=limits, mechanisms=MECH))
    assert (rows["loops"]["ex5"], rows["loops"]["total"]) == (0, 8)
    assert "timed out after 3 s in apply_gates" in rows["loops"]["failures"]
    assert (rows["dies"]["ex1"], rows["dies"]["total"]) == (0, 8)
    assert (
        "the process ended with exit code 7 while split_frontmatter ran" in rows["dies"]["failures"]
    )
