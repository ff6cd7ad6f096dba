"""A checkpoint walk has a budget (entries, depth; seconds as a last resort, never asserted on
here) and says what it did not cover, to the model (the command's result), to the person (a
notice) and in /undo's report; /undo and /rewind never touch what a walk did not know. Judged
on disk."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from mca.assembly.assemble import open_session
from mca.config.settings import load_settings
from mca.events import Event, Notice
from mca.session.faces import HeadlessUI
from mca.session.session import Session
from mca.workspace.store import WorkspaceStore
from tests.helpers import FakeModel, Reply
from tests.workspace.world import State, command_turn, state

MAKE = (
    "python3 -c \"import os\nfor i in range(100):\n    os.mkdir('d'); os.chdir('d')\n"
    "    open('f', 'w').write(str(i))\n\" && echo made > top.txt"
)


class Heard(HeadlessUI):
    """A headless face that keeps the notices."""

    def __init__(self) -> None:
        self.notices: list[str] = []

    def event(self, event: Event) -> None:
        if isinstance(event, Notice):
            self.notices.append(event.message)


def _session(ws: Path, ui: HeadlessUI, *replies: Reply) -> Session:
    env = {"MOCK": "1", "MCA_HOME": str(ws.parent / "home"), "MCA_SANDBOX": "off"}
    settings = load_settings(env, workspace=ws)
    return open_session(settings, ui, model=FakeModel(replies), log_to_disk=False)


def _at_or_below(s: State, cut: str) -> State:
    """What the command made at the cut, below it, and the directories above it."""
    above = {"/".join(cut.split("/")[:n]) for n in range(1, cut.count("/") + 1)}
    return {p: v for p, v in s.items() if p in above or p == cut or p.startswith(cut + "/")}


def test_a_tree_deeper_than_the_budget_is_said_and_left_as_it_is(ws: Path) -> None:
    (ws / "keep.txt").write_text("kept\n")
    original = state(ws)
    ui = Heard()
    s = _session(ws, ui, *command_turn(MAKE))
    result = s.run_turn("make a deep tree")
    made = state(ws)
    told = re.search(r"not covered \(deeper than (\d+) levels\): [^\]]*", result.tools[0].result)
    assert told is not None, result.tools[0].result  # the model hears it with the result
    depth = int(told[1])
    assert depth < 100  # the command made 100
    cut = "/".join(["d"] * depth)
    said = f"not covered (deeper than {depth} levels): d/d/d/…/d/d/ ({depth} levels)"
    assert told[0].startswith(said)
    assert any(said in n for n in ui.notices)  # and the person, as a notice
    report = s.undo()
    assert any(said in n for n in report.notes)
    # every path the walk covered is gone; the chain down to the cut, and all below it, is as
    # the command left it (nothing there was known, so nothing there was touched)
    assert state(ws) == {**original, **_at_or_below(made, cut)}
    assert "top.txt" in report.removed and f"{cut[:-1]}f" in report.removed
    assert not report.problems
    s.close()


def test_undo_never_touches_what_a_walk_did_not_know(ws: Path, tmp_path: Path) -> None:
    """The walk after the turn runs out of entries before z/ (a new b/ came first in name
    order): z/'s files are absent from that tree but not gone, so /undo leaves them."""
    from mca.workspace.walk import Budget, Caps

    (ws / ".gitignore").write_text("*.o\n")
    for d in "az":
        (ws / d).mkdir()
        for i in range(5):
            (ws / d / f"f{i}").write_text(f"{d}{i}\n")
    original = state(ws)
    caps = Caps(file=1 << 20, total=1 << 30, walk=Budget(entries=13))
    store = WorkspaceStore(ws, tmp_path / "store", "s1", "20260101T000000", caps)
    store.start()
    store.before_change(1)  # 13 entries: all of it
    command = (
        "mkdir b && touch b/f0 b/f1 b/f2 b/f3 b/f4 b/f5 && echo x >> z/f0 && echo '#' >> .gitignore"
    )
    subprocess.run(["bash", "-c", command], cwd=ws, check=True)
    said = store.end_turn()  # .gitignore changed: a walk, which stops inside b/
    assert any("13 entries" in n and "b/" in n and "z/" in n for n in said), said
    made = state(ws)
    report, _ = store.undo()
    after = state(ws)
    assert after[".gitignore"] == original[".gitignore"]  # known to both trees: put back
    assert after["z/f0"] == made["z/f0"]  # not in the tree after the turn: left as it is
    assert {p for p in after if p.startswith("b/")} == {"b/f4", "b/f5"}  # the ones it knew: gone
    assert any("z/" in n for n in report.notes) and not report.problems
    store.close()
