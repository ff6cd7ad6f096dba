"""Where your credentials are: the well-known places under your home (`SECRET_PATHS`) and the
places tools' own variables move them to (`SECRET_VARIABLES`: $GNUPGHOME, $KUBECONFIG,
$DOCKER_CONFIG/config.json …, and each `~/.config/...` entry under $XDG_CONFIG_HOME). Pure data
and path arithmetic: the environment is the one mca started with, given by the caller.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = [
    "PATH_LISTS",
    "SECRET_PATHS",
    "SECRET_VARIABLES",
    "VARIABLES",
    "XDG_HOMES",
    "named_places",
]

# The user's secrets: never readable from inside the sandbox (the one list; docs/security.md
# shows it, and tests/test_readme.py holds its table to this). Paths under ~ are relative to
# the user's home; config.toml's `sandbox_deny_read` adds more. $MCA_HOME is always added. A
# path that holds the workspace is left out (a command must reach the workspace). Shell
# start-up files (~/.bashrc, ~/.profile, ~/.zshrc …) stay readable: commands need them, so a
# key exported there is readable too.
SECRET_PATHS = (
    # keys and logins
    "~/.ssh",
    "~/.gnupg",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh",
    "~/.config/hub",
    "~/.config/glab-cli",
    "~/.config/git/credentials",
    "~/.config/sops/age/keys.txt",
    "~/.Xauthority",
    # clouds and clusters
    "~/.aws",
    "~/.config/gcloud",
    "~/.azure",
    "~/.oci",
    "~/.kube",
    "~/.docker/config.json",
    "~/.terraform.d",
    "~/.terraformrc",
    "~/.vault-token",
    "~/.config/doctl",
    "~/.fly",
    "~/.s3cfg",
    "~/.boto",
    "~/.config/rclone",
    # package registries
    "~/.npmrc",
    "~/.pypirc",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.gem/credentials",
    # other coding agents and model tools
    "~/.codex",
    "~/.claude",
    "~/.claude.json",
    "~/.gemini",
    "~/.config/github-copilot",
    "~/.cache/huggingface/token",
    "~/.huggingface",
    # databases, and histories (keys typed on a command line)
    "~/.pgpass",
    "~/.my.cnf",
    "~/.mylogin.cnf",
    "~/.bash_history",
    "~/.zsh_history",
    "~/.python_history",
    "~/.psql_history",
    "~/.mysql_history",
)
# Tools' own variables for where they keep what SECRET_PATHS lists at its default place:
# (variable, the secret below the place it names; '' for that place itself). Read from the
# environment mca started with, when the policy is built; docs/security.md's second table
# shows it (tests/test_readme.py holds it to this).
SECRET_VARIABLES = (
    # keys and logins
    ("GNUPGHOME", ""),  # its gpg-agent's sockets too, where no /run/user folder holds them
    ("PASSWORD_STORE_DIR", ""),
    ("NETRC", ""),
    ("GH_CONFIG_DIR", ""),
    ("GLAB_CONFIG_DIR", ""),
    ("SOPS_AGE_KEY_FILE", ""),
    ("XAUTHORITY", ""),
    # clouds and clusters
    ("AWS_SHARED_CREDENTIALS_FILE", ""),
    ("AWS_CONFIG_FILE", ""),
    ("AWS_WEB_IDENTITY_TOKEN_FILE", ""),
    ("CLOUDSDK_CONFIG", ""),
    ("GOOGLE_APPLICATION_CREDENTIALS", ""),
    ("AZURE_CONFIG_DIR", ""),
    ("OCI_CLI_CONFIG_FILE", ""),
    ("KUBECONFIG", ""),
    ("DOCKER_CONFIG", "config.json"),
    ("DOCKER_CERT_PATH", ""),
    ("TF_CLI_CONFIG_FILE", ""),
    ("RCLONE_CONFIG", ""),
    ("S3CMD_CONFIG", ""),
    ("BOTO_CONFIG", ""),
    # package registries
    ("CARGO_HOME", "credentials"),
    ("CARGO_HOME", "credentials.toml"),
    ("NPM_CONFIG_USERCONFIG", ""),
    ("npm_config_userconfig", ""),
    # other coding agents and model tools
    ("CODEX_HOME", ""),
    ("CLAUDE_CONFIG_DIR", ""),
    ("HF_HOME", "token"),
    ("HF_TOKEN_PATH", ""),
    # databases, and histories
    ("PGPASSFILE", ""),
    ("HISTFILE", ""),
    ("PYTHON_HISTORY", ""),
    ("PSQL_HISTORY", ""),
    ("MYSQL_HISTFILE", ""),
)
# Variables that name several files, `:`-separated as $PATH is.
PATH_LISTS = ("KUBECONFIG",)
# The XDG base directories: an entry of SECRET_PATHS under the default moves with the variable
# (~/.config/gh is also $XDG_CONFIG_HOME/gh).
XDG_HOMES = (
    ("~/.config/", "XDG_CONFIG_HOME"),
    ("~/.local/share/", "XDG_DATA_HOME"),
    ("~/.cache/", "XDG_CACHE_HOME"),
)

# Every variable read here.
VARIABLES = frozenset((*(n for n, _ in SECRET_VARIABLES), *(n for _, n in XDG_HOMES)))


def _place(value: str, user_home: Path) -> Path | None:
    """An absolute path or one under ~/, normalised; None for anything else (a relative
    path means nothing fixed)."""
    if value.startswith("~/"):
        value = str(user_home / value[2:])
    if not value.startswith("/"):
        return None
    return Path(os.path.normpath(value))


def _values(env: Mapping[str, str], name: str) -> Iterator[str]:
    value = env.get(name, "")
    yield from (value.split(os.pathsep) if name in PATH_LISTS else [value])


def named_places(env: Mapping[str, str], user_home: Path) -> tuple[Path, ...]:
    """Where this environment's variables put tools' credentials (absolute, each once): every
    SECRET_VARIABLES entry that is set, and SECRET_PATHS' XDG entries under their variables."""
    out: dict[Path, None] = {}
    for name, below in SECRET_VARIABLES:
        for value in _values(env, name):
            place = _place(value, user_home)
            if place is not None:
                out[place / below if below else place] = None
    for default, name in XDG_HOMES:
        place = _place(env.get(name, ""), user_home)
        if place is None:
            continue
        for secret in SECRET_PATHS:
            if secret.startswith(default):
                out[place / secret[len(default) :]] = None
    return tuple(out)
