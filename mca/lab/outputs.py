"""What `mca lab grade` writes for graders to upload: a CSV (one row per student, numeric
points), Gradescope's results.json (one per submission, in its autograder layout) and one JUnit
report for the class. Every file is rewritten atomically as each hand-in finishes, so an
interrupted or failed run keeps the rows graded so far; `check()` writes them empty before any
grading starts, so a bad path fails at once.

Text from student code (what a check saw) is made printable and valid UTF-8 first; `grade`
hands over every row `scrubbed` of the grader's keys.
"""

from __future__ import annotations

import csv
import enum
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from mca.fs.careful import atomic_write, private_dir
from mca.lab.exercises import EXERCISES
from mca.lab.keys import hide, hide_data
from mca.lab.suite import GRADED, Check
from mca.text.sanitize import one_line, valid_text

__all__ = [
    "COLUMNS",
    "MAX_POINTS",
    "Graded",
    "Status",
    "Writer",
    "clean",
    "csv_text",
    "gradescope",
    "junit",
    "log_text",
    "row",
    "scrubbed",
]

COLUMNS = (
    "student",
    "status",
    *(f"ex{e.number}" for e in EXERCISES),
    "total",
    "max_points",
    "failures",
    "seconds",
    "route",
)
MAX_POINTS = sum(c.points for c in GRADED)
LOG_LIMIT = 20_000  # characters of one failure in a student's log (the CSV cell holds 120)


class Status(enum.StrEnum):
    """How a hand-in went: graded (`ok`, whatever it scored), or why it was not. The value is
    how a row's status starts (and how the run's summary counts it)."""

    OK = "ok"
    ABSENT = "missing"  # on the roster, no folder in the class
    MISSING = "missing exercises.py"
    UNREADABLE = "unreadable"
    NOT_UTF8 = "not UTF-8"
    REFUSED = "refused"  # it does not import (or is refused before it runs)
    CRASHED = "crashed"  # the process died importing it
    TIMED_OUT = "timed out"
    INTERRUPTED = "interrupted"  # Ctrl-C stopped the run before it was graded
    ERROR = "error"  # mca's own bug, in this row only


@dataclass
class Graded:
    """One student's result: its status and what to say after it (`note`); `checks` holds one
    combined result per graded check (empty if not run)."""

    student: str
    status: Status
    checks: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    runtime: str = ""
    note: str = ""  # "(found Exercises.py)", "(byte 0xe9 at offset 5)", or why, after a colon
    route: str = ""  # how it ran: "sandboxed (...)", "unsandboxed as mca-student (uid 999)"

    @property
    def text(self) -> str:
        """The row's status as people read it: 'refused: imports subprocess (line 1)'."""
        if not self.note:
            return str(self.status)
        spaced = (Status.OK, Status.ABSENT, Status.MISSING, Status.NOT_UTF8)
        after = " " if self.status in spaced else ": "
        return f"{self.status}{after}{self.note}"


def scrubbed(g: Graded, secrets: Sequence[str]) -> Graded:
    """The row with every key the grader knows (its environment's, config.toml's) taken out
    of all it says, a key cut short by the child or disguised (mca/lab/keys.py) included:
    every output is written from this."""
    if not secrets:
        return g
    return replace(
        g,
        student=hide(g.student, secrets, cut=True),
        checks=hide_data(g.checks, secrets),
        runtime=hide(g.runtime, secrets, cut=True),
        note=hide(g.note, secrets, cut=True),
    )


def clean(text: Any, limit: int = 2000) -> str:
    """Untrusted text as one printable, valid UTF-8 line of at most `limit` characters, cut
    at a word when it is longer (ending in '…'; the whole text is in the student's log)."""
    line = one_line(valid_text(str(text)))
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:  # a word boundary not too far back; else the hard cut
        cut = cut[:space]
    return cut.rstrip() + "…"


def log_text(g: Graded, table: Sequence[Check] = GRADED) -> str:
    """The student's log: the row's status and points, then every check that did not pass,
    with its whole text (the CSV's cells are cut)."""
    r = row(g, table)
    lines = [f"student: {g.student}", f"status: {clean(g.text, LOG_LIMIT)}"]
    lines.append(
        f"points: {r['total']}/{r['max_points']}" + (f" · {g.runtime}" if g.runtime else "")
    )
    if g.route:
        lines.append(f"ran: {g.route}")
    names = {t.id: t for t in table}
    for c in g.checks:
        if c.get("passed"):
            continue
        check = names.get(c["id"])
        where = f" (exercise {check.exercise.label})" if check and check.exercise else ""
        lines += ["", f"check {c['id']}{where}: {'skipped' if c.get('skipped') else 'failed'}"]
        lines.append(f"  expected: {c['name']}")
        lines.append(f"  saw: {clean(c['saw'], LOG_LIMIT)}")
        lines.append(f"  hint: {c['hint']}")
    return "\n".join(lines) + "\n"


def _points(g: Graded, table: Sequence[Check]) -> dict[int, int]:
    """Points per exercise number (0 for each when the hand-in did not run)."""
    passed = {c["id"] for c in g.checks if c.get("passed")}
    return {
        e.number: sum(t.points for t in table if t.exercise is e and t.id in passed)
        for e in EXERCISES
    }


def row(g: Graded, table: Sequence[Check] = GRADED) -> dict[str, Any]:
    """The CSV row: numbers are numbers; failures are the first line of each failed check."""
    per = _points(g, table)
    failed = [c for c in g.checks if not c.get("passed") and not c.get("skipped")]
    return {
        "student": g.student,
        "status": clean(g.text, 300),
        **{f"ex{n}": p for n, p in per.items()},
        "total": sum(per.values()),
        "max_points": sum(t.points for t in table),
        "failures": "; ".join(f"{c['id']}: {clean(c['saw'], 120)}" for c in failed),
        "seconds": round(g.seconds, 2),
        "route": g.route,
    }


