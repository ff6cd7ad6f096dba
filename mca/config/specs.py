"""Every setting a flag, a variable or config.toml can give: its variable, its config.toml key,
its check, its default and its flag (one Spec each), and the limits the checks name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from mca.config.sources import Spec
from mca.config.values import boolean, budget, choice, integer, names, number, paths, text, url
from mca.errors import ConfigError
from mca.models.known import EFFORTS
from mca.models.options import MAX_RESPONSE_BYTES, RETRY_BASE
from mca.models.registry import MOCK
from mca.modes import DEFAULT_MODE, MODES
from mca.sandbox.rights import Mode
from mca.turn import DEFAULT_MAX_STEPS, MOST_STEPS

__all__ = ["DEFAULT_CONTEXT_WINDOW", "DEFAULT_SKILL_BUDGET", "OTHER_CONFIG_KEYS", "SPECS", "switch"]

SANDBOX_MODES = tuple(Mode)  # what commands mca runs for the model may reach
DEFAULT_SKILL_BUDGET = 12_000
DEFAULT_CONTEXT_WINDOW = 32_000  # conservative when the model is unknown
MIN_CONTEXT_WINDOW = 1_024
MIN_THINKING = 1_024  # the least budget_tokens Anthropic accepts
# config.toml keys that are not settings of their own below.
OTHER_CONFIG_KEYS = ("api_key",)


class SPECS:
    """Every setting a flag, a variable or config.toml can give."""

    # checked against the registry of providers first (load_settings), text here
    provider = Spec("MCA_PROVIDER", "provider", text, MOCK)
    model = Spec("MCA_MODEL", "model", text, MOCK, "--model")
    base_url = Spec("MCA_BASE_URL", "base_url", url, "")
    context_window = Spec(
        "MCA_CONTEXT_WINDOW",
        "context_window",
        integer(MIN_CONTEXT_WINDOW, 100_000_000),
        DEFAULT_CONTEXT_WINDOW,
    )
    max_steps = Spec(
        "MCA_MAX_STEPS", "max_steps", integer(1, MOST_STEPS), DEFAULT_MAX_STEPS, "--max-steps"
    )
    skill_budget = Spec(
        "MCA_SKILL_BUDGET", "skill_budget", integer(0, 10_000_000), DEFAULT_SKILL_BUDGET
    )
    # the bundled encodings (mca.tokens.ENCODINGS, not imported on the way to the prompt;
    # tests/test_config.py holds the two together)
    encodings = ("o200k_base", "cl100k_base")
    encoding = Spec("MCA_ENCODING", "encoding", choice(*encodings), encodings[0])
    skills_dirs: Spec[tuple[Path, ...]] = Spec("MCA_SKILLS_DIRS", "skills_dirs", paths, ())
    read_timeout = Spec("MCA_READ_TIMEOUT", "read_timeout", number(0.1, 3600), 120.0)
    request_timeout = Spec("MCA_REQUEST_TIMEOUT", "request_timeout", number(1, 86_400), 600.0)
    retry_base = Spec("MCA_RETRY_BASE", "retry_base", number(0, 60), RETRY_BASE)
    # the answer's length limit; 0: a quarter of the window, at most 8,192
    max_tokens = Spec("MCA_MAX_TOKENS", "max_tokens", integer(1, 1_000_000), 0)
    # which wire protocol to speak ('': the model's record, else the provider's first)
    wire = Spec("MCA_WIRE", "wire", choice("chat", "responses", "messages"), "")
    # a reasoning model's effort ('': the model's own default); Anthropic thinking's budget
    reasoning = Spec("MCA_REASONING", "reasoning", choice(*EFFORTS), "", "--reasoning")
    thinking = Spec("MCA_THINKING", "thinking", budget(MIN_THINKING, 1_000_000), 0, "--thinking")
    # the most a server's answer may take in memory (a body, a stream line, an assembled reply)
    max_response_bytes = Spec(
        "MCA_MAX_RESPONSE_BYTES",
        "max_response_bytes",
        integer(64 * 1024, 1024**3),
        MAX_RESPONSE_BYTES,
    )
    # what a workspace checkpoint keeps (bytes per file, bytes in all; a total of 0: none)
    checkpoint_file_cap = Spec(
        "MCA_CHECKPOINT_FILE_CAP", "checkpoint_file_cap", integer(0, 2**40), 8 << 20
    )
    checkpoint_cap = Spec("MCA_CHECKPOINT_CAP", "checkpoint_cap", integer(0, 2**50), 512 << 20)
    mode = Spec("MCA_MODE", "mode", choice(*MODES), DEFAULT_MODE, "--mode")  # see MODES
    # what commands mca runs for the model may reach (mca.sandbox.rights.Mode)
    sandbox = Spec(
        "MCA_SANDBOX", "sandbox", choice(*SANDBOX_MODES), Mode.WORKSPACE_WRITE.value, "--sandbox"
    )
    network = Spec("MCA_NETWORK", "network", boolean, False, "--allow-network")
    # sandboxed commands may write .git/ (git commit; hooks included) without a question
    allow_git = Spec("MCA_ALLOW_GIT", "allow_git", boolean, False, "--allow-git")
    # directories outside the workspace commands may write (caches the user trusts), checked
    # against the secret list at start-up (mca.sandbox.rights.unwritable)
    sandbox_writable: Spec[tuple[Path, ...]] = Spec(
        "MCA_SANDBOX_WRITABLE", "sandbox_writable", paths, ()
    )
    # paths commands may not read, beside the built-in list (~/.ssh, ~/.aws, ...)
    sandbox_deny_read: Spec[tuple[Path, ...]] = Spec(
        "MCA_SANDBOX_DENY_READ", "sandbox_deny_read", paths, ()
    )
    # variables the model's commands keep though their names say they hold a secret
    # (mca.process.childenv: GITHUB_TOKEN, *_TOKEN ...)
    pass_env: Spec[tuple[str, ...]] = Spec("MCA_PASS_ENV", "pass_env", names, ())

    @classmethod
    def all(cls) -> Iterator[Spec[Any]]:
        return (v for v in vars(cls).values() if isinstance(v, Spec))


def switch(env: Mapping[str, str], var: str) -> bool:
    """A 1/0 variable (MOCK, MCA_DEBUG): set to anything else is an error, not "unset"."""
    value = env.get(var, "")
    if value not in ("", "0", "1"):
        raise ConfigError(f"{var} must be 1 or 0 (or unset), got {value!r}")
    return value == "1"
