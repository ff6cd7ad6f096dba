"""A student's exercises.py as seen from the grader: five functions behind a pipe.

`Student` starts the child (mca/lab/serve.py) through a Launcher, hands it the file's source,
and turns each call into a request and each answer back into mca's own dataclasses
(mca/lab/calls.py), validated. `policy_for(exercise)` is production with exactly that
exercise's function replaced, so a check calls no other student function. A call that does
not come back with a usable answer raises Unanswered, which fails the running check with why:
a crash (the student's line, once per exercise), a time-out or a dead process (the child is
restarted for the next check), a wrong type, or 'not your code'.
"""

from __future__ import annotations

import os
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mca.lab.calls import CODECS
from mca.lab.channel import Cancelled, Channel, Gone, Over, Slow, TooBig, tree_usage
from mca.lab.checks import Unanswered
from mca.lab.defaults import GRACE
from mca.lab.drain import Drained
from mca.lab.exercises import EXERCISES, Exercise
from mca.lab.launch import Launcher, Limits
from mca.lab.outputs import Status
from mca.lab.ownership import not_yours
from mca.lab.said import name, printed, said
from mca.lab.wire import WireError
from mca.skills.model import CODES
from mca.skills.parse import FrontmatterError
from mca.skills.policy import PRODUCTION, Policy

# A child that keeps dying in one exercise is not started again for it after this many: per
# exercise, so one that loops or crashes costs no other exercise its checks.
MAX_STARTS = 8
BY_FIELD = {e.field: e for e in EXERCISES}


class Refused(Exception):
    """The file cannot be graded at all: `kind` is refused (it does not import), crashed (the
    process died importing it), timed out or interrupted."""

    def __init__(self, message: str, kind: Status = Status.REFUSED) -> None:
        super().__init__(message)
        self.kind = kind


