"""Protected paths: writes that need the person's own yes, in every approval mode.

The one list of them (documented in docs/security.md):

- any `.git` component: git runs what is there by itself (hooks, `core.fsmonitor`, filters in
  `.git/config`), so a write there is as good as running a command;
- any `.mca` component and `.agents/skills`: project configuration and skills, which mca reads
  and puts in the model's context on later turns;
- every directory mca loads skills from (a `--skills-dir` inside the workspace, too);
- anything under `$MCA_HOME` (mca's own state and configuration), wherever it is.

Names are compared case-insensitively, as a case-insensitive file system would. A name is not
the only way in: the workspace's own `.git`, `.mca` and `.agents/skills` and the skills
directories are also compared by their real paths, so a write through another name for them
(`conf/` when `.mca` links to it) is as protected as one through theirs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

from mca.fs.careful import resolved

__all__ = ["HOME", "PROTECTED", "PROTECTED_NAMES", "SKILLS_DIR", "protected_reason"]

# The manifest: each protected path inside a workspace (a name, or a pair of names), and why.
PROTECTED: dict[tuple[str, ...], str] = {
    (".git",): "git runs hooks and configuration from .git/ by itself",
    (".mca",): "mca reads its project configuration and skills from .mca/",
    (".agents", "skills"): "mca puts project skills from .agents/skills/ in the model's context",
}
# The same paths as the sandbox mounts them read-only (relative to the workspace).
PROTECTED_NAMES = tuple("/".join(parts) for parts in PROTECTED)
SKILLS_DIR = "mca loads skills from {} into the model's context"
HOME = "it is mca's own state and configuration ($MCA_HOME)"


def _by_name(rel: str) -> str | None:
    """A single protected name anywhere (the first one wins), then a protected pair."""
    parts = [p.casefold() for p in PurePosixPath(rel).parts]
    for n in sorted({len(names) for names in PROTECTED}):
        for i in range(len(parts) - n + 1):
            reason = PROTECTED.get(tuple(parts[i : i + n]))
            if reason is not None:
                return reason
    return None


def _real_dirs(root: Path | None, skills: Iterable[Path]) -> Iterator[tuple[Path, str]]:
    """(real path, reason) of each protected directory, resolved now (a link may be new)."""
    if root is not None:
        for names, reason in PROTECTED.items():
            yield resolved(root.joinpath(*names)), reason
    for d in skills:
        yield resolved(d), SKILLS_DIR.format(d)


def protected_reason(
    rel: str,
    real: Path,
    home: Path | None,
    root: Path | None = None,
    skills: Iterable[Path] = (),
) -> str | None:
    """Why a write to this workspace path needs approval, or None when it does not. `real` is
    the resolved target; `root` the workspace; `skills` the directories skills load from."""
    reason = _by_name(rel)
    if reason is not None:
        return reason
    for d, why in _real_dirs(root, skills):
        if real == d or real.is_relative_to(d):
            return why
    if home is not None:
        real_home = resolved(home)
        if real == real_home or real.is_relative_to(real_home):
            return HOME
    return None
