"""Every wall of the sandbox explains itself and can be lifted once: a write outside the
workspace names its path and is offered again with that directory writable; config.toml's
`sandbox_writable` opens trusted caches for good; `allow_git` opens `.git/`; the read-only
approval mode runs commands in a sandbox where nothing is writable. Judged on disk (the world's
oracle: nothing outside changed unless lifted, lifted only once), under every mechanism here."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mca.config.settings import load_settings
from mca.errors import ConfigError, ToolError
from mca.events import Event
from mca.sandbox.box import Sandbox
from mca.sandbox.probe import probe
from mca.sandbox.rights import Grant, Mode, Policy, build_policy, secret_paths, unwritable
from mca.sandbox.walls import command_paths, find, needed, refused_paths
from mca.session.faces import HeadlessUI
from mca.text.diff import FileDiff
from mca.tools import get_tool
from mca.tools.allow import Answer, CommandQuestion
from mca.tools.base import Approvals, Asker, ToolEnv, TurnState
from mca.tools.command import execute
from mca.workspace.store import WorkspaceStore
from mca.workspace.walk import OFF
from tests.sandbox.mechanisms import chosen, used
from tests.sandbox.world import World, build_world, wait_gone
from tests.security.world import tree_digest

# Only the kinds of sandbox: the Landlock ABIs change nothing about writing a directory.
KINDS = chosen(only=("namespaces", "namespaces-only", "landlock"))

# What programs print when a sandbox refuses a write, and the path each names.
REFUSALS = [
    ("touch: cannot touch '../outside/x.txt': Read-only file system", "../outside/x.txt"),
    ("mkdir: cannot create directory ‘/h/.cache/x’: Read-only file system", "/h/.cache/x"),
    ("/bin/bash: line 1: /o/file: Read-only file system", "/o/file"),
    ("OSError: [Errno 30] Read-only file system: '/h/.cache/y'", "/h/.cache/y"),
    (
        "PermissionError: [Errno 13] Permission denied: '/h/.cache/pre-commit'",
        "/h/.cache/pre-commit",
    ),
    (
        "go: failed to initialize build cache at /h/.cache/go-build:"
        " mkdir /h/.cache/go-build: read-only file system",
        "/h/.cache/go-build",
    ),
    (
        "error: Failed to initialize cache at `/h/.cache/uv`\n  Caused by: failed to create"
        " directory `/h/.cache/uv`: Read-only file system (os error 30)",
        "/h/.cache/uv",
    ),
    (
        "error: failed to create directory `/h/.cargo/registry/cache`\n\nCaused by:\n"
        "  Read-only file system (os error 30)",
        "/h/.cargo/registry/cache",
    ),
    (
        "npm error code EROFS\nnpm error syscall mkdir\nnpm error path /h/.npm/_cacache",
        "/h/.npm/_cacache",
    ),
    ("npm ERR! Error: EACCES: permission denied, mkdir '/h/.npm/_cacache'", "/h/.npm/_cacache"),
    ("cp: cannot create regular file '/o/dir/hostname': Permission denied", "/o/dir/hostname"),
]


@pytest.mark.parametrize(("output", "path"), REFUSALS, ids=[r[1] for r in REFUSALS])
def test_the_path_a_refusal_names_is_found(output: str, path: str) -> None:
    assert refused_paths(output) == [path]


def test_output_without_a_refusal_names_nothing() -> None:
    assert refused_paths("wrote '/o/x'\nall good") == []
    assert refused_paths("touch: cannot touch 'x': Read-only file system") == []  # in the ws


# What programs print when seccomp refuses their socket (no namespaces, no network).
NO_SOCKET = [
    "bash: socket: Operation not permitted\nbash: line 1: /dev/udp/127.0.0.1/9: Operation not"
    " permitted",
    "socket: Operation not permitted\nssh: connect to host 127.0.0.1 port 22: failure",
    "dial tcp 10.0.0.1:443: socket: operation not permitted",
    "connect EPERM 127.0.0.1:9 - Local (undefined:undefined)",
    "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
    '  File "/usr/lib/python3.11/socket.py", line 232, in __init__\n    _socket.socket.__init__'
    "(self, family, type, proto, fileno)\nPermissionError: [Errno 1] Operation not permitted",
]


@pytest.mark.parametrize("output", NO_SOCKET)
def test_a_refused_socket_asks_for_the_network(output: str) -> None:
    assert needed(output, [], network=False).network
    assert not needed("chmod: changing permissions of 'f': Operation not permitted", [],
                      network=False).network  # fmt: skip


def test_the_paths_a_command_names() -> None:
    command = "mkdir -p ~/.cache/x && echo hi >/opt/y; cat ../z src/a 'b c'"
    assert command_paths(command) == ["~/.cache/x", "/opt/y", "../z"]


def test_what_can_never_be_made_writable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    secrets = secret_paths(home, tmp_path / "mcahome", ("~/work/.env",))
    refused = {
        "/": "the whole file system",
        "/proc/self": "the kernel's",
        str(home): "your home directory",
        str(tmp_path): "your home directory or holds it",
        str(home / ".ssh"): "one of your secrets (~/.ssh)",
        str(home / ".ssh" / "keys"): "one of your secrets (~/.ssh)",
        str(home / ".config"): "holds one of your secrets (~/.config/gh)",
        str(home / "work"): "holds one of your secrets (~/work/.env)",
        str(tmp_path / "mcahome" / "cache"): "one of your secrets",
        "relative/cache": "not an absolute path",
    }
    for path, why in refused.items():
        assert why in unwritable(Path(path), home, secrets), path
    for fine in (home / ".cache" / "uv", home / ".npm", Path("/opt/cache")):
        assert unwritable(fine, home, secrets) == "", fine


def _settings(tmp_path: Path, toml: str) -> Path:
    mca_home = tmp_path / "mcahome"
    mca_home.mkdir(exist_ok=True)
    (mca_home / "config.toml").write_text(toml)
    (mca_home / "config.toml").chmod(0o600)
    return mca_home


def test_sandbox_writable_is_checked_at_start_up_naming_the_setting(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"HOME": str(tmp_path / "home"), "MCA_HOME": str(tmp_path / "mcahome")}
    for bad, why in (
        ('["~"]', "your home"),
        ('["/"]', "whole file system"),
        ('["~/.ssh"]', "secret"),
    ):
        _settings(tmp_path, f'mode = "auto-edit"\nsandbox_writable = {bad}\n')
        with pytest.raises(ConfigError) as info:
            load_settings(env, workspace=ws)
        message = str(info.value)
        assert "config.toml line 2 (sandbox_writable)" in message and why in message, message
        assert "\n" not in message
    _settings(tmp_path, 'sandbox_writable = ["~/.cache/uv", "/opt/x"]\nallow_git = true\n')
    s = load_settings(env, workspace=ws)
    assert s.sandbox_writable == (tmp_path / "home" / ".cache" / "uv", Path("/opt/x"))
    assert s.allow_git
    with pytest.raises(ConfigError, match="MCA_SANDBOX_WRITABLE"):
        load_settings({**env, "MCA_SANDBOX_WRITABLE": "/"}, workspace=ws)
    assert load_settings(env, workspace=ws, overrides={"allow_git": True}).allow_git


# -- the walls, in a real sandbox under each mechanism ----------------------------------------


@pytest.fixture(params=sorted(KINDS) or ["none"])
def world(request: pytest.FixtureRequest, world_root: Path) -> Iterator[World]:
    if request.param == "none":
        pytest.skip("no sandbox mechanism on this system")
    mech = KINDS[request.param]
    used(mech)
    w = build_world(world_root, mech)
    (w.home / ".cache").mkdir()
    yield w
    w.sandbox.close()
    w.listener.close()


def _with(world: World, policy: Policy) -> World:
    """The world with another policy for its sandbox (the old sandbox closed)."""
    world.sandbox.close()
    return dataclasses.replace(world, sandbox=Sandbox(policy, world.sandbox.mechanisms))


@pytest.mark.slow
def test_a_granted_directory_is_writable_for_that_command_only(world: World) -> None:
    before = world.snapshot()
    grant = Grant(writable=(world.outside / "dir",))
    done = world.run("touch {outside}/dir/new && touch {outside}/beside", grant=grant)
    assert (world.outside / "dir" / "new").exists(), done.output
    assert not (world.outside / "beside").exists()  # only the directory granted
    world.run("touch {outside}/dir/again")  # the next command has no grant
    assert not (world.outside / "dir" / "again").exists()
    after = world.snapshot()
    outside = {k: v for k, v in tree_digest(world.outside).items() if k != "dir/new"}
    assert outside == before["outside"]
    assert after["home"] == before["home"] and after["git"] == before["git"]


@pytest.mark.slow
def test_a_writable_cache_keeps_the_secrets_beside_it_closed(world: World) -> None:
    grant = Grant(writable=(world.home / ".cache",))
    done = world.run("cat {home}/.ssh/id_rsa {home}/.aws/credentials; touch {home}/.cache/x", grant)
    assert (world.home / ".cache" / "x").exists()
    assert not any(s in done.output for s in world.secrets)
    done = world.run("echo x > {home}/.ssh/planted; echo x > {home}/.bashrc", grant)
    assert not (world.home / ".ssh" / "planted").exists()
    assert (world.home / ".bashrc").read_text() == "# bashrc\n"


@pytest.mark.slow
def test_config_writable_directories_are_writable_and_made_when_missing(world: World) -> None:
    uv = world.home / ".cache" / "uv"
    w = _with(world, dataclasses.replace(world.sandbox.policy, writable=(uv,)))
    assert not uv.exists()
    done = w.run("mkdir -p {home}/.cache/uv/a && touch {home}/.cache/uv/a/b {home}/.cache/go")
    assert (uv / "a" / "b").exists(), done.output
    assert not (world.home / ".cache" / "go").exists()
    assert "~/.cache/uv writable" in w.sandbox.describe()
    ro = w.sandbox.read_only()  # read-only mode: not even the configured caches
    execute(w.fill("touch {home}/.cache/uv/c; touch made"), str(w.ws), 30, sandbox=ro)
    assert not (uv / "c").exists() and not (w.ws / "made").exists()
    w.sandbox.close()


@pytest.mark.slow
def test_allow_git_opens_git_and_nothing_else_protected(world: World) -> None:
    w = _with(world, dataclasses.replace(world.sandbox.policy, write_git=True))
    (w.ws / "f.txt").write_text("x\n")
    commit = "git add f.txt && git -c user.name=t -c user.email=t@t commit -qm one"
    done = w.run(f"{commit}; echo x > conf/evil; echo x > .mca/evil2")
    log = subprocess.run(
        ["git", "-C", str(w.ws), "log", "--oneline"], capture_output=True, text=True
    )
    assert "one" in log.stdout, done.output
    assert not (w.ws / "conf" / "evil").exists() and not (w.ws / "conf" / "evil2").exists()
    assert w.sandbox.summary() == "sandboxed: workspace-write, no network, .git/ writable"
    w.sandbox.close()


# -- through run_command: the question, the answer, the disk ----------------------------------


class Scripted:
    """An asker that answers command questions from a list and records them."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.questions: list[CommandQuestion] = []

    def approve(self, question: CommandQuestion) -> Answer:
        self.questions.append(question)
        return self.answers.pop(0)

    def approve_write(self, path: str, reason: str, diff: FileDiff) -> bool:
        return False

    def approve_edit(self, path: str, diff: FileDiff) -> bool:
        return True


