"""run_command: a shell command in the workspace, in its own process group, with a timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mca import events
from mca.errors import ToolError
from mca.process import signals
from mca.process.childenv import command_env
from mca.sandbox.rights import Grant
from mca.text.sanitize import MAX_APPROVAL_LINES
from mca.tools.allow import Answer, CommandQuestion, key_for
from mca.tools.base import READ_ONLY, ToolEnv, TurnState, arg_int, arg_str
from mca.tools.live import LiveOutput

if TYPE_CHECKING:
    from mca.sandbox.box import Launch, Sandbox
    from mca.sandbox.spawning.client import Process

__all__ = [
    "DEFAULT_TIMEOUT",
    "HEAD_BYTES",
    "MAX_TIMEOUT",
    "QUIET_ENV",
    "TAIL_BYTES",
    "Capture",
    "CommandInterrupted",
    "Outcome",
    "child_env",
    "execute",
    "run_command",
]

DEFAULT_TIMEOUT = 60
MAX_TIMEOUT = 600
HEAD_BYTES = 5_000
TAIL_BYTES = 5_000
# Nothing the command runs may wait for a person.
QUIET_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "DEBIAN_FRONTEND": "noninteractive",
    "NO_COLOR": "1",
}


class Capture:
    """Keeps the head and the tail of a stream in bounded memory."""

    def __init__(self, head: int = HEAD_BYTES, tail: int = TAIL_BYTES) -> None:
        self.head_max, self.tail_max = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_max - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.tail_max:
            del self.tail[: len(self.tail) - self.tail_max]

    def text(self) -> str:
        elided = self.total - len(self.head) - len(self.tail)
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if elided <= 0:
            return head + tail
        return f"{head}\n... [{elided} bytes elided from the middle of the output] ...\n{tail}"


class CommandInterrupted(KeyboardInterrupt):
    """Ctrl-C during a command: the group was killed; `output` is what it printed so far,
    `notes` what the sandbox put back after it (protected paths), said as after any command."""

    def __init__(self, output: str, notes: list[str] | None = None) -> None:
        super().__init__()
        self.output = output
        self.notes = notes or []


def child_env(
    base: Mapping[str, str], keep: tuple[str, ...] = (), *, typed: bool = False
) -> dict[str, str]:
    """A command's environment: nothing a secret's name (mca/process/childenv.py; for one the
    person `typed`, no mca key), nothing interactive."""
    env = command_env(base, keep, typed=typed)
    env.update(QUIET_ENV)
    return env


def _kill_group(proc: Process) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        if sig == signal.SIGTERM:
            try:
                proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                continue


def _reader(
    proc: Process, cap: Capture, on_chunk: Callable[[bytes], None] | None
) -> threading.Thread:
    def pump() -> None:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while chunk := os.read(fd, 65536):
            cap.feed(chunk)
            if on_chunk is not None:
                on_chunk(chunk)

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    return t


def _start_sandboxed(
    sandbox: Sandbox, launch: Launch, argv: list[str], pipes: dict[str, Any]
) -> Process:
    """From the sandbox's spawner; where it cannot start the command, one line says why."""
    from mca.sandbox.spawning.client import SpawnError

    try:
        return sandbox.popen(argv, launch, **pipes)
    except SpawnError as e:
        sandbox.finish(launch, 0)
        raise ToolError(f"not run: {e}") from None


@dataclass
class Outcome:
    """What a command did: its exit code (None when killed), output, and what the sandbox
    had to say afterwards (protected paths put back)."""

    code: int | None
    output: str
    timed_out: bool
    notes: list[str] = field(default_factory=list)  # protected paths put back (walls.needed)
    reports: list[str] = field(default_factory=list)  # what else the sandbox saw, said too


