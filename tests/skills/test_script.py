"""mca.skills.script: the script family of a sentence (Latin, CJK, other), by the majority of
its words, a CJK character counting as a word."""

from __future__ import annotations

import pytest

from mca.skills.script import CJK, LATIN, OTHER, family, letter_family


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("fix the failing test in src/calc.js", LATIN),
        ("traduza este relatório para o inglês, por favor", LATIN),  # accents are Latin
        ("ｆｕｌｌｗｉｄｔｈ ｌａｔｉｎ", LATIN),
        ("把这个 PNG 转成 WebP 格式", CJK),
        ("このコミットのメッセージを書いて", CJK),  # kanji, hiragana, katakana
        ("ｺﾐｯﾄ", CJK),  # halfwidth katakana
        ("구글 캘린더에서 다음 주 회의 시간 바꿔줘", CJK),  # Hangul: spaced, still CJK
        ("Привет, исправь тест", OTHER),
        ("διόρθωσε το τεστ", OTHER),
        ("أصلح الاختبار", OTHER),
    ],
)
def test_a_sentence_in_one_script_is_in_its_family(text: str, expected: str) -> None:
    assert family(text) == expected


def test_a_chinese_sentence_naming_a_skill_in_latin_is_cjk() -> None:
    # more Latin letters (14 to 10) but fewer words (3 to 10): a Han character is a word
    assert family("帮我用 deep-review-loop 检查这份长文档") == CJK


def test_an_english_sentence_with_one_cjk_word_is_latin() -> None:
    assert family("fix the 报错 in main.py") == LATIN  # 5 words to 2


def test_a_tie_goes_to_the_family_that_is_not_latin() -> None:
    assert family("fix 修复") == CJK  # 1 word to 2: CJK by majority
    assert family("修 fix") == CJK  # 1 to 1: a tie
    assert family("тест test") == OTHER


def test_digits_and_punctuation_are_not_letters() -> None:
    assert family("1234 -- ?!") == OTHER  # no letters at all
    assert family("v1.2.3 (2024)") == LATIN
    assert letter_family("7") is None
    assert letter_family("_") is None
    assert letter_family("中") == CJK
    assert letter_family("é") == LATIN
