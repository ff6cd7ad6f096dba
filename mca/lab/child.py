"""Running the checks in a child process, with a wall-time and a memory limit, and reading what
it reported (one JSON line per check) even when it crashed or hung halfway."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_TIMEOUT = 300.0
DEFAULT_MEMORY_MB = 2048


@dataclass
class ChildRun:
    """What a child reported, and how it ended."""

    runtime: str = ""
    checks: list[dict[str, Any]] = field(default_factory=list)
    status: str = "ok"  # ok | refused | crashed | timed out
    message: str = ""
    seconds: float = 0.0


def _limits(memory_mb: int) -> None:
    import resource

    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.setsid()


def run_child(
    repo: Path,
    lab: str,
    seeds: Sequence[int],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    memory_mb: int = DEFAULT_MEMORY_MB,
    check_seconds: float | None = None,
) -> ChildRun:
    """`python -m mca.lab.runner` for these seeds; never raises for what the child did."""
    read_end, write_end = os.pipe()
    argv = [sys.executable, "-m", "mca.lab.runner", "--repo", str(repo), "--lab", lab]
    argv += ["--seeds", ",".join(map(str, seeds)), "--report-fd", str(write_end)]
    if check_seconds is not None:
        argv += ["--check-seconds", str(check_seconds)]
    start = time.monotonic()
    run = ChildRun()
    with tempfile.TemporaryFile() as err_file:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
            pass_fds=(write_end,),
            preexec_fn=lambda: _limits(memory_mb),
        )
        os.close(write_end)
        out = _collect(read_end, proc, timeout, run)
        err_file.seek(0)
        err = err_file.read()[-4096:]
    run.seconds = time.monotonic() - start
    done = _read(out, run)
    if run.status == "ok" and not done:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        run.status = "crashed"
        run.message = f"the check process ended with exit code {proc.returncode}: {tail[0][:200]}"
    return run


def _collect(fd: int, proc: subprocess.Popen[bytes], timeout: float, run: ChildRun) -> bytes:
    """Everything the child reports until it exits or the time is up (then it is killed)."""
    deadline = time.monotonic() + timeout
    chunks = []
    with os.fdopen(fd, "rb") as pipe:
        os.set_blocking(fd, False)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                run.status, run.message = "timed out", f"stopped after {timeout:g} s"
                break
            ready, _, _ = select.select([pipe], [], [], min(left, 0.5))
            if ready:
                data = pipe.read()
                if data == b"":  # the child closed its end: it is done or dead
                    break
                if data:
                    chunks.append(data)
            elif proc.poll() is not None and not ready:
                break
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return b"".join(chunks)


def _read(out: bytes, run: ChildRun) -> bool:
    done = False
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # something the student's code printed
        if not isinstance(event, dict):
            continue
        kind = event.pop("event", None)
        if kind == "check":
            run.checks.append(event)
        elif kind == "runtime":
            run.runtime = str(event.get("name", ""))
        elif kind == "refused":
            run.status, run.message = "refused", str(event.get("message", ""))
            done = True
        elif kind == "done":
            done = True
    return done
