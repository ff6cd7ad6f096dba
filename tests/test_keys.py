"""Keys: which key goes to which host (start-up and /model alike), what a key may look like,
and every form of a key the scrubber looks for (mca/config/apikeys.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mca.assembly.chooser import ModelChooser
from mca.assembly.wiring import model_options
from mca.cli import main
from mca.config.apikeys import check_key, key_problem, secret_forms, secrets_of
from mca.config.settings import Settings, load_settings
from mca.errors import ConfigError, error_line
from mca.models.registry import PROVIDERS
from mca.state.crash import report_bug
from mca.text.sanitize import scrub, scrub_data

SHARED = "mca-shared-key-0123456789"
OPENAI = "sk-openai-own-key-0123456789"
ANTHROPIC = "sk-ant-own-key-0123456789"


def load(tmp_path: Path, **env: str) -> Settings:
    return load_settings({"MCA_HOME": str(tmp_path), **env}, workspace=tmp_path)


@pytest.mark.parametrize(
    ("env", "provider", "key"),
    [
        ({"MCA_API_KEY": SHARED}, "openai", SHARED),  # rule 4: a lone MCA_API_KEY is OpenAI's
        ({"MCA_API_KEY": SHARED, "ANTHROPIC_API_KEY": ANTHROPIC}, "anthropic", ANTHROPIC),
        ({"MCA_API_KEY": SHARED, "MCA_PROVIDER": "anthropic"}, "anthropic", SHARED),
        (
            {"MCA_API_KEY": SHARED, "MCA_MODEL": "claude-x", "ANTHROPIC_API_KEY": ANTHROPIC},
            "anthropic",
            ANTHROPIC,
        ),
        (
            {"MCA_API_KEY": SHARED, "OPENAI_API_KEY": OPENAI, "MCA_MODEL": "gpt-4o"},
            "openai",
            SHARED,
        ),
        ({"OPENAI_API_KEY": OPENAI, "MCA_MODEL": "gpt-4o"}, "openai", OPENAI),
    ],
)
def test_a_key_goes_to_the_host_it_was_configured_for(
    tmp_path: Path, env: dict[str, str], provider: str, key: str
) -> None:
    s = load(tmp_path, **env)
    assert (s.provider, s.api_key) == (provider, key)


def test_a_model_name_never_moves_the_shared_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load(tmp_path, MCA_API_KEY=SHARED, MCA_MODEL="claude-sonnet-4-5")
    said = str(e.value)
    assert "ANTHROPIC_API_KEY" in said and "MCA_PROVIDER=anthropic" in said
    assert SHARED not in said and "https://api.openai.com/v1" in said


def test_config_key_follows_config_base_url_and_provider(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('api_key = "cfg-key-0123456789"\n')
    assert load(tmp_path, MCA_MODEL="gpt-4o").api_key == "cfg-key-0123456789"  # OpenAI's
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        load(tmp_path, MCA_MODEL="claude-x")  # the name implies Anthropic: not the file's key
    s = load(tmp_path, MCA_MODEL="claude-x", ANTHROPIC_API_KEY=ANTHROPIC)
    assert s.api_key == ANTHROPIC
    (tmp_path / "config.toml").write_text(
        'provider = "anthropic"\napi_key = "cfg-key-0123456789"\n'
    )
    assert load(tmp_path, MCA_MODEL="claude-x").api_key == "cfg-key-0123456789"


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        (SHARED + " ", "at its start or end"),
        (" " + SHARED, "at its start or end"),
        (SHARED + "\n", "at its start or end"),
        ("mca-shared key-0123", "a space in it (character 11 of 19)"),
        ("mca-shared\x7fkey-0123", "a control character in it, U+007F"),
        ("mca-shared\x1bkey-0123", "a control character in it, U+001B"),
        ("mca-shared-kéy-0123", "not ASCII"),
        (SHARED, ""),
    ],
)
def test_a_key_is_checked_and_never_shown(key: str, problem: str) -> None:
    found = key_problem(key)
    assert problem in found if problem else found == ""
    if problem:
        with pytest.raises(ConfigError) as e:
            check_key(key, "MCA_API_KEY")
        assert key.strip() not in str(e.value) and "MCA_API_KEY" in str(e.value)


def test_a_bad_key_stops_start_up_naming_its_line(tmp_path: Path) -> None:
    config = 'provider = "openai"\nbase_url = "http://h/v1"\napi_key = "cfg-0123456789 "\n'
    (tmp_path / "config.toml").write_text(config)
    with pytest.raises(ConfigError) as e:
        load(tmp_path)
    assert "config.toml line 3 (api_key)" in str(e.value) and "cfg-0123456789" not in str(e.value)


def test_secret_forms_cover_trimmed_keys_and_their_pieces() -> None:
    forms = secret_forms(["  sk-abcdefghij \n", "sk-first-half sk-second-half", "short"])
    assert forms[0] == "sk-first-half sk-second-half"  # longest first
    assert {"sk-abcdefghij", "sk-first-half", "sk-second-half"} <= set(forms)
    assert "short" not in forms
    assert scrub("echo: sk-second-half!", forms) == "echo: [REDACTED]!"
    data = scrub_data({"sk-abcdefghij": ["x sk-first-half", 3, None]}, forms)
    assert data == {"[REDACTED]": ["x [REDACTED]", 3, None]}


def test_the_edge_knows_the_config_key_even_in_a_broken_file(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('api_key = "cfg-broken-file-key-42"\nnot = [valid\n')
    env = {"MCA_HOME": str(tmp_path), "OPENAI_API_KEY": OPENAI}
    secrets = secrets_of(env, tmp_path)
    assert "cfg-broken-file-key-42" in secrets and OPENAI in secrets
    said = error_line(ConfigError("the server said cfg-broken-file-key-42 is wrong"), secrets)
    assert "cfg-broken-file-key-42" not in said and "[REDACTED]" in said


def test_a_crash_report_never_holds_a_known_key(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('api_key = "cfg-crash-key-0123456"\n')
    secrets = secrets_of({}, tmp_path)
    try:
        raise ValueError("invalid literal for int(): 'cfg-crash-key-0123456'")
    except ValueError as e:
        line = report_bug(e, tmp_path, secrets)
    [crash] = (tmp_path / "logs").glob("crash-*.txt")
    assert "cfg-crash-key-0123456" not in line + crash.read_text()
    assert "[REDACTED]" in crash.read_text()


def test_mode_and_yes_together(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"HOME": str(tmp_path), "MCA_HOME": str(tmp_path / "h"), "MOCK": "1"}
    assert main(["-C", str(ws), "-p", "hi", "--mode", "ask", "--yes"], env) == 2
    assert main(["-C", str(ws), "-p", "hi", "--mode", "yolo", "--yes"], env) == 0
    assert not list((tmp_path / "h").glob("logs/crash-*"))
    s = load_settings(env, workspace=ws, overrides={"yes": True})
    assert s.mode == "yolo"


def test_model_chooser_keeps_the_bindings_it_started_with(tmp_path: Path) -> None:
    env = {"MCA_HOME": str(tmp_path), "MCA_API_KEY": SHARED, "MCA_PROVIDER": "openai"}
    current = model_options(load_settings(env, workspace=tmp_path))
    chooser = ModelChooser(env, tmp_path, {})
    with pytest.raises(ConfigError) as e:
        chooser.to("claude-sonnet-4-5", current)  # MCA_PROVIDER=openai named OpenAI for it
    assert "ANTHROPIC_API_KEY" in str(e.value) and SHARED not in str(e.value)
    listed = "\n".join(chooser.available())
    assert "openai     key in MCA_API_KEY" in listed and "anthropic  no key" in listed
    both = ModelChooser({**env, "ANTHROPIC_API_KEY": ANTHROPIC}, tmp_path, {})
    away = both.to("claude-sonnet-4-5", current)
    assert (away.api_key, away.base_url) == (ANTHROPIC, "https://api.anthropic.com")


def test_open_weight_names_imply_no_provider() -> None:
    assert PROVIDERS.implied("gpt-oss:20b") is None
    assert getattr(PROVIDERS.implied("gpt-4o"), "name", None) == "openai"


def test_json_errors_are_scrubbed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--json's object is scrubbed as a whole (here: a script that says the key)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"content": f"the key is {OPENAI}"}) + "\n")
    env = {"HOME": str(tmp_path), "MCA_HOME": str(tmp_path / "h"), "OPENAI_API_KEY": OPENAI}
    env["MCA_MOCK_SCRIPT"] = str(script)
    assert main(["-C", str(ws), "-p", "hi", "--json"], env) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["answer"] == "the key is [REDACTED]" and OPENAI not in out
