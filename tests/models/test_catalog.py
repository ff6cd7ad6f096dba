"""Today's models in the registry's data (one record each, dated and sourced), the settings that
choose a wire and tell a model how hard to think, and what /cost makes of reasoning and of the
cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from mca.assembly.wiring import model_options
from mca.config.settings import Settings, load_settings
from mca.errors import ConfigError
from mca.models import describe_reasoning, known
from mca.models.known import ADAPTIVE, BUDGET, EFFORT, RESPONSES, Price
from mca.models.registry import PROVIDERS
from mca.usage import Totals, TurnUsage, cost_text, turn_line, usd

KEY = "k" * 24


def settings(tmp_path: Path, **env: str) -> Settings:
    base = {"MCA_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}
    return load_settings({**base, **env}, workspace=tmp_path)


def test_the_records_are_dated_and_sourced() -> None:
    assert known.TAKEN == "2026-08-21" and "genai-prices" in known.SOURCE
    prefixes = [m.prefix for s in PROVIDERS for m in s.models]
    assert len(prefixes) == len(set(prefixes))  # one record per model family
    for spec in PROVIDERS:
        for m in spec.models:
            assert m.wire in ("", *spec.wires) and m.reasoning in ("", EFFORT, BUDGET, ADAPTIVE)
            assert m.price is None or (m.price.input > 0 and m.price.output >= m.price.input)


@pytest.mark.parametrize(
    ("name", "window", "wire", "reasoning", "price"),
    [
        ("gpt-5", 400_000, RESPONSES, EFFORT, Price(1.25, 10.0, 0.125)),
        ("gpt-5-2025-08-07", 400_000, RESPONSES, EFFORT, Price(1.25, 10.0, 0.125)),
        ("gpt-5-chat-latest", 400_000, "", "", Price(1.25, 10.0, 0.125)),
        ("o4-mini", 200_000, RESPONSES, EFFORT, Price(1.10, 4.40, 0.275)),
        ("gpt-5.6-terra", 1_050_000, RESPONSES, EFFORT, Price(2.0, 12.0, 0.2, 2.5)),
        ("gpt-4.1-mini", 1_000_000, "", "", Price(0.40, 1.60, 0.10)),
        ("claude-sonnet-4-5", 200_000, "", BUDGET, Price(3.0, 15.0, 0.30, 3.75)),
        ("claude-sonnet-5", 1_000_000, "", ADAPTIVE, Price(3.0, 15.0, 0.30, 3.75)),
        ("claude-opus-4-1", 200_000, "", BUDGET, Price(15.0, 75.0, 1.50, 18.75)),
        ("claude-haiku-4-5", 200_000, "", BUDGET, Price(1.0, 5.0, 0.10, 1.25)),
    ],
)
def test_todays_models(name: str, window: int, wire: str, reasoning: str, price: Price) -> None:
    info = PROVIDERS.model(name)
    assert info is not None and (info.window, info.wire, info.reasoning) == (
        window,
        wire,
        reasoning,
    )
    assert info.price == price and PROVIDERS.window_for(name) == window


def test_todays_defaults(tmp_path: Path) -> None:
    s = load_settings({"MCA_HOME": str(tmp_path), "OPENAI_API_KEY": KEY}, workspace=tmp_path)
    assert (s.provider, s.model, s.wire) == ("openai", "gpt-5.6-terra", "responses")
    s = load_settings({"MCA_HOME": str(tmp_path), "ANTHROPIC_API_KEY": KEY}, workspace=tmp_path)
    assert (s.model, s.wire, s.context_window) == ("claude-sonnet-5", "messages", 1_000_000)


def test_the_wire_a_model_is_spoken_to_on(tmp_path: Path) -> None:
    assert settings(tmp_path, MCA_MODEL="gpt-5").wire == "responses"
    assert settings(tmp_path, MCA_MODEL="gpt-4o").wire == "chat"
    assert settings(tmp_path, MCA_MODEL="gpt-5", MCA_WIRE="chat").wire == "chat"
    assert settings(tmp_path, MCA_MODEL="gpt-4o", MCA_WIRE="responses").wire == "responses"
    local = settings(tmp_path, MCA_PROVIDER="openai", MCA_BASE_URL="http://x/v1", MCA_MODEL="qwen3")
    assert local.wire == "chat"  # what compatible servers speak
    with pytest.raises(ConfigError, match=r"MCA_WIRE: anthropic does not speak 'responses'"):
        settings(tmp_path, MCA_MODEL="claude-sonnet-4-5", MCA_WIRE="responses")
    assert settings(tmp_path, MOCK="1", MCA_WIRE="responses").provider == "mock"


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"MCA_REASONING": "extreme"}, "MCA_REASONING: must be one of none, minimal, low"),
        ({"MCA_THINKING": "500"}, "MCA_THINKING: must be 0 \\(off\\) or an integer from 1,024"),
        ({"MCA_THINKING": "lots"}, "MCA_THINKING: must be an integer"),
        ({"MCA_WIRE": "grpc"}, "MCA_WIRE: must be one of chat, responses, messages"),
    ],
)
def test_bad_reasoning_settings_say_what_is_accepted(
    tmp_path: Path, env: dict[str, str], problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem):
        settings(tmp_path, **env)


def test_the_flags_reach_the_settings(tmp_path: Path) -> None:
    base = {"MCA_HOME": str(tmp_path), "ANTHROPIC_API_KEY": KEY}
    s = load_settings(base, workspace=tmp_path, overrides={"reasoning": "low", "thinking": "2048"})
    assert (s.reasoning, s.thinking) == ("low", 2048)
    with pytest.raises(ConfigError, match="--thinking: must be 0"):
        load_settings(base, workspace=tmp_path, overrides={"thinking": "10"})


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"MCA_MODEL": "gpt-5"}, "reasoning effort the model default"),
        ({"MCA_MODEL": "o3", "MCA_REASONING": "high"}, "reasoning effort high"),
        (
            {"MCA_MODEL": "gpt-4o", "MCA_REASONING": "high"},
            "gpt-4o does not reason (--reasoning high is not sent)",
        ),
        ({"MCA_MODEL": "claude-sonnet-4-5"}, "thinking off (--thinking TOKENS"),
        ({"MCA_MODEL": "claude-sonnet-4-5", "MCA_THINKING": "4096"}, "a budget of 4,096 tokens"),
        ({"MCA_MODEL": "claude-opus-5", "MCA_REASONING": "low"}, "adaptive thinking, effort low"),
    ],
)
def test_model_says_how_the_model_reasons(tmp_path: Path, env: dict[str, str], said: str) -> None:
    assert said in describe_reasoning(model_options(settings(tmp_path, **env)))


# -- what it costs ---------------------------------------------------------------------------------
def test_cache_reads_and_writes_have_their_own_prices() -> None:
    price = Price(3.0, 15.0, 0.30, 3.75)
    # 1M fresh, 1M read, 1M written, 1M out: 3 + 0.30 + 3.75 + 15
    assert usd(price, 1_000_000, 1_000_000, 1_000_000, 1_000_000) == pytest.approx(22.05)
    assert usd(Price(1.0, 2.0), 0, 1_000_000, 1_000_000, 0) == pytest.approx(2.0)  # as input


def test_cost_and_the_turn_line_show_reasoning_and_the_cache() -> None:
    turn = TurnUsage(1, 4_000_000, 1_000_000, 4, 1.0, True, "", 2_000_000, 1_000_000, 600_000)
    totals = Totals([turn])
    line = turn_line(turn, totals)
    assert "(2,000,000 cached, 1,000,000 written to cache, 600,000 reasoning)" in line
    text = cost_text(totals, "claude-sonnet-4-5", {}, PROVIDERS.prices())
    assert "2,000,000 tokens were read from the provider's cache and 1,000,000 written" in text
    assert "600,000 tokens were the model's reasoning (billed as output)" in text
    # 1M fresh at 3, 2M read at 0.30, 1M written at 3.75, 1M out at 15
    assert "cost: ~$22.3500" in text and "cache reads $0.3" in text and "cache writes $3.75" in text
    assert "built-in table of 2026-08-21" in text


def test_config_prices_may_say_the_cache_rates(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[prices]\n"local" = { input = 1.0, output = 2.0, cached_input = 0.1, cache_write = 1.5 }\n'
        '"bad" = { input = 1.0, output = 2.0, cached = 0.1 }\n'
    )
    with pytest.raises(ConfigError, match="cached_input = N, cache_write = N"):
        settings(tmp_path)
    (home / "config.toml").write_text(
        '[prices]\n"local" = { input = 1.0, output = 2.0, cached_input = 0.1, cache_write = 1.5 }\n'
    )
    assert settings(tmp_path).price_table["local"] == Price(1.0, 2.0, 0.1, 1.5)