class Student:
    """One hand-in's functions, answered by a child process."""

    def __init__(
        self,
        source: str,
        filename: str,
        launcher: Launcher,
        limits: Limits,
        static: Mapping[str, str],
        cancel: threading.Event | None = None,
    ) -> None:
        self.source, self.filename = source, filename
        self.launcher, self.limits, self.static = launcher, limits, static
        self.channel: Channel | None = None
        self.owners: dict[str, str] = {}
        self.not_yours: dict[str, str] = {}  # field -> why
        self.last_printed = ""  # the last line the child printed before it ended
        self.killed_by_system = False  # a child was killed by neither mca nor its own limits
        self.hard: dict[int, str] = {}  # check id -> it timed out or killed the child
        self.crashes: dict[tuple[str, str, int | None], int] = {}
        self.starts = 0
        self.restarts: dict[str, int] = {}  # field -> children started for its calls
        self.check = 0
        self.deadline = 0.0
        self.ends = time.monotonic() + limits.seconds
        self.token = secrets.token_hex(8)  # answers carry it: a line written ahead is dropped
        self.calls = 0
        self.cancel = cancel
        self.cpu_spent = 0.0  # CPU seconds of the children already stopped
        self.short = False  # the running check got GRACE seconds: the budget was used up

    # -- the process ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start the child and load the file; Refused when it does not import."""
        self.deadline = min(time.monotonic() + self.limits.check_seconds, self.ends)
        ready = self._spawn()
        self.owners = {k: str(v) for k, v in ready.items() if k in CODECS}
        for e in EXERCISES:
            why = not_yours(e, self.static, self.owners.get(e.field, "starter"))
            if why:
                self.not_yours[e.field] = why

    def _spawn(self) -> dict[str, Any]:
        self.starts += 1
        send_r, send_w = os.pipe()
        read_r, read_w = os.pipe()
        out_r, out_w = os.pipe()  # its stdout and stderr: drained by the Channel, capped
        try:
            proc = self.launcher.start((send_r, read_w), out_w)
        except BaseException:
            for fd in (send_w, read_r, out_r):
                os.close(fd)
            raise
        finally:
            for fd in (send_r, read_w, out_w):
                os.close(fd)
        total = self.launcher.total(proc)
        self.channel = Channel(proc, send_w, read_r, Drained(out_r), self.cancel, total)
        try:
            self.channel.send({"source": self.source, "filename": self.filename}, self.deadline)
            reply = self.channel.receive(lambda o: "ready" in o or "refused" in o, self.deadline)
        except Cancelled:
            self.stop()
            raise Refused("not graded: interrupted", Status.INTERRUPTED) from None
        except (Gone, Slow, TooBig, Over) as e:
            how = self.stop(isinstance(e, Gone))
            if isinstance(e, Over):
                raise Refused(f"{e} while importing it", Status.CRASHED) from None
            if isinstance(e, Slow):
                why = f"importing it took over {self.limits.check_seconds:g} s"
                raise Refused(why, Status.TIMED_OUT) from None
            raise Refused(f"{how} while importing it{self._printed()}", Status.CRASHED) from None
        if "refused" in reply:
            self.stop()
            raise Refused(f"importing it failed: {self._crash_text(reply['refused'])}")
        ready = reply["ready"]
        return ready if isinstance(ready, dict) else {}

    def _ended(self, channel: Channel, ours: bool) -> str:
        """How the child ended, from its exit status (it has been stopped and reaped; `ours`:
        by mca); the last line it printed is kept apart (`_printed`): its words, not ours."""
        code = channel.proc.returncode
        self.last_printed = channel.stderr_tail()
        if code is not None and code < 0:
            import signal

            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            why = {"SIGXCPU": "its CPU time ran out", "SIGKILL": "killed"}.get(name, name)
            if name == "SIGKILL" and not ours:  # its limits raise MemoryError; this is the OOM
                self.killed_by_system = True  # killer's (or its own hand): graded again alone
                why = "killed by the system, not by its own limits: out of memory?"
            return f"the process ended ({why})"
        return f"the process ended with exit code {code}"

    def _printed(self) -> str:
        """', the hand-in printed: "…"' (its last line), or ''."""
        return f", {printed(self.last_printed)}" if self.last_printed else ""

    def stop(self, ended: bool = False) -> str:
        """Stop the child and everything it started (the next call starts a fresh one); how
        it ended. `ended`: it closed its pipe, so let it finish exiting (its own status)."""
        channel, self.channel = self.channel, None
        if channel is None:
            return ""
        self.cpu_spent += tree_usage(channel.proc.pid)[0]  # before it is reaped
        if ended:
            channel.settle(2.0)
        ours = channel.proc.poll() is None  # still running: the kill below is what ends it
        self.launcher.stop(channel.proc)
        how = self._ended(channel, ours)
        channel.close()
        return how

    def close(self) -> None:
        self.stop()
        self.launcher.close()

    # -- calls ---------------------------------------------------------------------------------
    def begin(self, check: int) -> None:
        """A check starts: its calls share its time limit (and the hand-in's). Once the
        hand-in used its CPU budget, a check gets GRACE seconds: enough for an answer, not
        for a loop to keep its slot."""
        self.check = check
        allowed = self.limits.check_seconds
        self.short = False
        if self.limits.cpu_budget is not None:
            left = self.limits.cpu_budget - self.cpu_used()
            if left < allowed:
                allowed, self.short = max(left, min(GRACE, allowed)), True
        self.deadline = min(time.monotonic() + allowed, self.ends)

    def cpu_used(self) -> float:
        """CPU seconds the hand-in's children used so far (the running one included)."""
        running = tree_usage(self.channel.proc.pid)[0] if self.channel is not None else 0.0
        return self.cpu_spent + running

    def call(self, field: str, args: tuple[Any, ...]) -> Any:
        """The student's function on these arguments, answered and validated, or Unanswered."""
        exercise = BY_FIELD[field]
        if field in self.not_yours:
            raise Unanswered(self.not_yours[field])
        if time.monotonic() >= self.ends:
            raise Unanswered(f"not run: the hand-in's {self.limits.seconds:g} s are up")
        codec = CODECS[field]
        payload = codec.args_out(args)
        if self.channel is None or self.channel.proc.poll() is not None:
            self._restart(exercise)
        assert self.channel is not None
        self.calls += 1
        rid = f"{self.calls}-{self.token}"
        try:
            self.channel.send({"id": rid, "call": field, "args": payload}, self.deadline)
            reply = self.channel.receive(lambda o: o.get("id") == rid, self.deadline)
        except Cancelled:
            self.stop()
            raise Unanswered("not run: interrupted") from None
        except (Gone, Slow, TooBig, Over) as e:
            raise Unanswered(self._lost(e, exercise)) from None
        return self._answer(reply, exercise, args)

    def _restart(self, exercise: Exercise) -> None:
        self.stop()
        started = self.restarts.get(exercise.field, 0)
        if started >= MAX_STARTS:
            why = f"not run: the process was started {MAX_STARTS} times for {exercise.function}"
            raise Unanswered(why)
        self.restarts[exercise.field] = started + 1
        try:
            self._spawn()
        except Refused as e:
            raise Unanswered(f"not run: restarting the process failed ({e})") from None

    def _lost(self, e: Exception, exercise: Exercise) -> str:
        self.hard[self.check] = type(e).__name__
        left = self.deadline - time.monotonic()
        how = self.stop(isinstance(e, Gone))
        if isinstance(e, Slow):
            if self.deadline >= self.ends and left <= 0:
                return f"timed out: the hand-in's {self.limits.seconds:g} s are up"
            if self.short:
                budget = f"{self.limits.cpu_budget:g}"
                return f"timed out in {exercise.function}: the hand-in used its {budget} s of CPU"
            return f"timed out after {self.limits.check_seconds:g} s in {exercise.function}"
        if isinstance(e, TooBig):
            return f"{exercise.function} sent an answer over the size limit"
        if isinstance(e, Over):
            return f"{e} while {exercise.function} ran"
        return f"{how} while {exercise.function} ran{self._printed()}"

    def _answer(self, reply: dict[str, Any], exercise: Exercise, args: tuple[Any, ...]) -> Any:
        fn, field = exercise.function, exercise.field
        if "ok" in reply:
            try:
                return CODECS[field].result_in(reply["ok"], args)
            except WireError as e:
                why = f"{fn} returned something that is not {exercise.returns}: {e}"
                raise Unanswered(why) from None
        if "raised" in reply and field == "split":
            raise _frontmatter_error(reply["raised"], fn)
        if "not_yours" in reply:
            text = str(reply["not_yours"])  # the kit's sentence, unless the hand-in forged one
            kit = re.fullmatch(rf"{re.escape(fn)} calls mca's own \w+", text)
            self.not_yours[field] = f"not your code: {text if kit else said(text)}"
            raise Unanswered(self.not_yours[field])
        if "wrong" in reply:
            raise Unanswered(f"{fn} returned {str(reply['wrong'])[:60]!r}, not {exercise.returns}")
        if "crash" in reply:
            raise Unanswered(self._crash(reply["crash"], field))
        raise Unanswered(f"{fn}: an answer mca cannot read")

    def _crash(self, crash: Any, field: str) -> str:
        """'crashed: KeyError: 'x' (exercises.py, line 12)' the first time in an exercise,
        a pointer to that check afterwards."""
        text = self._crash_text(crash)
        kind = str(crash.get("type", "")) if isinstance(crash, dict) else ""
        line = crash.get("line") if isinstance(crash, dict) else None
        key = (field, kind, line if isinstance(line, int) else None)
        first = self.crashes.setdefault(key, self.check)
        if first != self.check:
            again = f"crashed as in check {first}: {name(kind)}"
            return again + (f" at line {line}" if line else "")
        return f"crashed: {text}"

    def _crash_text(self, crash: Any) -> str:
        if not isinstance(crash, dict):
            return "no details"
        kind, message, line = crash.get("type"), crash.get("message"), crash.get("line")
        where = f" ({self.filename}, line {line})" if isinstance(line, int) else ""
        if kind == "MemoryError":  # its own limit (RLIMIT_AS) said no
            return f"MemoryError: over its memory limit of {self.limits.memory_mb} MiB{where}"
        words = f": {said(str(message))}" if message else ""
        return f"{name(str(kind))}{words}{where}"

    # -- policies and verdicts -----------------------------------------------------------------
    def policy_for(self, exercise: Exercise) -> Policy:
        """Production, with only this exercise's function answered by the student's child."""

        def proxy(*args: Any) -> Any:
            if exercise.field == "judge":
                args = (list(args[0]), *args[1:])  # an iterable, read once, sent as a list
            return self.call(exercise.field, args)

        name = f"{self.runtime} for exercise {exercise.number}"
        return replace(PRODUCTION, name=name, **{exercise.field: proxy})

    @property
    def runtime(self) -> str:
        own = [e.function for e in EXERCISES if self.owners.get(e.field) == "own"]
        return f"exercises({os.path.basename(self.filename)}: {', '.join(own) or 'none'})"

    def overrule(self, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """An exercise found not to be the student's own fails every check of it."""
        out = []
        for r in results:
            field = next((e.field for e in EXERCISES if e.label == r.get("exercise")), "")
            if field in self.not_yours:
                r = {**r, "passed": False, "skipped": False, "saw": self.not_yours[field]}
            out.append(r)
        return out


def _frontmatter_error(raised: Any, fn: str) -> BaseException:
    """The contract's exception, rebuilt from its fields (checked like any answer)."""
    if isinstance(raised, dict):
        code, message, line = raised.get("code"), raised.get("message"), raised.get("line")
        if (
            isinstance(code, str)
            and code in CODES
            and isinstance(message, str)
            and (line is None or (isinstance(line, int) and not isinstance(line, bool)))
        ):
            return FrontmatterError(code, message, line)
    return Unanswered(f"{fn} raised a FrontmatterError mca cannot read")
