"""What the child has instead of mca's five answers (mca/lab/childkit.py writes the calls).

In the grader's child each of the five production functions is a stub that calls `absent`: the
name stays importable (a student's file that imports it still loads, and its exercise is 'not
your code'), the answer is not there to call, copy, reload or read.
"""

from __future__ import annotations

from typing import NoReturn

CALLED: list[str] = []  # the stubs called since the running exercise's call began


class NotYourCode(BaseException):
    """A student function called one of mca's answers (a BaseException: a student's
    `except Exception` does not keep it; `except BaseException` does, and CALLED still tells)."""


def absent(name: str) -> NoReturn:
    """What each of the five answers does in the child."""
    CALLED.append(name)
    raise NotYourCode(f"mca's own {name} is not in the grader's child")
