"""Competitor profiles: the shipped table, reading it back as untrusted data, and how a
competitor changes the judgment."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from mca.skills import background, judgment, rivals
from mca.skills.relevance import Index, make_doc

CLAUDE = (
    "Reference for the Claude API and the Anthropic SDK: model ids, streaming, tool use,"
    " prompt caching and token counting. Use when code calls the API or its chat completions."
)
OPENAI = "Build apps on the OpenAI API: chat completions, gpt models, streaming and embeddings."
SENTENCES = [
    "call the openai chat completions api with gpt-4o and stream the output",
    "add prompt caching to our claude api calls",
    "count the tokens of this prompt with the anthropic sdk",
    "make me a slack gif",
]


def test_a_profile_goes_through_a_table_line_unchanged() -> None:
    doc = make_doc("claude-api", CLAUDE + " Do not use for Gemini.")
    name, back = rivals.parse_line(rivals.dump_line("claude-api", doc, "a/b")) or ("", doc)
    assert name == "claude-api"
    assert back.fields == {k: doc.fields[k] for k in ("name", "desc", "neg")}


def test_damaged_lines_are_skipped_and_the_rest_kept() -> None:
    good = rivals.dump_line("openai", make_doc("openai", OPENAI), "x/openai")
    damaged = [
        "# a comment",
        "",
        "too\tfew\tcolumns",
        "n\tname\tterm:abc\t\tsrc",  # a count that is not a number
        "n\tname\tterm:0\t\tsrc",  # a count that counts nothing
        "n\tname\tterm:99999999\t\tsrc",
        "n\tname\t" + "x" * 50 + "\t\tsrc",  # longer than any term
        "n\tname\t" + "ab " * 9000 + "\t\tsrc",  # longer than any line
        "\tname\tterm\t\tsrc",  # no name
    ]
    table = "\n".join([*damaged, good, "\x00\t\t\t"])
    assert [name for name, _ in rivals.parse_table(table)] == ["openai"]


def test_a_missing_or_unreadable_table_means_no_competitors() -> None:
    def missing() -> str:
        raise FileNotFoundError("rivals.tsv")

    def undecodable() -> str:
        return b"\xff\xfe".decode("utf-8")

    assert rivals.load(missing) == ()
    assert rivals.load(undecodable) == ()
    assert rivals.load(lambda: "garbage\nmore garbage") == ()


def test_the_shipped_table_is_whole_and_holds_no_held_out_skill() -> None:
    text = rivals._shipped()
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    parsed = rivals.parse_table(text)
    assert len(parsed) == len(lines) == len(rivals.profiles()) > 100
    assert len({name for name, _ in parsed}) == len(parsed)
    for line in lines:  # the trigger-eval split rule (fixtures/trigger-evals/README.md)
        ref = "corpus:" + line.rsplit("\t", 1)[1]
        assert int(hashlib.sha256(ref.encode()).hexdigest()[:8], 16) % 100 >= 30, ref


def test_a_profile_of_the_same_skill_is_no_competitor() -> None:
    mine = make_doc("claude-api", CLAUDE)
    assert rivals.same_skill(mine, make_doc("claude-api", "something else entirely"))
    assert rivals.same_skill(mine, make_doc("anthropic-api", CLAUDE + " Also batches."))
    assert not rivals.same_skill(mine, make_doc("openai-api", OPENAI))
    assert rivals.cosine(mine, mine) > 0.99


def logit_of(sentence: str, competitors: list[str]) -> float:
    profiles = [make_doc(n, OPENAI if n.startswith("openai") else CLAUDE) for n in competitors]
    index = Index([make_doc("claude-api", CLAUDE)], profiles, background.shipped())
    return judgment.verdicts(index, sentence)[0].logit


def test_a_competitor_that_explains_the_sentence_lowers_the_skill() -> None:
    sentence = SENTENCES[0]
    assert logit_of(sentence, ["openai-api"]) < logit_of(sentence, [])
    # the skill's own profile (or a copy of it) changes nothing
    assert logit_of(sentence, ["claude-api"]) == logit_of(sentence, [])
    assert logit_of(SENTENCES[1], ["openai-api"]) == logit_of(SENTENCES[1], [])


def test_choose_is_pick_over_every_verdict() -> None:
    docs = [make_doc("claude-api", CLAUDE), make_doc("openai-api", OPENAI)]
    shipped = judgment.default_model()
    index = shipped.index([*docs, make_doc("gif", "slack gif maker")])
    for sentence in SENTENCES:
        for bias in (-4.0, -2.0, 0.0, 2.0):
            model = replace(shipped, weights=(bias, *shipped.weights[1:]))
            assert judgment.choose(index, sentence, model) == judgment.pick(
                judgment.verdicts(index, sentence, model), model.margin
            ), (sentence, bias)