def _env(world: World, asker: Asker, mode: str = "auto-edit") -> tuple[ToolEnv, list[Event]]:
    seen: list[Event] = []
    store = WorkspaceStore(world.ws, world.root / "store", "t1", "20260101T000000", OFF)
    return ToolEnv(store, Approvals(asker, mode), seen.append, sandbox=world.sandbox), seen


def _run(env: ToolEnv, command: str) -> tuple[bool, str]:
    try:
        return True, get_tool("run_command").run(env, TurnState(1), {"command": command})
    except ToolError as e:
        return False, str(e)


@pytest.mark.slow
def test_a_write_outside_names_its_path_and_is_lifted_once(world: World) -> None:
    asker = Scripted(Answer.YES, Answer.NO)
    env, _ = _env(world, asker, "yolo")
    before = world.snapshot()
    ok, result = _run(env, "touch ../outside/dir/x.txt")
    q = asker.questions[0]
    assert q.wall == "writing outside the workspace (the output names '../outside/dir/x.txt')"
    assert q.more == f"{world.outside / 'dir'} writable"
    assert ok and "(the user allowed it once)" in result, result
    assert (world.outside / "dir" / "x.txt").exists()
    ok, result = _run(env, "touch ../outside/dir/y.txt")  # asked again: declined
    assert len(asker.questions) == 2 and not ok
    assert "the user did not allow more" in result and "sandbox_writable" in result
    outside = tree_digest(world.outside)
    assert {k: v for k, v in outside.items() if k != "dir/x.txt"} == before["outside"]
    assert world.snapshot()["home"] == before["home"] and wait_gone(world) == []