def execute(
    command: str,
    cwd: str,
    timeout: float | None,
    on_chunk: Callable[[bytes], None] | None = None,
    *,
    sandbox: Sandbox | None = None,
    grant: Grant | None = None,
    env: Mapping[str, str] | None = None,
) -> Outcome:
    """Run a command (inside `sandbox` when one is given and active) with `env` (None: a model's
    command's, from mca's environment). `on_chunk` sees the output as it comes (from a reader
    thread); no timeout when `timeout` is None."""
    env = child_env(os.environ) if env is None else env
    if sandbox is not None and not sandbox.active:
        sandbox = None
    argv = ["/bin/bash", "-c", command]
    pipes: dict[str, Any] = {
        "cwd": cwd,
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT,
    }
    cap = Capture()
    reader: threading.Thread | None = None
    timed_out = False
    # the sockets mca's environment names are hidden, also where the command's does not name them
    launch = (
        sandbox.prepare(grant or Grant(), env, os.environ, command=command)
        if sandbox is not None
        else None
    )
    proc: Process
    if sandbox is not None and launch is not None:
        proc = _start_sandboxed(sandbox, launch, argv, pipes)
    else:
        proc = subprocess.Popen(argv, start_new_session=True, env=env, **pipes)

    def stop_leftovers() -> None:  # nothing a sandboxed command started outlives it
        if sandbox is not None and launch is not None:
            sandbox.stop_leftovers(proc.pid)

    def finish(stopping: bool) -> list[str]:  # every ending puts the protected paths back
        if sandbox is None or launch is None:
            return []
        with signals.held(drop=stopping):  # a second Esc waits until it is done
            return sandbox.finish(launch, proc.pid)

    try:  # from the moment it runs: a Ctrl-C anywhere after this stops all of it
        reader = _reader(proc, cap, on_chunk)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
        stop_leftovers()
        reader.join(timeout=1.0)
        if reader.is_alive():  # background children still hold the pipe
            _kill_group(proc)
            reader.join(timeout=2.0)
    except KeyboardInterrupt:  # Esc, Ctrl-C, SIGTERM, SIGHUP (mca/process/signals.py)
        with signals.held(drop=True):
            _kill_group(proc)
            stop_leftovers()
            if reader is not None:
                reader.join(timeout=1.0)
            proc.wait()
        raise CommandInterrupted(cap.text(), finish(stopping=True)) from None
    finally:
        proc.wait()
        if proc.stdout:
            proc.stdout.close()
    notes = finish(stopping=False)
    reports = launch.reports if sandbox and launch else []
    return Outcome(None if timed_out else proc.returncode, cap.text(), timed_out, notes, reports)


def run_command(env: ToolEnv, turn: TurnState, args: Mapping[str, Any]) -> str:
    """Ask when the mode says so, run the command (in the sandbox when there is one), and offer
    a run with one more right when it hit the sandbox's walls; exit code and (head+tail)
    output go back to the model."""
    command = arg_str(args, "command").strip()
    timeout = arg_int(args, "timeout", DEFAULT_TIMEOUT, 1, MAX_TIMEOUT)
    if not command:
        raise ToolError("command is empty")
    lines = command.count("\n") + 1
    if lines > MAX_APPROVAL_LINES:
        raise ToolError(
            f"not run: the command is {lines:,} lines long, more than a person can check before"
            f" saying yes (at most {MAX_APPROVAL_LINES}); write it to a script file and run that"
        )
    if env.approvals.mode == "read-only":
        return _read_only(env, command, timeout)
    box = env.sandbox if env.sandbox is not None and env.sandbox.active else None
    _approve(env, command, box)
    env.before_change(turn.number)  # what the command changes, /undo can put back
    done = _run(env, command, timeout, box, Grant())
    if box is not None:
        done = _maybe_again(env, command, timeout, box, done)
    for note in env.workspace.after_command(turn.number):  # what /undo will not put back
        env.emit(events.Notice(f"warning: {note}"))
        done.notes.append(note)
    return _result(command, timeout, done)


def _approve(env: ToolEnv, command: str, box: Sandbox | None) -> None:
    """The question before a command, when the approval mode asks it. With a sandbox, auto-edit
    and yolo run it inside without asking; without one, only yolo does."""
    approvals = env.approvals
    asks = approvals.mode == "ask" or (approvals.mode == "auto-edit" and box is None)
    path = child_env(os.environ).get("PATH", os.defpath)
    if not asks or approvals.always.covers(command, str(env.root), path):
        return
    key = key_for(command, str(env.root), path)
    question = CommandQuestion(command, box.summary() if box else "", key.shown() if key else "")
    answer = approvals.ask.approve(question)
    if answer is Answer.ALWAYS and key is not None:
        approvals.always.add(key)
    elif answer is Answer.UNASKED:
        raise ToolError(
            f"not run: nobody was asked (mca ran without a terminal to ask on): {command}; the"
            " user can let commands run with --yes or --mode yolo"
        )
    elif answer is not Answer.YES:
        raise ToolError(f"the user declined to run: {command}")


