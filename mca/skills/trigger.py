"""Judgment: which skills this sentence needs, scored by trust. Deterministic, offline."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence

from mca.fs.globs import glob_match, literal_prefix
from mca.skills.judgment import Model, choose, default_model
from mca.skills.lexicon import stop_words
from mca.skills.model import Hit, Reason, Skill
from mca.skills.relevance import Doc, Index, make_doc
from mca.skills.switches import model_invocable
from mca.skills.terms import terms

__all__ = [
    "DESCRIPTION_POINTS",
    "FILE_POINTS",
    "KEYWORD_POINTS",
    "MENTION_POINTS",
    "PATH_POINTS",
    "DocSource",
    "SkillSet",
    "described",
    "file_reason",
    "has_word",
    "judge",
    "make_docs",
    "mentioned",
    "sentence_paths",
    "typed",
]

MENTION_POINTS = 100
FILE_POINTS = 30  # the name as a file's extension: evidence, weaker than naming the skill
PATH_POINTS = 10
KEYWORD_POINTS = 3
DESCRIPTION_POINTS = 2  # below a keyword: the author's own words outrank our reading of them

# Something that looks like a path: has a slash, or a dotted extension.
_PATH_RX = re.compile(
    r"(?<![\w@$/.\-])(?:\./)?((?:[\w.\-]+/)*[\w\-]+(?:\.[A-Za-z0-9]{1,8})+|(?:[\w.\-]+/)+[\w.\-]*)"
)
_REF_RX = re.compile(r"(?:^|(?<=\s))@([^\s]+)")


@functools.lru_cache(maxsize=65536)
def _word_rx(needle: str) -> re.Pattern[str]:
    # A boundary means "neither side is a letter or digit", so `node --test` still matches.
    return re.compile(rf"(?:^|[^a-z0-9]){re.escape(needle)}(?:$|[^a-z0-9])")


def _matches_word(haystack: str, needle: str) -> bool:
    """has_word on an already-lowercased sentence and trigger."""
    if needle not in haystack:  # cheap and necessary: most triggers stop here
        return False
    if not needle.isascii():
        return True  # scripts without spaces between words: a substring is a match
    return _word_rx(needle).search(haystack) is not None


def has_word(text: str, word: str) -> bool:
    """Whole-word, case-insensitive match for ASCII; substring for non-ASCII (no word spaces)."""
    needle = word.strip().lower()
    return bool(needle) and _matches_word(text.lower(), needle)


# Full-width sigils, as a CJK input method types them, are the ASCII ones.
_WIDE_SIGILS = str.maketrans({"\uff04": "$", "\uff0f": "/"})


def typed(text: str) -> str:
    """Text as judgment compares it: NFC (a name stored decomposed, as macOS file names are,
    is the name typed composed), lower case, full-width `＄` and `／` as `$` and `/`."""
    return unicodedata.normalize("NFC", text).lower().translate(_WIDE_SIGILS)


def mentioned(sentence: str, name: str) -> str:
    """How the user named the skill explicitly ($name, /name, or the name as a word), or ''.

    The name as a bare word counts only when no ordinary word is spelt so: a name with a
    hyphen, digit, dot, underscore or space (`slack-gif-creator`, `web3`). A one-word name
    (`triage`, `modal`, `pdf`, `research`) written bare is left to the judgment of the
    description, where it counts as the name's words: "add a modal dialog" or "triage these
    tickets" are not requests for skills of those names; `$modal`, `/modal` and "the modal
    skill" (or 技能, スキル, 스킬 after the name) still are. Both are compared as `typed`."""
    low, key = typed(sentence), typed(name)
    if key not in low:
        return ""
    for sigil in ("$", "/"):
        m = _sigil_rx(sigil + key).search(low)
        if m and not (sigil == "/" and _in_path(low, m.start(), m.end(), key)):
            return sigil + name
    if one_word(name):
        if key in stop_words():  # "use the skill" names no skill called the
            return ""
        m = _skill_rx(key).search(low)
        return m.group(0) if m else ""
    return name if _mention_rx(key).search(low) else ""


# A slash glued to the text before it is a path's when what follows it is a top-level
# directory of Unix (FHS 3.0: 保存到/tmp目录, 放在/etc里) or is followed by a word for a
# directory; a command typed after a verb (请用/triage整理) is neither.
# fmt: off
_ROOT_DIRS = frozenset({
    "bin", "boot", "dev", "etc", "home", "lib", "lib64", "media", "mnt", "opt", "proc", "root",
    "run", "sbin", "srv", "sys", "tmp", "usr", "var",
})
# fmt: on
_DIRECTORY = re.compile(
    r"\s*(?:目录|目錄|文件夹|資料夾|路径|路徑|フォルダ|ディレクトリ|パス|디렉토리|폴더|경로)"
)


def _in_path(low: str, start: int, end: int, name: str) -> bool:
    """Whether the `/name` at low[start:end] is part of a path rather than a command."""
    glued = start > 0 and not low[start - 1].isspace()
    return (glued and name in _ROOT_DIRS) or _DIRECTORY.match(low, end) is not None