@pytest.mark.slow
def test_nobody_to_ask_is_said_as_such(world: World) -> None:
    env, _ = _env(world, HeadlessUI(), "yolo")
    (world.home / ".cache").mkdir(exist_ok=True)  # an ordinary user's home may have none yet
    ok, result = _run(env, f"mkdir {world.home}/.cache/tool")
    assert not ok and not (world.home / ".cache" / "tool").exists()
    assert "nobody was asked" in result and "the user did not allow" not in result


@pytest.mark.slow
def test_a_secret_is_said_closed_and_never_offered(world: World) -> None:
    asker = Scripted()
    env, _ = _env(world, asker, "yolo")
    ok, result = _run(env, f"echo x > {world.home}/.ssh/planted")
    assert not ok and asker.questions == []
    assert "~/.ssh stays closed to commands: it is one of your secrets" in result.replace(
        str(world.home), "~"
    )


@pytest.mark.slow
def test_read_only_mode_runs_commands_where_nothing_is_writable(world: World) -> None:
    w = _with(world, dataclasses.replace(world.sandbox.policy, network=True, write_git=True))
    asker = Scripted()
    env, _ = _env(w, asker, "read-only")
    before = w.snapshot()
    listing = sorted(os.listdir(w.ws))
    ok, result = _run(env, "git status --short; ls")
    assert ok and "src" in result, result
    port = w.listener.tcp_port
    hostile = (
        "touch made; echo x > src/app.py; echo x > {outside}/new; mkdir {home}/.cache/x;"
        " git -c user.name=a -c user.email=b@c commit --allow-empty -qm x;"
        f" python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\""
    )
    ok, result = _run(env, w.fill(hostile))
    assert not ok and asker.questions == []  # nothing asked, nothing lifted
    assert "read-only mode" in result
    assert sorted(os.listdir(w.ws)) == listing
    assert (w.ws / "src" / "app.py").read_text().startswith("def add")
    assert w.snapshot() == before and w.listener.received == []
    w.sandbox.close()


