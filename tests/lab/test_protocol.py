"""Verdicts a hand-in cannot forge: the checks stay in the grader, the student's functions answer
over a JSON pipe from a child, each check calls only its own exercise's function, and mca's own
answers are 'not your code'. Run here without the sandbox (mca/lab/launch.py's Unsandboxed):
the properties under test are the protocol's, not the operating system's."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mca.lab.calls import CODECS
from mca.lab.checks import Lab
from mca.lab.handin import run_handin
from mca.lab.launch import Isolation, Limits
from mca.lab.results import combine
from mca.lab.suite import CHECKS
from mca.lab.variant import Variants
from mca.lab.wire import WireError
from mca.skills.policy import PRODUCTION
from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST, honest, reexport
from tests.lab.handins import BORROWERS, borrower
from tests.lab.handins import WRAPPERS as HANDIN_WRAPPERS

pytestmark = pytest.mark.xdist_group("lab-protocol")  # its session fixture is built on one worker

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
STARTER_FAILS = {1, 3, 6, 7, 8, 9, 10}
EXERCISE_CHECKS = {1: {1, 2}, 2: {3, 4}, 3: {5, 6}, 4: {7, 8}, 5: {9, 10}}


@pytest.fixture(scope="session")  # once a run: xdist may put other tests between its own
def variants() -> Iterator[Variants]:
    with Variants(REPO) as v:
        yield v


def grade(
    variants: Variants, source: str, seeds: tuple[int, ...] = (0,), check_seconds: float = 10.0
) -> tuple[dict[int, dict[str, Any]], Any]:
    limits = Limits(seconds=120, check_seconds=check_seconds, memory_mb=1024)
    isolation = Isolation(None, variants.root, variants.root / "mca", variants.root / "home")
    run = run_handin(variants, source, "hand-in/exercises.py", seeds, isolation, limits, CHECKS)
    checks = combine(run.checks, seeds, f"not run: {run.status}")
    return {c["id"]: c for c in checks}, run


def failed(by_id: dict[int, dict[str, Any]]) -> set[int]:
    return {n for n, c in by_id.items() if not c["passed"]}


@pytest.mark.slow
def test_the_honest_answers_pass_everything_and_the_starter_its_seven(variants: Variants) -> None:
    assert failed(grade(variants, STARTER + ALL_HONEST, (0, 2))[0]) == set()
    assert failed(grade(variants, STARTER)[0]) == STARTER_FAILS


FORGERIES = {
    "patch the checks": """
try:
    import mca.lab.suite as _c
    import mca.lab.checks as _k
    _c.CHECKS = tuple(
        type(c)(c.id, c.name, lambda lab: None, c.hint, c.exercise) for c in _c.CHECKS
    )
    for _n in dir(_k):
        if _n.startswith("check_"):
            setattr(_k, _n, lambda lab: None)
except BaseException:
    pass
""",
    "write passing lines to every descriptor": """
import os, json
_lines = b"".join(
    json.dumps(x).encode() + b"\\n"
    for x in [
        {"event": "check", "id": n, "passed": True, "saw": ""} for n in range(1, 15)
    ] + [{"ready": {"split": "own"}}] + [{"id": f"{n}-x", "ok": []} for n in range(1, 200)]
)
for _fd in range(0, 64):
    try:
        os.write(_fd, _lines)
    except OSError:
        pass
""",
    "print a score": "\nprint('14/14 passed')\nprint('{\"event\": \"done\"}')\n",
    "patch mca's policy in the child": """
import mca.skills.policy as _p
import mca.lab.naive as _n
_n.apply_gates = _p.PRODUCTION.gates
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", FORGERIES)
def test_a_forgery_scores_what_its_honest_code_scores(variants: Variants, kind: str) -> None:
    by_id, _ = grade(variants, STARTER + FORGERIES[kind])
    assert failed(by_id) == STARTER_FAILS, kind


