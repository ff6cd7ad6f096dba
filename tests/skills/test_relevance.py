"""The description judgment: terms, the index, the model's verdicts and the stage's reasons."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mca.skills import background, judgment
from mca.skills.model import Skill
from mca.skills.relevance import Index, make_doc
from mca.skills.stage import evaluate
from mca.skills.terms import negative_text, stem, surface, terms
from mca.skills.trigger import SkillSet, described, judge, mentioned, one_word

XLSX = (
    "Use this skill whenever a spreadsheet file is the primary input or output: open, read,"
    " edit or create .xlsx, .xlsm, .csv files, formulas, pivot tables and charts in Excel."
    " Do not use for Word documents or Google Sheets API integrations."
)
GIF = "Knowledge and utilities for creating animated GIFs optimized for Slack emoji and messages."


def sk(name: str, description: str, **kw: Any) -> Skill:
    return Skill(name, description, Path(f"/nowhere/{name}/SKILL.md"), f"{name} body", **kw)


def names(skills: list[Skill], sentence: str) -> list[str]:
    return [h.skill.name for h in judge(skills, sentence, [])]


# -- terms ------------------------------------------------------------------------------------
def test_stems_bring_inflections_together() -> None:
    assert len({stem(w) for w in ("create", "creates", "creating", "created")}) == 1
    assert stem("spreadsheets") == stem("spreadsheet")
    assert stem("studies") == stem("study")
    assert stem("running") == stem("run")
    assert stem("xlsx") == "xlsx" and stem("café") == "café"  # short or non-ASCII: as is


def test_function_words_and_noise_are_not_terms() -> None:
    assert terms("Can you please make the 2024 report for me?") == [stem("make"), stem("report")]
    assert "a" * 60 not in terms("a" * 60)  # hashes and base64 are not words


def test_unspaced_scripts_become_character_pairs() -> None:
    # each run's pairs, then the English the glossary gives for it (mca.skills.glossary)
    assert terms("登录页面") == ["登录", "录页", "页面", "login", stem("page")]
    assert terms("把 PDF 转成表格") == [
        "把",
        "pdf",
        "转成",
        "成表",
        "表格",
        "convert",
        "spreadsheet",
    ]
    assert terms("スライド（pptx）を作って") == [
        "スラ",
        "ライ",
        "イド",
        stem("slide"),
        "pptx",
        "を作",
        "作っ",
        "って",
    ]
    assert "로그" in terms("로그인 페이지")


def test_surface_gives_the_words_as_written() -> None:
    assert surface("Creating GIFs")[stem("creating")] == "creating"


def test_not_for_clauses_are_found() -> None:
    neg = negative_text(XLSX)
    assert "word documents" in neg and "google sheets" in neg
    assert "spreadsheet" not in neg
    assert negative_text("Builds MCP servers. NOT for installing existing ones.") != ""


# -- the index --------------------------------------------------------------------------------
def brute(index: Index, words: list[str]) -> dict[int, float]:
    """BM25F for every document, term by term, with no postings."""
    out: dict[int, float] = {}
    for i in range(len(index.docs)):
        tw = index.weights(i)
        score = sum(index.idf(t) * tw[t] / (1.2 + tw[t]) for t in dict.fromkeys(words) if tw.get(t))
        if score:
            out[i] = score
    return out


VOCAB = ["pdf", "form", "excel", "chart", "slack", "gif", "登录", "页面", "use", "file"]


@given(
    st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=6), min_size=1, max_size=8),
    st.lists(st.sampled_from(VOCAB), max_size=6),
)
@settings(max_examples=200, deadline=None)
def test_postings_agree_with_brute_force_for_nominated_skills(
    descs: list[list[str]], words: list[str]
) -> None:
    index = Index(
        [make_doc(f"s{i}", " ".join(d)) for i, d in enumerate(descs)], (), background.shipped()
    )
    sentence = terms(" ".join(words))
    fast = {m.skill: m.score for m in index.match(sentence)}
    slow = brute(index, sentence)
    assert set(fast) <= set(slow)
    for i, score in fast.items():
        assert abs(score - slow[i]) < 1e-9
    if len(descs) <= index.nominate:  # small sets: every skill sharing a term is a candidate
        assert set(fast) == {i for i in slow if slow[i] > 0}


def test_background_makes_everyday_words_weigh_less() -> None:
    index = Index([make_doc("xlsx", XLSX)], (), background.shipped())
    assert index.idf("xlsx") > 2 * index.idf(stem("file"))
    assert index.idf(stem("create")) < index.idf("pivot")


# -- verdicts and the stage -------------------------------------------------------------------
def test_a_sentence_about_the_skill_fires_it_with_the_words_shown() -> None:
    skills = [sk("xlsx", XLSX), sk("slack-gif-creator", GIF)]
    hits = judge(skills, "make me an animated slack gif of a dancing cat", [])
    assert [h.skill.name for h in hits] == ["slack-gif-creator"]
    reason = hits[0].reasons[0]
    assert reason.kind == "description" and '"gif"' in reason.detail and '"slack"' in reason.detail
    assert str(reason).startswith("description ")


def test_a_sentence_about_nothing_installed_fires_nothing() -> None:
    skills = [sk("xlsx", XLSX), sk("slack-gif-creator", GIF)]
    for sentence in ("what does this project do?", "fix the typo in README", "hello"):
        assert names(skills, sentence) == []


def test_not_for_words_are_evidence_against() -> None:
    index = Index([make_doc("xlsx", XLSX)], (), background.shipped())
    m = index.match(terms("write the word documents for the google sheets api"))[0]
    assert m.negative > 0 and m.mass < m.negative


def test_at_most_one_skill_fires_on_its_description() -> None:
    twins = [sk("gif-a", GIF), sk("gif-b", GIF)]
    assert names(twins, "make an animated slack gif emoji") == []  # a coin flip: neither


def test_skills_with_triggers_or_paths_are_judged_by_them_alone() -> None:
    with_triggers = sk("xlsx", XLSX, triggers=("workbook",))
    assert not described(with_triggers) and not described(sk("x", XLSX, paths=("*.xlsx",)))
    assert names([with_triggers], "open the excel spreadsheet pivot tables chart") == []
    assert names([with_triggers], "fix the workbook") == ["xlsx"]


def test_a_skill_that_asks_not_to_be_chosen_is_not_judged_by_description() -> None:
    off = Skill(
        "xlsx", XLSX, Path("/nowhere/xlsx/SKILL.md"), "b", {"disable-model-invocation": "true"}
    )
    assert not described(off)
    sentence = "edit the pivot tables of the spreadsheet, excel formulas and charts"
    assert names([off], sentence) == [] and names([sk("xlsx", XLSX)], sentence) == ["xlsx"]


def test_a_description_hit_goes_through_the_gates_and_budget() -> None:
    big = Skill("xlsx", XLSX, Path("/nowhere/xlsx/SKILL.md"), "x" * 5000)
    result = evaluate(
        SkillSet([big]), "edit the pivot tables in sales.xlsx", budget=100, root=Path()
    )
    assert [h.skill.name for h in result.hits] == ["xlsx"]
    assert not result.decisions[0].loaded and "only 100 left" in result.decisions[0].reason


def test_judgment_is_deterministic() -> None:
    skills = [sk("xlsx", XLSX), sk("slack-gif-creator", GIF)]
    sentence = "chart the pivot tables in the excel file"
    runs = {tuple(str(r) for h in judge(skills, sentence, []) for r in h.reasons) for _ in range(5)}
    assert len(runs) == 1


def test_pick_needs_confidence_and_a_margin() -> None:
    v = judgment.Verdict
    assert judgment.pick([]) is None
    assert judgment.pick([v(0, -0.1, ())]) is None
    assert judgment.pick([v(0, 2.0, ()), v(1, 1.99, ())], margin=0.5) is None
    assert judgment.pick([v(0, 2.0, ()), v(1, -3.0, ())], margin=0.5) == v(0, 2.0, ())


# -- names as words ---------------------------------------------------------------------------
def test_one_word_names_are_not_mentions_as_bare_words() -> None:
    # An ordinary word may be spelt so ("add a modal dialog"): the description decides
    for name in ("test", "research", "modal", "triage", "pdf", "rdkit", "Modal", "测试"):
        assert one_word(name), name
        assert mentioned(f"please {name} this", name) == ""
        assert mentioned(f"use ${name} here", name) == f"${name}"
        assert mentioned(f"/{name} now", name) == f"/{name}"
    assert one_word("caf\u00e9") and one_word("cafe\u0301")  # NFC and NFD spell one word
    for name in ("webapp-testing", "calc-conventions", "web3", "slack_gif", "Git Commit Helper"):
        assert not one_word(name), name
        assert mentioned(f"run {name} on it", name) == name
    assert mentioned("look at src/calc-conventions.js", "calc-conventions") == ""
    assert mentioned("use the triage skill on these tickets", "triage") == "triage skill"
    assert mentioned("用 triage 技能整理这些工单", "triage") == "triage 技能"
    assert mentioned("the triage-skill repo", "triage") == ""
    assert mentioned("how can I improve my writing skills", "writing") == ""
    assert mentioned("list all skills", "all") == "" and mentioned("use the skill", "the") == ""
    assert mentioned("open triage skill.md", "triage") == ""


def test_the_name_skill_is_two_words_in_spaced_scripts_and_may_be_glued_in_cjk() -> None:
    # "pdfskills.py" or "testskill" is one longer word, not "the pdf skill"
    assert mentioned("use the pdfskills.py script", "pdf") == ""
    assert mentioned("rename testskill to probe", "test") == ""
    # Chinese and Japanese write no spaces: the name may sit between other characters
    assert mentioned("请用triage技能整理这些工单", "triage") == "triage技能"
    assert mentioned("请用测试技能检查", "测试") == "测试技能"
    assert mentioned("テストスキルを使って", "テスト") == "テストスキル"
    assert mentioned("请用retriage技能", "triage") == ""  # still not inside a Latin word


def test_a_sigil_mention_may_touch_a_script_without_spaces_but_not_a_word_or_a_path() -> None:
    for name in ("triage", "deep-review-loop"):
        for form in (f"${name}", f"/{name}"):
            assert mentioned(f"请用{form}整理这些", name) == form
            assert mentioned(f"「{form}」で整理して", name) == form
            assert mentioned(f"先看，{form}，再说", name) == form
            assert mentioned(f"请用“{form}”整理", name) == form
    assert mentioned("costs US$triage", "triage") == ""  # inside a longer word
    assert mentioned("x$triage y", "triage") == ""
    for path in ("see ../triage now", "cd ~/triage", "看看/triage/foo", "src/triage is it"):
        assert mentioned(path, "triage") == "", path  # part of a path, not a command
    for markup in ("<Triage open>x</Triage>", 'open("/triage")', 'cd "$triage"', "[a](/triage)"):
        assert mentioned(markup, "triage") == "", markup  # a closing tag, a quoted path


def test_a_bare_one_word_name_counts_as_the_names_words_in_the_judgment() -> None:
    pdf = sk("pdf", "Fill in, merge and split PDF forms and documents.")
    assert names([pdf], "fill in this pdf form for me") == ["pdf"]  # by its description
    assert names([pdf], "what does pdf stand for in statistics") == []
