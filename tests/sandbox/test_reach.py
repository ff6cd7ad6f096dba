"""What a sandboxed command could reach past the fixed walls (mca/sandbox/reach.py): the
repositories inside the workspace (a setting a command leaves that makes git run a program is
said, to the person and in the tool result), the places unix sockets live (hidden with
namespaces, keeping what programs need from /run), other tools' credentials, and the warning
at start-up where a container engine's socket stays reachable."""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from mca.assembly.sandboxing import engine_warning
from mca.sandbox import sockets
from mca.sandbox.box import Sandbox
from mca.sandbox.probe import Mechanisms, probe
from mca.sandbox.rights import SECRET_PATHS, Mode, build_policy
from tests.sandbox.world import World, build_world

FULL = probe()
LANDLOCK_ONLY = probe(namespaces=False)
KINDS = {"namespaces": FULL, "landlock": LANDLOCK_ONLY}


def _listen(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    s.listen(4)
    return s


# -- pure: the lists and the plan --------------------------------------------------------------
def test_one_secret_list_holds_other_tools_credentials(tmp_path: Path) -> None:
    for path in ("~/.codex", "~/.claude", "~/.config/gcloud", "~/.azure", "~/.kube"):
        assert path in SECRET_PATHS
    for path in ("~/.git-credentials", "~/.npmrc", "~/.pypirc", "~/.cargo/credentials.toml"):
        assert path in SECRET_PATHS
    assert "~/.terraform.d" in SECRET_PATHS and "~/.docker/config.json" in SECRET_PATHS
    assert not any(p.startswith(("~/.bashrc", "~/.profile", "~/.zshrc")) for p in SECRET_PATHS)
    home = tmp_path / "home"
    policy = build_policy(Mode.WORKSPACE_WRITE, tmp_path / "ws", home, tmp_path / "mh")
    assert home / ".codex" in policy.deny_read
    extra = build_policy(
        Mode.WORKSPACE_WRITE, tmp_path / "ws", home, tmp_path / "mh", deny_read=("~/.vault",)
    )
    assert home / ".vault" in extra.deny_read


def test_a_secret_that_holds_the_workspace_is_left_out(tmp_path: Path) -> None:
    """Working in ~/.claude/skills/x: hiding ~/.claude would hide the workspace itself."""
    home = tmp_path / "home"
    ws = home / ".claude" / "skills" / "x"
    ws.mkdir(parents=True)
    policy = build_policy(Mode.WORKSPACE_WRITE, ws, home, tmp_path / "mh")
    assert home / ".claude" not in policy.deny_read and home / ".ssh" in policy.deny_read


def test_the_plan_hides_where_sockets_live_and_keeps_what_programs_need(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, etc, ws, tmp = (tmp_path / n for n in ("run", "etc", "ws", "tmp"))
    for d in (run / "systemd" / "resolve", run / "wrappers" / "bin", etc, ws, tmp):
        d.mkdir(parents=True)
    (run / "systemd" / "resolve" / "stub-resolv.conf").write_text("nameserver 127.0.0.53\n")
    (etc / "resolv.conf").symlink_to(run / "systemd" / "resolve" / "stub-resolv.conf")
    (run / "current-system").symlink_to(tmp_path / "store")  # NixOS's, outside: kept
    (run / "docker.sock").symlink_to(run / "engine.sock")  # inside: not kept
    agent = tmp_path / "agent-xyz"
    agent.mkdir()
    listeners = [_listen(run / "engine.sock"), _listen(agent / "s"), _listen(tmp_path / "loose")]
    monkeypatch.setattr(sockets, "ETC", str(etc))
    env = {
        "PATH": f"{run / 'wrappers' / 'bin'}:/usr/bin",
        "SSH_AUTH_SOCK": str(agent / "s"),
        "TMUX": f"{tmp_path / 'loose'},123,0",
    }
    plan = sockets.hiding([str(run), "$NOT_SET"], env, tmp_path / "home", [ws, tmp], [])
    assert set(plan.places) == {bytes(run), bytes(agent)}
    assert plan.files == (bytes(tmp_path / "loose"),)  # alone in a shared folder: the file
    kept = {(k, p) for k, p, _, _ in plan.keep}
    assert (sockets.KEEP_LINK, bytes(run / "current-system")) in kept
    assert (sockets.KEEP_FILE, bytes(run / "systemd" / "resolve" / "stub-resolv.conf")) in kept
    assert (sockets.KEEP_TREE, bytes(run / "wrappers" / "bin")) in kept
    assert not any(p == bytes(run / "docker.sock") for _, p in kept)
    for s in listeners:
        s.close()


def test_a_place_that_holds_the_workspace_is_covered_around_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    ws = run / "user" / "1000" / "ws"
    for d in (ws, run / "user" / "1000" / "bus-dir", run / "dbus", run / "user" / "1001"):
        d.mkdir(parents=True)
    s = _listen(run / "user" / "1000" / "bus")
    plan = sockets.hiding([str(run)], {}, tmp_path / "home", [ws], [])
    assert set(plan.places) == {
        bytes(run / "dbus"),
        bytes(run / "user" / "1001"),
        bytes(run / "user" / "1000" / "bus-dir"),
    }
    assert plan.files == (bytes(run / "user" / "1000" / "bus"),)
    s.close()


def test_sockets_in_a_shared_folder_nothing_covers_are_found_two_levels_in(
    tmp_path: Path,
) -> None:
    """A terminal multiplexer's and an agent's sockets in an uncovered /tmp (here a folder
    standing in for it: no test reads the host's /tmp): each one's folder is covered, a
    socket right in the shared folder alone, and nothing deeper is looked at."""
    shared, ws = tmp_path / "shared", tmp_path / "shared" / "ws"
    for d in (shared / "tmux-1000", shared / "ssh-XYZ", shared / "deep" / "er", ws):
        d.mkdir(parents=True)
    listeners = [
        _listen(p)
        for p in (
            shared / "tmux-1000" / "default",
            shared / "ssh-XYZ" / "agent.42",
            shared / "loose.sock",
            shared / "deep" / "er" / "hidden.sock",
        )
    ]
    plan = sockets.hiding([], {}, tmp_path / "home", [ws], [], shared=[str(shared)])
    assert set(plan.places) == {bytes(shared / "tmux-1000"), bytes(shared / "ssh-XYZ")}
    assert plan.files == (bytes(shared / "loose.sock"),)
    assert sockets.hiding([], {}, tmp_path / "home", [ws], []).places == ()  # none asked
    for s in listeners:
        s.close()


def test_the_engine_warning_where_nothing_hides_sockets(tmp_path: Path) -> None:
    engine = _listen(tmp_path / "docker.sock")
    env = {"DOCKER_HOST": f"unix://{tmp_path / 'docker.sock'}"}
    policy = build_policy(Mode.WORKSPACE_WRITE, tmp_path, tmp_path, tmp_path / "mh")
    landlock_only = Sandbox(policy, Mechanisms(7, False, None))
    (line,) = engine_warning(landlock_only, tmp_path, env)
    assert str(tmp_path / "docker.sock") in line and "container" in line
    assert engine_warning(Sandbox(policy, Mechanisms(7, True, None)), tmp_path, env) == []
    assert engine_warning(Sandbox(policy, Mechanisms(9, False, None)), tmp_path, env) == []
    engine.close()
    assert engine_warning(landlock_only, tmp_path, env) == []  # nobody listens: no way out


# -- in a real sandbox ---------------------------------------------------------------------------
@pytest.fixture(params=sorted(KINDS))
def world(request: pytest.FixtureRequest, world_root: Path) -> Iterator[World]:
    mech = KINDS[request.param]
    if request.param == "namespaces" and not mech.user_namespaces:
        pytest.skip("no unprivileged user namespaces here")
    if request.param == "landlock" and not mech.landlock_abi:
        pytest.skip("no Landlock on this kernel")
    w = build_world(world_root, mech)
    yield w
    w.sandbox.close()
    w.listener.close()


@pytest.mark.slow
def test_a_repository_left_with_settings_that_run_programs_is_said(world: World) -> None:
    """main: nothing was said (and a nested repository's config was writable)."""
    done = world.run(
        "git init -q new && git -C new config core.fsmonitor 'touch {outside}/pwn'"
        " && printf '#!/bin/sh\\n' > new/.git/hooks/pre-push && chmod +x new/.git/hooks/pre-push"
        " && git init -q plain && echo ok"
    )
    assert "ok" in done.output, done.output
    (line,) = done.reports
    # (a long value is cut with "...": the world's path is as long as the test run makes it)
    said = f"new/.git/config sets core.fsmonitor = touch {world.outside}/pwn"
    assert said in line or said[:60] in line, line
    assert "new/.git/hooks/pre-push is an executable hook" in line and "plain" not in line
    assert done.notes == []  # nothing to put back: not a wall to offer a way through


@pytest.mark.slow
def test_a_repository_moved_and_changed_is_said(world: World) -> None:
    done = world.run("mv vendor/lib vendor/moved; git -C vendor/moved config core.pager evil")
    if world.sandbox.namespaces:  # the mount moved with it: still read-only
        assert "Read-only file system" in done.output and done.reports == []
    else:
        assert any("vendor/moved/.git/config sets core.pager = evil" in r for r in done.reports)
    assert (world.ws / "vendor" / "lib" / ".git" / "config").exists() != world.sandbox.namespaces


@pytest.mark.slow
def test_a_repository_behind_a_folder_whose_time_was_put_back_is_said(world: World) -> None:
    """The walk looked again only where a folder's mtime moved; `touch -d` puts it back (main:
    nothing was said, and `git status` in src/ ran the payload)."""
    world.run("true")  # the first walk: src/ is known, with no repository in it
    done = world.run(
        "old=$(stat -c %y src); git init -q src"
        " && git -C src config core.fsmonitor 'touch {outside}/pwn'"
        ' && touch -d "$old" src && echo ok'
    )
    assert "ok" in done.output, done.output
    assert any("src/.git/config sets core.fsmonitor" in r for r in done.reports), done.reports


@pytest.mark.slow
def test_a_repository_put_in_the_place_of_a_kept_one_is_said(world: World) -> None:
    """Renaming the parent moves the kept repository (and its read-only mount) away; a new one
    made at its place is not the one kept (main: skipped as read-only, never named)."""
    world.run("true")
    done = world.run(
        "mv vendor vendor_old && mkdir -p vendor/lib && git -C vendor/lib init -q"
        " && git -C vendor/lib config core.fsmonitor 'touch {outside}/pwn' && echo ok"
    )
    assert "ok" in done.output, done.output
    config = (world.ws / "vendor" / "lib" / ".git" / "config").read_text()
    said = any("vendor/lib/.git/config sets core.fsmonitor" in r for r in done.reports)
    assert said or "fsmonitor" not in config, (done.reports, config)
    assert not any("vendor_old" in r for r in done.reports), done.reports  # moved, unchanged


@pytest.mark.slow
def test_settings_nobody_listed_as_inert_are_said(world: World) -> None:
    """An allow-list, not a deny list: `interactive.diffFilter` (run by `git add -p`), an
    `sendemail.smtpServer` that is a path, and a key mca has never heard of."""
    done = world.run(
        "git init -q n3 && git -C n3 config interactive.diffFilter 'touch {outside}/pwn'"
        " && git -C n3 config sendemail.smtpServer /tmp/x && git -C n3 config zz.brandnew y"
        " && git clone -q n3 n4 2>/dev/null; echo ok"
    )
    assert "ok" in done.output, done.output
    (line,) = [r for r in done.reports if "n3/" in r]
    assert "interactive.difffilter = touch" in line and "sendemail.smtpserver = /tmp/x" in line
    assert "zz.brandnew = y (a setting not known to be inert)" in line
    assert not any("n4/" in r for r in done.reports), done.reports  # a clone's own: inert


@pytest.mark.slow
def test_the_tool_result_the_model_sees_names_it(world: World) -> None:
    from mca.tools.command import Outcome, _result

    done = world.run("git init -q n2 && git -C n2 config alias.x '!sh'")
    result = _result("cmd", 30, Outcome(0, done.output, False, done.notes, done.reports))
    assert "[mca: the command left settings that make git run a program: n2/.git/config" in result


@pytest.mark.slow
def test_programs_keep_what_they_need_from_hidden_places(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/run covered, and what /etc links to in it, links to elsewhere and $PATH folders in it
    made again (read-only); sockets gone; a private $XDG_RUNTIME_DIR."""
    if not FULL.user_namespaces:
        pytest.skip("no unprivileged user namespaces here")
    w = build_world(tmp_path, FULL)
    run, etc = tmp_path / "fakerun", tmp_path / "etc"
    for d in (run / "resolve", run / "wrappers" / "bin", etc, tmp_path / "store"):
        d.mkdir(parents=True)
    (run / "resolve" / "stub.conf").write_text("nameserver 127.0.0.53\n")
    (etc / "resolv.conf").symlink_to("../fakerun/resolve/stub.conf")
    (run / "current-system").symlink_to(tmp_path / "store")
    (run / "wrappers" / "bin" / "tool").write_text("#!/bin/sh\necho tool-ran\n")
    (run / "wrappers" / "bin" / "tool").chmod(0o755)
    engine = _listen(run / "engine.sock")
    monkeypatch.setattr(sockets, "ETC", str(etc))
    monkeypatch.setenv("PATH", f"{run / 'wrappers' / 'bin'}:{os.environ['PATH']}")
    w.sandbox.close()
    policy = dataclasses.replace(w.sandbox.policy, sockets=(str(run), "$XDG_RUNTIME_DIR"))
    w.sandbox = Sandbox(policy, FULL)
    done = w.run(
        f"ls -A {run}; cat {run}/resolve/stub.conf; tool; echo x > {run}/resolve/stub.conf;"
        f" test -S {run}/engine.sock || echo no-socket; test -e {w.sockets['xdg']} || echo no-bus;"
        ' test -w "$XDG_RUNTIME_DIR" && echo runtime-ok'
    )
    out = done.output
    assert "current-system" in out and "resolve" in out and "wrappers" in out, out
    assert "nameserver 127.0.0.53" in out and "tool-ran" in out, out
    assert "Read-only file system" in out and "no-socket" in out and "no-bus" in out, out
    assert "runtime-ok" in out, out
    assert (run / "resolve" / "stub.conf").read_text() == "nameserver 127.0.0.53\n"
    engine.close()
    w.sandbox.close()
    w.listener.close()


@pytest.mark.slow
def test_a_search_cut_short_is_said_once(world: World) -> None:
    from mca.sandbox.nested import Repositories
    from mca.workspace.repos import Finder

    world.sandbox._reach.repos = Repositories(world.ws, Finder(world.ws, max_entries=3))
    said = world.run("true").reports
    assert len(said) == 1 and "stopped after" in said[0], said
    assert world.run("true").reports == []
