"""One row of `make bench`'s report."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Result:
    """One row of the report."""

    name: str
    median: float
    unit: str
    baseline: float | None
    baseline_name: str
    ratio: float | None
    target: str
    passed: bool | None
    note: str = ""