def _read_only(env: ToolEnv, command: str, timeout: int) -> str:
    """Read-only mode: the command runs without a question in a read-only sandbox (nothing
    writable but a private /tmp, no network), never offered more; refused where there is
    no sandbox."""
    from mca.sandbox.walls import refused

    box = env.sandbox
    if box is None or not box.active:
        why = box.describe() if box is not None else "none in this session"
        raise ToolError(
            f"not run: {READ_ONLY}; commands run only in a sandbox, and there is"
            f" none here (sandbox: {why}); say what you would run instead"
        )
    done = _run(env, command, timeout, box.read_only(), Grant())
    if (done.timed_out or done.code != 0) and refused(done.output):
        done.notes.append(
            "read-only mode: commands run in a read-only sandbox (no writes but a private /tmp,"
            " no network), and nothing is run again with more; the user can /mode auto-edit"
        )
    return _result(command, timeout, done)


def _run(env: ToolEnv, command: str, timeout: int, box: Sandbox | None, grant: Grant) -> Outcome:
    env.emit(events.CommandStarted(command, box.summary(grant) if box else ""))
    # the person watches it run (scrubbed across its events); the model gets the result
    live = LiveOutput(env.emit, secrets=env.secrets)
    try:
        cenv = child_env(os.environ, env.pass_env)
        done = execute(
            command, str(env.root), timeout, live.feed, sandbox=box, grant=grant, env=cenv
        )
    except CommandInterrupted as stop:
        live.close()  # its last output comes before the line that says it was stopped
        env.emit(events.CommandInterrupted(command, stop.output))
        for note in stop.notes:
            env.emit(events.Notice(note))
        raise
    finally:
        live.close()
    for note in (*done.notes, *done.reports):
        env.emit(events.Notice(note))
    return done


def _maybe_again(env: ToolEnv, command: str, timeout: int, box: Sandbox, done: Outcome) -> Outcome:
    """A command that hit the sandbox's walls: the person may let it run again with exactly
    the right it lacked, once. Asked in every mode, as protected paths are (neither yolo nor an
    "always" answers it); when there is nobody to ask, the model is told so and how the person
    can allow it. What no answer opens (a secret) is said, not asked."""
    from mca.sandbox.walls import find

    failed = done.timed_out or done.code != 0
    try:
        wall = find(done.output, done.notes, command, box.policy, failed=failed)
    except OSError as e:  # what it printed is the model's all the same
        _tell(env, done, f"mca could not tell which of the sandbox's walls it met: {e}")
        return done
    closed = [f"the sandbox: {line}" for line in wall.closed]
    for line in closed:
        _tell(env, done, line)
    need, home = wall.grant, box.policy.user_home
    if not need:
        return done
    question = CommandQuestion(command, box.summary(), "", need.describe(home), wall.what)
    answer = env.approvals.ask.approve(question)
    if answer is not Answer.YES:
        who = (
            "nobody was asked (no terminal to ask on; --yes does not cover this)"
            if answer is Answer.UNASKED
            else "the user did not allow more"
        )
        _tell(env, done, "; ".join([f"the sandbox stopped {wall.what}; {who}", *wall.hints]))
        return done
    again = _run(env, command, timeout, box, need)
    again.notes[:0] = [*closed, f"run again with {need.describe(home)} (the user allowed it once)"]
    return again


def _tell(env: ToolEnv, done: Outcome, note: str) -> None:
    """A line for the person now and for the model with the result."""
    env.emit(events.Notice(note))
    done.notes.append(note)


def _result(command: str, timeout: int, done: Outcome) -> str:
    if done.timed_out:
        status = f"timed out after {timeout}s; the process group was killed"
    else:
        status = f"exit code {done.code}"
    body = done.output.rstrip("\n") or "(no output)"
    notes = "".join(f"\n[mca: {n}]" for n in (*done.notes, *done.reports))
    result = f"$ {command}\n{status}\n{body}{notes}"
    if done.code != 0:
        raise ToolError(result)
    return result
