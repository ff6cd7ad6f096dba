"""Every flag, variable and config.toml key with a bad value of each kind: one clear line naming
where the value came from, exit status 2 (usage and configuration), and never a traceback."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from mca.cli import main

NUMERIC_VARS = {
    "MCA_CONTEXT_WINDOW": "context_window",
    "MCA_MAX_STEPS": "max_steps",
    "MCA_SKILL_BUDGET": "skill_budget",
    "MCA_READ_TIMEOUT": "read_timeout",
    "MCA_REQUEST_TIMEOUT": "request_timeout",
    "MCA_RETRY_BASE": "retry_base",
    "MCA_MAX_TOKENS": "max_tokens",
    "MCA_MAX_RESPONSE_BYTES": "max_response_bytes",
}
BAD_NUMBERS = ["abc", "-1", "1e400", "nan", "inf", "  ", "9" * 40]
CHOICE_VARS = {"MCA_PROVIDER": "provider", "MCA_ENCODING": "encoding"}
BAD_CHOICES = ["nope", "  ", "OPENAI"]
BAD_URLS = ["localhost:11434/v1", "ftp://host/v1", "http://[::1", "http://", "http://h:99999/v1"]
SWITCHES = ["MOCK", "MCA_DEBUG"]


def run(tmp_path: Path, argv: list[str], env: Mapping[str, str | None]) -> tuple[int, str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    given = {"HOME": str(tmp_path), "MCA_HOME": str(home), "MOCK": "1", **env}
    full = {k: v for k, v in given.items() if v is not None}  # None: the variable is unset
    code = main(["-C", str(ws), *argv], full)
    return code, ""


def one_clear_line(capsys: pytest.CaptureFixture[str], code: int, names: str) -> None:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, (code, err)
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith("mca: error: ") and names in lines[0], err


@pytest.mark.parametrize("var", sorted(NUMERIC_VARS))
@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_numeric_variables(
    var: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if var == "MCA_RETRY_BASE" and value == "-1":
        value = "61"
    code, _ = run(tmp_path, ["-p", "hi"], {var: value})
    one_clear_line(capsys, code, var)


@pytest.mark.parametrize("var", sorted(CHOICE_VARS))
@pytest.mark.parametrize("value", BAD_CHOICES)
def test_choice_variables(
    var: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run(tmp_path, ["-p", "hi"], {var: value, "MOCK": None, "MCA_API_KEY": "k" * 20})
    one_clear_line(capsys, code, var)


@pytest.mark.parametrize("value", [*BAD_URLS, "", " "])
def test_base_url(value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {"MCA_BASE_URL": value, "MCA_PROVIDER": "openai", "MOCK": None}
    code, _ = run(tmp_path, ["-p", "hi"], env)
    one_clear_line(capsys, code, "MCA_BASE_URL")


@pytest.mark.parametrize("var", SWITCHES)
@pytest.mark.parametrize("value", ["yes", "2", "true"])
def test_switches(var: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(tmp_path, ["-p", "hi"], {var: value})
    one_clear_line(capsys, code, var)


@pytest.mark.parametrize(
    ("env", "name"),
    [
        ({"MCA_MODEL": ""}, "MCA_MODEL"),
        ({"MCA_HOME": ""}, "MCA_HOME"),
        ({"MCA_SKILLS_DIRS": ""}, "MCA_SKILLS_DIRS"),
        ({"MCA_MOCK_SCRIPT": ""}, "MCA_MOCK_SCRIPT"),
        ({"MCA_MOCK_SCRIPT": "/no/such/script"}, "MCA_MOCK_SCRIPT"),
        ({"MCA_LAB": "teacher"}, "MCA_LAB"),
        ({"MOCK": None, "MCA_PROVIDER": "openai"}, "OPENAI_API_KEY"),
        ({"MOCK": None, "MCA_PROVIDER": "anthropic"}, "ANTHROPIC_API_KEY"),
        ({"MOCK": None, "MCA_BASE_URL": "http://127.0.0.1:9/v1"}, "MCA_PROVIDER"),
    ],
)
def test_other_variables(
    env: dict[str, str], name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run(tmp_path, ["-p", "hi"], env)
    one_clear_line(capsys, code, name)


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["--max-steps", "-1"], "--max-steps"),
        (["--max-steps", "0"], "--max-steps"),
        (["--max-steps", "100000"], "--max-steps"),
        (["--model", ""], "--model"),
        (["--model", "gpt-4o"], "OPENAI_API_KEY"),
        (["--record", "/no/such/dir/rec.jsonl"], "--record"),
        (["--record", "/"], "--record"),
    ],
)
def test_flags(
    argv: list[str], name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {"MOCK": None} if "--model" in argv else {}
    code, _ = run(tmp_path, [*argv, "-p", "hi"], env)
    one_clear_line(capsys, code, name)


def test_argparse_errors_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["--max-steps", "abc"], ["--no-such-flag"]):
        with pytest.raises(SystemExit) as info:
            run(tmp_path, argv, {})
        assert info.value.code == 2
        assert "Traceback" not in capsys.readouterr().err


CONFIG_BAD = [
    ("max_steps = true", "max_steps"),
    ("max_steps = 0", "max_steps"),
    ("max_steps = 1.5", "max_steps"),
    ('max_steps = "ten"', "max_steps"),
    ("context_window = 1", "context_window"),
    ("read_timeout = nan", "read_timeout"),
    ("read_timeout = inf", "read_timeout"),
    ("read_timeout = 0", "read_timeout"),
    ("request_timeout = -5", "request_timeout"),
    ("skill_budget = [1]", "skill_budget"),
    ('provider = "azure"', "provider"),
    ("provider = 3", "provider"),
    ('base_url = "localhost:1234"', "base_url"),
    ('encoding = ""', "encoding"),
    ("skills_dirs = [1, 2]", "skills_dirs"),
    ("skills_dirs = true", "skills_dirs"),
    ('model = ""', "model"),
    ("max_tokens = 0", "max_tokens"),
    ("not toml = [", "config.toml"),
]


@pytest.mark.parametrize(("line", "key"), CONFIG_BAD)
def test_config_keys(
    line: str, key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f"# my settings\n{line}\n")
    (home / "config.toml").chmod(0o600)
    code, _ = run(tmp_path, ["-p", "hi"], {})
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert "config.toml" in err and key in err
    if key != "config.toml":
        assert "line 2" in err  # the file and the line, not an environment variable
        assert not any(f"MCA_{key.upper()}" in ln for ln in err.splitlines())


def test_unknown_config_keys_and_sections_are_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('modle = "gpt-4o"\n[extras]\nmax_steps = 3\n')
    (home / "config.toml").chmod(0o600)
    code, _ = run(tmp_path, ["-p", "hi"], {})
    err = capsys.readouterr().err
    assert code == 0, err
    assert "line 1 (modle): unknown setting, ignored (did you mean" in err and "'model'" in err
    assert "line 2: section [extras] is ignored" in err


def test_skills_dirs_list_in_config(tmp_path: Path) -> None:
    from mca.config.settings import load_settings

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('skills_dirs = ["/x", "~/y"]\n')
    s = load_settings(
        {"HOME": str(tmp_path), "MCA_HOME": str(home), "MOCK": "1"}, workspace=tmp_path
    )
    assert s.skills_dirs == (Path("/x"), tmp_path / "y")


def test_a_malformed_mock_script_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "s.jsonl"
    script.write_text('{"content": "ok"}\n{not json\n')
    code, _ = run(tmp_path, ["-p", "hi"], {"MCA_MOCK_SCRIPT": str(script)})
    assert code == 0
    code, _ = run(tmp_path, ["-p", "hi"], {"MCA_MOCK_SCRIPT": str(script)})
    capsys.readouterr()
    script.write_text("{not json\n")
    code, _ = run(tmp_path, ["-p", "hi"], {"MCA_MOCK_SCRIPT": str(script)})
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and "line 1" in err, err
