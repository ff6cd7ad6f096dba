"""The installed `mca` command, as a person runs it, with tokens in its environment under names no
list of mca's holds (main passed them to every command: only *_API_KEY left) and credentials
moved where tools' own variables say (main's sandbox read them): a scripted model asks for
commands that look for them, and neither reaches anything mca prints or the workspace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mca.sandbox.probe import probe
from tests.sandbox.world import Listener, all_files_text

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MCA = str(Path(sys.executable).parent / "mca")
MECH = probe()
TOKENS = {
    "GITHUB_TOKEN": "ghp_planted0a1b2c3d4e5f6a7b8c9d0e1f",
    "GH_TOKEN": "gho_planted1b2c3d4e5f6a7b8c9d0e1f2a",
    "AWS_SECRET_ACCESS_KEY": "planted/aws+2c3d4e5f6a7b8c9d0e1f2a3b",
    "HF_TOKEN": "hf_planted3d4e5f6a7b8c9d0e1f2a3b4c",
    "NPM_TOKEN": "npm_planted4e5f6a7b8c9d0e1f2a3b4c5d",
    "ANTHROPIC_AUTH_TOKEN": "planted-auth-5f6a7b8c9d0e1f2a3b4c5d6e",
    "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-planted6a7b8c9d0e1f2a3b",
}
MOVED = {  # where a tool's own variable puts it -> what is in it
    "gnupg/private-keys-v1.d/k.key": "PLANTED-GPG-7f3a9b1c",
    "docker/config.json": '{"auths": {"x": {"auth": "PLANTED-DOCKER-91c2e4f0"}}}',
    "kube/config": "users:\n- user:\n    token: PLANTED-KUBE-5d1e6a7b",
}


def _mca(root: Path, commands: list[str], **more: str) -> tuple[list[str], str]:
    script = root / "script.jsonl"
    lines = [
        {"content": "", "tool_calls": [{"name": "run_command", "arguments": {"command": c}}]}
        for c in commands
    ]
    script.write_text("".join(json.dumps(x) + "\n" for x in [*lines, {"content": "done"}]))
    env = {
        **{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
        **TOKENS,
        "HOME": str(root / "home"),
        "MCA_HOME": str(root / "mcahome"),
        "MCA_MOCK_SCRIPT": str(script),
        "GNUPGHOME": str(root / "moved" / "gnupg"),
        "DOCKER_CONFIG": str(root / "moved" / "docker"),
        "KUBECONFIG": str(root / "moved" / "kube" / "config"),
        "KEYBOARD_LAYOUT": "planted-layout",
        **more,
    }
    done = subprocess.run(
        [MCA, "-C", str(root / "ws"), "-p", "go", "--yes", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    calls: list[dict[str, Any]] = json.loads(done.stdout)["tool_calls"]
    return [str(c["result"]) for c in calls], done.stdout + done.stderr


@pytest.fixture
def root(world_root: Path) -> Path:
    for d in ("ws", "home", "mcahome"):
        (world_root / d).mkdir()
    for name, text in MOVED.items():
        path = world_root / "moved" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return world_root


def test_no_token_and_no_moved_credential_reaches_a_model_s_command(root: Path) -> None:
    moved = " ".join(str(root / "moved" / n) for n in MOVED)
    results, printed = _mca(
        root,
        [
            "env; tr '\\0' '\\n' < /proc/self/environ; echo THE-END",
            "env > env.txt; cat /proc/$PPID/environ >> env.txt 2>&1; true",
            f"cat {moved} 2>&1; cp -r $GNUPGHOME stolen 2>&1; rev {moved} 2>&1; true",
        ],
    )
    texts = [printed, *all_files_text(root / "ws")]
    assert [n for n, v in TOKENS.items() if any(v in t for t in texts)] == []
    assert "KEYBOARD_LAYOUT=planted-layout" in results[0] and "THE-END" in results[0]
    if MECH.available:  # unsandboxed (no mechanism here), a command reads what you can
        keys = [t.split()[-1].strip('"}') for t in MOVED.values()]
        assert [k for k in keys if any(k in t or k[::-1] in t for t in texts)] == []


def test_a_variable_the_person_passes_on_reaches_it(root: Path) -> None:
    results, _ = _mca(root, ["env"], MCA_PASS_ENV="HF_TOKEN,NPM_*")
    assert [n for n, v in TOKENS.items() if v in results[0]] == ["HF_TOKEN", "NPM_TOKEN"]


def test_the_gpg_agent_in_a_moved_gnupghome_is_out_of_reach(root: Path) -> None:
    """A real listening socket where gpg-agent keeps its own in a $GNUPGHOME that is not
    ~/.gnupg (and no /run/user folder holds it): main's sandbox hid /run and the folders of
    the sockets variables name, not this one."""
    if not MECH.available or (not MECH.user_namespaces and MECH.landlock_abi < 9):
        pytest.skip("no namespaces and Landlock before ABI 9: sockets stay reachable (documented)")
    sock = root / "moved" / "gnupg" / "S.gpg-agent"
    agent = Listener((sock,))
    try:
        results, _ = _mca(
            root,
            [
                'python3 -c "import os, socket; s = socket.socket(socket.AF_UNIX)\n'
                "try:\n s.connect(os.environ['GNUPGHOME'] + '/S.gpg-agent'); print('REACHED')\n"
                "except OSError as e:\n print('refused', e)\""
            ],
        )
        said = results[0].splitlines()  # (the result starts with the command itself)
        assert agent.received == [] and "REACHED" not in said, results[0]
        assert any(line.startswith("refused") for line in said), results[0]
    finally:
        agent.close()
