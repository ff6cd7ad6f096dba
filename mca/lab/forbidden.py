"""Modules an exercise has no business importing: the network, other processes, raw memory.

Read by the grader (a file that names one is refused, mca/lab/student.py) and by the child
(mca/lab/serve.py refuses them at run time), so it imports nothing.
"""

from __future__ import annotations

FORBIDDEN = frozenset(
    {
        "socket", "ssl", "subprocess", "multiprocessing", "ctypes", "pty", "urllib", "http",
        "httpx", "requests", "ftplib", "smtplib", "telnetlib", "asyncio", "concurrent",
    }
)  # fmt: skip
