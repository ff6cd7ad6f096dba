"""The installed `mca` at the sandbox's walls, as people run it, under each kind of sandbox
(tests/confine.py takes away what a system lacks): a write outside the workspace asked about
with one key in a terminal and lifted once; `git commit` headless with --yes and --allow-git
(or config.toml's allow_git) in a real repository, and what the model is told without it;
read-only mode investigating in a sandbox where nothing is writable, refused where there is
none. Judged on disk and by what the model received (--json's tool results)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mca.sandbox.probe import probe
from tests.ptyscreen import MCA, Screen, child_env
from tests.security.world import tree_digest

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,  # the installed mca, its commands in a real sandbox
    pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment"),
]

REPO = Path(__file__).resolve().parent.parent.parent
CONFINE = (sys.executable, str(REPO / "tests" / "confine.py"))
MECH = probe()
# How mca is started for each kind of sandbox, and what that kind needs from this system.
KINDS: dict[str, tuple[tuple[str, ...], bool]] = {
    "namespaces": ((), MECH.user_namespaces),
    "namespaces-only": ((*CONFINE, "--no-landlock", "--"), MECH.user_namespaces),
    "landlock": ((*CONFINE, "--no-userns", "--"), MECH.landlock_abi > 0),
}
COMMIT = "git add f.txt && git -c user.name=t -c user.email=t@t commit -qm one"


@pytest.fixture(params=sorted(KINDS))
def launcher(request: pytest.FixtureRequest) -> tuple[str, ...]:
    prefix, here = KINDS[request.param]
    if not here:
        pytest.skip(f"no {request.param} sandbox on this system")
    return prefix


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one new file, a directory beside it, mca's home apart."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "file").write_text("outside\n")
    env = {"HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", str(ws)], check=True, env=env)
    (ws / "f.txt").write_text("x\n")
    return ws


def _script(ws: Path, *commands: str) -> str:
    path = ws.parent / "script.jsonl"
    lines = [
        {"content": "", "tool_calls": [{"name": "run_command", "arguments": {"command": c}}]}
        for c in commands
    ]
    lines.append({"content": "done"})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(path)


def _mca(
    ws: Path, launcher: tuple[str, ...], commands: list[str], *flags: str
) -> tuple[dict[str, Any], str]:
    """`mca -p go --json` with no terminal: the --json object and stderr."""
    env = child_env(ws, MCA_MOCK_SCRIPT=_script(ws, *commands), GIT_CONFIG_NOSYSTEM="1")
    done = subprocess.run(
        [*launcher, str(MCA), "-C", str(ws), "-p", "go", "--json", *flags],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )
    assert done.stdout, done.stderr[-3000:]
    return json.loads(done.stdout), done.stderr


def _log(ws: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(ws), "log", "--oneline"], capture_output=True, text=True, check=False
    ).stdout


def _results(obj: dict[str, Any]) -> list[str]:
    return [str(t["result"]) for t in obj["tool_calls"]]


# -- 4: a write outside, asked with one key, lifted once ---------------------------------------


@pytest.mark.pty
def test_a_write_outside_asks_one_key_and_is_lifted_once(
    repo: Path, launcher: tuple[str, ...]
) -> None:
    outside = repo.parent / "outside"
    before = tree_digest(outside)
    script = _script(repo, "touch ../outside/x.txt", "touch ../outside/y.txt")
    term = Screen(repo, [], child_env(repo, MCA_MOCK_SCRIPT=script), (160, 50), launcher)
    term.expect("mca>")
    term.child.sendline("go")
    question = "run it again with ~/outside writable, this once? [y]es / [N]o"
    term.on_screen(question)
    assert (
        "the sandbox stopped this command from writing outside the workspace (the output names"
        " '../outside/x.txt')" in term.text()
    )
    term.child.send("y")
    term.wait_for(lambda s: s.count(question) == 2, "the second command's question")
    assert (outside / "x.txt").exists()
    term.child.send("\r")  # Enter: the default, No
    term.wait_for(lambda s: s.count("mca>") >= 2, "the prompt back")
    assert "the user did not allow more" in term.text()
    term.close()
    after = tree_digest(outside)
    assert {k: v for k, v in after.items() if k != "x.txt"} == before and "y.txt" not in after


# -- 5: git in yolo and with --yes --------------------------------------------------------------


def test_yes_with_allow_git_commits(repo: Path, launcher: tuple[str, ...]) -> None:
    obj, err = _mca(repo, launcher, [COMMIT], "--yes")
    assert "one" not in _log(repo)  # without --allow-git: not committed, and said truthfully
    result = _results(obj)[0]
    assert "nobody was asked" in result and "--allow-git" in result, result
    assert "did not allow" not in result
    obj, err = _mca(
        repo, launcher, [COMMIT, "mkdir -p .mca && echo x > .mca/evil"], "--yes", "--allow-git"
    )
    assert "one" in _log(repo), err[-2000:]
    assert not (repo / ".mca" / "evil").exists()  # .git/ only: .mca/ stays protected


def test_allow_git_in_config_with_yolo(repo: Path, launcher: tuple[str, ...]) -> None:
    home = repo.parent / "home"
    home.mkdir()
    (home / "config.toml").write_text("allow_git = true\n")
    (home / "config.toml").chmod(0o600)
    obj, err = _mca(repo, launcher, [COMMIT], "--mode", "yolo")
    assert "one" in _log(repo), err[-2000:]
    assert obj["tool_calls"][0]["ok"], obj


# -- 7: read-only mode runs commands in a read-only sandbox -------------------------------------


def test_read_only_mode_investigates_and_writes_nothing(
    repo: Path, launcher: tuple[str, ...]
) -> None:
    outside = repo.parent / "outside"
    before = (tree_digest(repo), tree_digest(outside))
    hostile = "touch made; echo x > f.txt; echo x > ../outside/new; git add f.txt"
    obj, err = _mca(repo, launcher, ["git status --short", hostile], "--mode", "read-only")
    status, attempt = obj["tool_calls"]
    assert status["ok"] and "?? f.txt" in status["result"], status
    assert not attempt["ok"] and "read-only mode" in attempt["result"]
    assert (tree_digest(repo), tree_digest(outside)) == before
    assert "approval" not in err  # nothing was asked


@pytest.mark.parametrize(
    "how",
    [(), ("--sandbox", "off")],
    ids=["no-mechanism", "sandbox-off"],
)
def test_read_only_mode_refuses_where_there_is_no_sandbox(repo: Path, how: tuple[str, ...]) -> None:
    launcher = (*CONFINE, "--no-userns", "--no-landlock", "--") if not how else ()
    obj, _ = _mca(repo, launcher, ["touch made"], "--mode", "read-only", *how)
    (call,) = obj["tool_calls"]
    assert not call["ok"] and not (repo / "made").exists()
    assert "there is none here" in call["result"] and call["result"].count("\n") == 0
