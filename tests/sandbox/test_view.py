"""Reads by allow-list (Policy.read_only_from, mca/sandbox/view.py): what the child's view is
made of, and what a command in it can read, under each mechanism this system has. A policy
without an allow-list (every agent command's) keeps the whole system minus the secrets."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mca.sandbox.box import Sandbox
from mca.sandbox.probe import Mechanisms, probe
from mca.sandbox.rights import Grant, Mode, build_policy
from mca.sandbox.view import DIR, FILE, LINK, MASK, TREE, WRITABLE, layout, python_runtime
from mca.text.sanitize import REDACTED, scrub

FULL = probe()


def _kinds() -> list[pytest.param]:  # type: ignore[valid-type]
    out = []
    if FULL.landlock_abi and FULL.user_namespaces:
        out.append(pytest.param(FULL, id="landlock+namespaces"))
    if FULL.landlock_abi:
        out.append(pytest.param(dataclasses.replace(FULL, user_namespaces=False), id="landlock"))
    if FULL.user_namespaces:
        out.append(pytest.param(dataclasses.replace(FULL, landlock_abi=0), id="namespaces"))
    return out or [pytest.param(None, marks=pytest.mark.skip(reason="no sandbox here"))]


# -- pure: the layout --------------------------------------------------------------------------
def test_the_view_holds_what_is_named_and_the_way_to_it(tmp_path: Path) -> None:
    (tmp_path / "lib" / "py").mkdir(parents=True)
    (tmp_path / "lib" / "py" / "os.py").write_text("x")
    (tmp_path / "lib" / "py" / "site-packages").mkdir()
    (tmp_path / "lib" / "secret.txt").write_text("no")
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").symlink_to(tmp_path / "lib" / "py" / "os.py")
    (tmp_path / "short").symlink_to("lib")
    entries = layout(
        [tmp_path / "venv" / "bin" / "python", tmp_path / "short" / "py", tmp_path / "nothing"],
        [tmp_path / "tmp-private"],
        [tmp_path / "lib" / "py" / "site-packages", tmp_path / "lib" / "secret.txt"],
    )
    made = {
        os.fsdecode(path)[len(str(tmp_path)) :]: (kind, target) for kind, path, target, _ in entries
    }
    assert made["/venv/bin/python"] == (LINK, os.fsencode(tmp_path / "lib" / "py" / "os.py"))
    assert made["/short"] == (LINK, b"lib")
    assert made["/lib/py"][0] == TREE and made["/lib"][0] == DIR and made["/venv"][0] == DIR
    assert "/lib/py/os.py" not in made  # it comes with its tree
    assert made["/lib/py/site-packages"] == (MASK, b"d")  # covered inside the tree
    assert "/lib/secret.txt" not in made and "/nothing" not in made and "/tmp-private" not in made
    depth = [os.fsdecode(p).count("/") for kind, p, _, _ in entries if kind != MASK]
    assert depth == sorted(depth)  # the way to each entry is made first
    (tmp_path / "tmp-private").mkdir()
    assert (WRITABLE, os.fsencode(tmp_path / "tmp-private")) in {
        e[:2] for e in layout([], [tmp_path / "tmp-private"])
    }
    assert layout([tmp_path / "lib" / "secret.txt"])[-1][0] == FILE


def test_the_runtime_is_the_interpreter_and_its_standard_library_not_the_system() -> None:
    runtime = {str(p) for p in python_runtime()}
    assert sys.executable in runtime and os.path.dirname(os.__file__) in runtime
    # the venv itself may live in a home (an ordinary user's checkout): nothing else of one
    venv = (sys.prefix + os.sep, sys.base_prefix + os.sep)
    own = {sys.executable, os.path.realpath(sys.executable), sys.prefix, sys.base_prefix}
    beyond = [p for p in runtime if p not in own and not p.startswith(venv)]
    assert not any(p.startswith(("/home", "/etc/shadow", "/root/.ssh")) for p in beyond), beyond
    assert not any(p.endswith(("site-packages", "dist-packages")) for p in runtime)
    assert "/etc" not in runtime and "/" not in runtime


def test_an_agent_commands_policy_has_no_allow_list(tmp_path: Path) -> None:
    for mode in Mode:
        assert build_policy(mode, tmp_path, tmp_path / "h", tmp_path / "m").read_only_from is None


def test_a_key_cut_short_is_scrubbed_too() -> None:
    key = "sk-proj-" + "a1b2c3d4" * 6
    assert scrub(f"x {key[:20]}", [key]) == f"x {key[:20]}"  # whole keys only, by default
    assert scrub(f"x {key[:20]}", [key], cut=True) == f"x {REDACTED}"
    assert scrub("sk-proj-abc and more", [key], cut=True) == "sk-proj-abc and more"


# -- a command in the view ---------------------------------------------------------------------
PROBE = """
import json, os, sys
out = {}
for p in sys.argv[1:]:
    try:
        out[p] = open(p).read() if os.path.isfile(p) else sorted(os.listdir(p))
    except OSError as e:
        out[p] = type(e).__name__
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.parametrize("mech", _kinds())
def test_a_command_reads_the_allow_list_and_nothing_else(tmp_path: Path, mech: Mechanisms) -> None:
    ws, home, elsewhere = tmp_path / "ws", tmp_path / "home", tmp_path / "elsewhere"
    for d in (ws, home, elsewhere):
        d.mkdir()
    (ws / "data.txt").write_text("allowed")
    (home / ".bashrc").write_text("export OPENAI_API_KEY=planted-key")
    (elsewhere / "solution.py").write_text("planted-solution")
    readable = (*map(str, python_runtime()), str(ws))
    policy = build_policy(Mode.READ_ONLY, ws, home, tmp_path / "mca", read_only_from=readable)
    box = Sandbox(policy, mech, reuse=False)
    try:
        launch = box.prepare(Grant(), {"PATH": "/usr/bin:/bin"})
        assert bool(launch.setup.plan and launch.setup.plan.view) == mech.user_namespaces
        paths = [
            str(p)
            for p in (
                ws / "data.txt",
                home / ".bashrc",
                home,
                elsewhere / "solution.py",
                elsewhere,
                tmp_path,
            )
        ]
        argv = [sys.executable, "-S", "-c", PROBE, *paths]
        proc = box.popen(argv, launch, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ws))
        out, err = proc.communicate(timeout=60)
        box.finish(launch, proc.pid)
    finally:
        box.close()
    assert proc.returncode == 0, err
    seen = json.loads(out)
    assert seen[paths[0]] == "allowed"
    for p in paths[1:-1]:
        assert seen[p] in ("PermissionError", "FileNotFoundError"), p
    # a directory on the way: refused (Landlock), or holding nothing but the way on
    assert seen[paths[-1]] in ("PermissionError", ["ws"])
    assert b"planted" not in out


