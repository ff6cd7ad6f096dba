"""The command line in-process: -p, --json, exit codes, -C, tools, errors."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from mca.cli import main


def env(**extra: str) -> dict[str, str]:
    base = {"HOME": os.environ.get("HOME", "/root"), "MCA_HOME": os.environ["MCA_HOME"]}
    return {**base, **extra}


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"], env()) == 0
    assert capsys.readouterr().out.startswith("mca ")
    with pytest.raises(SystemExit) as info:  # also via argparse, with other flags
        main(["-C", ".", "--version"], env())
    assert info.value.code == 0


def test_prompt_prints_the_answer_on_stdout(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "a.txt").write_text("hello\n")
    code = main(["-C", str(ws), "-p", "read a.txt"], env(MOCK="1"))
    out, err = capsys.readouterr()
    assert code == 0
    assert "hello" in out and "→ read_file(path=a.txt)" in err and "→" not in out
    assert "offline mock model (MOCK=1)" in err


def test_no_key_means_mock_and_says_so(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(ws), "-p", "hello"], env()) == 0
    assert "no API key configured" in capsys.readouterr().err


def test_json_output(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / "a.txt").write_text("hello\n")
    code = main(
        ["-C", str(ws), "-p", 'replace "hello" with "bye" in a.txt', "--json"], env(MOCK="1")
    )
    obj = json.loads(capsys.readouterr().out)
    assert code == 0
    assert obj["tool_calls"][0]["name"] == "edit_file" and obj["tool_calls"][0]["ok"]
    assert set(obj["usage"]) == {
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "cache_write_tokens",
        "reasoning_tokens",
        "reported_by_provider",
    }
    assert (ws / "a.txt").read_text() == "bye\n"


def test_commands_need_yes_without_a_terminal(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unsandboxed, a command needs a yes: without a terminal, --yes. In the sandbox, the
    default mode runs it without one."""
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    main(["-C", str(ws), "-p", "run `touch made`", "--sandbox", "off"], env(MOCK="1"))
    assert not (ws / "made").exists() and "pass --yes" in capsys.readouterr().err
    main(["-C", str(ws), "-p", "run `touch made`", "--yes", "--sandbox", "off"], env(MOCK="1"))
    assert (ws / "made").exists()
    from mca.sandbox.probe import probe

    if probe().available:
        main(["-C", str(ws), "-p", "run `touch boxed`"], env(MOCK="1"))
        assert (ws / "boxed").exists()


def test_model_error_exits_1(ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "empty.jsonl"
    script.write_text("")
    code = main(["-C", str(ws), "-p", "hi"], env(MCA_MOCK_SCRIPT=str(script)))
    assert code == 1 and "no more responses" in capsys.readouterr().err


@pytest.mark.parametrize("said", ["", "Let me look. "], ids=["silent", "streamed-text"])
def test_step_limit_exits_1_saying_why(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], said: str
) -> None:
    """Also when the replies streamed text before it (today: exit 1, no word of why)."""
    script = tmp_path / "loop.jsonl"
    line = {"content": said, "tool_calls": [{"name": "list_dir", "arguments": {}}]}
    script.write_text((json.dumps(line) + "\n") * 3)
    code = main(["-C", str(ws), "-p", "hi", "--max-steps", "2"], env(MCA_MOCK_SCRIPT=str(script)))
    out, err = capsys.readouterr()
    assert code == 1 and err.count("step limit of 2 model calls") == 1
    assert "stopped" not in out  # stdout keeps the model's own words


def test_bad_workspace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", "/no/such/dir", "-p", "x"], env()) == 2  # a usage error
    assert "not a directory" in capsys.readouterr().err


def test_bad_setting(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(ws), "-p", "x"], env(MCA_SKILL_BUDGET="lots")) == 2
    assert "MCA_SKILL_BUDGET: must be an integer" in capsys.readouterr().err


def test_tools_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--json"], env()) == 0
    names = [t["name"] for t in json.loads(capsys.readouterr().out)]
    assert len(names) == 8 and names[0] == "read_file"
    assert main(["tools"], env()) == 0
    assert "8. update_plan(steps)" in capsys.readouterr().out


def test_agents_md_reaches_the_system_prompt(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mca.context.prompt import build_system_prompt, read_agents_md

    (ws / "AGENTS.md").write_text("Always use tabs.\n")
    agents, problem = read_agents_md(ws)
    prompt = build_system_prompt(ws, agents=agents)
    assert "Always use tabs." in prompt.text and prompt.pieces()[1][0] == "AGENTS.md"
    assert problem == ""


def test_session_logs_are_pruned(tmp_path: Path) -> None:
    from mca.state.log import prune_logs

    for i in range(105):
        (tmp_path / f"2026{i:04d}-x.jsonl").write_text("{}\n")
    assert prune_logs(tmp_path) == 5
    remaining = sorted(p.name for p in tmp_path.iterdir())
    assert len(remaining) == 100 and remaining[0] == "20260005-x.jsonl"


# -- which argv is a subcommand's: argparse decides, nothing moves flags around by hand -----------
def test_a_subcommand_takes_the_global_options_before_or_after_it(tmp_path: Path) -> None:
    from mca.cli.args import parse_command

    before = parse_command(["-C", str(tmp_path), "tools", "--json"])
    after = parse_command(["tools", "-C", str(tmp_path)])
    assert before is not None and before.workspace == str(tmp_path) and before.json
    assert after is not None and after.workspace == str(tmp_path)
    both = parse_command(["--skills-dir", "a", "skills", "list", "--skills-dir", "b"])
    assert both is not None and (both.command, both.action, both.skills_dir) == (
        "skills",
        "list",
        ["a", "b"],
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["--", "tools"],  # after `--` a word is a message
        ["fix the failing test"],
        ["--yes", "tools"],  # the session's flags first: a message, as always
        ["-p", "tools"],
        [],
    ],
)
def test_anything_else_is_the_repl_s(argv: list[str]) -> None:
    from mca.cli.args import parse_command, repl_parser

    assert parse_command(argv) is None
    args = repl_parser().parse_args(argv)
    assert args.message in (None, "tools", "fix the failing test") or args.prompt == "tools"


def test_a_global_option_a_subcommand_does_not_take_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["-C", str(tmp_path), "lab", "init", str(tmp_path / "x")], env()) == 2
    assert "mca lab does not take -C" in capsys.readouterr().err
    assert main(["--strict-skills", "tools"], env()) == 2
    assert "mca tools does not take --strict-skills" in capsys.readouterr().err
    assert main(["-C", str(tmp_path / "nowhere"), "tools"], env()) == 2
    assert "-C: workspace" in capsys.readouterr().err


def test_help_names_values_as_a_person_would(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"], env())
    out = capsys.readouterr().out
    assert "SESSION_" not in out and "--model NAME" in out and "--max-steps N" in out
    with pytest.raises(SystemExit):
        main(["selftest", "--help"], env())
    assert "--check-seconds SECONDS" in capsys.readouterr().out
