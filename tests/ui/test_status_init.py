"""What is loaded: /status, /init, and instruction files named by their paths in the ledger."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from mca.assembly.assemble import open_session
from mca.cli.start import repl_for
from mca.config.settings import Settings, load_settings
from mca.context.prompt import build_system_prompt, read_agents_md
from mca.session.session import Session
from mca.ui.status import safe_url
from mca.ui.terminal import ReplUI
from tests.helpers import FakeModel, say, settings_for

KEY = "sk-test-0123456789abcdef"  # tests.helpers.WIRE_KEY: must never be shown


def repl(
    ws: Path, lines: str, settings: Settings | None = None, model: FakeModel | None = None
) -> str:
    """What a REPL on `ws` printed for these input lines (plain lines, as from a pipe)."""
    settings = settings or load_settings(
        {"MOCK": "1", "MCA_HOME": str(ws.parent / "home"), "HOME": str(ws.parent / "me")},
        workspace=ws,
    )

    def factory(s: Settings, ui: ReplUI) -> Session:
        return open_session(s, ui, model=model)

    out = io.StringIO()
    repl_for(
        settings, out=out, stdin=io.StringIO(lines), opener=lambda ui: factory(settings, ui)
    ).run()
    return out.getvalue()


def repo(tmp_path: Path) -> Path:
    """A repository with a CLAUDE.md at its top and an AGENTS.md in pkg/, the workspace."""
    top = tmp_path / "repo"
    (top / ".git").mkdir(parents=True)
    (top / "CLAUDE.md").write_text("Use tabs.\n")
    ws = top / "pkg"
    ws.mkdir()
    (ws / "AGENTS.md").write_text("Run make test.\n")
    return ws


def test_the_ledger_names_each_instruction_file_by_its_path(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    agents, problem = read_agents_md(ws)
    prompt = build_system_prompt(ws, "catalog text", agents)
    assert problem == "" and [p[0] for p in prompt.docs()] == ["CLAUDE.md", "pkg/AGENTS.md"]
    labels = [label for label, _ in prompt.exact_pieces()]
    assert labels == [
        "system base prompt",
        "CLAUDE.md",
        "pkg/AGENTS.md",
        "skill catalog (stage one)",
    ]
    assert "".join(t for _, t in prompt.exact_pieces()) == prompt.text
    assert prompt.text == "\n\n".join([prompt.base, agents, "catalog text"])  # as sent before
    assert "Use tabs." in prompt.docs()[0][1] and "make test" in prompt.docs()[1][1]


@pytest.mark.slow
def test_status_shows_what_is_loaded(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    out = repl(ws, "hello\n/status\n")
    status = out[out.index("mca> /status") :]
    assert "model mock via mock" in status and "approval mode auto-edit" in status
    assert "sandbox " in status and "1 turn" in status
    assert "context window 128,000 tokens" in status
    assert "in context now ~" in status and "estimated, o200k_base" in status
    top = ws.parent.resolve()
    assert f"{top / 'CLAUDE.md'} · 10 bytes" in status
    assert f"{top / 'pkg' / 'AGENTS.md'} · 15 bytes" in status
    assert "skills: 0 loaded, 0 skipped" in status


@pytest.mark.slow
def test_status_on_a_real_wire_never_shows_the_key(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = settings_for("openai", ws, server="http://127.0.0.1:9")
    out = repl(ws, "/status\n", settings, FakeModel([]))
    assert "base URL http://127.0.0.1:9/v1 · key from MCA_API_KEY" in out and KEY not in out
    assert "instruction files: none" in out
    assert (
        safe_url(f"https://me:{KEY}@example.com/v1?key={KEY}", (KEY,)) == "https://example.com/v1"
    )


@pytest.mark.slow
def test_init_writes_the_template_without_a_model(ws: Path) -> None:
    (ws / "Makefile").write_text("test:\n\tpytest\n")
    (ws / "CLAUDE.md").write_text("old notes\n")
    out = repl(ws, "/init\n/status\n")
    assert "CLAUDE.md here is no longer read" in out
    text = (ws / "AGENTS.md").read_text()
    assert text.startswith("# AGENTS.md") and "- `make test`" in text
    assert "wrote AGENTS.md" in out and "from mca's template" in out and "/undo reverts it" in out
    assert f"{ws.resolve() / 'AGENTS.md'} · {len(text.encode())} bytes" in out  # read at once


def test_init_asks_before_overwriting_and_undo_puts_it_back(ws: Path) -> None:
    (ws / "AGENTS.md").write_text("mine\n")
    out = repl(ws, "/init\nn\n")
    assert "AGENTS.md exists: overwrite it (/undo puts it back)? [y]es / [N]o:" in out
    assert "left as it is" in out
    assert (ws / "AGENTS.md").read_text() == "mine\n"
    out = repl(ws, "/init\ny\n/undo\n")
    assert "wrote AGENTS.md" in out and (ws / "AGENTS.md").read_text() == "mine\n"


def test_init_has_the_model_draft_it(ws: Path, tmp_path: Path) -> None:
    (ws / "README.md").write_text(f"# calc\nA calculator. token {KEY}\n")
    settings = settings_for("openai", tmp_path, server="http://127.0.0.1:9").with_(workspace=ws)
    model = FakeModel([say("```markdown\n# AGENTS.md\n\nA calculator. Test with `npm test`.\n```")])
    out = repl(ws, "/init\n", settings, model)
    assert (ws / "AGENTS.md").read_text() == "# AGENTS.md\n\nA calculator. Test with `npm test`.\n"
    assert "drafted by gpt-4o" in out
    request = model.requests[0]
    assert request.tools == () and len(request.messages) == 1
    assert (
        "README.md" in request.messages[0].content
        and "A calculator." in request.messages[0].content
    )
    assert KEY not in request.messages[0].content
