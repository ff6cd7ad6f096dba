"""What a child's environment keeps of mca's: no variable whose name says it holds a secret in a
command the model asked for; only mca's own keys leave a command the person typed (`!cmd`).

By the name's shape, not by a list of names (a list never has next year's tool): the name,
upper-cased, is split into words at every character that is not a letter or a digit, and it is
a secret's when

- it holds SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL or APIKEY anywhere (PGPASSWORD,
  AZURE_CLIENT_SECRET, GOOGLE_APPLICATION_CREDENTIALS);
- a word ends in TOKEN (GITHUB_TOKEN, NGROK_AUTHTOKEN, npm's `_authToken`), not one that only
  starts with it (TOKENIZERS_PARALLELISM stays);
- a word is KEY, AUTH, OAUTH, SESSION, COOKIE, PRIVATE, CREDS, PASS, PAT or PWD, or one of them
  with an S (AWS_ACCESS_KEY_ID, OPENAI_API_KEY, BW_SESSION, MYSQL_PWD, GITHUB_PAT), and not a
  longer word that holds one (KEYBOARD_LAYOUT, MONKEY, GIT_AUTHOR_NAME, XAUTHORITY stay). PWD
  alone, the working directory, is not one.

So SSH_AUTH_SOCK leaves the model's commands on purpose: its value is a path, not a secret, but
the agent there signs as you (with namespaces its folder is hidden anyway). DBUS_SESSION_BUS_
ADDRESS and XDG_SESSION_* leave too; nothing a build runs needs a desktop session. The person
names what the model's commands may keep all the same (config.toml's `pass_env`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

__all__ = ["SECRET_PARTS", "SECRET_WORDS", "command_env", "mca_key", "secret_name"]

SECRET_PARTS = ("SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "APIKEY")
SECRET_WORDS = frozenset(
    ("KEY", "AUTH", "OAUTH", "SESSION", "COOKIE", "PRIVATE", "CREDS", "PASS", "PAT", "PWD")
)
NOT_SECRETS = frozenset(("PWD",))  # the shell's working directory
_WORDS = re.compile(r"[^A-Z0-9]+")


@functools.lru_cache(maxsize=4096)
def secret_name(name: str) -> bool:
    """Does this variable's name say it holds a secret (the rule above)? Remembered: every
    command asks again of the same few dozen names."""
    upper = name.upper()
    if upper in NOT_SECRETS:
        return False
    if any(part in upper for part in SECRET_PARTS):
        return True
    for word in _WORDS.split(upper):
        if word.endswith(("TOKEN", "TOKENS")) or word in SECRET_WORDS:
            return True
        if word.endswith("S") and word[:-1] in SECRET_WORDS:
            return True
    return False


def mca_key(name: str) -> bool:
    """A model key mca itself reads (*_API_KEY)."""
    return name.endswith("_API_KEY")


def command_env(
    base: Mapping[str, str], keep: Iterable[str] = (), *, typed: bool = False
) -> dict[str, str]:
    """A command's environment from mca's: for the model's commands, without every variable
    whose name is a secret's but those `keep` names (a name, or a pattern with * and ?); for
    one the person `typed`, without mca's own keys only (it runs with their rights anyway)."""
    if typed:
        return {k: v for k, v in base.items() if not mca_key(k)}
    kept = tuple(keep)
    return {
        k: v
        for k, v in base.items()
        if not secret_name(k) or any(fnmatchcase(k, pattern) for pattern in kept)
    }
