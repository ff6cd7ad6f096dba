"""The self-test's results for people (text), for programs (JSON, schema mca-selftest/1) and
for autograders (JUnit XML). Results of several seeds fold into one result per check: a check
passes only when it passed under every seed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree as ET

from mca.lab.defaults import SEEDS as GRADE_SEEDS
from mca.lab.suite import CHECKS, Check

__all__ = ["SCHEMA", "combine", "points", "points_text", "to_json", "to_junit", "to_text"]

SCHEMA = "mca-selftest/1"


def combine(
    results: Sequence[dict[str, Any]],
    seeds: Sequence[int],
    note: str = "",
    checks: Sequence[Check] = CHECKS,
) -> list[dict[str, Any]]:
    """One entry per check of the table from per-seed results; a check never reported failed
    with `note` (the process crashed or hung before it). A check skipped on this machine
    (no Node.js) is neither passed nor failed."""
    out = []
    for check in checks:
        runs = [r for r in results if r.get("id") == check.id]
        skipped = [r for r in runs if r.get("skipped")]
        failed = [r for r in runs if not r.get("passed") and not r.get("skipped")]
        entry: dict[str, Any] = {
            "id": check.id,
            "name": check.name,
            "exercise": check.exercise.label if check.exercise else None,
            "passed": bool(runs) and not failed and not skipped,
            "skipped": bool(skipped) and not failed,
            "saw": "",
            "hint": check.hint,
            "points": check.points,  # what passing it is worth in a grade
            "seeds": sorted({int(r.get("seed", 0)) for r in runs}),
        }
        if skipped and not failed:
            entry["saw"] = str(skipped[0].get("saw", ""))
        elif failed:
            first = failed[0]
            seed = int(first.get("seed", 0))
            entry["saw"] = (f"seed {seed}: " if len(seeds) > 1 or seed else "") + str(
                first.get("saw", "")
            )
        elif not runs:
            entry["saw"] = note or "not run"
        out.append(entry)
    return out


def points(checks: Sequence[dict[str, Any]]) -> tuple[int, int]:
    """(points earned, points possible) on the grader's scale: what `mca lab grade` would give
    for these results (a check's points count when it passed under every seed)."""
    worth = [int(c.get("points", 0)) for c in checks]
    return sum(w for w, c in zip(worth, checks, strict=True) if c["passed"]), sum(worth)


def _ranges(ids: Sequence[int]) -> str:
    """[5, 11, 12, 13, 14] -> '5, 11-14'."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def points_text(checks: Sequence[dict[str, Any]], seeds: Sequence[int]) -> list[str]:
    """Which checks carry the grader's points, per exercise, and how many each earned here."""
    ran = ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(map(str, seeds))
    where = (
        f"{ran} here; a grade runs seed 0 and {GRADE_SEEDS} seed(s) drawn when it runs,"
        " so pass on any: --seed 0 --seed N"
    )
    lines = [f"points on the grader's scale ({where}):"]
    exercises = dict.fromkeys(c["exercise"] for c in checks if c.get("points"))
    for label in exercises:
        mine = [c for c in checks if c["exercise"] == label and c.get("points")]
        got, of = points(mine)
        each = ", ".join(
            f"{c['id']} ({int(c['passed']) * c['points']}/{c['points']})" for c in mine
        )
        lines.append(f"  exercise {label}: {got}/{of} · checks {each}")
    none = [c["id"] for c in checks if not c.get("points")]
    if none:
        lines.append(f"  checks {_ranges(none)} carry no points")
    return lines


def to_json(
    checks: list[dict[str, Any]], runtime: str, seeds: Sequence[int], strategies: Any
) -> dict[str, Any]:
    passed = sum(c["passed"] for c in checks)
    earned, possible = points(checks)
    return {
        "schema": SCHEMA,
        "runtime": runtime,
        "seeds": list(seeds),
        "passed": passed,
        "skipped": sum(bool(c.get("skipped")) for c in checks),
        "total": len(checks),
        "points": earned,
        "max_points": possible,
        "checks": checks,
        "strategies": strategies,
    }


def to_text(
    checks: list[dict[str, Any]],
    runtime: str,
    strategies: str = "",
    seeds: Sequence[int] = (0,),
) -> str:
    """One line per check (and what was expected, seen, and a hint for a failure), N/total."""
    lines = [f"mca self-test · offline, mock model · runtime: {runtime}"]
    for c in checks:
        if c.get("skipped"):
            lines.append(f"{c['id']:>2} SKIP  {c['name']}")
            lines.append(f"         {c['saw']}")
            continue
        lines.append(f"{c['id']:>2} {'PASS' if c['passed'] else 'FAIL'}  {c['name']}")
        if not c["passed"]:
            if c["exercise"]:
                lines.append(f"         exercise {c['exercise']}")
            lines.append(f"         expected: {c['name']}")
            lines.append(f"         saw: {c['saw']}")
            lines.append(f"         hint: {c['hint']}")
    if strategies:
        lines += ["", "what the three loading strategies cost on the lab's packs:", strategies, ""]
    passed = sum(c["passed"] for c in checks)
    skipped = sum(bool(c.get("skipped")) for c in checks)
    more = f", {skipped} skipped (they need Node.js)" if skipped else ""
    earned, possible = points(checks)
    lines += [*points_text(checks, seeds), ""]
    lines.append(f"{passed}/{len(checks)} passed{more} · {earned}/{possible} points")
    return "\n".join(lines)


def to_junit(checks: list[dict[str, Any]], runtime: str) -> str:
    """JUnit XML: one testsuite, one testcase per check, a <failure> for each failed one."""
    skips = sum(bool(c.get("skipped")) for c in checks)
    failures = sum(not c["passed"] for c in checks) - skips
    suite = ET.Element(
        "testsuite",
        name="mca-selftest",
        tests=str(len(checks)),
        failures=str(failures),
        errors="0",
        skipped=str(skips),
    )
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="runtime", value=runtime)
    for c in checks:
        exercise = (c["exercise"] or "runtime").split(" ", 1)[0]
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"mca.selftest.exercise{exercise}"
            if c["exercise"]
            else "mca.selftest.runtime",
            name=f"{c['id']:02d} {c['name']}",
        )
        if c.get("skipped"):
            ET.SubElement(case, "skipped", message=c["saw"][:500])
        elif not c["passed"]:
            failure = ET.SubElement(case, "failure", message=c["saw"][:500], type="CheckFailed")
            failure.text = f"expected: {c['name']}\nsaw: {c['saw']}\nhint: {c['hint']}"
    root = ET.Element("testsuites", tests=str(len(checks)), failures=str(failures))
    root.append(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
