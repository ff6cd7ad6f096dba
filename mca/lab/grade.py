"""`mca lab grade SUBMISSIONS_DIR`: every */exercises.py graded in its own process, in parallel.

One CSV row per submission: checks passed per exercise, the total, the first line of each
failure, the status (ok, refused, crashed, timed out) and the runtime. A check counts as passed
only when it passes on the default fixtures and on every seeded variant. A submission that
crashes, hangs, eats memory or imports what it should not gets a row saying so; the others are
unaffected. Student code never runs in the grader's process; the isolation is against accidents,
not a security sandbox.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mca.crash import home_of
from mca.lab.exercises import EXERCISES
from mca.lab.handin import run_handin
from mca.lab.launch import Isolation, Limits
from mca.lab.report import combine
from mca.lab.suite import CHECKS, Check
from mca.lab.variant import Variants
from mca.sandbox.probe import Mechanisms

GRADING = Limits(check_seconds=10.0)
COLUMNS = (
    "submission",
    "status",
    *(f"ex{e.number}" for e in EXERCISES),
    "total",
    "failures",
    "seconds",
)


def grade_one(
    variants: Variants, path: Path, seeds: Sequence[int], limits: Limits, isolation: Isolation
) -> dict[str, Any]:
    """The CSV row of one submission."""
    name = path.parent.name
    try:
        source = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return row_of(name, f"refused: cannot load it ({type(e).__name__}: {e})", [], 0.0)
    filename = f"{name}/{path.name}"
    run = run_handin(variants, source, filename, seeds, isolation, limits)
    status = "ok" if run.status == "ok" else f"{run.status}: {run.message}"
    note = f"not run ({run.status})" if run.status != "ok" else ""
    checks = combine(run.checks, seeds, note) if run.status != "refused" else []
    return row_of(name, status, checks, run.seconds)


def row_of(
    name: str,
    status: str,
    checks: list[dict[str, Any]],
    seconds: float,
    table: Sequence[Check] = CHECKS,
) -> dict[str, Any]:
    """The CSV row of one submission from its combined results (checks of `table`)."""
    row: dict[str, Any] = {"submission": name, "status": status, "seconds": f"{seconds:.1f}"}
    for ex in EXERCISES:
        ids = [t.id for t in table if t.exercise is ex]
        ok = sum(1 for c in checks if c["id"] in ids and c["passed"])
        row[f"ex{ex.number}"] = f"{ok}/{len(ids)}"
    row["total"] = f"{sum(c['passed'] for c in checks)}/{len(table)}"
    failed = [c for c in checks if not c["passed"]]
    row["failures"] = "; ".join(f"{c['id']}: {str(c['saw']).splitlines()[0][:120]}" for c in failed)
    return row


def grade(
    repo: Path,
    submissions: Path,
    *,
    jobs: int = 2,
    seeds: int = 1,
    limits: Limits = GRADING,
    mechanisms: Mechanisms | None = None,
    deny: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Rows for every SUBMISSIONS/*/exercises.py, sorted by submission name. Each hand-in's
    child runs in mca's sandbox with these mechanisms (None: limits only), never reading the
    class, `deny` (the grader's outputs) or mca's state."""
    paths = sorted(submissions.glob("*/exercises.py"))
    seed_list = [0, *range(1, seeds + 1)]
    env = os.environ if env is None else env
    with Variants(repo) as variants, ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        home = Path(env.get("HOME") or Path.home())
        hidden = (submissions.resolve(), *(p.resolve() for p in deny))
        isolation = Isolation(mechanisms, variants.root, home_of(env), home, hidden)
        return list(pool.map(lambda p: grade_one(variants, p, seed_list, limits, isolation), paths))


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()
