"""Every look at data training must never see, logged (issue 48): the holdout split and the
external pool's measure half. A look is a measurement of them; each one appends a line to
fixtures/trigger-evals/LOOKS.tsv (when, the commit measured, what was looked at, by which
command, and the figures seen), so a choice made after a look can be found and judged.
HOLDOUT-LOOKS.md beside it says what was decided after each look, by hand.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.triggers import REPO

LOG = REPO / "fixtures" / "trigger-evals" / "LOOKS.tsv"
HEADER = "when\tcommit\tlooked at\tcommand\tfigures\n"


def _commit() -> str:
    run = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    unlogged = f":(exclude){LOG.relative_to(REPO)}"  # the log's own new lines are no change
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "diff", "--quiet", "--", ".", unlogged], capture_output=True
    )
    return (run.stdout.strip() or "?") + ("+changes" if dirty.returncode else "")


def record(what: str, figures: dict[str, Any], log: Path = LOG) -> None:
    """Append one look: `what` was measured (a split), `figures` what it showed."""
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")
    command = " ".join(["python", *sys.argv]).replace("\t", " ")
    line = "\t".join([when, _commit(), what, command, json.dumps(figures, sort_keys=True)])
    new = not log.is_file()
    with log.open("a", encoding="utf-8") as f:
        f.write((HEADER if new else "") + line + "\n")
