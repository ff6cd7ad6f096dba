"""The scrubber catches a planted key disguised (reversed, hex, base64 at any alignment, split
across lines) and the values of *_TOKEN and *_SECRET* variables; and a bad --out names the
file. The oracle is the key itself, searched for in every form in what the row says."""

from __future__ import annotations

import base64
import secrets
from pathlib import Path

import pytest

from mca.cli.args import parse_command
from mca.errors import ConfigError
from mca.lab.cli import run
from mca.lab.keys import grader_keys, hide
from mca.lab.outputs import Graded, Status, scrubbed
from mca.sandbox.probe import Mechanisms


def _forms(key: str) -> list[str]:
    """What a hand-in could print for the key (each must leave no 16-character trace)."""
    raw = key.encode()
    out = [key[::-1], raw.hex(), raw.hex().upper(), key[:12] + "\n" + key[12:]]
    out += [key[:7] + "\\n" + key[7:], " ".join(key[i : i + 5] for i in range(0, len(key), 5))]
    for pad in ("", "a", "ab", "abc"):
        coded = base64.b64encode((pad + key + "!").encode()).decode()
        out += [coded, coded.replace("+", "-").replace("/", "_")]
    return out


def _traces(text: str, key: str) -> list[str]:
    raw = key.encode()
    spellings = [key, key[::-1], raw.hex(), raw.hex().upper()]
    for pad in range(3):
        spellings.append(base64.b64encode(b"\0" * pad + raw).decode()[4:-4])
    squeezed = "".join(text.split()).replace("\\n", "")
    return [s[:16] for s in spellings if s[:16] in text or s[:16] in squeezed]


def test_a_key_in_any_disguise_is_hidden() -> None:
    key = "sk-test-" + secrets.token_hex(16)
    for form in _forms(key):
        text = f'crashed: ValueError: the hand-in said: "{form}" (line 3)'
        hidden = hide(text, [key])
        assert "[REDACTED]" in hidden and not _traces(hidden, key), (form, hidden)
    assert hide("an ordinary failure", [key]) == "an ordinary failure"


def test_tokens_and_secrets_of_the_environment_are_keys(tmp_path: Path) -> None:
    env = {
        "GITHUB_TOKEN": "ghp_" + "a1" * 18,
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "MY_SECRET": "correct-horse-battery",
        "OPENAI_API_KEY": "sk-" + "b2" * 20,
        "SHORT_TOKEN": "abc",  # too short to scrub without eating ordinary text
        "HOME": str(tmp_path),
        "PATH": "/usr/bin:/bin",
    }
    keys = grader_keys(env, tmp_path)
    for name in ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "MY_SECRET", "OPENAI_API_KEY"):
        assert env[name] in keys, name
    assert "abc" not in keys and "/usr/bin:/bin" not in keys
    row = Graded("eve", Status.OK, [{"id": 3, "saw": env["GITHUB_TOKEN"][::-1]}], note="x")
    assert env["GITHUB_TOKEN"][::-1] not in str(scrubbed(row, keys))


def test_an_out_that_cannot_be_written_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "class").mkdir()
    for flag, target in (("--out", "/nonexistent/x.csv"), ("--junit", "/nonexistent/j.xml")):
        args = parse_command(["lab", "grade", str(tmp_path / "class"), flag, target])
        assert args is not None
        with pytest.raises(ConfigError, match=f"cannot write {target}: "):
            run(args, {}, Mechanisms(0, False, None))
