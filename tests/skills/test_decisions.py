"""The judgment decides the same on every supported Python (3.11, 3.12, 3.13): decisions and
logits computed on 3.11, checked on the interpreter running the suite.

Logits are compared within TOLERANCE: far above a last-bit difference (1e-15 here), which
would not change a decision unless one sat on a threshold, and far below what a changed
feature or weight moves. Decisions are compared exactly, and none of the dev split's lies
within TOLERANCE of a threshold, so none hangs on the last bit of a logit.
"""

from __future__ import annotations

import sys

import pytest

from bench import decisions
from mca.skills import judgment
from mca.skills.relevance import make_doc
from tests.conftest import CORPUS
from tests.skills.test_rivals import CLAUDE, OPENAI

TOLERANCE = 1e-9  # twice the rounding of a logit written with 9 decimals
NAMES = ("claude-api", "openai-api", "gif")
# sentence -> the skill that fires (None: none), and the two best logits; from CPython 3.11.7.
PINNED: dict[str, tuple[str | None, tuple[float, ...]]] = {
    "call the openai chat completions api with gpt-4o and stream the output": (
        "openai-api",
        (3.080606725, 1.508832082),
    ),
    "add prompt caching to our claude api calls": ("claude-api", (1.459600689, -2.983920591)),
    "count the tokens of this prompt with the anthropic sdk": ("claude-api", (1.920925402,)),
    # under the line since the bias holds for one-skill authors too (#48): three words of
    # description are not evidence enough; the model may still load it (read_file skill:gif)
    "make me a slack gif": (None, (-0.619947387,)),
    "用 claude api 做流式输出": (None, (-1.706215005, -2.99706322)),  # no CJK prior (#35)
    "make a gif of the openai logo": (None, (-1.948242213, -2.255099031)),  # not confident
    "stream chat completions from the api": (None, (0.61362088, 0.520167358)),  # no margin
}


def close(now: tuple[float, ...], pinned: tuple[float, ...]) -> bool:
    if len(now) != len(pinned):
        return False
    return all(abs(a - b) <= TOLERANCE for a, b in zip(now, pinned, strict=True))


def test_pinned_decisions_and_logits_hold_on_this_interpreter() -> None:
    docs = [make_doc(n, d) for n, d in zip(NAMES, (CLAUDE, OPENAI, "slack gif maker"), strict=True)]
    index = judgment.default_model().index(docs)
    for sentence, (fires, logits) in PINNED.items():
        chosen = judgment.choose(index, sentence)
        now = tuple(v.logit for v in judgment.verdicts(index, sentence)[:2])
        assert (NAMES[chosen.skill] if chosen else None) == fires, sentence
        assert close(now, logits), (sentence, now, logits)


def test_a_logit_does_not_depend_on_the_order_of_its_terms() -> None:
    # Plain left-to-right addition gives 1.0 one way and 0.0 the other; sum() since 3.12 agrees
    # with fsum here, but not for every input. The judgment's sums are exactly rounded.
    x = (1.0, 1e100, 1.0, -1e100)
    assert judgment.logit(x, (1.0,) * 4) == judgment.logit(x[::-1], (1.0,) * 4) == 2.0


# Not marked slow (4 s): this is the test CI runs on 3.12 and 3.13, where slow tests do not run.
# From the repository alone (the vendored dev skills), as `make decisions` writes them.
def test_the_dev_split_decisions_are_those_pinned_on_3_11() -> None:
    text = decisions.FIXTURE.read_text(encoding="utf-8")
    pinned = [decisions.parse(ln) for ln in text.splitlines() if not ln.startswith("#")]
    now = list(decisions.rows(decisions.dev_cases()))
    if sys.version_info[:2] == (3, 11):  # the Python they are written on: the very bytes
        version = text.split("on CPython ", 1)[1].split(" ", 1)[0]
        assert decisions.render(now, version) == text, "meant? `make decisions`"
    assert [(r.mode, r.file, r.item) for r in now] == [(r.mode, r.file, r.item) for r in pinned]
    moved = [
        (p.mode, p.file, p.item, p.fired, n.fired, p.logits, n.logits)
        for p, n in zip(pinned, now, strict=True)
        if p.fired != n.fired or not close(n.logits, p.logits)
    ]
    assert not moved, f"{len(moved)} moved (first: {moved[0]}); meant? `make decisions`"
    for r in now:  # no decision on a knife edge: each logit is clear of what it is compared to
        assert not r.logits or abs(r.logits[0]) > TOLERANCE, r
        if len(r.logits) == 2:
            assert (
                abs(r.logits[0] - r.logits[1] - judgment.default_model().margin) > 2 * TOLERANCE
            ), r


@pytest.mark.slow
@pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared corpus is not here ({CORPUS}); it exists only in CI"
)
def test_the_vendored_dev_skills_decide_as_the_corpus_files_do() -> None:
    from_repo = list(decisions.rows(decisions.dev_cases()))
    assert list(decisions.rows(decisions.dev_cases(vendored=False))) == from_repo