def csv_text(graded: Sequence[Graded]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(row(g) for g in sorted(graded, key=lambda g: g.student))
    return buf.getvalue()


def _explain(c: dict[str, Any]) -> str:
    if c.get("passed"):
        return ""
    if c.get("skipped"):
        return f"skipped: {clean(c['saw'])}"
    return f"expected: {c['name']}\nsaw: {clean(c['saw'])}\nhint: {c['hint']}"


def gradescope(g: Graded, table: Sequence[Check] = GRADED) -> dict[str, Any]:
    """Gradescope's results.json: a test per check (name, score, max_score, status, output,
    visibility), the overall score, and the hand-in's status as the output."""
    by_id = {c["id"]: c for c in g.checks}
    tests: list[dict[str, Any]] = []
    score = 0
    for check in table:
        c = by_id.get(check.id)
        passed = bool(c and c.get("passed"))
        score += check.points if passed else 0
        test = {
            "name": f"{check.id} {check.name}",
            "number": str(check.id),
            "score": float(check.points if passed else 0),
            "max_score": float(check.points),
            "status": "passed" if passed else "failed",
            "output": _explain(c) if c else clean(g.text),
            "visibility": "visible",
            "tags": [f"exercise {check.exercise.number}"] if check.exercise else [],
        }
        if c and c.get("skipped"):  # the grader's machine could not run it: no verdict
            del test["status"]
        tests.append(test)
    status = "graded" if g.status is Status.OK else clean(g.text)
    said = " · ".join(x for x in (status, g.route, g.runtime) if x)
    return {
        "score": float(score),
        "execution_time": round(g.seconds, 1),
        "output": said,
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def junit(graded: Sequence[Graded], table: Sequence[Check] = GRADED) -> str:
    """One JUnit report for the class: a testsuite per student, a testcase per check (a
    hand-in that did not run is one errored testcase saying why)."""
    root = ET.Element("testsuites", name="mca lab grade")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for g in sorted(graded, key=lambda g: g.student):
        suite = _suite(g, table)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(g: Graded, table: Sequence[Check]) -> ET.Element:
    r = row(g, table)
    suite = ET.Element("testsuite", name=g.student, time=f"{g.seconds:.1f}")
    props = ET.SubElement(suite, "properties")
    for key in ("status", "total", "max_points", "route"):
        ET.SubElement(props, "property", name=key, value=str(r[key]))
    if g.status is not Status.OK:
        case = ET.SubElement(suite, "testcase", classname=f"{g.student}", name="hand-in")
        ET.SubElement(case, "error", message=clean(g.text, 500), type="not graded")
        suite.set("tests", "1")
        suite.set("errors", "1")
        suite.set("failures", "0")
        return suite
    by_id = {c["id"]: c for c in g.checks}
    failures = skips = 0
    for check in table:
        number = check.exercise.number if check.exercise else 0
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{g.student}.exercise{number}",
            name=f"{check.id:02d} {check.name}",
        )
        c = by_id.get(check.id)
        if c is not None and c.get("skipped"):
            skips += 1
            ET.SubElement(case, "skipped", message=clean(c["saw"], 500))
        elif c is None or not c.get("passed"):
            failures += 1
            saw = clean(c["saw"], 500) if c else "not run"
            failure = ET.SubElement(case, "failure", message=saw, type="CheckFailed")
            failure.text = _explain(c) if c else saw
    suite.set("tests", str(len(table)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skips))
    return suite


class Writer:
    """The run's output files, rewritten whole and atomically after every hand-in."""

    def __init__(
        self,
        csv_path: Path | None,
        gradescope_dir: Path | None,
        junit_path: Path | None,
        logs_dir: Path | None = None,
    ) -> None:
        self.csv_path, self.gradescope_dir, self.junit_path = csv_path, gradescope_dir, junit_path
        self.logs_dir = logs_dir
        self.graded: list[Graded] = []

    @property
    def paths(self) -> list[Path]:
        """Where it writes (the sandbox keeps every child away from them)."""
        outputs = (self.csv_path, self.gradescope_dir, self.junit_path, self.logs_dir)
        return [p for p in outputs if p]

    def check(self) -> None:
        """Write every output empty, now: a path that cannot be written fails before grading."""
        for folder in (self.gradescope_dir, self.logs_dir):
            if folder is not None:
                private_dir(folder)
        for path, data in self._files():
            try:
                atomic_write(path, data)
            except OSError as e:  # named by the file asked for, not the folder it is made in
                raise OSError(e.errno, e.strerror, str(path)) from None

    def add(self, g: Graded) -> None:
        self.graded.append(g)
        if self.logs_dir is not None:
            atomic_write(self.logs_dir / f"{g.student}.log", log_text(g).encode("utf-8"))
        if self.gradescope_dir is not None:
            folder = private_dir(self.gradescope_dir / g.student / "results")
            data = json.dumps(gradescope(g), indent=2, ensure_ascii=False) + "\n"
            atomic_write(folder / "results.json", data.encode("utf-8"))
        self._write()

    def _files(self) -> list[tuple[Path, bytes]]:
        out = []
        if self.csv_path is not None:
            out.append((self.csv_path, csv_text(self.graded).encode("utf-8")))
        if self.junit_path is not None:
            out.append((self.junit_path, junit(self.graded).encode("utf-8")))
        return out

    def _write(self) -> None:
        for path, data in self._files():
            atomic_write(path, data)
