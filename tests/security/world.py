"""A world for hostile-repository scenarios, and its oracle.

Layout under one temp directory:

    ws/        the workspace (the hostile repository)
    sentinel/  files beside the workspace that nothing may touch
    home/      $HOME, with ~/.ssh/authorized_keys, ~/.bashrc and a user skill
    mcahome/   $MCA_HOME, with a config.toml holding a planted key
    scripts/   scripted model responses (outside the workspace)

The oracle: `sentinel/` and `home/` are hashed (types, modes, contents, link targets) before and
after a scenario and must be identical; every planted key (each *_API_KEY variable and the
config file's api_key) must appear in no file under the temp directory (but the config file
itself), in nothing mca printed, and in nothing the fake server received, except the one key
configured for that server, and that only in its Authorization header.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prompt_toolkit.application import create_app_session
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from mca.cli import main
from mca.cli.start import repl_for
from mca.config.settings import load_settings
from tests.fakeserver import FakeServer, Received, Reply, openai_reply

PLANTED = {
    "OPENAI_API_KEY": "sk-planted-openai-1f2e3d4c5b6a",
    "ANTHROPIC_API_KEY": "sk-ant-planted-anthropic-99aa88bb",
    "GROQ_API_KEY": "gsk-planted-groq-77cc66dd55ee",
    "MCA_API_KEY": "mca-planted-configured-key-4242",
}
CONFIG_KEY = "cfg-planted-config-file-key-1234"
ALL_KEYS = (*PLANTED.values(), CONFIG_KEY)
ENTER = "\r"
CTRL_D = "\x04"


def _hash(path: Path) -> str:
    """A file's hash; 'unreadable' for one this user may not read (mca's mode-000 mask, as an
    ordinary user): its mode and existence are still compared."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except PermissionError:
        return "unreadable"


