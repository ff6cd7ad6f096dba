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


BLOCKS = {"lab-compare": lab_compare}
_BLOCK = re.compile(
    r"(<!-- figures:(?P<name>[\w-]+)[^>]*-->\n```text\n)(?P<body>.*?)(\n```\n<!-- /figures -->)",
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
