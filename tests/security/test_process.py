"""The real `mca` process: keys in its environment, special files, a terminal.

These run the installed command (or mca under the system Python as an unprivileged user) the
way a person would, because what they check lives in the process: what its children can read
of it, how much memory a read costs, what reaches a terminal.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest

from mca.sandbox.probe import probe
from mca.tools import get_tool
from mca.tools.base import ToolEnv, TurnState
from tests.peak import run_measured
from tests.unpriv import as_user, give, skip_reason

REPO = Path(__file__).resolve().parents[2]
MCA = Path(sys.executable).parent / "mca"
KEYS = {
    "OPENAI_API_KEY": "sk-proc-openai-0a1b2c3d4e5f",
    "ANTHROPIC_API_KEY": "sk-ant-proc-99887766",
    "MCA_API_KEY": "mca-proc-key-5544332211",
}
needs_mca = pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this venv")


def _script(path: Path, *steps: object) -> Path:
    lines = []
    for step in steps:
        if isinstance(step, str):
            lines.append(json.dumps({"content": step}))
        else:
            lines.append(json.dumps({"content": "", "tool_calls": step}))
    path.write_text("\n".join(lines) + "\n")
    return path


READ_ENV = [
    {
        "name": "run_command",
        "arguments": {"command": "cat /proc/$PPID/environ | tr '\\0' '\\n'; echo; env"},
    }
]


@pytest.mark.slow
@needs_mca
@pytest.mark.parametrize("sandbox", ["off", "workspace-write"])
def test_children_and_logs_never_show_the_keys(tmp_path: Path, sandbox: str) -> None:
    """As whatever user runs the tests: the command's output is scrubbed before anything sees
    it; root, unsandboxed, reads only overwritten values; in the sandbox mca is not there."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    script = _script(tmp_path / "s.jsonl", READ_ENV, "done")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "MCA_HOME": str(home), **KEYS}
    env["MCA_MOCK_SCRIPT"] = str(script)
    proc = subprocess.run(
        [str(MCA), "-C", str(ws), "-p", "go", "--yes", "--json", "--sandbox", sandbox],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    written = b"".join(p.read_bytes() for p in home.rglob("*") if p.is_file())
    for key in KEYS.values():
        assert key not in proc.stdout and key not in proc.stderr
        assert key.encode() not in written
    result = json.loads(proc.stdout)["tool_calls"][0]["result"]
    # unsandboxed, root reads /proc/<mca>/environ anyway: mca overwrote the values there (and
    # scrubs the result); anyone else is refused. In the sandbox, mca's process is not visible.
    if sandbox == "off" or not probe().available:  # (no sandbox here: run as with it off)
        refused = "Permission denied" in result
        assert refused or f"{next(iter(KEYS))}=xxxxxxxx" in result, result
    else:
        assert "No such file" in result or "Permission denied" in result, result


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["off", "workspace-write"])
def test_a_child_cannot_read_mca_s_environment(sandbox: str) -> None:
    """As an ordinary user, /proc/<mca>/environ is refused: unsandboxed, by PR_SET_DUMPABLE
    (with /proc readable, so that the refusal is the oracle's); in the sandbox, also for an
    account that cannot read its own /proc entries, as on these machines (on main every
    sandboxed command failed there)."""
    if skip_reason():
        pytest.skip(skip_reason())
    tmp = Path(tempfile.mkdtemp(prefix="mca-nobody-"))
    try:
        ws = tmp / "ws"
        ws.mkdir()
        script = _script(tmp / "s.jsonl", READ_ENV, "done")
        give(tmp)
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "MCA_HOME": str(tmp / "home"), **KEYS}
        env["MCA_MOCK_SCRIPT"] = str(script)
        flags = ["--json", "--sandbox", sandbox]
        proc = subprocess.run(
            [*as_user(hide_proc=sandbox != "off"), "-C", str(ws), "-p", "go", "--yes", *flags],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        result = json.loads(proc.stdout)["tool_calls"][0]["result"]
        refused = ("Permission denied",) if sandbox == "off" else ("Permission denied", "No such")
        assert any(r in result for r in refused), result
        assert "[REDACTED]" not in result  # refused by the kernel, not merely scrubbed after
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- bounded reads -----------------------------------------------------------------------------
PEAK = """
import json, sys
from pathlib import Path
from mca.sandbox.probe import probe
from mca.tools import get_tool
from mca.events import drop
from mca.tools.base import Approvals, ToolEnv, TurnState
from mca.workspace.walk import OFF
from mca.workspace.store import WorkspaceStore
from mca.skills.stage import read_reference
class Refuse:
    def approve(self, command): return False
    def approve_write(self, path, reason, diff): return False
    def approve_edit(self, path, diff): return True
ws = Path(sys.argv[1])
store = WorkspaceStore(ws, ws.parent / "store", "m", "20260101T000000", OFF)
env = ToolEnv(store, Approvals(Refuse()), drop)
out = {}
for name, args in json.loads(sys.argv[2]):
    try:
        out[name] = get_tool(name).run(env, TurnState(1), args)[:300]
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"[:300]
out["@ref"] = read_reference(ws, "big.log")[-200:]
print(json.dumps(out))
"""


def test_reads_of_a_4gb_file_stay_small(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with open(ws / "big.log", "wb") as f:  # text first (so it is not binary), then a hole
        f.write(b"a log line\n" * 2000)
        f.truncate(4 * 1024**3)
    calls = [
        ("read_file", {"path": "big.log", "limit": 5}),
        ("read_file", {"path": "big.log", "offset": 1500, "limit": 3}),
        ("edit_file", {"path": "big.log", "old_text": "a log", "new_text": "b"}),
        ("search_text", {"pattern": "log line"}),
    ]
    stdout, peak_mb = run_measured(PEAK, [str(ws), json.dumps(calls)], timeout=120)
    out = json.loads(stdout)
    assert peak_mb < 50, (peak_mb, out)
    assert "showing lines 1-5" in out["read_file"] or "1\ta log line" in out["read_file"]
    assert "too large to edit" in out["edit_file"]
    assert "cut at 20,000 characters" in out["@ref"]


def _within(seconds: float, fn: Callable[[], object]) -> object:
    """fn() in a thread; a call still running after `seconds` is a hang, and fails the test."""
    box: list[object] = []

    def run() -> None:
        try:
            box.append(fn())
        except BaseException as e:
            box.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "the call hung"
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def test_a_fifo_anywhere_is_refused_at_once(env: ToolEnv, ws: Path) -> None:
    from mca.context.prompt import read_agents_md
    from mca.errors import ToolError
    from mca.skills.parse import read_skill_file
    from mca.skills.stage import read_reference

    os.mkfifo(ws / "pipe")
    os.mkfifo(ws / "AGENTS.md")
    (ws / "sub").mkdir()
    os.mkfifo(ws / "sub" / "SKILL.md")

    def tool(name: str, **args: object) -> str:
        try:
            return get_tool(name).run(env, TurnState(1), args)
        except ToolError as e:
            return f"refused: {e}"

    assert "FIFO" in str(_within(30, lambda: tool("read_file", path="pipe")))
    assert "FIFO" in str(
        _within(30, lambda: tool("edit_file", path="pipe", old_text="a", new_text="b"))
    )
    assert "FIFO" in str(_within(30, lambda: tool("write_file", path="pipe", content="x")))
    _within(30, lambda: tool("search_text", pattern="x"))
    _within(30, lambda: tool("find_files", pattern="**"))
    _within(30, lambda: tool("list_dir", depth=3))
    with pytest.raises(ToolError, match="FIFO"):
        _within(30, lambda: read_reference(ws, "pipe"))
    assert "FIFO" in str(_within(30, lambda: read_agents_md(ws)))
    parsed = _within(30, lambda: read_skill_file(ws / "sub" / "SKILL.md"))
    assert "FIFO" in str(parsed)


# -- the terminal ------------------------------------------------------------------------------
@pytest.mark.slow
@needs_mca
@pytest.mark.pty
def test_p_on_a_terminal_shows_the_exact_command_and_no_escapes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    command = "touch PWNED\r\x1b[2Kls"
    script = _script(
        tmp_path / "s.jsonl",
        [{"name": "run_command", "arguments": {"command": command}}],
        "answer \x1b]0;title\x07 \x1b[2J done",
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "MCA_HOME": str(tmp_path / "h")}
    env.update(MCA_MOCK_SCRIPT=str(script), TERM="xterm")
    # --mode ask: in the sandbox, the default mode would run it without a question
    argv = ["-C", str(ws), "-p", "go", "--mode", "ask"]
    child: pexpect.spawn[bytes] = pexpect.spawn(str(MCA), argv, env=env, timeout=30)
    child.expect(rb"run it\? \[y\]es / \[N\]o: ")
    shown = child.before or b""
    child.send("n")  # one key
    child.expect(pexpect.EOF)
    everything = shown + (child.before or b"")
    assert b"touch PWNED^M^[[2Kls" in shown
    # mca's own spinner (drawn on a slow machine) is the only escape sequence allowed
    everything = re.sub(
        rb"\r\x1b\[K(\xe2\xa0[\x80-\xbf] waiting for the model[^\r\n]*)?", b"", everything
    )
    assert b"\x1b" not in everything and b"\x07" not in everything
    assert not (ws / "PWNED").exists()
