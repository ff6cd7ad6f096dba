"""A process's peak memory, read without /proc (which may be hidden): the code runs in a child of
a small Python process, which reports the child's peak resident size from getrusage. Linux
carries ru_maxrss over from the process that forked (pytest, hundreds of MB); forked from a
fresh interpreter the child starts from that one's few megabytes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence

WRAPPER = """
import json, resource, subprocess, sys
done = subprocess.run([sys.executable, "-c", *sys.argv[1:]], capture_output=True, text=True)
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps([done.returncode, done.stdout, done.stderr, peak_kb // 1024]))
"""


def run_measured(code: str, args: Sequence[str] = (), timeout: float = 180) -> tuple[str, int]:
    """Run `python -c code args...`; its stdout and its peak resident size in MB."""
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    returncode, stdout, stderr, peak_mb = json.loads(out.stdout)
    assert returncode == 0, stderr
    return stdout, int(peak_mb)