def test_an_agent_commands_sandbox_is_unchanged(tmp_path: Path) -> None:
    """No allow-list: the plan has no view of its own (the whole system, secrets covered)."""
    if not FULL.available:
        pytest.skip("no sandbox here")
    policy = build_policy(Mode.READ_ONLY, tmp_path, tmp_path / "h", tmp_path / "m")
    box = Sandbox(policy, FULL)
    try:
        plan = box.prepare(Grant(), {}).setup.plan
        assert plan is not None and plan.view == b"" and plan.view_entries == ()
    finally:
        box.close()


def test_an_allow_list_is_held_only_by_landlock_or_a_view() -> None:
    """Without Landlock, and with namespaces on a machine whose pivot_root mca does not know
    (i686, armv7l, a 32-bit Python), the view cannot be made: the allow-list would be a deny
    list, so the lab must not call it held (a second look read .git and /etc there)."""
    from mca.sandbox.probe import Mechanisms
    from mca.sandbox.view import allow_list_held

    assert allow_list_held(Mechanisms(7, False, None), pivot_root=-1)
    assert allow_list_held(Mechanisms(0, True, None), pivot_root=155)
    assert not allow_list_held(Mechanisms(0, True, None), pivot_root=-1)
    assert not allow_list_held(Mechanisms(0, False, None), pivot_root=155)


FILL = """
import errno, json, os, sys
where, wrote, files = os.environ["TMPDIR"], 0, 0
try:
    with open(os.path.join(where, "big"), "wb") as f:
        for _ in range(16):
            wrote += f.write(b"x" * 262144)
            f.flush()
except OSError as e:
    full = e.errno
os.remove(os.path.join(where, "big"))
try:
    for files in range(1, 100):
        open(os.path.join(where, f"f{files}"), "wb").close()
except OSError as e:
    many = e.errno
print(json.dumps([wrote, full == errno.ENOSPC, files, many == errno.ENOSPC]), flush=True)
sys.stdin.read()  # held, full, while the grader looks
"""


@pytest.mark.slow
@pytest.mark.parametrize("mech", [k for k in _kinds() if "user_namespaces=True" in repr(k)])
def test_a_sized_tmp_is_the_kernels_limit(tmp_path: Path, mech: Mechanisms) -> None:
    """With a view of its own the child's /tmp is a tmpfs of the policy's size: writing past
    it is ENOSPC, nothing lands on the grader's disk, and the grader sees it full through the
    child's root (mca/lab/scratch.py's Sized)."""
    from mca.lab.scratch import Sized

    ws = tmp_path / "ws"
    ws.mkdir()
    readable = (*map(str, python_runtime()), str(ws))
    policy = build_policy(
        Mode.READ_ONLY, ws, tmp_path / "h", tmp_path / "m", read_only_from=readable
    )
    policy = dataclasses.replace(policy, tmp_size=(1024 * 1024, 20))
    box = Sandbox(policy, mech, reuse=False)
    try:
        launch = box.prepare(Grant(), {"PATH": "/usr/bin:/bin"})
        argv = [sys.executable, "-S", "-c", FILL]
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        proc = box.popen(argv, launch, cwd=str(ws), **pipes)  # type: ignore[arg-type]
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()
        assert line, proc.communicate(timeout=60)
        wrote, full, files, many = json.loads(line)
        assert list(box.tmp().iterdir()) == []  # the grader's disk holds none of it
        said = Sized(Path(f"/proc/{proc.pid}/root{box.tmp()}"), 1, 20)()
        proc.communicate(timeout=60)  # closes its stdin: it ends
        box.finish(launch, proc.pid)
    finally:
        box.close()
    assert full and wrote == 1024 * 1024, wrote  # a page-sized tmpfs of 1 MiB holds 1 MiB
    assert many and files == 21, files  # 20 entries, the 21st refused
    assert said == "its /tmp filled its total of 20 files (the kernel refused more)", said
