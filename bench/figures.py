"""`make figures`: regenerate the exact figures in README.md and docs/*.md from the code and
the commands that produce them.

Each block sits between `<!-- figures:NAME ... -->` and `<!-- /figures -->`, in whichever page
holds it; tests/test_readme.py checks that every block equals what its command prints now.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"


def pages() -> list[Path]:
    """Every page a figure block may live in: the README and docs/*.md."""
    return [README, *sorted(DOCS.glob("*.md"))]


# What the README's size figures count: the loop, the skill runtime a student of the lab reads
# (the mca/skills/ modules on a turn's path) and every Python file of the package.
SKILL_RUNTIME: tuple[str, ...] = ("model", "parse", "validate", "scan", "catalog", "trigger")
SKILL_RUNTIME += ("gates", "inject", "stage")


def _lines(paths: list[Path]) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in paths)


def size() -> str:
    """Lines (as `wc -l` counts them) in the loop, the skill runtime and all of mca/."""
    mca = REPO / "mca"
    half = len(SKILL_RUNTIME) // 2
    rows = (
        (["the agent loop: mca/agent.py"], _lines([mca / "agent.py"])),
        (
            [
                "the skill runtime: mca/skills/{" + ",".join(SKILL_RUNTIME[:half]) + ",",
                "  " + ",".join(SKILL_RUNTIME[half:]) + "}.py",
            ],
            _lines([mca / "skills" / f"{m}.py" for m in SKILL_RUNTIME]),
        ),
        (["all of mca: mca/**/*.py"], _lines(sorted(mca.rglob("*.py")))),
    )
    out = []
    for label, n in rows:
        out += label[:-1]
        out.append(f"{label[-1]:<50}{n:>7,} lines")
    return "\n".join(out)


def lab_compare() -> str:
    from mca.cli.ledger_compare import compare_text, lab_report

    return compare_text(lab_report(REPO))


DEMO_INPUT = "fix the divide-by-zero problem in src/calc.js\n/diff\n/undo\n"
MACHINE_NOTES = ("note: the sandbox holds less here", "warning: sandboxed commands can reach")


@functools.cache
def demo() -> str:
    """The offline demo as `mca` prints it, typed lines after its prompt (input piped in).
    Only what changes from run to run is fixed: the temporary path, the session id, seconds."""
    import os
    import shutil
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "calc"
        shutil.copytree(REPO / "fixtures" / "workspace", ws)
        shutil.copytree(REPO / "skills", ws / "skills")  # inside: shown as relative paths
        env = {"PATH": os.environ["PATH"], "HOME": tmp, "MCA_HOME": f"{tmp}/home", "MOCK": "1"}
        mca = Path(sys.executable).parent / "mca"
        out = subprocess.run(
            [str(mca), "-C", str(ws), "--skills-dir", str(ws / "skills")],
            input=DEMO_INPUT,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        ).stdout
    out = out.replace(str(ws), "/tmp/calc")
    # what the sandbox holds is the machine's: said where it holds less (docs/security.md), left
    # out here, as a machine that has everything shows it
    out = "".join(line for line in out.splitlines(True) if not line.startswith(MACHINE_NOTES))
    out = re.sub(r"undid session \w+ turn", "undid session 3f9a2c turn", out)
    out = re.sub(r"· \d+\.\d s ·", "· 0.1 s ·", out)
    out = re.sub(r"duration_ms(:?) [\d.]+", r"duration_ms\1 1.0", out)  # node --test: live lines
    copy = "$ cp -r fixtures/workspace /tmp/calc && cp -r skills /tmp/calc/skills"
    command = "$ MOCK=1 mca -C /tmp/calc --skills-dir /tmp/calc/skills"
    return f"{copy}\n{command}\n" + out.rstrip("\n")


def session() -> str:
    """The README's session: the demo without the lines `node --test` streamed as it ran (its
    result, folded, follows them)."""
    return "\n".join(line for line in demo().splitlines() if not line.startswith("  │ "))


def caching() -> str:
    from bench.models import caching_text

    return caching_text()


BLOCKS: dict[str, Callable[[], str]] = {
    "size": size,
    "session": session,
    "lab-compare": lab_compare,
    "demo": demo,
    "caching": caching,
}
# Figures that honestly change with the machine: the token estimate of a prompt that holds the
# workspace's temporary path. The test compares everything else exactly.
_TOKENS = re.compile(r"~[\d,]+ in / ~[\d,]+ out")
VOLATILE = {"demo": _TOKENS, "session": _TOKENS}
# Figures that move with every change of the code: within this share of what is true now they
# still hold (`make figures` writes them exact).
NEAR = {"size": 0.10}
_NUMBER = re.compile(r"\d[\d,]*")


def near(shown: str, now: str, share: float) -> bool:
    """The same text, each number within `share` of the number there now."""
    if _NUMBER.sub("N", shown) != _NUMBER.sub("N", now):
        return False
    for was, is_ in zip(_NUMBER.findall(shown), _NUMBER.findall(now), strict=True):
        true = int(is_.replace(",", ""))
        if abs(int(was.replace(",", "")) - true) > share * true:
            return False
    return True


def same(name: str, shown: str, now: str) -> bool:
    """Whether a block still says what its command prints (volatile figures aside)."""
    if name in NEAR:
        return near(shown, now, NEAR[name])
    rx = VOLATILE.get(name)
    if rx is None:
        return shown == now
    return rx.sub("~N in / ~N out", shown) == rx.sub("~N in / ~N out", now)


_BLOCK = re.compile(
    r"(<!-- figures:(?P<name>[\w-]+)[^>]*-->\n```text\n)(?P<body>(?:(?!<!-- figures:).)*?)"
    r"(\n```\n<!-- /figures -->)",
    re.S,
)


def blocks(text: str) -> dict[str, str]:
    """The figure blocks of a page's text, by name."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(text)}


def regenerate(text: str) -> str:
    return _BLOCK.sub(lambda m: m.group(1) + BLOCKS[m["name"]]() + m.group(4), text)


def found() -> dict[str, list[tuple[Path, str]]]:
    """Every figure block of every page, by name: where it is and what it says."""
    out: dict[str, list[tuple[Path, str]]] = {}
    for page in pages():
        for name, body in blocks(page.read_text(encoding="utf-8")).items():
            out.setdefault(name, []).append((page, body))
    return out


def main() -> int:
    for page in pages():
        text = page.read_text(encoding="utf-8")
        if names := blocks(text):
            page.write_text(regenerate(text), encoding="utf-8")
            print(f"{page.relative_to(REPO)}: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
