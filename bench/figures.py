"""`make figures`: regenerate the README's exact figures from the commands that produce them.

Each block sits between `<!-- figures:NAME ... -->` and `<!-- /figures -->`; tests/test_readme.py
checks that every block equals what its command prints now.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"


def lab_compare() -> str:
    from mca.ledger_cli import compare_text, lab_report

    return compare_text(lab_report(REPO))


DEMO_INPUT = "fix the divide-by-zero problem in src/calc.js\n/diff\n/undo\n"


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
    out = re.sub(r"undid session \w+ turn", "undid session 3f9a2c turn", out)
    out = re.sub(r"· \d+\.\d s ·", "· 0.1 s ·", out)
    out = re.sub(r"duration_ms(:?) [\d.]+", r"duration_ms\1 1.0", out)  # node --test: live lines
    copy = "$ cp -r fixtures/workspace /tmp/calc && cp -r skills /tmp/calc/skills"
    command = "$ MOCK=1 mca -C /tmp/calc --skills-dir /tmp/calc/skills"
    return f"{copy}\n{command}\n" + out.rstrip("\n")


def caching() -> str:
    from bench.models import caching_text

    return caching_text()


BLOCKS = {"lab-compare": lab_compare, "demo": demo, "caching": caching}
# Figures that honestly change with the machine: the token estimate of a prompt that holds the
# workspace's temporary path. The README test compares everything else exactly.
VOLATILE = {"demo": re.compile(r"~[\d,]+ in / ~[\d,]+ out")}


def same(name: str, shown: str, now: str) -> bool:
    """Whether a README block still says what its command prints (volatile figures aside)."""
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
    """The figure blocks of a README text, by name."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(text)}


def regenerate(text: str) -> str:
    return _BLOCK.sub(lambda m: m.group(1) + BLOCKS[m["name"]]() + m.group(4), text)


def main() -> int:
    README.write_text(regenerate(README.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"figures written: {', '.join(blocks(README.read_text(encoding='utf-8')))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