def tree_digest(top: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry below `top`: (type, mode, content hash or link target), never following."""
    out: dict[str, tuple[str, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [*dirnames, *filenames]:
            p = Path(dirpath, name)
            st = os.lstat(p)
            rel = str(p.relative_to(top))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", 0, os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", stat.S_IMODE(st.st_mode), _hash(p))
            else:
                out[rel] = (
                    "dir" if stat.S_ISDIR(st.st_mode) else "other",
                    stat.S_IMODE(st.st_mode),
                    "",
                )
    return out


@dataclass
class World:
    """One scenario's temp tree, its runs and everything they printed or sent."""

    root: Path
    outputs: list[str] = field(default_factory=list)
    server: FakeServer | None = None
    replies: list[Any] = field(default_factory=list)  # for the fake server, in order

    def __post_init__(self) -> None:
        self.ws = self.root / "ws"
        self.sentinel = self.root / "sentinel"
        self.home = self.root / "home"
        self.mcahome = self.root / "mcahome"
        self.scripts = self.root / "scripts"
        for d in (self.ws, self.sentinel, self.home / ".ssh", self.mcahome, self.scripts):
            d.mkdir(parents=True, exist_ok=True)
        (self.sentinel / "secret.txt").write_text("TOP-SECRET beside the workspace\n")
        (self.sentinel / "f.txt").write_text("sentinel f.txt\n")
        (self.sentinel / "keep").mkdir()
        (self.sentinel / "keep" / "data.bin").write_bytes(os.urandom(64))
        (self.home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA user@host\n")
        (self.home / ".bashrc").write_text("export PS1='$ '\n")
        user_skill = self.home / ".agents" / "skills" / "deploy"
        user_skill.mkdir(parents=True)
        (user_skill / "SKILL.md").write_text(
            "---\nname: deploy\ndescription: The user's own deploy steps.\n---\nUse make deploy.\n"
        )
        config = self.mcahome / "config.toml"
        config.write_text(f'api_key = "{CONFIG_KEY}"\n')
        config.chmod(0o600)
        (self.ws / "README.md").write_text("# project\n")
        (self.ws / "src").mkdir()
        (self.ws / "src" / "app.py").write_text("print('hello')\n")
        self.before = self.digest()

    def digest(self) -> dict[str, Any]:
        import tempfile

        above = {str(p): stat.S_IMODE(os.lstat(p).st_mode) for p in self._above()}
        temp = Path(tempfile.gettempdir())
        above[str(temp)] = stat.S_IMODE(os.lstat(temp).st_mode)
        return {
            "sentinel": tree_digest(self.sentinel),
            "home": tree_digest(self.home),
            "above": above,  # the modes of the directories above: nothing of theirs changes
        }

    def _above(self) -> list[Path]:
        return [self.root, *self.root.parents]

    # -- running mca ---------------------------------------------------------------------
    def env(self, **extra: str | None) -> dict[str, str]:
        env: dict[str, str | None] = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "MCA_HOME": str(self.mcahome),
            **PLANTED,
        }
        if self.server is not None:
            env.update(MCA_PROVIDER="openai", MCA_BASE_URL=f"{self.server.url}/v1", MCA_MODEL="m")
            env["MCA_RETRY_BASE"] = "0.01"
        env.update(extra)
        return {k: v for k, v in env.items() if v is not None}  # None: unset

    def script(self, *steps: dict[str, Any] | str) -> str:
        """A MCA_MOCK_SCRIPT file: dicts are tool calls {name: args}, strings are answers."""
        path = self.scripts / f"script-{len(list(self.scripts.iterdir()))}.jsonl"
        lines = []
        for step in steps:
            if isinstance(step, str):
                lines.append(json.dumps({"content": step}))
            else:
                calls = [{"name": n, "arguments": a} for n, a in step.items()]
                lines.append(json.dumps({"content": "", "tool_calls": calls}))
        path.write_text("\n".join(lines) + "\n")
        return str(path)

    def oneshot(
        self, sentence: str, *flags: str, script: str | None = None, **env: str | None
    ) -> int:
        """`mca -C ws -p SENTENCE` in-process; stdout and stderr are kept."""
        e = self.env(**env)
        if script is not None:
            e["MCA_MOCK_SCRIPT"] = script
        elif self.server is None:
            e["MOCK"] = "1"
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["-C", str(self.ws), "-p", sentence, *flags], e)
        self.outputs += [out.getvalue(), err.getvalue()]
        return code

    def repl(self, keys: str, script: str | None = None, **env: str | None) -> str:
        """The REPL in-process, fed `keys` (end with CTRL_D); returns what it printed."""
        e = self.env(**env)
        if script is not None:
            e["MCA_MOCK_SCRIPT"] = script
        elif self.server is None:
            e["MOCK"] = "1"
        settings = load_settings(e, workspace=self.ws)
        out = io.StringIO()
        with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
            pipe.send_text(keys)
            pipe.close()  # end of input: a prompt that wants more gets EOF, never waits
            repl = repl_for(
                settings, input=pipe, output=DummyOutput(), out=out, history=InMemoryHistory()
            )
            repl.run()
        self.outputs.append(out.getvalue())
        return out.getvalue()

    @property
    def sent(self) -> list[Received]:
        """The model requests the fake server received (not the context-window probes)."""
        assert self.server is not None
        ends = ("/chat/completions", "/messages")
        return [r for r in self.server.received if r.method == "POST" and r.path.endswith(ends)]

    @property
    def printed(self) -> str:
        return "\n".join(self.outputs)

    # -- the fake server -------------------------------------------------------------------
    def handle(self, request: Received) -> Reply:
        if request.method != "POST" or request.path.endswith("/api/show"):
            return Reply(status=404, chunks=[b"not here"])  # a context-window probe
        step = self.replies.pop(0) if self.replies else "done"
        if isinstance(step, Reply):
            return step
        if isinstance(step, str):
            return openai_reply(request, step)
        return openai_reply(request, "", list(step.items()))

    # -- the oracle ------------------------------------------------------------------------
    def check(self) -> None:
        after = self.digest()
        for part in ("sentinel", "home", "above"):
            changed = _diff(self.before[part], after[part])
            assert not changed, f"{part}/ changed outside the workspace: {changed}"
        leaks: list[Path | str] = [
            f
            for f in _files(self.root)
            if f != self.mcahome / "config.toml" and _has_key(f.read_bytes())
        ]
        leaks += [f"output {i}" for i, text in enumerate(self.outputs) if _has_key(text.encode())]
        if self.server is not None:
            for i, req in enumerate(self.server.received):
                headers = {k: v for k, v in req.headers.items() if k != "authorization"}
                auth = req.headers.get("authorization", "")
                sent = json.dumps(headers).encode() + req.body
                if _has_key(sent) or (auth and auth != f"Bearer {PLANTED['MCA_API_KEY']}"):
                    leaks.append(f"request {i} to the fake server")
        assert not leaks, f"a planted key leaked into: {leaks}"


def _has_key(data: bytes) -> bool:
    return any(k.encode() in data for k in ALL_KEYS)


def _files(top: Path) -> Iterator[Path]:
    for dirpath, _, filenames in os.walk(top):
        for name in filenames:
            p = Path(dirpath, name)
            if stat.S_ISREG(os.lstat(p).st_mode):
                yield p


def _diff(before: dict[str, Any], after: dict[str, Any]) -> Sequence[str]:
    keys = set(before) | set(after)
    return sorted(k for k in keys if before.get(k) != after.get(k))
