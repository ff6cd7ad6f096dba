"""`make demo`: a scripted offline session in a copy of the sample workspace.

It drives the real REPL's command and turn handlers with the mock model, printing what a
person would see: the skill summary, a question the mock answers by reading the project, the
divide-by-zero turn with its hits, gates, edit, test run and ledger, then /undo.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from mca.cli.content import lab_content
from mca.cli.start import repl_for
from mca.config.settings import load_settings
from mca.ui.repl import Repl

SCRIPT = (
    "what does this project do?",
    "/ledger",
    "fix the divide-by-zero problem in src/calc.js",
    "/why",
    "/ledger",
    "/undo",
)


class _Out:
    """Not sys.stdout itself, so the REPL prints its summary in order (no async redraw)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


def main() -> int:
    """Run the demo; exit 0 when every step ran."""
    with lab_content() as repo, tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "calc-sample"
        shutil.copytree(repo / "fixtures" / "workspace", ws)
        env = {"MOCK": "1", "MCA_HOME": str(Path(tmp) / "home"), "HOME": tmp}
        settings = load_settings(env, workspace=ws).with_(
            skills_dirs=(repo / "skills",), mode="yolo"
        )
        out = _Out(sys.stdout)
        with create_pipe_input() as pipe:
            repl = repl_for(
                settings,
                input=pipe,
                output=DummyOutput(),
                out=out,
                history=InMemoryHistory(),
            )
            restored = _play(repl, repo, ws)
    return 0 if restored else 1


def _play(repl: Repl, repo: Path, ws: Path) -> bool:
    repl.ui.say(repl.banner())
    repl.ui.say(repl.summary())
    for line in SCRIPT:
        repl.ui.say(f"\nmca> {line}")
        if line.startswith("/"):
            repl.handle_command(line)
        else:
            repl.handle_turn(line)
    original = (repo / "fixtures/workspace/src/calc.js").read_bytes()
    restored = (ws / "src/calc.js").read_bytes() == original
    repl.session.close()
    repl.ui.say(f"\nsrc/calc.js restored to its original bytes: {'yes' if restored else 'NO'}")
    return restored


if __name__ == "__main__":
    raise SystemExit(main())
