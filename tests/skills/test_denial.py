"""What a sentence rules out (mca.skills.denial) and a description's not-for clauses in
Chinese, Japanese and Korean (mca.skills.terms.negative_text): the words a person or an author
says "no" to count against a skill, not for it (issue 48)."""

from __future__ import annotations

from mca.skills.denial import denied, scopes
from mca.skills.terms import negative_text, stem, without_negatives


def test_a_cue_first_rules_out_the_rest_of_its_clause() -> None:
    assert "video" in denied("写一个普通企业官网，不需要视频或 3D")
    assert "官网" not in denied("写一个普通企业官网，不需要视频或 3D")
    assert denied("make a bar chart without seaborn, just matplotlib") == {"seaborn"}
    assert stem("mocks") in denied("fix the failing test; don't use mocks")


def test_a_cue_last_rules_out_what_comes_before_it_in_its_clause() -> None:
    assert denied("코드 짜줘 (gws 말고 google-api-python-client로)") == {"gws"}
    assert "edit" in denied("意見がほしい（ファイル編集は不要）")
    assert "意見" not in "".join(denied("意見がほしい（ファイル編集は不要）"))


def test_no_cue_no_denial() -> None:
    for s in ("是不是要用 pandas", "非常好，帮我生成图表", "convert this pdf to markdown"):
        assert scopes(s) == [] and denied(s) == frozenset()


def test_a_word_also_written_outside_the_ruled_out_part_stays() -> None:
    assert "chart" not in denied("make a chart, not using a chart library")


def test_cjk_not_for_clauses_are_read_as_english_ones_are() -> None:
    zh = "制作 3D 世界。不要用于真正的 WebXR 交互、Three.js 配置器，除非同时要求滚动页面。"
    assert "webxr" in negative_text(zh) and "three.js" in negative_text(zh)
    assert "滚动页面" in without_negatives(zh) and "webxr" not in without_negatives(zh)
    assert "h5" in negative_text("专注于可视化验证，不适用于普通网页、H5 或桌面截图。")
    assert "word" in negative_text("PDF を扱う。Word 文書には使わない。画像も。")
    assert "画像" not in negative_text("PDF を扱う。Word 文書には使わない。画像も。")
    assert "이미지" in negative_text("PDF 스킬입니다. 이미지 편집에는 사용하지 마세요. 끝")
    assert negative_text("不过度设计，不写多余的注释") == ""
