"""A body's "when to use" / "do not use" sections: finding them, their caps, what they weigh."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mca.skills import background, judgment, sections
from mca.skills.model import Skill
from mca.skills.relevance import Index, make_doc
from mca.skills.terms import stem, terms
from mca.skills.trigger import judge

FLAKY = "Debug flaky tests."
FLAKY_BODY = """# Flaky tests

Intro text about retries.

## When to Use This Skill

- a test passes locally but fails in CI
- intermittent timeouts in the integration suite

### Signs

- reruns go green

## Do not use this skill when

- the build itself is broken (compiler errors)

## Steps

1. Reproduce with a seed.
"""


def sk(name: str, description: str, body: str) -> Skill:
    return Skill(name, description, Path(f"/nowhere/{name}/SKILL.md"), body)


def test_headings_are_classified_by_their_whole_title() -> None:
    use = ["When to Use This Skill", "when to use", "**Use this skill when:**", "Common Use Cases"]
    use += ["🎯 When to Apply", "When to use this pattern", "Triggers"]
    avoid = ["Do not use this skill when", "When NOT to Use", "Don't use it for", "Not for"]
    other = [
        "When to Use Each Reference",
        "Use Case 1: ICU",
        "Usage",
        "Steps",
        "Use cross-validation",
    ]
    assert [sections.kind(t) for t in use] == ["use"] * len(use)
    assert [sections.kind(t) for t in avoid] == ["avoid"] * len(avoid)
    assert [sections.kind(t) for t in other] == [None] * len(other)


def test_a_section_runs_to_the_next_heading_of_its_level_or_higher() -> None:
    offsets = sections.find(FLAKY_BODY)
    assert len(offsets) == 2
    use, avoid = sections.read(FLAKY_BODY, offsets) or ("", "")
    assert "fails in CI" in use and "reruns go green" in use  # its ### subsection too
    assert "compiler" not in use and "Reproduce" not in use and "Intro" not in use
    assert "compiler errors" in avoid and "Reproduce" not in avoid


def test_sizes_are_capped() -> None:
    long = "## When to use\n" + "- word\n" * 1000
    use, _ = sections.read(long, sections.find(long)) or ("", "")
    assert len(use) == sections.MAX_SECTION
    many = "".join(f"## When to use\n- case {i}\n" for i in range(100))
    assert len(sections.find(many)) == sections.MAX_SECTIONS
    late = "x" * sections.MAX_BODY + "\n## When to use\n- late\n"
    assert sections.find(late) == ()
    crlf = "## When to Use\r\n- windows line ends\r\n"
    assert "windows" in (sections.read(crlf, sections.find(crlf)) or ("", ""))[0]


def test_offsets_that_are_not_such_headings_are_refused() -> None:
    body = FLAKY_BODY
    good = sections.find(body)
    for bad in ([good[0] + 1], [0], [good[1], good[0]], [good[0], good[0]], [len(body) + 5]):
        assert sections.read(body, bad) is None, bad
    assert sections.read(body, [True]) is None  # JSON's true is not an offset
    assert sections.read(body, list(range(sections.MAX_SECTIONS + 1))) is None
    assert sections.read(body, []) == ("", "")


def test_the_sections_feed_when_and_neg() -> None:
    doc = make_doc("flaky", FLAKY, FLAKY_BODY)
    assert stem("intermittent") in doc.fields["when"] and stem("compiler") in doc.fields["neg"]
    assert stem("intermittent") not in doc.fields["desc"]  # the description stays its own
    assert stem("reproduce") not in doc.fields["when"] and stem("intro") not in doc.fields["when"]
    assert make_doc("flaky", FLAKY).fields["when"] == {}


def test_body_terms_confirm_the_description_and_weigh_against_it() -> None:
    index = Index([make_doc("flaky", FLAKY, FLAKY_BODY)], (), background.shipped())
    m = index.match(terms("this flaky test passes locally, fails in ci, intermittent"))[0]
    assert m.body > 0 and stem("intermittent") not in m.matched  # not shown as matched
    against = index.match(terms("the flaky test shows compiler errors"))[0]
    assert against.negative > 0
    # a term only in the body's sections never nominates the skill on its own
    assert index.match(terms("intermittent timeouts")) == []


# -- a hostile body ---------------------------------------------------------------------------
ORDINARY = [
    "can you help me write an email to my landlord about the broken heater",
    "what is a good recipe for dinner tonight with chicken and rice",
    "summarize this meeting transcript for the team and list the action items",
    "rename the files in this folder by date",
    "why is my laptop fan so loud when I open the browser",
    "explain how compound interest works with a simple example",
    "fix the typo in the readme and update the install steps",
    "plan a three day trip to lisbon with museums and food",
]
XLSX = "Open, edit or create .xlsx spreadsheets: formulas, pivot tables and charts in Excel."


def test_a_body_listing_every_common_word_does_not_fire_on_ordinary_sentences() -> None:
    words = list(dict.fromkeys(w for s in ORDINARY for w in s.split()))
    hostile_body = "## When to Use This Skill\n\n" + "\n".join(f"- {w}" for w in words)
    hostile = sk("go-format", "Formats Go source files with gofmt.", hostile_body * 20)
    assert sections.find(hostile.body)  # the section is read, up to its cap
    for sentence in ORDINARY:
        assert judge([hostile], sentence, []) == [], sentence
    xlsx = sk("xlsx", XLSX, "")
    hits = judge([hostile, xlsx], "add a pivot table and a chart to the xlsx in excel", [])
    assert [h.skill.name for h in hits] == ["xlsx"]


VOCAB = ["pdf", "form", "excel", "chart", "slack", "gif", "email", "trip", "fan", "use"]


@given(st.lists(st.sampled_from(VOCAB), max_size=40), st.lists(st.sampled_from(VOCAB), max_size=8))
@settings(max_examples=200, deadline=None)
def test_a_body_alone_never_makes_a_skill_fire(body_words: list[str], words: list[str]) -> None:
    """With no sentence term in the name or description, the body adds nothing."""
    body = "## When to use\n" + " ".join(body_words)
    index = Index([make_doc("zzqx", "Qwv jjkx plorb.", body)], (), background.shipped())
    sentence = " ".join(words)
    assert judgment.choose(index, sentence) is None
    assert all(m.mass == 0 for m in index.match(terms(sentence)))