@pytest.mark.slow
@pytest.mark.parametrize("exercise", [1, 2, 3, 4, 5])
def test_mca_own_function_is_not_your_code(variants: Variants, exercise: int) -> None:
    trap = ("split", "validate", "script", "judge", "gates")[exercise - 1]
    by_id, _ = grade(variants, STARTER + reexport(trap))
    assert failed(by_id) == STARTER_FAILS | EXERCISE_CHECKS[exercise]
    for n in EXERCISE_CHECKS[exercise]:
        assert by_id[n]["saw"].startswith("not your code:"), by_id[n]
    assert not any(c["saw"].startswith("not your code") for c in by_id.values() if c["id"] > 10)


WRAPPERS = {
    **HANDIN_WRAPPERS,  # a wrapper that only calls it; the policy's own, caught and hidden
    "mca's code object under the student's name": """
import types
from mca.skills import trigger as _t
judge_triggers = types.FunctionType(_t.judge.__code__, _t.__dict__, "judge_triggers")
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", WRAPPERS)
def test_a_wrapper_of_mca_own_function_is_not_your_code(variants: Variants, kind: str) -> None:
    by_id, _ = grade(variants, STARTER + WRAPPERS[kind])
    assert failed(by_id) == STARTER_FAILS | {7, 8}
    assert all(by_id[n]["saw"].startswith("not your code") for n in (7, 8)), by_id[7]["saw"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", BORROWERS)
def test_nothing_to_borrow_in_the_child(variants: Variants, kind: str) -> None:
    """Issue #32's forgeries (STATE.real through frames, STATE.current emptied, getsource
    compiled as the file's own, importlib.reload, gc / sys.modules / __import__ / open of mca's
    files) find no answer of mca's in the child: no check the starter fails passes (main: all
    fourteen passed), and what they call of mca's is not their code."""
    by_id, run = grade(variants, STARTER + borrower(kind))
    assert run.status == "ok", run.status
    assert failed(by_id) >= STARTER_FAILS
    for n in failed(by_id) - STARTER_FAILS:
        assert by_id[n]["saw"].startswith("not your code:"), by_id[n]


HELPERS_ONLY_AN_ANSWER_USES = """
from mca.skills.gates import gate_read
from mca.skills.trigger import has_word, PATH_POINTS
from mca.fs.globs import glob_match


def apply_gates(hits, budget, render, in_context, held=None):
    held = dict(held or {})
    out, used = [], 0
    for h in hits:
        loaded, reason, block = gate_read(
            h.skill, lambda s, h=h: render(h.skill), in_context, held, budget - used
        )
        held.setdefault(h.skill.domain_key, h.skill.name)
        used += len(block.text) if loaded else 0
        out.append(Decision(h, loaded, reason.replace(" (read by the model)", ""), block))
    return out


def judge_triggers(skills, sentence, paths):
    hits = []
    low = sentence.lower()
    for skill in skills:
        reasons = [
            Reason("keyword", f'"{t}"', KEYWORD_POINTS)
            for t in skill.triggers
            if has_word(low, t)
        ]
        for pat in skill.paths:
            for p, src in paths:
                if glob_match(pat, p):
                    where = p if src == "sentence" else f"{p}, {src}"
                    reasons.insert(0, Reason("path", where, PATH_POINTS))
                    break
        if reasons:
            hits.append(Hit(skill, reasons))
    hits.sort(key=lambda h: (-h.score, h.skill.name))
    return hits
"""


@pytest.mark.slow
def test_helpers_only_an_answer_uses_are_not_in_the_child(variants: Variants) -> None:
    """mca's gate for one skill and its word matching are exercise 5's and 4's answers in
    pieces: a starter that calls them (a second look found 6/10 points, the starter's 2) passes
    no check the starter fails, and what it calls is not its code."""
    by_id, run = grade(variants, STARTER + HELPERS_ONLY_AN_ANSWER_USES)
    assert run.status == "ok", run.status
    assert failed(by_id) >= STARTER_FAILS
    for n in failed(by_id) - STARTER_FAILS:
        assert by_id[n]["saw"].startswith("not your code:"), by_id[n]


