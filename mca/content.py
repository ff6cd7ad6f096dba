"""Where the lab's content lives: its skill packs (skills/) and fixtures (fixtures/).

Content, not code: the self-test, the lab kit, `mca ledger compare --lab` and the demo all read
it, so it sits below all of them (none of them imports another to find it).
"""

from __future__ import annotations

from pathlib import Path


def find_repo(start: Path) -> Path:
    """The directory holding the lab's skills/ and fixtures/ (the source checkout)."""
    here = Path(__file__).resolve().parent.parent
    for d in (here, start, *start.parents):
        if (d / "skills" / "calc-conventions").is_dir() and (d / "fixtures" / "workspace").is_dir():
            return d
    raise FileNotFoundError("cannot find the lab's skills/ and fixtures/ (run from the checkout)")
