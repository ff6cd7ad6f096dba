"""What `mca lab grade` does unless told otherwise: one record the command line, the grader
and the self-test's points line all read (imports nothing, so `mca --help` stays fast)."""

from __future__ import annotations

__all__ = [
    "ACCOUNT",
    "CHECK_SECONDS",
    "CPU_SECONDS",
    "FIRST_SEED_FLOOR",
    "GRACE",
    "JOBS",
    "MEMORY_MB",
    "SEEDS",
    "TIMEOUT",
]

ACCOUNT = "mca-student"  # who a hand-in runs as without the sandbox (setup.sh makes it)
SEEDS = 1  # seeded variants a grade runs besides the default fixtures (seed 0)
# A grade's seeded variants start at a seed drawn when it runs, at least this: no student can
# try them beforehand (the self-test's --seed N tries any other).
FIRST_SEED_FLOOR = 1_000_000
JOBS = 2  # hand-ins graded at once
TIMEOUT = 180.0  # seconds per hand-in
CHECK_SECONDS = 10.0  # seconds per check
MEMORY_MB = 2048  # memory per hand-in
CPU_SECONDS = 20.0  # CPU per hand-in, all its checks together; then GRACE seconds a check
GRACE = 2.0  # seconds a check gets once the hand-in used its CPU budget
