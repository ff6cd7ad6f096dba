"""Where the lab's content lives: its skill packs (skills/) and fixtures (broken packs, the
sample workspace), shipped inside the package as data (mca/data/lab).

Content, not code: the self-test, the lab kit, `mca ledger compare --lab` and the demo all read
it, so it sits below all of them. Each run gets a private copy (`lab_content()`): nothing reads
the installed files in place, and nothing ever reads the current directory's skills/ or
fixtures/. In mca's own source tree, mca/data/lab links to the checkout's skills/ and fixtures/
(found from the package's own location), so the checkout and an installed wheel are the same.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from mca.errors import McaError

__all__ = ["LAB", "lab_content", "lab_files"]

LAB = ("skills", "fixtures/broken-packs", "fixtures/workspace")


def lab_files() -> Traversable:
    """The lab's content as the package ships it."""
    return resources.files("mca").joinpath("data", "lab")


def _copy(src: Traversable, dest: Path) -> None:
    """A Traversable tree to disk (a plain copy when it is a directory already)."""
    if isinstance(src, Path):
        shutil.copytree(src, dest)  # follows the source tree's links: the copy holds files
        return
    dest.mkdir(parents=True)
    for item in src.iterdir():
        if item.is_dir():
            _copy(item, dest / item.name)
        else:
            (dest / item.name).write_bytes(item.read_bytes())


@contextlib.contextmanager
def lab_content() -> Iterator[Path]:
    """A private copy of the lab (DIR/skills, DIR/fixtures/...) for one run, removed after."""
    tmp = Path(tempfile.mkdtemp(prefix="mca-lab-"))
    try:
        dest = tmp / "lab"
        _copy(lab_files(), dest)
        missing = [sub for sub in LAB if not (dest / sub).is_dir()]
        if missing:
            raise McaError(
                f"the lab's {', '.join(missing)} are missing from mca's installation"
                " (reinstall mca)"
            )
        yield dest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
