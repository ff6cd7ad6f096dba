"""Who wrote a skill: its source repository, the unit that cross-validation folds by
(bench.cv_judge) and that splits the external pool (bench.external_pool), so that figures
measured on one author's skills are never trained on that author's skills (issue 48).

An author is a repository, never a skill: skills of one repository share a house style (how
their descriptions say "use when", which words they repeat), and a model that saw a sibling
skill in training has seen that style. The lab's own skills (the packs, and the CJK-described
skills adapted by the project) are one author, this project.
"""

from __future__ import annotations

import hashlib

LAB = "mca (this project)"  # the lab's packs and cjk-skills: written here


def author_of(ref: str) -> str:
    """The source repository of a skill reference as fixtures/trigger-evals/MANIFEST.tsv
    writes it: `corpus:owner__repo/...` is owner/repo; a `packs:` skill is this project's."""
    kind, _, rest = ref.partition(":")
    if kind == "corpus":
        return rest.split("/", 1)[0].replace("__", "/", 1)
    return LAB


def half_of(repo: str) -> str:
    """Which half of the external pool a repository's skills go to, by a fixed hash of its
    owner/name (never by hand, never by score): `train` joins dev for training, `measure`
    stays external and is only ever measured."""
    bucket = int(hashlib.sha256(repo.encode()).hexdigest()[:8], 16) % 2
    return "train" if bucket == 0 else "measure"
