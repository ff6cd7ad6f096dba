"""Seeded variants of the lab's fixtures, so a check cannot be passed by special-casing them.

Seed 0 is the lab as it ships. Any other seed renames, deterministically, what the checks look
for: skill names, the calc domain and its trigger word, file paths, the testing trigger and the
words that hide it, the release script's name and its function names, the sentences the checks
stage, and the budget of the budget check. The names are coined from the seed (mca/lab/coined.py),
not picked from a list, so no shape is common to all seeds and none shares a word with the
shipped lab. The production policy passes every check under every seed.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from mca.lab.coined import Coiner


@dataclass(frozen=True)
class Names:
    """What the checks look for, in one variant of the lab."""

    seed: int = 0
    calc: str = "calc-conventions"
    archived: str = "calc-conventions-archived"
    domain: str = "calc"
    op: str = "divide"
    calc_file: str = "src/calc.js"
    test_file: str = "test/calc.test.js"
    broken: str = "broken-pack"
    release: str = "release-notes"
    release_sentence: str = "cut a release"
    script: str = "bump-version.mjs"
    script_functions: tuple[str, str] = ("bumpSemverTriple", "writePackageManifestAtomically")
    trigger: str = "test"
    hiders: tuple[str, str] = ("latest", "contest")
    testing: str = "testing-handbook"
    budget: int = 300
    # the sentences the checks stage
    divide_sentence: str = "fix the divide-by-zero problem"
    path_sentence: str = "please look at src/calc.js"
    trigger_sentence: str = "run the test"
    hider_sentences: tuple[str, str] = ("what about the latest one", "what about the contest one")


def names_for(seed: int) -> Names:
    """The names of seed N (0: the lab as it ships)."""
    if seed == 0:
        return Names()
    coin = Coiner(seed)
    calc = coin.name()
    op, trigger, release = coin.word(), coin.word(), coin.word()
    calc_file, test_file = coin.path()
    hiders = coin.hiders(trigger)
    return Names(
        seed=seed,
        calc=calc,
        archived=coin.rival(calc),
        domain=coin.word(),
        op=op,
        calc_file=calc_file,
        test_file=test_file,
        broken=coin.name(),
        release=coin.name(),
        release_sentence=f"cut a {release}",
        script=f"{coin.name()}.mjs",
        script_functions=(coin.camel(), coin.camel()),
        trigger=trigger,
        hiders=hiders,
        testing=coin.name(),
        budget=coin.rng.randrange(120, 1000),
        divide_sentence=coin.sentence(f"{op}-by-zero"),
        path_sentence=coin.sentence(calc_file),
        trigger_sentence=coin.sentence(trigger),
        hider_sentences=(coin.sentence(hiders[0]), coin.sentence(hiders[1])),
    )


def _substitute(text: str, n: Names) -> str:
    d = Names()
    pairs = [
        (d.archived, n.archived),
        (d.calc, n.calc),
        (d.calc_file, n.calc_file),
        (d.test_file, n.test_file),
        (d.testing, n.testing),
        (d.broken, n.broken),
        (d.release, n.release),
        (d.script, n.script),
        (*d.script_functions[:1], n.script_functions[0]),
        (*d.script_functions[1:], n.script_functions[1]),
    ]
    for old, new in pairs:  # whole names only: broken-pack is not broken-packs
        text = re.sub(rf"(?<![\w-]){re.escape(old)}(?![\w-])", new, text)
    text = re.sub(r"(?m)^domain: calc$", f"domain: {n.domain}", text)
    text = re.sub(r"\bdivide\b", n.op, text)
    text = re.sub(r"\brelease\b", n.release_sentence.split()[-1], text)
    return text


def _testing(text: str, n: Names) -> str:
    w = n.trigger
    return re.sub(r"(?m)^triggers: .*$", f"triggers: [{w}, {w}s, failing {w}, {w} suite]", text)


def materialize(repo: Path, names: Names, dest: Path) -> Path:
    """Write the variant's skills/ and fixtures/broken-packs/ under dest; returns dest."""
    if names.seed == 0:
        return repo
    for sub in ("skills", "fixtures/broken-packs"):
        shutil.copytree(repo / sub, dest / sub)
    d = Names()
    for path in sorted(dest.rglob("*"), key=lambda p: -len(p.parts)):  # deepest first
        if path.is_file():
            text = _substitute(path.read_text(encoding="utf-8"), names)
            if path.parent.name == d.testing and path.name == "SKILL.md":
                text = _testing(text, names)
            path.write_text(text, encoding="utf-8")
        renamed = _substitute(path.name, names)
        if renamed != path.name:
            path.rename(path.with_name(renamed))
    (dest / "fixtures" / "workspace").symlink_to(repo / "fixtures" / "workspace")
    return dest


class Variants:
    """The variants one run needs, each written once (in a private temporary directory) and
    shared by every check and every hand-in of the run; removed at close."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._tmp: Path | None = None
        self._made: dict[int, Path] = {}
        self._lock = threading.Lock()
        self.memo: dict[str, str] = {}  # what every check of the run may share (node's output)

    @property
    def root(self) -> Path:
        """The run's private directory, where the variants are written."""
        with self._lock:
            if self._tmp is None:
                self._tmp = Path(tempfile.mkdtemp(prefix="mca-lab-"))
            return self._tmp

    def path(self, seed: int) -> Path:
        """Where seed N's variant of the lab is (seed 0: the lab itself)."""
        root = self.root
        with self._lock:
            if seed not in self._made:
                dest = root / f"seed-{seed}"
                self._made[seed] = materialize(self.repo, names_for(seed), dest)
                if seed:  # a drawn seed's names: no child may look them up by the folder's name
                    dest.chmod(0o700)
            return self._made[seed]

    def close(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        self._made.clear()

    def __enter__(self) -> Variants:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