@pytest.mark.slow
def test_mca_answers_are_absent_for_every_exercise(variants: Variants) -> None:
    """The child holds none of mca's five answers: exercise 5's gates get render as an argument
    (the grader's blocks), and calling mca's own render_skill instead is not an answer."""
    source = (
        STARTER
        + honest("gates")
        + (
            "\nfrom mca.skills.inject import render_skill as _mca_render\n"
            "_gates = apply_gates\n"
            "def apply_gates(hits, budget, render, in_context, held=None):\n"
            "    return _gates(hits, budget, _mca_render, in_context, held)\n"
        )
    )
    by_id, _ = grade(variants, source)
    assert failed(by_id) == STARTER_FAILS
    for n in (9, 10):
        assert by_id[n]["saw"] == "not your code: apply_gates calls mca's own render_skill"
    honest_gates = STARTER + honest("gates")
    assert failed(grade(variants, honest_gates)[0]) == STARTER_FAILS - {9, 10}


@pytest.mark.slow
def test_a_bug_in_one_exercise_fails_exactly_its_checks(variants: Variants) -> None:
    source = (
        STARTER
        + ALL_HONEST
        + (
            "\n_judge = judge_triggers\n"
            "def judge_triggers(skills, sentence, paths):\n"
            "    return undefined_name\n"
        )
    )
    by_id, _ = grade(variants, source, (0, 1))
    assert failed(by_id) == {7, 8}
    first, second = (by_id[n]["saw"].removeprefix("seed 0: ") for n in (7, 8))
    line = source.splitlines().index("    return undefined_name") + 1
    assert first == (
        "crashed: NameError: the hand-in said: \"name 'undefined_name' is not defined\""
        f" (hand-in/exercises.py, line {line})"
    )
    assert second == f"crashed as in check 7: NameError at line {line}"


@pytest.mark.slow
def test_a_loop_costs_its_own_checks_and_their_time_once(variants: Variants) -> None:
    source = (
        STARTER
        + ALL_HONEST
        + (
            "\ndef apply_gates(hits, budget, render, in_context, held=None):\n"
            "    while True:\n        pass\n"
        )
    )
    start = time.monotonic()
    by_id, run = grade(variants, source, (0, 1, 2), check_seconds=1.0)
    assert failed(by_id) == {9, 10}
    assert all(by_id[n]["saw"] == "seed 0: timed out after 1 s in apply_gates" for n in (9, 10))
    assert by_id[9]["seeds"] == [0]  # not run again on the next seeds
    assert time.monotonic() - start < 30 and run.status == "ok"


@pytest.mark.slow
def test_a_wrong_answer_is_a_failed_check_with_the_contract(variants: Variants) -> None:
    source = STARTER + (
        "\ndef validate_metadata(path, parsed, root):\n    return {'skill': None}\n"
        "\ndef render_skill(skill):\n"
        "    return Block(skill.name, 7, skill.body, [])\n"
    )
    by_id, _ = grade(variants, source)
    assert by_id[3]["saw"] == "validate_metadata returned 'dict', not a Candidate"
    assert by_id[5]["saw"].startswith("render_skill returned something that is not a Block")