def test_read_only_mode_refuses_where_there_is_no_sandbox(tmp_path: Path) -> None:
    policy = build_policy(Mode.OFF, tmp_path, tmp_path / "home", tmp_path / "mh")
    box = Sandbox(policy, probe())
    store = WorkspaceStore(tmp_path, tmp_path / "store", "t1", "20260101T000000", OFF)
    env = ToolEnv(store, Approvals(HeadlessUI(), "read-only"), lambda e: None, sandbox=box)
    ok, result = _run(env, "touch made")
    assert not ok and not (tmp_path / "made").exists()
    assert result.count("\n") == 0 and "there is none here" in result


def test_allow_git_opens_the_workspace_s_own_git_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    policy = build_policy(Mode.WORKSPACE_WRITE, ws, tmp_path / "home", tmp_path / "mh")
    nested = (*policy.protected, ws / "vendor" / "lib" / ".git")  # a nested repository's
    policy = dataclasses.replace(policy, protected=nested, write_git=True)
    assert ws / ".git" not in policy.held(Grant())
    assert ws / ".mca" in policy.held(Grant()) and nested[-1] in policy.held(Grant())
    assert policy.held(Grant(write_protected=True)) == ()  # the person's yes: all, once
    assert policy.read_only().held(Grant()) == nested  # read-only: nothing opens
    assert policy.read_only().writable_dirs(Grant(writable=(tmp_path,))) == ()


def test_a_wall_inside_the_workspace_is_not_a_write_outside(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    policy: Policy = build_policy(Mode.WORKSPACE_WRITE, ws, tmp_path / "home", tmp_path / "mh")
    out = f"fatal: Unable to create '{ws}/.git/index.lock': Read-only file system"
    wall = find(out, [], "git commit", policy, failed=True)
    assert wall.grant == Grant(write_protected=True)
    assert (
        find("touch: cannot touch 'x': Read-only file system", [], "", policy, failed=True).grant
        == Grant()
    )
    wall = find("touch: cannot touch '../o/x': Permission denied", [], "", policy, failed=False)
    assert not wall.grant  # a command that succeeded is offered nothing


UNREADABLE = """
import os, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from mca.sandbox.rights import Mode, build_policy
from mca.sandbox.walls import find
if os.geteuid() == 0:  # everything imported first: the interpreter may be under root's home
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
policy = build_policy(Mode.WORKSPACE_WRITE, Path("/nonexistent/ws"), Path("/nonexistent"),
                      Path("/nonexistent/.mca"))
out = "ls: cannot access '/proc/1/fd/7/x': Permission denied\\n"
wall = find(out, [], "ls /proc/1/fd/7/x", policy, failed=True)
print("ok", wall.what)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/1/fd"), reason="no /proc here")
def test_a_path_this_user_may_not_look_at_does_not_fail_the_command() -> None:
    """A command that prints a path under another user's /proc (or any folder closed to this
    user): looking at what exists there raises EACCES in pathlib, and main failed the whole
    run_command (the model lost the output). Run as an ordinary user (root sees everything)."""
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", UNREADABLE, str(repo)], capture_output=True, text=True, cwd="/"
    )
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr
