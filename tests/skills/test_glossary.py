"""The CJK-to-English glossary the judgment's terms use."""

from __future__ import annotations

from mca.skills import glossary
from mca.skills.terms import glossed, stem, terms


def test_cjk_words_bring_their_english_terms() -> None:
    found = terms("明天下午三点在日历上加一个会议")
    assert stem("calendar") in found and stem("meeting") in found
    assert "日历" in found  # the character pairs stay
    assert stem("slide") in terms("社内勉強会用のスライドを作って")
    assert stem("commit") in terms("커밋 메시지 써줘")


def test_english_text_gains_nothing() -> None:
    assert glossed("make me a slack gif of a dancing cat") == {}
    assert terms("open the calendar") == [stem("open"), stem("calendar")]


def test_the_longest_entry_wins_and_each_occurrence_counts() -> None:
    assert glossary.english("电子表格") == ["spreadsheet"]
    assert glossary.english("日历日历") == ["calendar", "calendar"]
    assert glossed("日历，日历") == {stem("calendar"): 2}


def test_entries_are_whole_words_of_two_characters_or_more() -> None:
    for first, entries in glossary.table().items():
        for word, english in entries:
            assert len(word) >= 2 and word[0] == first and not word.isascii()
            if english:  # '' for a longer word of COMPOUNDS
                assert english.isascii() and english.isalpha() and english == english.lower()


def test_a_glossary_word_inside_a_longer_word_is_not_that_word() -> None:
    # forward maximum matching over the glossary and COMPOUNDS: the longer word is read
    for longer, inside in (("代理店", "agent"), ("安全帽", "security"), ("レコード", "code")):
        assert inside not in glossary.english(longer), longer
        assert stem(inside) not in terms(f"帮我找一家{longer}"), longer
    assert glossary.english("テストステロンの値") == []
    assert glossary.english("지도자") == []
    # the word on its own, or as the head of a compound that means it, still is
    assert glossary.english("代理") == ["agent"] and glossary.english("安全") == ["security"]
    assert glossary.english("网络安全") == ["security"]
    assert glossary.english("用代理店的代理") == ["agent"]  # the second occurrence counts
    assert glossary.english("ソースコード") == ["code"]


def test_every_compound_holds_its_glossary_word_and_is_longer() -> None:
    words = {w for line in glossary.GLOSSARY.split("\n") for w in line.split()[1:]}
    for line in glossary.COMPOUNDS.strip().splitlines():
        head, *longer = line.split()
        assert head in words, head
        for w in longer:
            assert head in w and len(w) > len(head), w
            assert glossary.english(w) == [], w  # hides the word inside it