ESCAPES = {
    "a thread's target": (
        "import threading, os\n"
        "_t = threading.Thread(target=os.system, args=('touch {marker}',))\n"
        "_t.start(); _t.join()\n"
    ),
    "import_module": (
        "import importlib\n"
        "_s = importlib.import_module('subprocess')\n"
        "_s.run(['touch', '{marker}'])\n"
    ),
    "_posixsubprocess": "import _posixsubprocess\nopen('{marker}', 'w').close()\n",
    "_socket": "import _socket\nopen('{marker}', 'w').close()\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ESCAPES)
def test_the_audit_hook_refuses_from_any_thread(
    variants: Variants, tmp_path: Path, kind: str
) -> None:
    marker = tmp_path / "ran"
    source = (
        STARTER
        + "\ntry:\n"
        + "".join(f"    {line}\n" for line in ESCAPES[kind].format(marker=marker).splitlines())
        + "except BaseException:\n    pass\n"
    )
    by_id, _ = grade(variants, source)
    assert not marker.exists(), kind
    assert failed(by_id) == STARTER_FAILS


def test_every_codec_carries_production_values_both_ways(variants: Variants) -> None:
    """What production computes on the lab survives the trip: args out and in, answers out
    and in, equal to the originals (and the grader gets its own skill objects back)."""
    lab = Lab(variants.path(0), PRODUCTION)
    skills = list(lab.discover().skill_set)
    calc = next(s for s in skills if s.name == "calc-conventions")
    sentence = "fix the divide-by-zero problem in src/calc.js"
    paths = [("src/calc.js", "sentence")]
    hits = PRODUCTION.judge(skills, sentence, paths)
    cases: dict[str, tuple[Any, ...]] = {
        "split": (calc.path.read_text(encoding="utf-8"),),
        "render": (calc,),
        "judge": (skills, sentence, paths),
        "gates": (hits, 12_000, PRODUCTION.render, {}, None),
    }
    from mca.skills.parse import read_skill_file

    cases["validate"] = (calc.path, read_skill_file(calc.path), None)
    for field, args in cases.items():
        codec = CODECS[field]
        rebuilt = codec.args_in(codec.args_out(args))
        value = getattr(PRODUCTION, field)(*rebuilt)
        back = codec.result_in(codec.result_out(value, rebuilt), args)
        assert back == getattr(PRODUCTION, field)(*args), field
    judged = CODECS["judge"].result_in(
        [{"skill": 0, "reasons": [["path", "x", 10]]}], cases["judge"]
    )
    assert judged[0].skill is skills[0]


@pytest.mark.parametrize(
    ("field", "data"),
    [
        ("split", ["a", "b", True]),
        ("split", ["a", "b"]),
        ("validate", {"path": "x", "root": None, "skill": None, "fields": {}, "status": "loaded"}),
        ("validate", {"path": "x", "root": None, "skill": None, "fields": {"a": 1},
                      "diagnostics": [], "status": "loaded"}),
        ("validate", {"path": "x", "root": None, "skill": None, "fields": {},
                      "diagnostics": [{"code": "made-up", "path": "x", "message": "m"}],
                      "status": "skipped"}),
        ("render", {"name": "n", "text": "t", "body": "b", "attachments": [1]}),
        ("judge", [{"skill": 99, "reasons": []}]),
        ("judge", [{"skill": 0, "reasons": [["keyword", "x", "3"]]}]),
        ("gates", [{"hit": 0, "loaded": "yes", "reason": "", "block": None, "replaces": ""}]),
    ],
)  # fmt: skip
def test_an_answer_that_breaks_the_contract_is_refused(field: str, data: Any) -> None:
    skills = [next(iter(Variants(REPO).repo.glob("skills/*/SKILL.md")))]
    args: tuple[Any, ...] = {"judge": (skills, "", []), "gates": ([], 0, None, {}, None)}.get(
        field, ()
    )
    with pytest.raises(WireError):
        CODECS[field].result_in(data, args)


@pytest.mark.slow
def test_a_dataclass_in_the_file_loads(variants: Variants) -> None:
    """The file's module is where its dataclasses look up their annotations (main: refused,
    `AttributeError: 'NoneType' object has no attribute '__dict__'`)."""
    note = "\nfrom dataclasses import dataclass\n\n@dataclass\nclass Note:\n    text: str\n"
    by_id, run = grade(variants, STARTER + note)
    assert run.status == "ok", run.message
    assert failed(by_id) == STARTER_FAILS
