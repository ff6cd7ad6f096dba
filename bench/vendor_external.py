"""Vendor the external pool: public skills whose own repositories ship skill-creator trigger
evals, MIT or Apache-2.0 only, split by a hash of the repository (bench.authors.half_of).

    python -m bench.vendor_external MIRRORS [owner/repo ...]

MIRRORS holds git mirrors as `owner+repo/repo` (a bare git directory each; this machine's
`fetch` tool made them, from GitHub). For each repository: its licence file at HEAD must be
MIT or Apache-2.0 (the text, not a name: "Permission is hereby granted, free of charge" or
"Apache License ... 2.0"); its trigger evals are `evals/trigger-evals.json` or
`evals/trigger_evals.json` at the root, in skill-creator's format (a list of {query or
prompt, should_trigger}, or {"evals": [...]}); its skill is the one SKILL.md it holds (copies
with one name count as one; several names: refused, the evals do not say which). Each accepted
repository is written to fixtures/external-pool/<half>/<slug>/ as SKILL.md, evals.json (the
labelled queries only) and LICENSE (the repository's, whole), and listed in
fixtures/external-pool/MANIFEST.tsv with its commit, paths, licence, copyright line, half and
why; a refused one is listed in SKIPPED.tsv with the reason. Nothing is chosen by hand or by
a score: the half is the hash's, the rest the rules above.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.authors import half_of
from bench.triggers import REPO

POOL = REPO / "fixtures" / "external-pool"
EVALS = ("evals/trigger-evals.json", "evals/trigger_evals.json")
COLUMNS = ("slug", "repo", "commit", "skill_path", "evals_path", "license", "copyright", "half")
HALF_WHY = {
    "train": "sha256(repo) bucket even: joins dev for training",
    "measure": "sha256(repo) bucket odd: measured only, never trained or tuned on",
}


@dataclass
class Found:
    repo: str
    commit: str
    skill_path: str
    evals_path: str
    license: str
    copyright: str
    skill: str
    evals: list[dict[str, Any]]
    license_text: str


def _git(mirror: Path, *args: str) -> str:
    run = subprocess.run(["git", "--git-dir", str(mirror), *args], capture_output=True)
    return run.stdout.decode("utf-8", "replace") if run.returncode == 0 else ""


def licence_of(text: str) -> str:
    """MIT or Apache-2.0 by the licence's own words; '' for anything else."""
    if "Permission is hereby granted, free of charge" in text:
        return "MIT"
    if "Apache License" in text and "Version 2.0" in text:
        return "Apache-2.0"
    return ""


def labelled(data: object) -> list[dict[str, Any]]:
    """The labelled queries of a trigger-eval file, as skill-creator writes them: a list of
    {query or prompt, should_trigger (or shouldTrigger)}, bare or under "evals", "queries" or
    "cases"; or two lists of sentences, "should_trigger" and "should_not_trigger". Items
    without a text query and a boolean label are dropped."""
    if isinstance(data, dict) and isinstance(data.get("should_not_trigger"), list):
        return [
            {"query": q, "should_trigger": label}
            for key, label in (("should_trigger", True), ("should_not_trigger", False))
            for q in data.get(key, [])
            if isinstance(q, str) and q.strip()
        ]
    items: object = data
    if isinstance(data, dict):
        items = next((data[k] for k in ("evals", "queries", "cases") if k in data), [])
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        query = item.get("query", item.get("prompt"))
        label = item.get("should_trigger", item.get("shouldTrigger"))
        if isinstance(query, str) and query.strip() and isinstance(label, bool):
            out.append({"query": query, "should_trigger": label})
    return out


def _name(text: str) -> str:
    m = re.search(r"^name:\s*['\"]?([^'\"\n]+?)['\"]?\s*$", text, re.M)
    return m.group(1).strip() if m else ""


def inspect(repo: str, mirror: Path) -> Found | str:
    """The repository's skill and evals, or why it is refused."""
    files = _git(mirror, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    commit = _git(mirror, "rev-parse", "HEAD").strip()
    lic = [f for f in files if re.fullmatch(r"(?i)licen[sc]e(\.md|\.txt)?", f)]
    text = _git(mirror, "show", f"HEAD:{lic[0]}") if lic else ""
    kind = licence_of(text)
    if not kind:
        return "no MIT or Apache-2.0 licence file at the root"
    evals = [f for f in EVALS if f in files]
    if not evals:
        return "no evals/trigger-evals.json at the root"
    try:
        items = labelled(json.loads(_git(mirror, "show", f"HEAD:{evals[0]}")))
    except json.JSONDecodeError:
        return "the trigger-eval file is not JSON"
    if not any(i["should_trigger"] for i in items) or all(i["should_trigger"] for i in items):
        return "the trigger evals lack should or should-not queries"
    skills = sorted((f for f in files if f.endswith("SKILL.md")), key=lambda f: (len(f), f))
    texts = {f: _git(mirror, "show", f"HEAD:{f}") for f in skills}
    if not skills or len({_name(t) for t in texts.values()}) != 1:
        return f"{len(skills)} SKILL.md files with {len({_name(t) for t in texts.values()})} names"
    copyright = next(
        (ln.strip() for ln in text.splitlines() if ln.strip().startswith("Copyright")), ""
    )
    path = skills[0]
    return Found(repo, commit, path, evals[0], kind, copyright, texts[path], items, text)


def slug(found: Found) -> str:
    return found.repo.replace("/", "--") + "--" + (_name(found.skill) or "skill")


def write(found: list[Found], skipped: dict[str, str]) -> None:
    rows = []
    for f in sorted(found, key=lambda f: f.repo.lower()):
        half = half_of(f.repo)
        d = POOL / half / slug(f)
        d.mkdir(parents=True, exist_ok=True)
        (d / "SKILL.md").write_text(f.skill, encoding="utf-8")
        (d / "evals.json").write_text(json.dumps(f.evals, indent=1, ensure_ascii=False) + "\n")
        (d / "LICENSE").write_text(f.license_text, encoding="utf-8")
        rows.append(
            [slug(f), f.repo, f.commit, f.skill_path, f.evals_path, f.license, f.copyright, half]
        )
    with (POOL / "MANIFEST.tsv").open("w", encoding="utf-8", newline="") as out:
        w = csv.writer(out, delimiter="\t", lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(rows)
    with (POOL / "SKIPPED.tsv").open("w", encoding="utf-8", newline="") as out:
        w = csv.writer(out, delimiter="\t", lineterminator="\n")
        w.writerow(("repo", "why"))
        w.writerows([repo, skipped[repo]] for repo in sorted(skipped, key=str.lower))


def main() -> None:
    mirrors = Path(sys.argv[1])
    wanted = set(sys.argv[2:])
    found, skipped = [], {}
    for d in sorted(mirrors.iterdir()):
        repo = d.name.replace("+", "/", 1)
        if (wanted and repo not in wanted) or not (d / "repo").is_dir():
            continue
        got = inspect(repo, d / "repo")
        if isinstance(got, str):
            skipped[repo] = got
        else:
            found.append(got)
    write(found, skipped)
    for half in ("train", "measure"):
        n = [f for f in found if half_of(f.repo) == half]
        q = sum(len(f.evals) for f in n)
        print(f"{half}: {len(n)} repositories, {q} queries ({HALF_WHY[half]})")
    print(f"skipped: {len(skipped)} (SKIPPED.tsv)")


if __name__ == "__main__":
    main()
