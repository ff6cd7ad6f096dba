"""`#` at the prompt remembers a line in an AGENTS.md (issue 46): the project's with `# text`, the
person's own ($MCA_HOME/AGENTS.md, read in every workspace) with `#~ text`; shown as a diff and
asked first; /undo reverts the project's; a link out of the workspace is refused."""

from __future__ import annotations

import io
import os
from pathlib import Path

from mca.cli.start import repl_for
from mca.config.settings import load_settings
from mca.ui.remember import added


def repl(ws: Path, lines: str) -> str:
    """A REPL on `ws` with the mock, fed these lines (plain, as from a pipe)."""
    values = {"MOCK": "1", "MCA_HOME": os.environ["MCA_HOME"], "HOME": str(ws.parent)}
    out = io.StringIO()
    repl_for(load_settings(values, workspace=ws), out=out, stdin=io.StringIO(lines)).run()
    return out.getvalue()


def test_a_note_goes_under_one_notes_heading_and_nothing_else_moves() -> None:
    assert added(None, "use  pnpm") == b"## Notes\n\n- use pnpm\n"
    assert added(b"# P\nintro", "x") == b"# P\nintro\n\n## Notes\n\n- x\n"
    doc = b"# P\n\n## Notes\n\n- a\n\n## Build\nmake\n"
    assert added(doc, "b") == b"# P\n\n## Notes\n\n- a\n- b\n\n## Build\nmake\n"


def test_hash_adds_to_the_project_agents_md_after_a_yes_and_undo_takes_it_back(ws: Path) -> None:
    (ws / "AGENTS.md").write_text("# Project\n\nRun make test.\n")
    out = repl(ws, "# use pnpm, not npm\ny\n/undo\n")
    assert out.count("+- use pnpm, not npm") == 1  # the diff before the question, once
    assert "--- a/AGENTS.md" in out  # named as the workspace names it
    assert "remembered in AGENTS.md" in out
    assert (ws / "AGENTS.md").read_text() == "# Project\n\nRun make test.\n"  # undone
    out = repl(ws, "# use pnpm, not npm\ny\nhello\n")
    assert (ws / "AGENTS.md").read_text().endswith("## Notes\n\n- use pnpm, not npm\n")


def test_no_leaves_the_file_as_it_was(ws: Path) -> None:
    out = repl(ws, "# a note\nn\n")
    assert "not remembered" in out and not (ws / "AGENTS.md").exists()
    assert "usage: # TEXT" in repl(ws, "#\n")


def test_hash_tilde_writes_the_person_s_own_file_read_in_every_workspace(
    ws: Path, tmp_path: Path
) -> None:
    home = Path(os.environ["MCA_HOME"])
    out = repl(ws, "#~ answer in French\ny\n")
    assert f"remembered in {home / 'AGENTS.md'}" in out
    assert (home / "AGENTS.md").read_text() == "## Notes\n\n- answer in French\n"
    assert (home / "AGENTS.md").stat().st_mode & 0o077 == 0
    other = tmp_path / "other"
    other.mkdir()
    out = repl(other, "hello\n/ledger\n")
    assert "$MCA_HOME/AGENTS.md" in out  # in the next workspace's context, priced
    assert not (other / "AGENTS.md").exists()


def test_a_link_out_of_the_workspace_is_refused_and_its_target_unchanged(
    ws: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("theirs\n")
    (ws / "AGENTS.md").symlink_to(outside)
    out = repl(ws, "# planted\ny\n")
    assert "not remembered" in out
    assert outside.read_text() == "theirs\n"


def test_always_to_an_edit_in_ask_mode_covers_later_edits_not_commands(ws: Path) -> None:
    """Ask mode's "always": this edit and the session's later ones apply without a question;
    commands still ask; choosing ask mode again asks again."""
    (ws / "a.txt").write_text("one two\n")
    values = {"MOCK": "1", "MCA_HOME": os.environ["MCA_HOME"], "HOME": str(ws.parent)}
    settings = load_settings(values, workspace=ws).with_(mode="ask")
    lines = (
        'replace "one" with "1" in a.txt\na\n'
        'replace "two" with "2" in a.txt\n'
        "run `echo hi`\nn\n"
        "/mode ask\n"
        'replace "1" with "one" in a.txt\nn\n'
    )
    out = io.StringIO()
    repl_for(settings, out=out, stdin=io.StringIO(lines)).run()
    said = out.getvalue()
    assert said.count("apply this change to a.txt?") == 2, said
    assert "run it?" in said  # the command still asked
    assert (ws / "a.txt").read_text() == "1 2\n"
