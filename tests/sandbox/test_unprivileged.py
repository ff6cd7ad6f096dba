"""mca as the people who use it run it: an ordinary account, here one that cannot read its own
/proc entries (as with hidepid, a non-dumpable process, or a uid switched from root on these
machines), driven from a root test through tests/confine.py. The oracles stay with the test:
the disk outside, the CSV's rows, what the command printed."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mca.sandbox.probe import probe
from tests.unpriv import REPO, as_user, give, skip_reason, skip_unless_proc_can_be_hidden

# With /proc hidden an account has no user namespaces (it cannot write its id maps), so what
# contains its commands is Landlock, where the kernel (or tests/confine.py) leaves it.
MECH = probe()
CONTAINED = MECH.landlock_abi >= 1
pytestmark = pytest.mark.skipif(bool(skip_reason()), reason=skip_reason() or "-")


def _script(path: Path, *commands: str) -> Path:
    lines = [
        {"content": "", "tool_calls": [{"name": "run_command", "arguments": {"command": c}}]}
        for c in commands
    ]
    lines.append({"content": "done"})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _env(root: Path, **more: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(root), "MCA_HOME": str(root / "home"), **more}


@pytest.fixture
def root() -> Iterator[Path]:
    """A directory the account owns (pytest's own base is root's, closed to others)."""
    top = Path(os.environ.get("MCA_UNPRIV_TMP", "/tmp")) / f"mca-unpriv-{os.getpid()}"
    shutil.rmtree(top, ignore_errors=True)
    top.mkdir(mode=0o755)
    (top / "ws").mkdir()
    (top / "outside").mkdir()
    yield top
    shutil.rmtree(top, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("refuse", [(), ("no-userns",)], ids=["userns", "no-userns"])
def test_a_sandboxed_command_runs_for_an_ordinary_user(root: Path, refuse: tuple[str]) -> None:
    """The default mode runs commands in the sandbox: they run, inside writes land, outside
    writes do not (main: every command failed with `landlock add_rule /`). Where nothing
    can contain them, the command asks, and -p without --yes runs nothing."""
    script = _script(
        root / "s.jsonl",
        f"echo made > inside.txt; id -u; echo x > {root}/outside/escaped; echo after",
    )
    give(root)
    proc = subprocess.run(
        [*as_user(*refuse), "-C", str(root / "ws"), "-p", "go", "--json"],
        env=_env(root, MCA_MOCK_SCRIPT=str(script)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)["tool_calls"][0]["result"]
    assert not (root / "outside" / "escaped").exists(), result
    if not CONTAINED:
        assert "commands run unsandboxed" in proc.stderr, proc.stderr
        assert result.startswith("not run: nobody was asked"), result
        assert not (root / "ws" / "inside.txt").exists()
        return
    assert "landlock" not in result.lower(), result
    assert "65534" in result and "after" in result, result
    assert (root / "ws" / "inside.txt").read_text() == "made\n"


def _others_get_userns() -> bool:
    knob = Path("/proc/sys/kernel/unprivileged_userns_clone")
    return MECH.user_namespaces and not (knob.exists() and knob.read_text().strip() == "0")


def _listening(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.listen(4)
    s.setblocking(False)
    return s


def _heard(listeners: list[socket.socket]) -> list[str]:
    got = []
    for s in listeners:
        with contextlib.suppress(BlockingIOError, OSError):
            s.accept()[0].close()
            got.append(s.getsockname())
    return got


@pytest.mark.slow
@pytest.mark.parametrize("refuse", [(), ("no-userns",)], ids=["userns", "no-userns"])
def test_an_ordinary_users_repositories_keys_and_sockets(root: Path, refuse: tuple[str]) -> None:
    """Issue 33 as an ordinary account: a nested repository's config is as it was (main: the
    command wrote core.fsmonitor into it), another agent's key in ~/.codex is printed nowhere,
    not even backwards (main: it was readable), and the account's $XDG_RUNTIME_DIR socket and
    ssh-agent hear nothing where user namespaces hide them (main: both were reached). Without
    namespaces that last is the documented gap, and start-up says so."""
    userns = not refuse and _others_get_userns()  # (with /proc hidden, none: it is shown)
    # (before any socket is made: as_user may skip the test where /proc cannot be hidden)
    mca = [*as_user(*refuse, hide_proc=bool(refuse)), "-C", str(root / "ws"), "-p", "go"]
    key = "PLANTED-CODEX-" + os.urandom(6).hex()
    (root / ".codex").mkdir()
    (root / ".codex" / "auth.json").write_text(f'{{"OPENAI_API_KEY": "{key}"}}\n')
    subprocess.run(["git", "init", "-q", str(root / "ws" / "vendor" / "lib")], check=True)
    config = root / "ws" / "vendor" / "lib" / ".git" / "config"
    before = config.read_text()
    (root / "xdg").mkdir(mode=0o700)
    (root / "agent").mkdir(mode=0o700)
    listeners = [_listening(root / "xdg" / "bus"), _listening(root / "agent" / "agent.sock")]
    connect = (
        "python3 -c \"import os, socket\nfor p in (os.environ['XDG_RUNTIME_DIR'] + '/bus',"
        f" {str(root / 'agent' / 'agent.sock')!r}):\n s = socket.socket(socket.AF_UNIX)\n try:\n"
        "  s.connect(p); print('REACHED:' + p)\n except OSError as e:\n  print('not', e)\""
    )
    script = _script(
        root / "s.jsonl",
        "git config -f vendor/lib/.git/config core.fsmonitor payload; echo wrote",
        "cat ~/.codex/auth.json; rev ~/.codex/auth.json; echo read",
        connect,
    )
    give(root)
    env = _env(root, MCA_MOCK_SCRIPT=str(script), XDG_RUNTIME_DIR=str(root / "xdg"))
    env["SSH_AUTH_SOCK"] = str(root / "agent" / "agent.sock")
    try:
        proc = subprocess.run(
            [*mca, "--json"], env=env, capture_output=True, text=True, timeout=180
        )
        heard = _heard(listeners)
    finally:
        for s in listeners:
            s.close()
    assert proc.returncode == 0, proc.stderr
    results = [c["result"] for c in json.loads(proc.stdout)["tool_calls"]]
    everything = proc.stdout + proc.stderr
    assert config.read_text() == before, results[0]
    if not CONTAINED and not userns:
        return  # nothing contains a command: each asks, and -p declines
    assert key not in everything and key[::-1] not in everything, results[1]
    if userns:
        assert heard == [] and "REACHED:/" not in results[2], results[2]
    elif MECH.landlock_abi < 9:  # the documented gap: said at start-up
        assert "unix sockets outside the workspace: nothing" in proc.stderr, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("hide_proc", [False, True], ids=["proc", "hidden-proc"])
def test_a_class_is_graded_by_an_ordinary_user(root: Path, hide_proc: bool) -> None:
    """`mca lab grade` as that account grades the starter as root does (main: every hand-in
    was 'mca could not grade it' and 0 points), or refuses before the first hand-in and says
    why where nothing contains student code. Where /proc is hidden too (no user namespaces
    then, no pids cgroup: Landlock and the command's process group, which no process may
    leave), it grades the same (before: it refused, 'processes left running')."""
    lab = root / "lab"
    subprocess.run(
        [sys.executable, "-m", "mca", "lab", "init", str(lab)], check=True, capture_output=True
    )
    (root / "class" / "alice").mkdir(parents=True)
    shutil.copy(lab / "exercises.py", root / "class" / "alice" / "exercises.py")
    give(root)
    grade = ["lab", "grade", str(root / "class"), "--check-seconds", "5"]
    proc = subprocess.run(
        [*as_user(hide_proc=hide_proc), *grade],
        env=_env(root),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=root,
    )
    if not CONTAINED and not (MECH.user_namespaces and not hide_proc):
        assert proc.returncode == 1 and "no sandbox mechanism here" in proc.stderr, proc.stderr
        return
    assert proc.returncode == 0, proc.stderr[-2000:]
    (row,) = csv.DictReader(io.StringIO(proc.stdout))
    assert row["status"] == "ok", row
    assert int(row["total"]) == 2, row  # what the starter scores (two exercises need no code)


@pytest.mark.slow
def test_an_ordinary_user_gets_the_namespaces_the_kernel_allows(root: Path) -> None:
    """mca is non-dumpable, so its forked child's /proc/self files are root's: on main no
    ordinary user could write its id maps, and every one got Landlock alone."""
    knob = Path("/proc/sys/kernel/unprivileged_userns_clone")
    if not MECH.user_namespaces or (knob.exists() and knob.read_text().strip() == "0"):
        pytest.skip("no unprivileged user namespaces on this system")
    give(root)
    proc = subprocess.run(
        [*as_user(hide_proc=False), "sandbox", "check", "--json"],
        env=_env(root),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
    )
    report = json.loads(proc.stdout)
    assert "user namespaces (mount, PID, network)" in report["mechanisms"], report
    assert report["held"] and proc.returncode == 0, report


BUSY = """
import sys, threading
held = threading.Event()
for _ in range(1500):  # a browser and an editor: RLIMIT_NPROC counts each thread
    threading.Thread(target=held.wait, daemon=True).start()
{boot}
"""


@pytest.mark.slow
def test_a_busy_desktop_still_runs_commands(root: Path) -> None:
    """RLIMIT_NPROC counts an ordinary user's threads too: with 1,500 already running (main
    counted processes, and every fork of `make -j` failed), a command and its parallel jobs
    run; without a user namespace the limit stands above what the user runs."""
    script = _script(
        root / "s.jsonl", "for i in 1 2 3 4 5 6 7 8; do (sleep 0.2; echo job) & done; wait"
    )
    give(root)
    prefix = as_user("no-userns", hide_proc=False)
    prefix[-1] = BUSY.format(boot=prefix[-1])
    proc = subprocess.run(
        [*prefix, "-C", str(root / "ws"), "-p", "go", "--json"],
        env=_env(root, MCA_MOCK_SCRIPT=str(script)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)["tool_calls"][0]["result"]
    if CONTAINED:
        assert result.splitlines().count("job") == 8, result


def test_paths_stay_contained_without_proc(tmp_path: Path) -> None:
    """The file tools' check that an opened file is inside the workspace holds where /proc is
    hidden (main: the check was skipped there, and a linked directory read outside)."""
    skip_unless_proc_can_be_hidden()
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET\n")
    (ws / "link").symlink_to(outside)
    code = (
        "import sys; from pathlib import Path; from mca.fs.careful import read_head\n"
        "try:\n"
        f"    print(read_head(Path({str(ws / 'link' / 'secret.txt')!r}),"
        f" Path({str(ws)!r}), limit=100))\n"
        "except OSError as e:\n"
        "    print(type(e).__name__)\n"
    )
    confine = [sys.executable, str(REPO / "tests" / "confine.py"), "--hide-proc", "--"]
    proc = subprocess.run(
        [*confine, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ContainmentError", proc.stdout