def one_word(name: str) -> bool:
    """A name spelt as an ordinary word is (letters only, in any script; an accent stored
    as a combining mark, as macOS file names have them, is part of its letter)."""
    return bool(re.fullmatch(r"[^\W\d_]+", unicodedata.normalize("NFC", name)))


# Scripts written without spaces (as mca.skills.terms cuts them): a name may follow one
# of their characters directly ("请用triage技能"), where a letter of a spaced script would make
# it part of a longer word.
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"


@functools.lru_cache(maxsize=65536)
def _skill_rx(name: str) -> re.Pattern[str]:
    # The name, then the word skill: "the planner skill", "用planner技能"; not "pdfskills.py"
    # (one longer word), nor the plural ("my writing skills" asks for no skill named writing).
    before = rf"(?<![./$\-])(?<!(?![{_UNSPACED}])\w)"
    return re.compile(rf"{before}{re.escape(name)}(?:\s+skill\b(?![-.]\w)|\s*(?:技能|スキル|스킬))")


@functools.lru_cache(maxsize=65536)
def _sigil_rx(form: str) -> re.Pattern[str]:
    # $name or /name as a word of its own: after whitespace, or touching a script written
    # without spaces or its punctuation ("请用$triage整理", “/triage”, 「$triage」), but not inside
    # a longer word, an amount (US$x), a path (../triage, /triage/foo) or markup (</modal>).
    wide = "\u2018-\u201f\u3000-\u303f\uff01-\uff0e\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
    after = rf"[^\w/\-]|[{_UNSPACED}]"
    return re.compile(rf"(?:^|(?<=[\s{wide}{_UNSPACED}])){re.escape(form)}(?=$|{after})")


@functools.lru_cache(maxsize=65536)
def _mention_rx(name: str) -> re.Pattern[str]:
    # As a word, but not inside a path or file name (calc in src/calc.js is not a mention).
    return re.compile(rf"(?<![\w./\-]){re.escape(name)}(?![\w/\-]|\.\w)")


def sentence_paths(sentence: str) -> list[str]:
    """Paths written in the sentence and @references, normalised (no leading ./)."""
    found: list[str] = []
    for m in _REF_RX.finditer(sentence):
        found.append(m.group(1).rstrip(".,;:!?)'\"`"))
    for m in _PATH_RX.finditer(sentence):
        found.append(m.group(1).rstrip(".,;:!?)'\"`"))
    out: list[str] = []
    for p in found:
        p = p.removeprefix("./")
        if p and p not in out:
            out.append(p)
    return out


def _path_reasons(patterns: Sequence[str], paths: Sequence[tuple[str, str]]) -> list[Reason]:
    """10 points per pattern that matches any considered path (first match named)."""
    out = []
    for pattern in patterns:
        for p, src in paths:
            if glob_match(pattern, p):
                where = f", {src}" if src != "sentence" else ""
                out.append(Reason("path", f"{p}{where}", PATH_POINTS))
                break
    return out


_TOKEN = re.compile(r"[a-z0-9]+")


def _prefix_dir(pattern: str) -> str:
    """The literal directory a glob is anchored in ('' when it can match anywhere)."""
    if "/" not in pattern:
        return ""
    lit = literal_prefix(pattern)
    return lit[: lit.rfind("/") + 1]


DocSource = Callable[[Sequence[Skill]], list[Doc]]


def make_docs(skills: Sequence[Skill]) -> list[Doc]:
    """Index every skill afresh (the index cache is the other DocSource)."""
    return [make_doc(s.name, s.description, s.body) for s in skills]


def described(skill: Skill) -> bool:
    """Judged by its description: the skill declares no triggers and no paths of its own (an
    author who wrote triggers has said which words call for it), and does not ask never to be
    chosen by the model (Claude Code's `disable-model-invocation: true`)."""
    return not skill.triggers and not skill.paths and model_invocable(skill)


class SkillSet(tuple[Skill, ...]):
    """Skills plus indexes built once, so judging a sentence does not touch every trigger.

    The trigger index only narrows candidates; every candidate is still checked with the same
    rules (a word-boundary match implies the trigger's first word is a word of the sentence).
    `docs` turns skills into relevance documents (a cache can stand in for make_docs); `model`
    is the judgment's (mca.skills.judgment.Model; None: the shipped one, read on first use).
    """

    docs: DocSource = staticmethod(make_docs)
    model: Model | None = None

    def __new__(
        cls,
        skills: Iterable[Skill] = (),
        docs: DocSource | None = None,
        model: Model | None = None,
    ) -> SkillSet:
        self = super().__new__(cls, skills)
        if docs is not None:
            self.docs = docs
        if model is not None:
            self.model = model
        return self

    @functools.cached_property
    def judgment(self) -> Model:
        """The model the skills are judged by: the one given, or the shipped one."""
        return self.model or default_model()

    @functools.cached_property
    def lookup(self) -> _Index:
        return _Index(self)

    @functools.cached_property
    def relevance(self) -> tuple[Index, tuple[int, ...]]:
        """The description index over the skills judged by description, and their positions."""
        where = tuple(i for i, s in enumerate(self) if described(s))
        return self.judgment.index(self.docs([self[i] for i in where])), where

    @functools.cached_property
    def by_name(self) -> dict[str, Skill]:
        return {s.name: s for s in self}


