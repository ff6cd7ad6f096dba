"""Discovery started ahead, in a forked child, while the parent goes on with `mca -p`.

Walking, reading and checking thousands of SKILL.md files costs ~0.1 s of CPU, and -p spends
more than that meanwhile on work that does not need the skills: importing its face, and loading
the tokenizer its turn needs anyway (the fits memo's audit, the ledger's counts): a real
provider's session starts loading it at once; with the mock model `take` starts it when the child
is not done yet (with nothing to wait for, it loads when first used). On a second core the two
overlap.

The child runs the serial discovery (`open_discovery`, the same code: every parse-cache entry
verified against its file as ever) and leaves the result, pickled, in an unnamed file only it
and the parent hold (through a pipe, each 64 KB of the megabytes would wait for the GIL the
loading tokenizer holds); its exit closes a pipe, which tells the parent. The parent takes it
for the same config only. Anything else gives None and the caller discovers serially: no fork,
one core, no root directory at all (the usual start with no skills pays no fork), other threads
running (a lock one holds would stay held in the child), a lab's policy, a config that changed
(a server asked for its window: launch does not start a child then), a child that fails or
exits non-zero, or a catalog fit that the memo does not know and the length alone does not settle
(the tokenizer is the parent's to load: the child would load it for nothing). The parent waits
for the child as long as it takes (WAIT: no limit): a discovery begun again from the start could
not end sooner.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from mca.fs.careful import is_dir
from mca.skills.cache import FitsMemo
from mca.skills.discover import Discovery, session_roots
from mca.skills.policy import PRODUCTION
from mca.skills.runtime import SkillsConfig, open_discovery
from mca.skills.scan import gc_paused
from mca.tokens import MAX_TOKEN_BYTES, Estimator

__all__ = ["WAIT", "Ahead", "Opener", "start"]

WAIT: float | None = None  # seconds the parent waits for the child (None: until it ends)
Opener = Callable[[SkillsConfig, Estimator], tuple[Discovery, FitsMemo]]


class _Cold(Exception):
    """A catalog fit the memo does not know."""


class _Untokenized(Estimator):
    """The child's estimator: it never loads the tokenizer."""

    def fits(self, text: str, limit: int) -> bool:
        size = len(text.encode("utf-8"))  # what the length settles (as Estimator.fits)
        if size <= limit or size > limit * MAX_TOKEN_BYTES:
            return size <= limit
        raise _Cold


@dataclass
class Ahead:
    """A discovery under way in the child `pid`: `fd` ends when it exits, `out` holds its result."""

    config: SkillsConfig
    pid: int
    fd: int
    out: int
    wait: float | None = WAIT
    why: str = ""  # why `take` gave None: the session log says it (serial discovery follows)

    def take(self, config: SkillsConfig, estimator: Estimator) -> tuple[Discovery, FitsMemo] | None:
        """The child's discovery and memo for `config` (the memo's tokenizer: `estimator`'s), or
        None (discover serially; `why` then says why). The child is gone afterwards, whatever
        the answer."""
        try:
            if config != self.config or self.fd < 0:
                self.why = "already taken" if self.fd < 0 else "the skills' config changed"
                return None
            if not select.select([self.fd], [], [], 0)[0]:  # still at work: meanwhile, what
                estimator.preload()  # -p needs anyway (the memo's audit, the ledger)
            data = self._read()
            if data is None:
                return None
            with gc_paused():  # unpickled skills are frozen with the rest, as when found here
                d, path, known, unchecked, changed = pickle.loads(data)
            d.policy = PRODUCTION
            memo = FitsMemo(None, estimator.encoding, estimator.fits)
            memo.path, memo.known, memo.unchecked, memo.changed = path, known, unchecked, changed
            return d, memo
        except Exception as e:  # whatever it was, serial discovery does the work again
            self.why = f"{type(e).__name__}: {e}"
            return None
        finally:
            self.close()

    def _read(self) -> bytes | None:
        """What the child wrote, when it exited 0 within the wait (else None, and `why`)."""
        end = None if self.wait is None else time.monotonic() + self.wait
        left = self.wait
        while (left is None or left > 0) and select.select([self.fd], [], [], left)[0]:
            if not os.read(self.fd, 1):  # nothing is ever written: this is the end
                pid, self.pid = self.pid, 0  # reaped here, or (SIGCHLD ignored) by the system
                _, status = os.waitpid(pid, 0)
                if (code := os.waitstatus_to_exitcode(status)) != 0:
                    self.why = f"the child exited with status {code}"
                    return None
                size = os.fstat(self.out).st_size
                data = os.pread(self.out, size, 0)
                self.why = "" if len(data) == size else f"read {len(data)} of {size} bytes"
                return data if len(data) == size else None
            left = None if end is None else end - time.monotonic()
        self.why = f"the child was not done within {self.wait} s"
        return None

    def close(self) -> None:
        """Stop and reap the child when it is still there; close the pipe (idempotent)."""
        for fd in (self.fd, self.out):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fd = self.out = -1
        if self.pid > 0:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            self.pid = 0


def start(config: SkillsConfig, run: Opener = open_discovery) -> Ahead | None:
    """Fork a child discovering the skills of `config` (None when it cannot or should not)."""
    if config.policy is not None or not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    if _cores() < 2:  # nothing would run beside this process: the child would only cost
        return None
    c = config
    if not any(
        is_dir(r.path) for r in session_roots(c.workspace, c.home, c.user_home, c.skills_dirs)
    ):
        return None  # no skills anywhere: nothing to overlap
    fds: list[int] = []
    try:
        fds += os.pipe()
        fds.append(_unnamed())
        pid = os.fork()
    except OSError:
        for fd in fds:
            os.close(fd)
        return None
    r, w, out = fds
    if pid == 0:
        _child(r, out, config, run)
    os.close(w)
    return Ahead(config, pid, r, out)


def _cores() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _unnamed() -> int:
    """A file with no name, in memory where the system allows it."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("mca-skills", os.MFD_CLOEXEC)
    import tempfile

    with tempfile.TemporaryFile() as f:
        return os.dup(f.fileno())


def _child(r: int, out: int, config: SkillsConfig, run: Opener) -> NoReturn:
    """Discover, write the result, and exit at once (no atexit, no stdio flushed twice); the
    pipe's write end closes with the process."""
    code = 1
    try:
        os.close(r)
        d, memo = run(config, _Untokenized(config.encoding))
        state = (d, memo.path, memo.known, memo.unchecked, memo.changed)
        view = memoryview(pickle.dumps(state, pickle.HIGHEST_PROTOCOL))
        at = 0
        while at < len(view):
            at += os.pwrite(out, view[at:], at)
        code = 0
    except BaseException:  # Ctrl-C reaches the whole process group: the parent handles it
        pass
    finally:
        os._exit(code)
