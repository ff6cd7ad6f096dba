"""The skill runtime for a session: discovery at startup, the stage before each turn."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mca.config import Settings
from mca.errors import SkillsRefused
from mca.events import CatalogCut, EventSink, SkillCandidates, SkillDiagnostic, SkillRoot
from mca.fsutil import is_dir, sha256
from mca.skills.cache import FitsMemo, ParseCache
from mca.skills.catalog import Budget
from mca.skills.discover import Discovery, changes, char_fits, discover, session_roots
from mca.skills.index_cache import IndexCache
from mca.skills.model import STRICT_CODES, display_path
from mca.skills.policy import PRODUCTION
from mca.skills.stage import SkillStage
from mca.tokens import Estimator
from mca.words import plural


def catalog_budget(settings: Settings) -> Budget:
    """2% of the window in tokens when it is known, else 8,000 characters."""
    return Budget.for_window(settings.context_window if settings.context_window_known else None)


def open_discovery(
    settings: Settings, estimator: Estimator, trust_memo: bool = True
) -> tuple[Discovery, FitsMemo]:
    """Roots -> scan -> catalog for these settings, and the memo of the catalog's fits, whose
    answers read from disk are still to be audited (`SkillRuntime.refresh` does it)."""
    roots = session_roots(
        settings.workspace, settings.home, settings.user_home, settings.skills_dirs
    )
    budget = catalog_budget(settings)
    key = sha256("\n".join(str(r.path) for r in roots).encode("utf-8", "surrogateescape"))
    cache = ParseCache(settings.home / "cache" / f"skills-{key[:16]}.json")
    where = settings.home / "cache" / "fits.json"
    memo = FitsMemo(where, estimator.encoding, estimator.fits, trust_memo)
    docs = IndexCache(settings.home / "cache" / f"index-{key[:16]}.json")

    def shown(path: Path) -> str:
        return display_path(path, settings.workspace, settings.user_home)

    fits = memo if budget.unit == "tokens" else char_fits
    d = discover(roots, budget, fits, settings.policy or PRODUCTION, cache, shown, docs)
    memo.save()
    return d, memo


def run_discovery(settings: Settings, estimator: Estimator) -> Discovery:
    """Discovery for a one-shot command: remembered fits are audited at once."""
    d, memo = open_discovery(settings, estimator)
    if memo.pending and memo.audit():
        d, _ = open_discovery(settings, estimator, trust_memo=False)
    return d


def refuse_if_strict(settings: Settings, d: Discovery) -> None:
    """--strict-skills: any error diagnostic stops mca before a model client exists."""
    if not settings.strict_skills:
        return
    errors = [x for x in d.all_diagnostics() if x.level == "error" or x.code in STRICT_CODES]
    if errors:
        lines = "\n".join(f"  {e}" for e in errors)
        raise SkillsRefused(
            f"--strict-skills: {plural(len(errors), 'skill problem')}, not starting:\n{lines}"
        )


def log_discovery(d: Discovery, emit: EventSink) -> None:
    """Discovery for the session log: roots, one event listing the candidates, the diagnostics
    (catalog cuts, one per skill when thousands are installed, folded into one event)."""
    for r in d.roots:
        emit(SkillRoot(str(r.path), r.scope, r.rank, is_dir(r.path)))
    listed = [
        {"path": str(c.path), "name": c.name, "status": c.status}
        | ({"diagnostics": [x.code for x in c.diagnostics]} if c.diagnostics else {})
        for c in d.candidates
    ]
    emit(SkillCandidates(len(listed), listed))
    cuts = [x for x in d.diagnostics if x.code == "catalog-cut"]
    for x in d.diagnostics:
        if x.code != "catalog-cut":
            emit(SkillDiagnostic(x.path, x.level, x.code, x.line, x.message))
    if cuts:
        emit(CatalogCut(len(cuts), cuts[0].message))


@dataclass
class SkillRuntime:
    """What a session keeps about skills."""

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

    def refresh(self, settings: Settings) -> str:
        """Before a turn: rediscover when the skills changed on disk since the last look (a
        stat per directory and SKILL.md, no reading) or when a catalog fit remembered on disk
        proves wrong now that the tokenizer is loaded: '' when neither, else what changed."""
        wrong = self.memo.audit() if self.memo is not None and self.memo.pending else 0
        self.memo = None
        now = self.signature if self.fresh else self.discovery.signature()
        self.fresh = False
        if now == self.signature and not wrong:
            return ""
        new, self.memo = open_discovery(settings, self.estimator, trust_memo=not wrong)
        what = "skills changed on disk: " + (
            changes(self.discovery, new) or "files changed, skills the same"
        )
        if wrong:
            what = f"{wrong} catalog fit(s) remembered in $MCA_HOME/cache were wrong, dropped"
        self.discovery, self.signature = new, new.signature_seen()
        self.stage.update(new.skills, new.skill_set)
        return what
