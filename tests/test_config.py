"""Settings: env wins over config.toml; provider inference; context windows; errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from mca.config.settings import Settings, load_settings
from mca.config.specs import DEFAULT_CONTEXT_WINDOW
from mca.errors import ConfigError


def load(tmp_path: Path, **env: str) -> Settings:
    return load_settings({"MCA_HOME": str(tmp_path), **env}, workspace=tmp_path)


def test_no_key_is_mock(tmp_path: Path) -> None:
    s = load(tmp_path)
    assert s.provider == "mock" and s.mock_reason == "no API key configured"


@pytest.mark.parametrize(
    ("env", "provider", "var"),
    [
        ({"OPENAI_API_KEY": "k" * 20}, "openai", "OPENAI_API_KEY"),
        ({"ANTHROPIC_API_KEY": "k" * 20}, "anthropic", "ANTHROPIC_API_KEY"),
        (
            {"MCA_API_KEY": "k" * 20, "MCA_PROVIDER": "anthropic", "MCA_MODEL": "claude-opus-4"},
            "anthropic",
            "MCA_API_KEY",
        ),
        (
            {"OPENAI_API_KEY": "k" * 20, "ANTHROPIC_API_KEY": "k" * 20, "MCA_MODEL": "claude-x"},
            "anthropic",
            "ANTHROPIC_API_KEY",
        ),
        (
            {
                "MCA_PROVIDER": "openai",
                "MCA_BASE_URL": "http://localhost:11434/v1",
                "MCA_MODEL": "llama3.1",
            },
            "openai",
            "",
        ),
    ],
)
def test_provider_inference(tmp_path: Path, env: dict[str, str], provider: str, var: str) -> None:
    s = load(tmp_path, **env)
    assert (s.provider, s.api_key_var) == (provider, var)


def test_config_toml_and_env_wins(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'provider = "openai"\nmodel = "gpt-4o"\nbase_url = "http://x/v1"\n'
        'api_key = "from-toml-1234"\n'
    )
    s = load(tmp_path)
    assert (s.provider, s.model, s.base_url, s.api_key_var) == (
        "openai",
        "gpt-4o",
        "http://x/v1",
        "config.toml api_key",
    )
    s = load(tmp_path, MCA_MODEL="gpt-4.1-mini", MCA_API_KEY="env-key-12345")
    assert s.model == "gpt-4.1-mini" and s.api_key == "env-key-12345"
    # a provider's own key never goes to a custom base URL by inference
    s = load(tmp_path, MCA_MODEL="gpt-4.1-mini", OPENAI_API_KEY="provider-key-123")
    assert s.api_key == "from-toml-1234" and s.api_key_var == "config.toml api_key"


def test_context_windows(tmp_path: Path) -> None:
    s = load(tmp_path, OPENAI_API_KEY="k" * 20, MCA_MODEL="gpt-4o-mini")
    assert s.context_window == 128_000 and s.context_window_known
    s = load(tmp_path, OPENAI_API_KEY="k" * 20, MCA_MODEL="some-local-model")
    assert s.context_window == DEFAULT_CONTEXT_WINDOW and not s.context_window_known
    s = load(tmp_path, OPENAI_API_KEY="k" * 20, MCA_MODEL="x", MCA_CONTEXT_WINDOW="9000")
    assert s.context_window == 9000 and s.context_window_known


def test_bad_values(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="MCA_PROVIDER: must be one of openai, anthropic"):
        load(tmp_path, MCA_PROVIDER="azure", MCA_API_KEY="k" * 20)
    with pytest.raises(ConfigError, match="MCA_CONTEXT_WINDOW: must be an integer from 1,024"):
        load(tmp_path, MCA_CONTEXT_WINDOW="big")
    with pytest.raises(ConfigError, match="MCA_ENCODING: must be one of o200k_base"):
        load(tmp_path, MCA_ENCODING="p50k")
    (tmp_path / "config.toml").write_text("not = [valid")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load(tmp_path)


def test_key_never_in_repr(tmp_path: Path) -> None:
    s = load(tmp_path, OPENAI_API_KEY="sk-secret-value-123")
    assert "sk-secret-value-123" not in repr(s)


def test_the_encoding_setting_offers_the_bundled_encodings() -> None:
    from mca.config.specs import SPECS
    from mca.tokens import DEFAULT_ENCODING, ENCODINGS

    assert SPECS.encoding.default == DEFAULT_ENCODING
    assert SPECS.encodings == tuple(ENCODINGS)
