"""`mca lab init DIR`: a student's workspace: exercises.py (the five starter functions, with
their contracts and the exercise text) and a short README. Nothing of the production answers.
`mca lab gradescope DIR`: the instructor's Gradescope autograder kit, from the installed
package (setup.sh, run_autograder, and a README saying what never to put in the image)."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

from mca.errors import McaError
from mca.fs.careful import atomic_write, resolved

__all__ = ["GRADESCOPE_KIT", "STUDENT_README", "gradescope_kit", "init_lab"]

STUDENT_README = """\
# mca lab: the five exercises

`exercises.py` holds five first drafts of mca's skill runtime. Each works on small data and
breaks on real data; the comment above each function is the exercise, its docstring the
contract the self-test holds it to.

Run the 14 checks with your functions plugged in (a function you delete keeps the starter's):

    mca selftest --lab exercises.py              # or: MCA_LAB=exercises.py MOCK=1 SELFTEST=1 mca
    mca selftest --lab exercises.py --seed 7     # the same checks on renamed fixtures

The untouched file passes 7 of 14. What each check means, and which exercise turns it green:

| check | exercise | what it asks |
| --- | --- | --- |
| 1 | 1 split | a `---` rule inside the body does not cut the body |
| 2 | 1 split | a frontmatter that is never closed is refused |
| 3 | 2 validate | the pack without a description is skipped, naming the field |
| 4 | 2 validate | a wrong-typed extension field is dropped, the skill kept |
| 5 | 3 scripts | a skill's script is offered as one runnable command line |
| 6 | 3 scripts | not a byte of a script's source enters the context |
| 7 | 4 judge | a path in the sentence matches a skill's `paths` (reason `path ... (10)`) |
| 8 | 4 judge | the trigger `test` does not fire on `latest` or `contest` |
| 9 | 5 gates | of two skills in one domain only the higher-scoring loads |
| 10 | 5 gates | under a small budget a body is left out, saying why |
| 11-14 | - | the runtime as a whole (nothing injected for an unmatched sentence, ...) |

Every failed check prints what it expected, what it saw, and a one-line hint. Each check calls
only its own exercise's function (the rest is mca's), so a bug in one exercise costs that
exercise alone. Your grade runs the default fixtures and seeded variants (`--seed N`) whose
seeds are drawn when the grader runs: special-casing names, paths or words of any seed you can
try does not pass; each exercise is worth 2 points.

Write the functions yourself: one that imports or wraps mca's own answer counts as "not your
code". Your code runs in a separate, sandboxed process with a time limit per check: it cannot
start processes, open network connections, or write outside its own temporary directory.
Checks 5 and 14 need Node.js 18 or newer; without it they are skipped (and carry no points).
"""


GRADESCOPE_KIT = {"setup.sh": 0o755, "run_autograder": 0o755, "README.md": 0o644}


def init_lab(target: Path) -> list[Path]:
    """Write exercises.py and README.md into target (created); refuse to overwrite anything."""
    starter = resources.files("mca.lab").joinpath("naive.py").read_bytes()
    files = {"exercises.py": (starter, 0o644), "README.md": (STUDENT_README.encode(), 0o644)}
    return _write_new(target, files, "not overwriting a student's work")


def gradescope_kit(target: Path) -> list[Path]:
    """Write the Gradescope kit the installed mca ships into target (created); refuse to
    overwrite anything."""
    kit = resources.files("mca").joinpath("data", "gradescope")
    files = {name: (kit.joinpath(name).read_bytes(), mode) for name, mode in GRADESCOPE_KIT.items()}
    return _write_new(target, files, "not overwriting it")


def _write_new(target: Path, files: dict[str, tuple[bytes, int]], why: str) -> list[Path]:
    """Each file into target, none that exists already, a symlink included (dangling or not:
    it would lead the write elsewhere). Written atomically through a handle on `target`, so
    nothing lands outside it."""
    paths = [target / name for name in files]
    existing = [p for p in paths if os.path.lexists(p)]
    if existing:
        raise McaError(f"{existing[0]} exists already; {why}")
    target.mkdir(parents=True, exist_ok=True)
    root = resolved(target)
    for name, (data, mode) in files.items():
        try:
            atomic_write(root / name, data, mode, root=root)
        except OSError as e:
            raise McaError(f"cannot write {target / name}: {e.strerror or e}") from None
    return paths
