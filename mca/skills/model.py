"""Pure data for the skill runtime: skills, diagnostics, spec limits. Imports nothing heavy."""

from __future__ import annotations

import functools
import os
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mca.skills.yaml import Value

__all__ = [
    "CODES",
    "COMPATIBILITY_MAX",
    "DESCRIPTION_MAX",
    "MAX_UP_LEVELS",
    "NAME_MAX",
    "RESOURCE_DIRS",
    "SKILL_FILE",
    "STRICT_CODES",
    "Candidate",
    "Diagnostic",
    "Hit",
    "Level",
    "Reason",
    "Root",
    "Skill",
    "display_path",
    "displayer",
    "xml_escape",
]

Level = Literal["error", "warning", "info"]

# Agent Skills spec limits (characters, after NFKC for names).
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500

SKILL_FILE = "SKILL.md"
RESOURCE_DIRS = ("scripts", "references", "assets")

# Every diagnostic code mca emits, with its level.
CODES: dict[str, Level] = {
    "no-frontmatter": "error",
    "unclosed-frontmatter": "error",
    "unsupported-yaml": "error",
    "unreadable": "error",
    "missing-description": "error",
    "invalid-field": "error",
    "symlinked-entry": "error",
    "outside-project": "error",
    "duplicate-name": "error",
    "name-defaulted": "warning",
    "name-invalid": "warning",
    "name-mismatch": "warning",
    "name-too-long": "warning",
    "description-too-long": "warning",
    "compatibility-too-long": "warning",
    "unquoted-colon": "warning",
    "unquoted-indicator": "warning",
    "duplicate-key": "warning",
    "script-not-runnable": "warning",
    "field-dropped": "warning",
    "frontmatter-recovered": "warning",
    "shadowed": "warning",
    "scan-truncated": "warning",
    "unreadable-dir": "warning",
    "catalog-cut": "warning",
    "catalog-off": "warning",
    "body-too-long": "warning",
    "trigger-stop-word": "warning",
    "unknown-field": "info",
    "discovery-serial": "info",  # the discovery begun ahead was not used (the log says why)
}


# Warnings that --strict-skills refuses like errors: something in the file was not used as written.
STRICT_CODES = frozenset({"field-dropped", "frontmatter-recovered", "description-too-long"})


MAX_UP_LEVELS = 4  # a skill further away than this from the workspace is shown absolute


def display_path(path: Path | str, workspace: Path, home: Path) -> str:
    """A path for the model: relative to the workspace, else ~/..., else relative with a few
    ../ steps; absolute only when nothing shorter says where it is. The same on every machine
    for the same layout, so token figures do not depend on where things are installed."""
    return displayer(workspace, home)(path)


def displayer(workspace: Path, home: Path) -> Callable[[Path | str], str]:
    """display_path for one workspace and home, its prefixes worked out once (discovery shows
    thousands of skill directories at start-up)."""
    ws = str(workspace)
    bases = [(b, b.rstrip("/") + "/", prefix) for b, prefix in ((ws, ""), (str(home), "~/"))]
    ws_dir = ws + "/"

    def shown(path: Path | str) -> str:
        text = str(path)
        for base, under, prefix in bases:
            if text == base:
                return prefix.rstrip("/") or "."
            if text.startswith(under):  # is_relative_to, as strings
                return prefix + text[len(under) :].rstrip("/")
        parent, name = os.path.split(text)
        if name not in ("", ".", "..") and not ws_dir.startswith(parent.rstrip("/") + "/"):
            # not an ancestor of the workspace: the same steps up as its parent, then its name
            # (thousands of skills share a few parents, and relpath is the slow part)
            up = _outside(parent, ws)
            return f"{up}/{name}" if up != text and up != parent else text
        return _outside(text, ws)

    return shown


@functools.lru_cache(maxsize=64)
def _outside(text: str, workspace: str) -> str:
    rel = os.path.relpath(text, workspace)
    ups = rel.split(os.sep).count("..")
    return Path(rel).as_posix() if ups <= MAX_UP_LEVELS else text


def xml_escape(text: str, quote: bool = False) -> str:
    """Escape text for the catalog's and the injection's XML-like tags."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if quote else text


@dataclass(frozen=True)
class Diagnostic:
    """One finding about one SKILL.md: level, stable code, where, and what to do."""

    code: str
    path: str
    message: str
    line: int | None = None

    @property
    def level(self) -> Level:
        return CODES[self.code]

    def to_json(self) -> dict[str, object]:
        return {"level": self.level, "code": self.code, "line": self.line, "message": self.message}

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{self.level}: {where}: {self.message} [{self.code}]"


@dataclass(frozen=True)
class Root:
    """A directory searched for skills, with its scope and rank (higher wins)."""

    path: Path
    scope: str
    rank: int


@dataclass(frozen=True)
class Skill:
    """A loaded skill: validated metadata, its body, and where it came from."""

    name: str
    description: str
    path: Path  # absolute SKILL.md
    body: str
    fields: dict[str, Value] = field(default_factory=dict)
    scope: str = ""
    rank: int = 0
    domain: str = ""
    priority: int = 0
    triggers: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    shown_dir: str = ""  # the directory as the model is told it (see display_path)

    @property
    def dir(self) -> Path:
        return self.path.parent

    def shown_at(self, shown_dir: str) -> Skill:
        """This skill, told to the model as living at `shown_dir`: dataclasses.replace without
        running __init__ again (discovery does it for thousands of skills at start-up)."""
        new = object.__new__(Skill)
        new.__dict__.update(self.__dict__, shown_dir=shown_dir)
        return new

    @property
    def dir_label(self) -> str:
        """Where the skill lives, as the model sees it: relative to the workspace or ~."""
        return self.shown_dir or str(self.dir)

    @functools.cached_property
    def lowered(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """(name, ((trigger, lowercased trigger), ...)) computed once, for judgment; in NFC, as
        judgment reads sentences (a name stored decomposed is found as typed composed)."""
        low = functools.partial(unicodedata.normalize, "NFC")
        return low(self.name).lower(), tuple((t, low(t.strip()).lower()) for t in self.triggers)

    @property
    def domain_key(self) -> str:
        """The gate's domain: a skill without one is its own domain."""
        return self.domain or f"skill:{self.name}"


@dataclass
class Candidate:
    """One SKILL.md found on disk, before and after parsing/validation."""

    path: Path
    root: Root | None
    skill: Skill | None = None
    fields: dict[str, Value] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    status: str = "skipped"  # loaded / skipped / shadowed / withheld / omitted

    @property
    def name(self) -> str:
        if self.skill is not None:
            return self.skill.name
        value = self.fields.get("name")
        return value if isinstance(value, str) and value else self.path.parent.name

    @property
    def has_error(self) -> bool:
        return any(d.level == "error" for d in self.diagnostics)


@dataclass(frozen=True)
class Reason:
    """One reason a skill matched, with its points."""

    kind: str  # mention / file / path / keyword / description
    detail: str
    points: int

    def __str__(self) -> str:
        return f"{self.kind} {self.detail} ({self.points})"


@dataclass
class Hit:
    """A skill the sentence matched, and why."""

    skill: Skill
    reasons: list[Reason] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(r.points for r in self.reasons)

    def line(self) -> str:
        """'calc-conventions  score 13  path src/calc.js (10) + keyword "divide" (3)'."""
        return f"{self.skill.name}  score {self.score}  " + " + ".join(map(str, self.reasons))
