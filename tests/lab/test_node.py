"""Without Node.js (or with one older than 18) checks 5 and 14 are skipped, saying what to
install, instead of failing; and no grade depends on the grader's machine having it."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from mca.cli.selftest import parser, run
from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits
from mca.lab.outputs import gradescope, row
from mca.sandbox.probe import probe
from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")


def no_node(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, version: str = "") -> None:
    """PATH holds no node (or a fake one printing `version`)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if version:
        (bin_dir / "node").write_text(f"#!/bin/sh\necho {version}\n")
        (bin_dir / "node").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))


@pytest.mark.parametrize(
    ("version", "why"), [("", "node not found"), ("v16.20.2", "node v16.20.2 is too old")]
)
def test_checks_5_and_14_are_skipped_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    version: str,
    why: str,
) -> None:
    no_node(monkeypatch, tmp_path, version)
    junit = tmp_path / "j.xml"
    assert run(parser().parse_args(["--json", "--junit", str(junit)]), {}) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["passed"], report["skipped"], report["total"]) == (12, 2, 14)
    skipped = {c["id"]: c["saw"] for c in report["checks"] if c["skipped"]}
    assert set(skipped) == {5, 14}
    assert all(
        s == f"{why}: install Node.js 18 or newer (https://nodejs.org, or the nodejs package)"
        for s in skipped.values()
    )
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("skipped"), suite.get("failures")) == ("2", "0")
    assert run(parser().parse_args([]), {}) == 0
    assert (
        capsys.readouterr()
        .out.rstrip()
        .endswith("12/14 passed, 2 skipped (they need Node.js) · 10/10 points")
    )


@pytest.mark.slow
def test_a_grade_does_not_depend_on_the_grader_having_node(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    subs = tmp_path / "class"
    for name, text in {"ada": STARTER + ALL_HONEST, "bo": STARTER}.items():
        (subs / name).mkdir(parents=True)
        (subs / name / "exercises.py").write_text(text)
    plan = Plan(
        REPO, subs, limits=Limits(60, 10, 1024), mechanisms=probe() if probe().available else None
    )

    def points() -> dict[str, tuple[object, ...]]:
        out: dict[str, tuple[object, ...]] = {}
        for g in grade(plan):
            r, gs = row(g), gradescope(g)
            out[g.student] = (r["ex3"], r["total"], r["failures"], gs["score"])
        return out

    with_node = points()
    no_node(monkeypatch, tmp_path)
    assert points() == with_node
    assert {k: (v[0], v[1], v[3]) for k, v in with_node.items()} == {
        "ada": (2, 10, 10.0),
        "bo": (0, 2, 2.0),
    }
    failed = [part.split(":")[0] for part in str(with_node["bo"][2]).split("; ")]
    assert failed == ["1", "3", "6", "7", "8", "9", "10"]
