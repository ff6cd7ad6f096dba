"""Mentions as people type them (issue 48, item 4): composed and decomposed spellings of one
name are one name, full-width sigils are sigils, and a slash inside a path is not one."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from mca.skills.model import Skill
from mca.skills.trigger import judge, mentioned, typed


def sk(name: str, description: str = "Does one thing.") -> Skill:
    return Skill(name, description, Path(f"/nowhere/{name}/SKILL.md"), f"{name} body")


def hits(skill: Skill, sentence: str) -> list[str]:
    return [r.detail for h in judge([skill], sentence, []) for r in h.reasons]


def test_a_name_stored_decomposed_is_found_as_typed_composed() -> None:
    nfd = unicodedata.normalize("NFD", "café-notes")
    assert nfd != "café-notes"
    for sentence in ("run café-notes on it", "use $café-notes", "/café-notes now"):
        assert mentioned(sentence, nfd), sentence
        assert hits(sk(nfd), sentence), sentence
    composed = sk("café-notes")  # and the reverse: typed decomposed, stored composed
    assert hits(composed, unicodedata.normalize("NFD", "use $café-notes here"))


def test_full_width_sigils_are_sigils() -> None:
    assert typed("＄Tmp／") == "$tmp/"
    for name in ("triage", "deep-review-loop"):
        assert mentioned(f"请用＄{name}整理这些", name) == f"${name}"
        assert mentioned(f"请用／{name}整理这些", name) == f"/{name}"
        assert mentioned(f"「／{name}」で整理して", name) == f"/{name}"
        assert hits(sk(name), f"请用＄{name}整理") == [f"${name}"]
    assert mentioned("costs US＄triage", "triage") == ""  # still not inside a longer word


def test_a_slash_inside_a_path_is_not_a_sigil() -> None:
    assert mentioned("保存到/tmp目录", "tmp") == ""
    assert mentioned("保存到／tmp目录", "tmp") == ""
    assert mentioned("把日志放在/var里", "var") == ""  # a top-level directory, glued
    assert mentioned("结果写到/notes文件夹", "notes") == ""  # followed by a word for a folder
    assert mentioned("ファイルを/backupフォルダに保存", "backup") == ""
    assert hits(sk("tmp"), "保存到/tmp目录") == []
    # a command still is one: after a verb, at the start, or a root name typed on its own
    assert mentioned("请用/triage整理这些", "triage") == "/triage"
    assert mentioned("/tmp 清理一下", "tmp") == "/tmp"
    assert mentioned("please run /tmp now", "tmp") == "/tmp"
    assert mentioned("请用$tmp整理", "tmp") == "$tmp"  # a dollar is never a path's