class _Index:
    def __init__(self, skills: Sequence[Skill]) -> None:
        self.by_word: dict[str, list[tuple[int, int]]] = {}  # token -> (skill, trigger no.)
        self.anywhere: list[tuple[int, int]] = []  # non-ASCII or wordless triggers
        self.names: dict[str, list[int]] = {}
        self.paths: dict[str, list[tuple[int, int]]] = {}  # prefix dir -> (skill, pattern no.)
        first = _TOKEN.search  # a text's first token: thousands of skills, several triggers each
        for si, skill in enumerate(skills):
            name, triggers = skill.lowered
            m = first(name)
            self.names.setdefault(m.group(0) if m else "", []).append(si)  # '' = check always
            for ti, (_, needle) in enumerate(triggers):
                m = first(needle) if needle.isascii() else None
                if m is not None:
                    self.by_word.setdefault(m.group(0), []).append((si, ti))
                elif needle:
                    self.anywhere.append((si, ti))
            for pi, pattern in enumerate(skill.paths):
                self.paths.setdefault(_prefix_dir(pattern), []).append((si, pi))

    def candidates(self, low: str, paths: Sequence[tuple[str, str]]) -> set[int]:
        tokens = set(_TOKEN.findall(low))
        found = {si for t in (*tokens, "") for si in self.names.get(t, ())}
        found.update(si for t in tokens for si, _ in self.by_word.get(t, ()))
        found.update(si for si, _ in self.anywhere)
        for p, _ in paths:
            dirs = [""] + [p[: i + 1] for i, c in enumerate(p) if c == "/"]
            found.update(si for d in dirs for si, _ in self.paths.get(d, ()))
        return found


_EXTENSION = re.compile(r"[a-z0-9]{1,8}\Z")


@functools.lru_cache(maxsize=65536)
def _file_rx(name: str) -> re.Pattern[str]:
    # A file's stem (or nothing: '.bpmn files', '*.bpmn'), a dot, the name, and no more of a
    # word: 'refund.bpmn', 'a.bpmn.xml'; not 'e.g.bpmnx'.
    return re.compile(rf"(?:^|(?<=[\w\-)\]*\s]))\.{re.escape(name)}(?![\w\-])")


def file_reason(name: str, low: str) -> Reason | None:
    """A file in the (lowercased) sentence whose extension is the skill's (lowercased) name:
    'Q4 sales final.xlsx' for xlsx, 'refund.bpmn' for bpmn."""
    if f".{name}" not in low or not _EXTENSION.match(name):
        return None
    m = _file_rx(name).search(low)
    if m is None:
        return None
    start = max(low.rfind(c, 0, m.start()) for c in " \t\n\"'`(<[@") + 1
    return Reason("file", low[start : m.end()], FILE_POINTS)


def _score(skill: Skill, sentence: str, low: str, paths: Sequence[tuple[str, str]]) -> list[Reason]:
    reasons: list[Reason] = []
    name, triggers = skill.lowered
    if name in low and (form := mentioned(sentence, skill.name)):
        reasons.append(Reason("mention", form, MENTION_POINTS))
    if name in low and (file := file_reason(name, low)):
        reasons.append(file)
    if paths:
        reasons += _path_reasons(skill.paths, paths)
    for trigger, needle in triggers:
        if needle and needle in low and _matches_word(low, needle):
            reasons.append(Reason("keyword", f'"{trigger}"', KEYWORD_POINTS))
    return reasons


def _by_description(pool: SkillSet, sentence: str) -> tuple[int, Reason] | None:
    """The one skill the sentence calls for by its description (position in pool), if any."""
    if not terms(sentence):  # "hello" or "ok" needs no index: it is built on first real use
        return None
    index, where = pool.relevance
    best = choose(index, sentence, pool.judgment) if where else None
    if best is None:
        return None
    detail = ", ".join(f'"{w}"' for w in best.words(sentence))
    return where[best.skill], Reason("description", detail, DESCRIPTION_POINTS)


def judge(skills: Iterable[Skill], sentence: str, paths: Sequence[tuple[str, str]]) -> list[Hit]:
    """Score every skill; hits sorted by score, then priority, then name.

    `paths` is (path, where it came from) for the sentence, @references and last turn's files.
    Priority never decides whether a skill matched: it only orders equal scores.
    """
    pool = skills if isinstance(skills, SkillSet) else SkillSet(skills)
    low = typed(sentence)
    hits: dict[int, Hit] = {}
    for si in sorted(pool.lookup.candidates(low, paths)):
        skill = pool[si]
        reasons = _score(skill, sentence, low, paths)
        if reasons:
            hits[si] = Hit(skill, reasons)
    described_hit = _by_description(pool, sentence)
    if described_hit is not None and described_hit[0] not in hits:  # a hit needs no more
        si, reason = described_hit
        hits[si] = Hit(pool[si], [reason])
    found = list(hits.values())
    found.sort(key=lambda h: (-h.score, -h.skill.priority, h.skill.name))
    return found
