"""Breaking mca's own lines between words: one wrapping for everything a face prints (notes,
errors, slash commands' output, start-up lines, `mca sandbox check`), so that a terminal never
cuts a word in the middle. Pure text: the width comes from the caller (mca/ui/width.py)."""

from __future__ import annotations

import textwrap

__all__ = ["wrap_words"]


def wrap_words(text: str, columns: int) -> str:
    """Each line wider than `columns` broken between words (a terminal breaks it mid-word),
    its further lines indented two more than it; a word wider than a line is cut. Lines that
    fit are left exactly as they are."""
    out = []
    for line in text.split("\n"):
        if len(line) <= columns:
            out.append(line)
            continue
        indent = " " * min(len(line) - len(line.lstrip(" ")) + 2, columns // 2)
        out += textwrap.wrap(
            line,
            columns,
            subsequent_indent=indent,
            break_on_hyphens=False,
            tabsize=1,
            drop_whitespace=True,
        )
    return "\n".join(out)
