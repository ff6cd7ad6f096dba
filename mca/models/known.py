"""The models mca knows by name: one record each, the facts every part reads from it.

A record gives a model's context window, its list prices, the wire it is served on best (or
only), and how it is told to reason. Records match by the longest prefix of a model name over
all providers (`mca.models.registry.Registry.model`), so a model's facts do not depend on the
wire that reached it, and a dated snapshot (`gpt-5-2025-08-07`) gets its family's record.

Where the figures come from (TAKEN, SOURCE): windows and prices from pydantic/genai-prices
(`prices/providers/openai.yml`, `anthropic.yml`; MIT), a dataset that checks each price against
the providers' own pricing pages and records the date of each check; where a price has a
long-context tier, the base price is used. Which wire and which way of reasoning each family
takes is from the providers' model pages as pydantic-ai's model profiles and simonw/llm's model
table record them (both checked against the live APIs by their projects). Prices change:
`/cost` calls every figure an estimate, and config.toml's `[prices]` corrects any of them.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "ADAPTIVE",
    "ANTHROPIC_MODELS",
    "BUDGET",
    "CHAT",
    "EFFORT",
    "EFFORTS",
    "EFFORT_BUDGETS",
    "OPENAI_MODELS",
    "OPUS",
    "OPUS_4",
    "RESPONSES",
    "SONNET",
    "SOURCE",
    "TAKEN",
    "ModelInfo",
    "Price",
]

TAKEN = "2026-08-21"
SOURCE = (
    "pydantic/genai-prices at 47df840 (prices/providers/openai.yml, anthropic.yml), checked"
    " by that project against https://openai.com/api/pricing and"
    " https://www.anthropic.com/pricing#api"
)

# How a model is told to reason (ModelInfo.reasoning).
EFFORT = "effort"  # OpenAI: reasoning_effort; max_completion_tokens; never temperature & co
BUDGET = "budget"  # Anthropic: thinking {type: enabled, budget_tokens}
ADAPTIVE = "adaptive"  # Anthropic: thinking {type: adaptive}, output_config.effort; no budget
RESPONSES = "responses"  # the OpenAI Responses API (ModelInfo.wire)
CHAT = "chat"  # OpenAI's Chat Completions, which every compatible server speaks
# What mca lets a model's reasoning take beside the answer, at each effort: OpenAI counts
# reasoning in the answer's bound (max_completion_tokens, max_output_tokens), Anthropic in
# max_tokens (a thinking budget). "" : the model's own default effort.
# OpenAI's reasoning efforts, least first (--reasoning takes these; a server may take fewer)
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
EFFORT_BUDGETS = {
    "": 10_000,
    "minimal": 1_024,
    "low": 2_048,
    "medium": 10_000,
    "high": 16_384,
    "xhigh": 32_768,
}


class Price(NamedTuple):  # a NamedTuple: it is read as mca starts, and cheaper to define
    """USD per million tokens. A cached input token read, and one written to the cache, cost
    what `cached` and `cache_write` say (None: what an input token costs)."""

    input: float
    output: float
    cached: float | None = None
    cache_write: float | None = None

    @property
    def read_rate(self) -> float:
        return self.input if self.cached is None else self.cached

    @property
    def write_rate(self) -> float:
        return self.input if self.cache_write is None else self.cache_write


class ModelInfo(NamedTuple):
    """One model family, matched by name prefix."""

    prefix: str
    window: int | None = None
    price: Price | None = None
    wire: str = ""  # "" : the provider's first wire
    reasoning: str = ""  # "" (does not reason, or is not told how), EFFORT, BUDGET, ADAPTIVE


def _openai(
    prefix: str, window: int | None, price: Price | None, wire: str = RESPONSES
) -> ModelInfo:
    """An OpenAI reasoning model: told its effort, served on the Responses API, which carries
    its reasoning from one tool call to the next (Chat Completions cannot send it back)."""
    return ModelInfo(prefix, window, price, wire, EFFORT)


OPENAI_MODELS = (
    ModelInfo("gpt-4o", 128_000, Price(2.50, 10.00, 1.25)),
    ModelInfo("gpt-4o-mini", 128_000, Price(0.15, 0.60, 0.075)),
    ModelInfo("gpt-4.1", 1_000_000, Price(2.00, 8.00, 0.50)),
    ModelInfo("gpt-4.1-mini", 1_000_000, Price(0.40, 1.60, 0.10)),
    ModelInfo("gpt-4.1-nano", 1_000_000, Price(0.10, 0.40, 0.025)),
    _openai("gpt-5", 400_000, Price(1.25, 10.00, 0.125)),
    _openai("gpt-5-mini", 400_000, Price(0.25, 2.00, 0.025)),
    _openai("gpt-5-nano", 400_000, Price(0.05, 0.40, 0.005)),
    _openai("gpt-5-pro", 400_000, Price(15.00, 120.00)),  # Responses only
    _openai("gpt-5-codex", 400_000, Price(1.25, 10.00, 0.125)),  # Responses only
    ModelInfo("gpt-5-chat", 400_000, Price(1.25, 10.00, 0.125)),  # does not reason
    _openai("gpt-5.1", 400_000, Price(1.25, 10.00, 0.125)),
    _openai("gpt-5.1-codex-mini", 400_000, Price(0.25, 2.00, 0.025)),
    _openai("gpt-5.2", 400_000, Price(1.75, 14.00, 0.175)),
    _openai("gpt-5.2-pro", 400_000, Price(21.00, 168.00)),
    _openai("gpt-5.3", 128_000, Price(1.75, 14.00, 0.175)),
    _openai("gpt-5.3-codex", 400_000, Price(1.75, 14.00, 0.175)),
    _openai("gpt-5.4", 1_050_000, Price(2.50, 15.00, 0.25)),
    _openai("gpt-5.4-mini", 400_000, Price(0.75, 4.50, 0.075)),
    _openai("gpt-5.4-nano", 400_000, Price(0.20, 1.25, 0.02)),
    _openai("gpt-5.4-pro", 1_050_000, Price(30.00, 180.00)),
    _openai("gpt-5.5", 1_000_000, Price(5.00, 30.00, 0.50)),
    _openai("gpt-5.5-pro", 1_000_000, Price(30.00, 180.00)),
    _openai("gpt-5.6", 1_050_000, Price(5.00, 30.00, 0.50, 6.25)),  # gpt-5.6 is -sol
    _openai("gpt-5.6-terra", 1_050_000, Price(2.00, 12.00, 0.20, 2.50)),
    _openai("gpt-5.6-luna", 1_050_000, Price(0.20, 1.20, 0.02, 0.25)),
    _openai("o1", 200_000, Price(15.00, 60.00, 7.50)),
    _openai("o1-pro", 200_000, Price(150.00, 600.00)),
    _openai("o3", 200_000, Price(2.00, 8.00, 0.50)),
    _openai("o3-mini", 200_000, Price(1.10, 4.40, 0.55)),
    _openai("o3-pro", 200_000, Price(20.00, 80.00)),
    _openai("o4-mini", 200_000, Price(1.10, 4.40, 0.275)),
    _openai("codex-mini", 200_000, Price(1.50, 6.00, 0.375)),
    # open models, which OpenAI-compatible servers (the chat wire) serve
    ModelInfo("deepseek", 128_000),
    ModelInfo("llama3", 8_192),
    ModelInfo("llama3.1", 128_000),
    ModelInfo("qwen2.5", 32_768),
)


def _claude(prefix: str, window: int, price: Price | None, reasoning: str = BUDGET) -> ModelInfo:
    return ModelInfo(prefix, window, price, reasoning=reasoning)


SONNET = Price(3.00, 15.00, 0.30, 3.75)
OPUS_4 = Price(15.00, 75.00, 1.50, 18.75)
OPUS = Price(5.00, 25.00, 0.50, 6.25)
ANTHROPIC_MODELS = (
    _claude("claude", 200_000, None, ADAPTIVE),  # a Claude mca does not know yet
    _claude("claude-3-5-haiku", 200_000, Price(0.80, 4.00, 0.08, 1.00), ""),
    _claude("claude-3-7-sonnet", 200_000, SONNET),
    _claude("claude-haiku-4-5", 200_000, Price(1.00, 5.00, 0.10, 1.25)),
    _claude("claude-sonnet-4", 200_000, SONNET),
    _claude("claude-sonnet-4-5", 200_000, SONNET),  # 1M only with a beta header mca does not send
    _claude("claude-sonnet-4-6", 1_000_000, SONNET, ADAPTIVE),
    _claude("claude-sonnet-5", 1_000_000, SONNET, ADAPTIVE),
    _claude("claude-opus-4", 200_000, OPUS_4),
    _claude("claude-opus-4-5", 200_000, OPUS),
    _claude("claude-opus-4-6", 200_000, OPUS, ADAPTIVE),
    _claude("claude-opus-4-7", 1_000_000, OPUS, ADAPTIVE),
    _claude("claude-opus-4-8", 1_000_000, OPUS, ADAPTIVE),
    _claude("claude-opus-5", 1_000_000, OPUS, ADAPTIVE),
    _claude("claude-fable-5", 1_000_000, Price(10.00, 50.00, 1.00, 12.50), ADAPTIVE),
)
