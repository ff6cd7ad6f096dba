"""Words, names, paths and sentences a seeded variant coins from its seed, never from a list.

A coined word is two or three syllables put together from onsets, vowels and codas (millions of
them); a name joins coined words and everyday words (mca/data/common-words.txt) in one of
several structures; a path has a varied depth, folders and extension; a sentence puts what a
check looks for among coined filler words, anywhere in it. So nothing a student can read in the
package (a suffix, a folder, a word list, a sentence's shape) is shared by all seeds, and no
table of what seeds 0-99 produced predicts another seed.
"""

from __future__ import annotations

import random
import re

from mca.skills.lexicon import common_words

ONSETS = (
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "bl",
    "br",
    "cl",
    "cr",
    "dr",
    "fl",
    "fr",
    "gl",
    "gr",
    "pl",
    "pr",
    "sk",
    "sl",
    "sn",
    "sp",
    "st",
    "tr",
)
VOWELS = (
    "a",
    "e",
    "i",
    "o",
    "u",
    "a",
    "e",
    "i",
    "o",
    "u",
    "ai",
    "au",
    "ea",
    "ei",
    "oa",
    "ou",
)
CODAS = ("", "", "", "", "n", "r", "l", "s", "m", "k", "x", "nd", "rt", "st", "mp")
EXTENSIONS = ("js", "mjs", "cjs", "ts", "jsx", "tsx", "py", "rb", "go", "rs", "lua", "php")
# The shipped lab's own words: a seeded variant's names share none of them.
SHIPPED = frozenset(
    (
        "calc",
        "conventions",
        "archived",
        "broken",
        "pack",
        "release",
        "notes",
        "testing",
        "handbook",
        "divide",
        "test",
        "tests",
        "latest",
        "contest",
        "bump",
        "version",
        "src",
        "semver",
        "manifest",
    )
)
_WORD = re.compile(r"[a-z]+\Z")


class Coiner:
    """Coins words from one seed; every word it hands out is new to it (no two names meet)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(f"mca-lab-variant:{seed}")
        self.used: set[str] = set(SHIPPED)
        self._common = sorted(
            w
            for w in common_words()
            if _WORD.match(w) and len(w) > 2 and not any(s in w for s in SHIPPED)
        )

    def _syllable(self) -> str:
        r = self.rng
        return r.choice(ONSETS) + r.choice(VOWELS) + r.choice(CODAS)

    def word(self, syllables: tuple[int, int] = (2, 3)) -> str:
        """A coined word nobody has used in this variant."""
        while True:
            w = "".join(self._syllable() for _ in range(self.rng.randint(*syllables)))
            if w not in self.used and not any(s in w for s in SHIPPED):
                self.used.add(w)
                return w

    def part(self) -> str:
        """A word for a name: mostly coined, sometimes an everyday one."""
        if self.rng.random() < 0.3:
            w = self.rng.choice(self._common)
            if w not in self.used:
                self.used.add(w)
                return w
        return self.word()

    def name(self) -> str:
        """A skill's name: one of several structures, none of them shared by every seed."""
        r = self.rng
        shape = r.randrange(5)
        if shape == 0:
            return f"{self.part()}-{self.part()}"
        if shape == 1:
            return f"{self.part()}-{self.part()}-{self.part()}"
        if shape == 2:
            return self.word((3, 4))
        if shape == 3:
            return f"{self.part()}{r.randint(2, 99)}-{self.part()}"
        return f"{self.word((1, 2))}-{self.part()}-{r.choice('vxkz')}{r.randint(1, 9)}"

    def rival(self, name: str) -> str:
        """The name of a rival to `name`: sometimes built on it, most often unrelated."""
        shape = self.rng.randrange(4)
        if shape == 0:
            return f"{name}-{self.part()}"
        if shape == 1:
            return f"{self.part()}-{name}"
        return self.name()

    def path(self) -> tuple[str, str]:
        """A source file and its test file: varied depth, folders and extension."""
        r = self.rng
        ext = r.choice(EXTENSIONS)
        folders = [self.word((1, 2)) for _ in range(r.randrange(3))]
        stem = self.word()
        source = "/".join([*folders, f"{stem}.{ext}"])
        test = "/".join([self.word((1, 2)), f"{stem}.{self.word((1, 1))}.{ext}"])
        return source, test

    def hiders(self, trigger: str) -> tuple[str, str]:
        """Two words that contain the trigger with no word boundary (letters on a side)."""
        before = self.word((1, 1)) + trigger + self.rng.choice(("", self.word((1, 1))))
        after = trigger + self.word((1, 2))
        return (before, after) if self.rng.random() < 0.5 else (after, before)

    def sentence(self, *words: str) -> str:
        """The words in this order, each among zero to two coined fillers."""
        out: list[str] = []
        for w in words:
            out += [self.word((1, 3)) for _ in range(self.rng.randrange(3))]
            out.append(w)
        out += [self.word((1, 3)) for _ in range(self.rng.randrange(3))]
        if len(out) == len(words):
            out.insert(self.rng.randrange(len(out) + 1), self.word())
        return " ".join(out)

    def camel(self) -> str:
        """A function name: coined words in camelCase."""
        head, *rest = (self.word((1, 2)) for _ in range(self.rng.randint(2, 3)))
        return head + "".join(w.title() for w in rest)
