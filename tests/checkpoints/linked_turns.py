"""A child for tests/checkpoints/test_hard_links.py: the issue's two turns through a real
session with the sandbox mca finds on this system (under tests/confine.py, what the kernel
left it), then /undo; prints what the session said, as JSON. The test judges the disk.

    python -m tests.checkpoints.linked_turns WORKSPACE MCA_HOME
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mca.assembly.assemble import open_session
from mca.config.settings import load_settings
from mca.session.faces import HeadlessUI
from tests.helpers import FakeModel, call, say

TURN_1 = "ln src/calc.js notes.lnk"
TURN_2 = "echo PAYLOAD >> notes.lnk"


def main(ws: Path, home: Path) -> dict[str, object]:
    env = {"MOCK": "1", "MCA_HOME": str(home), "MCA_SANDBOX": "workspace-write"}
    replies = [call("run_command", command=TURN_1), say("linked")]
    replies += [call("run_command", command=TURN_2), say("appended")]
    settings = load_settings(env, workspace=ws)
    s = open_session(settings, HeadlessUI(), model=FakeModel(replies), log_to_disk=False)
    try:
        box = s.sandbox
        active = box is not None and box.active
        mechanism = box.mechanisms.describe() if box is not None else "none"
        results = [s.run_turn("link it").tools, s.run_turn("append to it").tools]
        listed = [[t.path for t in u.files] for u in s.undoable()]
        report = s.undo()
    finally:
        s.close()
    return {
        "sandboxed": active,
        "mechanism": mechanism,
        "ok": [t.ok for turn in results for t in turn],
        "listed": listed,
        "restored": report.restored,
        "notes": report.notes,
    }


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), Path(sys.argv[2]))))
