"""What of mca's environment a command gets: the model's commands lose every variable whose name
says it holds a secret (main: only *_API_KEY left them, so GITHUB_TOKEN reached every command)
but those the person passes on (`pass_env`); the person's own `!command` keeps their tokens;
the lab's hand-ins get nothing of it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from mca.config.settings import load_settings
from mca.errors import ConfigError
from mca.process.childenv import command_env, secret_name
from mca.tools.base import ToolEnv, TurnState
from mca.tools.command import run_command

SECRETS = [
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SESSION_TOKEN",
    "HF_TOKEN",
    "NPM_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "MCA_API_KEY",
    "PGPASSWORD",
    "MYSQL_PWD",
    "DB_PASS",
    "REDISCLI_AUTH",
    "BW_SESSION",
    "OP_SESSION_my",
    "GITHUB_PAT",
    "NGROK_AUTHTOKEN",
    "npm_config__authToken",
    "SOPS_AGE_KEY",
    "GPG_PRIVATE_KEY",
    "AZURE_CLIENT_SECRET",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "SIGNING_KEYS",
    "SESSION_COOKIE",
    "SSH_AUTH_SOCK",  # a path, but the agent there signs as you
    "DBUS_SESSION_BUS_ADDRESS",
]
HARMLESS = [
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "LANG",
    "TERM",
    "TOKENIZERS_PARALLELISM",
    "KEYBOARD_LAYOUT",
    "KEYMAP",
    "MONKEY",
    "LESSKEY",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "XAUTHORITY",
    "GIT_ASKPASS",
    "SSH_AGENT_PID",
    "PYTHON_KEYRING_BACKEND",
    "GNUPGHOME",
    "KUBECONFIG",
    "DOCKER_CONFIG",
    "XDG_RUNTIME_DIR",
    "PASSENGER_APP_ENV",
]
TOKENS = {
    "GITHUB_TOKEN": "ghp_planted0a1b2c3d4e5f6a7b8c9d",
    "GH_TOKEN": "gho_planted1b2c3d4e5f6a7b8c9d0e",
    "AWS_SECRET_ACCESS_KEY": "planted/aws+2c3d4e5f6a7b8c9d0e1f",
    "HF_TOKEN": "hf_planted3d4e5f6a7b8c9d0e1f2a",
    "NPM_TOKEN": "npm_planted4e5f6a7b8c9d0e1f2a3b",
    "ANTHROPIC_AUTH_TOKEN": "planted-auth-5f6a7b8c9d0e1f2a3b4c",
    "CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-planted6a7b8c9d0e1f",
}


@pytest.mark.parametrize("name", SECRETS)
def test_a_name_that_says_secret(name: str) -> None:
    assert secret_name(name) and secret_name(name.lower())


@pytest.mark.parametrize("name", HARMLESS)
def test_a_name_that_does_not(name: str) -> None:
    assert not secret_name(name)


def test_what_the_model_s_the_passed_on_and_the_person_s_commands_keep() -> None:
    base = {
        "GITHUB_TOKEN": "g",
        "NPM_TOKEN": "n",
        "NPM_CONFIG_REGISTRY": "r",
        "PATH": "/bin",
        "OPENAI_API_KEY": "k",
        "SSH_AUTH_SOCK": "/s",
    }
    assert command_env(base) == {"NPM_CONFIG_REGISTRY": "r", "PATH": "/bin"}
    passed = command_env(base, ("GITHUB_TOKEN", "NPM_*"))
    assert passed == {
        "GITHUB_TOKEN": "g",
        "NPM_TOKEN": "n",
        "NPM_CONFIG_REGISTRY": "r",
        "PATH": "/bin",
    }
    typed = command_env(base, typed=True)
    assert typed == {k: v for k, v in base.items() if k != "OPENAI_API_KEY"}


def test_a_model_s_command_sees_no_token(
    env: ToolEnv, turn: TurnState, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("KEYBOARD_LAYOUT", "planted-layout")
    out = run_command(env, turn, {"command": "env; cat /proc/self/environ | tr '\\0' '\\n'"})
    assert [n for n, v in TOKENS.items() if v in out] == []
    assert "KEYBOARD_LAYOUT=planted-layout" in out
    passed = dataclasses.replace(env, pass_env=("HF_TOKEN",))
    out = run_command(passed, turn, {"command": "env"})
    assert [n for n, v in TOKENS.items() if v in out] == ["HF_TOKEN"]


def test_the_person_s_own_command_keeps_their_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mca.ui.shell import run_shell

    for name, value in TOKENS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-mca-s-own-key-0123")
    shown: list[str] = []
    ui = SimpleNamespace(
        say=shown.append, raw=shown.append, end_raw=lambda: None, confirm=lambda q: False
    )
    session = SimpleNamespace(config=SimpleNamespace(workspace=tmp_path))
    run_shell(cast(Any, session), cast(Any, ui), "env")
    printed = "".join(shown)
    assert [n for n, v in TOKENS.items() if v not in printed] == []
    assert "sk-planted-mca-s-own-key-0123" not in printed


def test_a_hand_in_gets_nothing_named_as_a_secret() -> None:
    from mca.lab.launch import child_env

    assert [k for k in child_env("/nowhere") if secret_name(k)] == []


def test_pass_env_from_a_variable_and_from_config_toml(tmp_path: Path) -> None:
    env = {"MCA_HOME": str(tmp_path)}
    given = load_settings({**env, "MCA_PASS_ENV": "GITHUB_TOKEN, NPM_*"}, workspace=tmp_path)
    assert given.pass_env == ("GITHUB_TOKEN", "NPM_*")
    (tmp_path / "config.toml").write_text('pass_env = ["HF_TOKEN"]\n')
    assert load_settings(env, workspace=tmp_path).pass_env == ("HF_TOKEN",)
    with pytest.raises(ConfigError, match="MCA_PASS_ENV: must be variable names"):
        load_settings({**env, "MCA_PASS_ENV": "GITHUB TOKEN"}, workspace=tmp_path)
