"""Protected paths: writes that need the person's own yes, in every approval mode.

The one list of them (documented in the README's security model):

- any `.git` component: git runs what is there by itself (hooks, `core.fsmonitor`, filters in
  `.git/config`), so a write there is as good as running a command;
- any `.mca` component and `.agents/skills`: project configuration and skills, which mca reads
  and puts in the model's context on later turns;
- anything under `$MCA_HOME` (mca's own state and configuration), wherever it is.

Names are compared case-insensitively, as a case-insensitive file system would.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

PROTECTED_COMPONENTS = {
    ".git": "git runs hooks and configuration from .git/ by itself",
    ".mca": "mca reads its project configuration and skills from .mca/",
}
PROTECTED_PAIRS = {
    (".agents", "skills"): "mca puts project skills from .agents/skills/ in the model's context",
}


def protected_reason(rel: str, real: Path, home: Path | None) -> str | None:
    """Why a write to this workspace path needs approval, or None when it does not."""
    parts = [p.casefold() for p in PurePosixPath(rel).parts]
    for part in parts:
        if part in PROTECTED_COMPONENTS:
            return PROTECTED_COMPONENTS[part]
    for pair, reason in PROTECTED_PAIRS.items():
        if any(tuple(parts[i : i + 2]) == pair for i in range(len(parts) - 1)):
            return reason
    if home is not None:
        real_home = home.resolve()
        if real == real_home or real.is_relative_to(real_home):
            return "it is mca's own state and configuration ($MCA_HOME)"
    return None
