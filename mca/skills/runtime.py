"""The skill runtime for a session: discovery at startup, the stage before each turn."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mca.config import Settings
from mca.errors import SkillsRefused
from mca.fsutil import is_dir
from mca.skills.catalog import Budget
from mca.skills.discover import Discovery, char_fits, discover, session_roots
from mca.skills.policy import select_policy
from mca.skills.stage import SkillStage
from mca.tokens import Estimator

Emit = Callable[[str, Mapping[str, Any]], None]


def catalog_budget(settings: Settings) -> Budget:
    """2% of the window in tokens when it is known, else 8,000 characters."""
    return Budget.for_window(settings.context_window if settings.context_window_known else None)


def run_discovery(settings: Settings, estimator: Estimator) -> Discovery:
    """Roots -> scan -> catalog for these settings."""
    roots = session_roots(
        settings.workspace, settings.home, settings.user_home, settings.skills_dirs
    )
    budget = catalog_budget(settings)
    fits = estimator.fits if budget.unit == "tokens" else char_fits
    return discover(roots, budget, fits, select_policy(settings.lab))


def refuse_if_strict(settings: Settings, d: Discovery) -> None:
    """--strict-skills: any error diagnostic stops mca before a model client exists."""
    if not settings.strict_skills:
        return
    errors = [x for x in d.all_diagnostics() if x.level == "error"]
    if errors:
        lines = "\n".join(f"  {e}" for e in errors)
        raise SkillsRefused(
            f"--strict-skills: {len(errors)} skill error(s), not starting:\n{lines}"
        )


def log_discovery(d: Discovery, emit: Emit) -> None:
    """Discovery events for the session log."""
    for r in d.roots:
        emit(
            "skills.root",
            {"path": str(r.path), "scope": r.scope, "rank": r.rank, "exists": is_dir(r.path)},
        )
    for c in d.candidates:
        emit(
            "skills.candidate",
            {
                "path": str(c.path),
                "name": c.name,
                "status": c.status,
                "diagnostics": [x.to_json() for x in c.diagnostics],
            },
        )
    for x in d.diagnostics:
        emit("skills.diagnostic", {"path": x.path, **x.to_json()})


@dataclass
class SkillRuntime:
    """What a session keeps about skills."""

    discovery: Discovery
    stage: SkillStage
    estimator: Estimator
