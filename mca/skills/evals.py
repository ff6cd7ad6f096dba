"""Trigger evals: read a file of labelled sentences (untrusted input) and score the pre-turn
stage on it.

Two formats. Anthropic skill-creator's, for one skill:
    [{"query": "...", "should_trigger": true}, ...]
and the multi-skill form, for several skills installed together:
    [{"query": "...", "expected": "skill-name"}, {"query": "...", "expected": null}, ...]

A sentence "triggers" a skill when the stage judges it a hit (mention, path, keyword or
description) and the domain gate keeps it (a rival of its domain did not win), whether or not
the budget then lets its body in: the budget is a separate gate with its own message, and a
skill author tunes the description, not the budget.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mca.errors import McaError
from mca.fs.careful import read_regular
from mca.skills.gates import Decision

__all__ = [
    "EVAL_GLOBS",
    "MAX_FILE_BYTES",
    "MAX_ITEMS",
    "MAX_QUERY_CHARS",
    "EvalFile",
    "EvalFileError",
    "EvalItem",
    "Judge",
    "Label",
    "Score",
    "find_eval_files",
    "load_evals",
    "parse_evals",
    "score_multi",
    "score_single",
    "triggered",
]

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_ITEMS = 10_000
MAX_QUERY_CHARS = 20_000
EVAL_GLOBS = ("evals/*.json", "eval/*.json", "*trigger*eval*.json", "*eval*.json")


class EvalFileError(McaError):
    """A trigger-eval file that cannot be used: unreadable, too large, or of the wrong shape."""


Label = bool | str | None  # should_trigger, or the expected skill's name (None: no skill)


@dataclass(frozen=True)
class EvalItem:
    query: str
    label: Label


@dataclass(frozen=True)
class EvalFile:
    path: Path
    kind: str  # single / multi
    items: tuple[EvalItem, ...]


def _item(raw: Any, n: int) -> tuple[str, EvalItem]:
    if not isinstance(raw, dict):
        raise ValueError(f"item {n} is not an object")
    query = raw.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f'item {n}: "query" must be a non-empty string')
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(f"item {n}: query over {MAX_QUERY_CHARS:,} characters")
    if "should_trigger" in raw:
        if not isinstance(raw["should_trigger"], bool):
            raise ValueError(f'item {n}: "should_trigger" must be true or false')
        return "single", EvalItem(query, raw["should_trigger"])
    if "expected" in raw:
        expected = raw["expected"]
        if expected is not None and (not isinstance(expected, str) or not expected.strip()):
            raise ValueError(f'item {n}: "expected" must be a skill name or null')
        return "multi", EvalItem(query, expected)
    raise ValueError(f'item {n} has neither "should_trigger" nor "expected"')


def parse_evals(text: str, path: Path) -> EvalFile:
    """Check and convert a trigger-eval file's text; EvalFileError says what is wrong."""
    try:
        data = json.loads(text)
        if isinstance(data, dict) and isinstance(data.get("evals"), list):
            data = data["evals"]  # some authors wrap the list
        if not isinstance(data, list) or not data:
            raise ValueError("expected a non-empty JSON array of {query, ...} objects")
        if len(data) > MAX_ITEMS:
            raise ValueError(f"{len(data):,} items, over {MAX_ITEMS:,}")
        parsed = [_item(raw, n) for n, raw in enumerate(data, 1)]
    except (ValueError, RecursionError) as e:
        raise EvalFileError(f"{path}: {str(e).splitlines()[0]}") from None
    kinds = {k for k, _ in parsed}
    if len(kinds) > 1:
        raise EvalFileError(f'{path}: mixes "should_trigger" and "expected" items')
    return EvalFile(path, kinds.pop(), tuple(i for _, i in parsed))


def load_evals(path: Path) -> EvalFile:
    """Read and parse a trigger-eval file (a regular file of at most MAX_FILE_BYTES)."""
    try:
        data = read_regular(path, cap=MAX_FILE_BYTES)
    except OSError as e:
        raise EvalFileError(f"{path}: cannot read ({e.strerror or e})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EvalFileError(f"{path}: not UTF-8 text") from None
    return parse_evals(text, path)


@dataclass
class Score:
    """Counts for one run, and the sentences it got wrong."""

    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    misses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    def ratio(self, a: int, b: int) -> float | None:
        return a / b if b else None

    def to_json(self) -> dict[str, Any]:
        return {
            "queries": self.total,
            "should_trigger": self.tp + self.fn,
            "should_not_trigger": self.tn + self.fp,
            "precision": self.ratio(self.tp, self.tp + self.fp),
            "recall": self.ratio(self.tp, self.tp + self.fn),
            "false_activations": self.ratio(self.fp, self.fp + self.tn),
            "accuracy": self.ratio(self.tp + self.tn, self.total),
            "misses": self.misses,
        }

    def add(self, other: Score) -> None:
        self.tp, self.fp = self.tp + other.tp, self.fp + other.fp
        self.tn, self.fn = self.tn + other.tn, self.fn + other.fn
        self.misses += other.misses


Judge = Callable[[str], Sequence[str]]  # sentence -> names of the skills it triggers


def triggered(decisions: Sequence[Decision]) -> list[str]:
    """The skills a stage result triggers: loaded, or turned away by the budget alone."""
    return [d.name for d in decisions if d.loaded or d.block is not None]


def score_single(items: Sequence[EvalItem], skill: str, judge: Judge) -> Score:
    """skill-creator's file: does `skill` trigger exactly when it should?"""
    s = Score()
    for item in items:
        fired = list(judge(item.query))
        hit = skill in fired
        if item.label:
            s.tp, s.fn = s.tp + hit, s.fn + (not hit)
        else:
            s.fp, s.tn = s.fp + hit, s.tn + (not hit)
        if hit != bool(item.label):
            s.misses.append({"query": item.query, "expected": bool(item.label), "fired": fired})
    return s


def score_multi(items: Sequence[EvalItem], judge: Judge) -> Score:
    """The multi-skill file: a sentence is right when exactly the expected skill fires (or none
    where none is expected). tp: right skill; fn: expected one, got none; fp: a skill fired
    that was not the expected one (a wrong one, or any where none was expected)."""
    s = Score()
    for item in items:
        fired = list(judge(item.query))
        want = item.label if isinstance(item.label, str) else None
        if want is None and not fired:
            s.tn += 1
            continue
        if want is not None and fired == [want]:
            s.tp += 1
            continue
        if want is not None and not fired:
            s.fn += 1
        else:
            s.fp += 1
        s.misses.append({"query": item.query, "expected": want, "fired": fired})
    return s


def find_eval_files(skill_dir: Path) -> list[Path]:
    """Trigger-eval files beside a SKILL.md (evals/*.json and *eval*.json), sorted."""
    found: set[Path] = set()
    for pattern in EVAL_GLOBS:
        found.update(p for p in skill_dir.glob(pattern) if p.is_file())
    return sorted(found)
