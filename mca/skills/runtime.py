"""The skill runtime for a session: discovery at startup, the stage before each turn."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mca.errors import SkillsRefused
from mca.events import CatalogCut, EventSink, SkillCandidates, SkillDiagnostic, SkillRoot
from mca.fs.careful import is_dir, sha256
from mca.skills.cache import FitsMemo, ParseCache
from mca.skills.catalog import Budget
from mca.skills.discover import Discovery, changes, char_fits, discover, session_roots
from mca.skills.index_cache import IndexCache
from mca.skills.model import CODES, STRICT_CODES, displayer
from mca.skills.policy import PRODUCTION, Policy
from mca.skills.stage import SkillStage
from mca.skills.writers import writers
from mca.text.counts import plural
from mca.tokens import Estimator

__all__ = [
    "SkillRuntime",
    "SkillsConfig",
    "catalog_budget",
    "log_discovery",
    "open_discovery",
    "refuse_if_strict",
    "run_discovery",
    "serial_note",
]


@dataclass(frozen=True, kw_only=True)
class SkillsConfig:
    """What the skill runtime needs, built once from the settings (mca/assembly/wiring.py)."""

    workspace: Path
    home: Path  # $MCA_HOME: user skills, the caches
    user_home: Path  # ~, for ~/... paths
    budget: int  # characters of skill bodies one turn may inject
    encoding: str  # the tokenizer's
    skills_dirs: tuple[Path, ...] = ()  # --skills-dir, MCA_SKILLS_DIRS
    strict: bool = False  # --strict-skills
    policy: Policy | None = None  # how skills are split, judged and gated (None: production's)
    window: int | None = None  # the model's context window, when known


def catalog_budget(config: SkillsConfig) -> Budget:
    """2% of the window in tokens when it is known, else 8,000 characters."""
    return Budget.for_window(config.window)


def open_discovery(
    config: SkillsConfig, estimator: Estimator, trust_memo: bool = True
) -> tuple[Discovery, FitsMemo]:
    """Roots -> scan -> catalog for this config, and the memo of the catalog's fits, whose
    answers read from disk are still to be audited (`SkillRuntime.refresh` does it)."""
    c = config
    roots = session_roots(c.workspace, c.home, c.user_home, c.skills_dirs)
    budget = catalog_budget(c)
    key = sha256("\n".join(str(r.path) for r in roots).encode("utf-8", "surrogateescape"))
    cache = ParseCache(c.home / "cache" / f"skills-{key[:16]}.json")
    memo = FitsMemo(c.home / "cache" / "fits.json", estimator.encoding, estimator.fits, trust_memo)
    docs = IndexCache(c.home / "cache" / f"index-{key[:16]}.json")

    fits = memo if budget.unit == "tokens" else char_fits
    shown = displayer(c.workspace, c.user_home)
    d = discover(roots, budget, fits, c.policy or PRODUCTION, cache, shown, docs)
    memo.save()
    return d, memo


def run_discovery(config: SkillsConfig, estimator: Estimator) -> Discovery:
    """Discovery for a one-shot command: remembered fits are audited at once."""
    d, memo = open_discovery(config, estimator)
    if memo.pending and memo.audit():
        d, _ = open_discovery(config, estimator, trust_memo=False)
    return d


def refuse_if_strict(config: SkillsConfig, d: Discovery) -> None:
    """--strict-skills: any error diagnostic stops mca before a model client exists."""
    if not config.strict:
        return
    errors = [x for x in d.all_diagnostics() if x.level == "error" or x.code in STRICT_CODES]
    if errors:
        lines = "\n".join(f"  {e}" for e in errors)
        raise SkillsRefused(
            f"--strict-skills: {plural(len(errors), 'skill problem')}, not starting:\n{lines}"
        )


SERIAL = "discovery-serial"  # the code of the note a fallback to serial discovery logs


def serial_note(why: str) -> SkillDiagnostic:
    """The session log's record that the discovery begun ahead (mca.skills.ahead) was not used,
    and why: the skills are then discovered serially, here."""
    message = f"skills discovered serially: the discovery begun ahead gave nothing ({why})"
    return SkillDiagnostic("", CODES[SERIAL], SERIAL, None, message)


def log_discovery(d: Discovery, emit: EventSink) -> None:
    """Discovery for the session log: roots, one event listing the candidates, the diagnostics
    (catalog cuts, one per skill when thousands are installed, folded into one event)."""
    for r in d.roots:
        emit(SkillRoot(str(r.path), r.scope, r.rank, is_dir(r.path), writers(r.path, r.scope)))
    listed = [
        {"path": str(c.path), "name": c.name, "status": c.status}
        | ({"diagnostics": [x.code for x in c.diagnostics]} if c.diagnostics else {})
        for c in d.candidates
    ]
    emit(SkillCandidates(len(listed), listed))
    walk = set(d.diagnostics)
    for c in d.candidates:  # why each skipped skill was skipped, in words (a code says little)
        for x in c.diagnostics if c.has_error else ():
            if x.level == "error" and x not in walk:
                emit(SkillDiagnostic(x.path, x.level, x.code, x.line, x.message))
    cuts = [x for x in d.diagnostics if x.code == "catalog-cut"]
    for x in d.diagnostics:
        if x.code != "catalog-cut":
            emit(SkillDiagnostic(x.path, x.level, x.code, x.line, x.message))
    if cuts:
        emit(CatalogCut(len(cuts), cuts[0].message))


@dataclass
class SkillRuntime:
    """What a session keeps about skills."""

    config: SkillsConfig
    discovery: Discovery
    stage: SkillStage
    estimator: Estimator
    memo: FitsMemo | None = None  # fits taken from disk, audited before the first turn
    signature: tuple[object, ...] = ()
    # one-shot: the walk just took the signature, and its one turn starts now; stat-ing every
    # SKILL.md again before it would only find what discovery found a moment ago
    fresh: bool = False

    def __post_init__(self) -> None:
        self.signature = self.signature or self.discovery.signature_seen()

    def refresh(self) -> str:
        """Before a turn: rediscover when the skills changed on disk since the last look (a
        stat per directory and SKILL.md, no reading) or when a catalog fit remembered on disk
        proves wrong now that the tokenizer is loaded: '' when neither, else what changed."""
        wrong = self.memo.audit() if self.memo is not None and self.memo.pending else 0
        self.memo = None
        now = self.signature if self.fresh else self.discovery.signature()
        self.fresh = False
        if now == self.signature and not wrong:
            return ""
        new, self.memo = open_discovery(self.config, self.estimator, trust_memo=not wrong)
        what = "skills changed on disk: " + (
            changes(self.discovery, new) or "files changed, skills the same"
        )
        if wrong:
            what = f"{wrong} catalog fit(s) remembered in $MCA_HOME/cache were wrong, dropped"
        self.discovery, self.signature = new, new.signature_seen()
        self.stage.update(new.skills, new.skill_set)
        return what
