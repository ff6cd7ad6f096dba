"""Small things a daily user noticed (issue 25): each test failed before its fix."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from mca.assembly.chooser import ModelChooser
from mca.cli import main
from mca.cli.start import repl_for
from mca.config.settings import load_settings
from mca.ledger import Calibration
from mca.text.counts import plural


def repl(ws: Path, lines: str, **env: str) -> str:
    """What a REPL on `ws` with the mock printed for these input lines (plain, as from a pipe)."""
    values = {"MOCK": "1", "MCA_HOME": os.environ["MCA_HOME"], "HOME": str(ws.parent), **env}
    settings = load_settings(values, workspace=ws)
    chooser = ModelChooser(values, ws, {})
    out = io.StringIO()
    repl_for(settings, out=out, stdin=io.StringIO(lines), chooser=chooser).run()
    return out.getvalue()


def test_compact_reports_once(ws: Path) -> None:
    out = repl(ws, "".join(f"list the files {i}\n" for i in range(4)) + "/compact\n")
    said = out[out.index("mca> /compact") :]
    assert said.count("compacted") == 1 and "messages summarised" in said


def test_cost_after_resume_counts_the_conversation(ws: Path) -> None:
    repl(ws, "hello\n")
    out = repl(ws, "/resume last\n/cost\nhello again\n/cost\n")
    first, second = out.split("mca> /cost")[1:]
    assert "no turn yet" not in first
    assert "1 earlier turn ran in the session it was resumed from" in first
    assert second.startswith("\n1 turn · 1 model call ·") and "1 earlier turn" in second


def test_counts_are_said_with_plurals(ws: Path) -> None:
    (ws / "a.txt").write_text("one line\n")
    out = repl(ws, "hello\n/cost\n/ledger\nread a.txt\n")
    assert "1 turn · 1 model call ·" in out and "(0 of 1 turn provider-reported" in out
    assert "a.txt: 1 line total" in out and "1 model call, last one shown" in out
    assert "(s)" not in out
    assert [plural(n, "turn") for n in (0, 1, 2)] == ["0 turns", "1 turn", "2 turns"]


def test_model_errors_name_the_command_not_the_flag(ws: Path) -> None:
    key = {"OPENAI_API_KEY": "sk-test-0123456789abcdef", "MOCK": "0"}
    out = repl(ws, "/model claude-sonnet-4-5\n", **key)
    error = next(line for line in out.splitlines() if line.startswith("error:"))
    assert error.startswith("error: /model claude-sonnet-4-5: anthropic model")
    assert "--model" not in error and "ANTHROPIC_API_KEY" in error


def test_scripted_usage_leaves_the_mock_s_calibration_alone(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = Path(os.environ["MCA_HOME"])
    script = tmp_path / "s.jsonl"
    made_up = {"content": "ok", "usage": {"prompt_tokens": 1500, "completion_tokens": 1}}
    script.write_text(json.dumps(made_up) + "\n")
    env = {"HOME": str(tmp_path), "MCA_HOME": str(home), "MCA_MOCK_SCRIPT": str(script)}
    assert main(["-C", str(ws), "-p", "hi", "--ledger"], env) == 0
    assert "provider reported 1,500 prompt tokens" in capsys.readouterr().err
    assert Calibration(home).factor("mock") is None  # the mock's own estimate stays as it was
    assert Calibration(home, "mock", f"script {script}").factor() is not None
