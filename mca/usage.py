"""Token use and time per turn and per session, and what it may cost. Pure data.

Provider-reported counts are used when the provider sent them; otherwise the counts are
estimates from the local tokenizer and say so. Costs are always estimates: list prices per
million tokens from the provider registry's table (mca.models.registry), or from [prices] in
config.toml.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mca.text.counts import plural

if TYPE_CHECKING:  # on the REPL's path to its first prompt: import nothing heavy
    from mca.ledger import TurnLedger
    from mca.models.known import Price
    from mca.tokens import Estimator
    from mca.types import Message, Request, Usage

__all__ = [
    "Totals",
    "TurnUsage",
    "cost_text",
    "price_for",
    "turn_cost",
    "turn_line",
    "turn_usage",
    "usd",
]


def price_for(
    model: str, overrides: Mapping[str, Price], catalog: Mapping[str, Price]
) -> tuple[Price, str] | None:
    """The model's prices (USD per million tokens) and where the figure comes from, or None.
    An exact override wins; otherwise the longest table entry the model name starts with."""
    from mca.models.known import TAKEN

    if model in overrides:
        return overrides[model], "config.toml [prices]"
    table_name = f"built-in table of {TAKEN}"
    for table, source in ((overrides, "config.toml [prices]"), (catalog, table_name)):
        found = [k for k in table if model.startswith(k)]
        if found:
            return table[max(found, key=len)], source
    return None


def usd(price: Price, fresh: int, cached: int, written: int, output: int) -> float:
    """What tokens cost: fresh input, cache reads and cache writes each at their own rate."""
    inputs = fresh * price.input + cached * price.read_rate + written * price.write_rate
    return (inputs + output * price.output) / 1e6


@dataclass(frozen=True)
class TurnUsage:
    """One turn's tokens (provider-reported, or estimated with `label`), calls and time."""

    turn: int
    input: int
    output: int
    calls: int
    seconds: float
    reported: bool
    label: str  # how an estimate was made ('estimated, o200k_base'); '' when reported
    cached: int = 0  # of the input, read from the provider's cache
    cache_write: int = 0  # of the input, written to it
    reasoning: int = 0  # of the output, the model's reasoning

    @property
    def fresh(self) -> int:
        """Input neither read from nor written to the cache."""
        return max(self.input - self.cached - self.cache_write, 0)


def turn_usage(
    turn: int,
    usage: Usage,
    reported: bool,
    requests: Sequence[Request],
    messages: Sequence[Message],
    estimator: Estimator,
    ledger: TurnLedger | None,
    seconds: float,
) -> TurnUsage:
    """The turn's usage: as the provider reported it, or estimated from what was sent."""
    from mca.ledger import message_text

    calls = len(requests)
    if reported:
        return TurnUsage(
            turn,
            usage.prompt_tokens,
            usage.completion_tokens,
            calls,
            seconds,
            True,
            "",
            usage.cached_tokens,
            usage.cache_write_tokens,
            usage.reasoning_tokens,
        )
    counted: dict[int, int] = {}

    def count(m: Message) -> int:
        if id(m) not in counted:
            counted[id(m)] = estimator.count(message_text(m))
        return counted[id(m)]

    fixed = 0
    if ledger is not None and requests:  # system prompt and tool schemas, as the ledger priced
        fixed = ledger.tokens - sum(count(m) for m in requests[-1].messages)
    sent = sum(fixed + sum(count(m) for m in r.messages) for r in requests)
    starts = [i for i, m in enumerate(messages) if m.role == "user" and m.turn == turn]
    since = messages[starts[-1] :] if starts else []
    answered = sum(count(m) for m in since if m.role == "assistant")
    thought = sum(estimator.count(r.text) for m in since for r in m.reasoning)
    return TurnUsage(
        turn, sent, answered + thought, calls, seconds, False, estimator.label, reasoning=thought
    )


@dataclass
class Totals:
    """The session so far."""

    turns: list[TurnUsage] = field(default_factory=list)

    @property
    def input(self) -> int:
        return sum(t.input for t in self.turns)

    @property
    def output(self) -> int:
        return sum(t.output for t in self.turns)

    @property
    def estimated(self) -> bool:
        return any(not t.reported for t in self.turns)

    def sum(self, field: str) -> int:
        """The session's total of one TurnUsage field."""
        return sum(getattr(t, field) for t in self.turns)


def _tokens(n_in: int, n_out: int, estimated: bool) -> str:
    mark = "~" if estimated else ""
    return f"{mark}{n_in:,} in / {mark}{n_out:,} out"


def _parts(t: TurnUsage) -> str:
    """What the input and output were made of, when the provider said: '' otherwise."""
    mark = "" if t.reported else "~"
    parts = [f"{t.cached:,} cached"] if t.cached else []
    parts += [f"{t.cache_write:,} written to cache"] if t.cache_write else []
    parts += [f"{mark}{t.reasoning:,} reasoning"] if t.reasoning else []
    return f" ({', '.join(parts)})" if parts else ""


def turn_line(t: TurnUsage, totals: Totals) -> str:
    """The dim line after a turn."""
    source = "provider-reported" if t.reported else t.label
    calls = plural(t.calls, "model call")
    session = _tokens(totals.input, totals.output, totals.estimated)
    return (
        f"{_tokens(t.input, t.output, not t.reported)}{_parts(t)} tokens ({source}) · {calls} ·"
        f" {t.seconds:.1f} s · session {session}"
    )


def cost_text(
    totals: Totals,
    model: str,
    overrides: Mapping[str, Price],
    catalog: Mapping[str, Price],
    resumed: int = 0,
) -> str:
    """/cost: the session's totals and, where a price is known, an estimated cost. `resumed`:
    the turns a resumed conversation had, run (and counted) by an earlier mca."""
    earlier = (
        f"the conversation's {plural(resumed, 'earlier turn')} ran in the session it was"
        " resumed from, which counted them: not included here"
    )
    if not totals.turns:
        return "no turn in this session yet" + (f"; {earlier}" if resumed else "")
    reported = sum(t.reported for t in totals.turns)
    calls = sum(t.calls for t in totals.turns)
    seconds = sum(t.seconds for t in totals.turns)
    lines = [
        f"{plural(len(totals.turns), 'turn')} · {plural(calls, 'model call')} ·"
        f" {seconds:.1f} s waiting on turns",
        f"tokens: {_tokens(totals.input, totals.output, totals.estimated)}"
        f" ({reported} of {plural(len(totals.turns), 'turn')} provider-reported"
        + (", the rest estimated with the local tokenizer)" if totals.estimated else ")"),
    ]
    lines += _breakdown(totals)
    if resumed:
        lines.append(earlier)
    found = price_for(model, overrides, catalog)
    if model == "mock":
        lines.append("cost: nothing (the offline mock model)")
        return "\n".join(lines)
    if found is None:
        lines.append(
            f"cost: no price known for {model!r} (add it under [prices] in config.toml:"
            f' "{model}" = {{ input = 1.0, output = 2.0 }}, USD per million tokens)'
        )
        return "\n".join(lines)
    price, source = found
    lines.append(_cost_line(totals, price, source))
    return "\n".join(lines)


def _breakdown(totals: Totals) -> list[str]:
    """/cost's lines on the cache and on reasoning, when there is something to say."""
    lines = []
    cached, written = totals.sum("cached"), totals.sum("cache_write")
    if cached or written:
        lines.append(
            f"of the input, {cached:,} tokens were read from the provider's cache and"
            f" {written:,} written to it; {totals.sum('fresh'):,} were neither"
        )
    reasoning = totals.sum("reasoning")
    if reasoning:
        mark = "~" if totals.estimated else ""
        lines.append(
            f"of the output, {mark}{reasoning:,} tokens were the model's reasoning (billed as"
            " output)"
        )
    return lines


def _cost_line(totals: Totals, price: Price, source: str) -> str:
    cached, written = totals.sum("cached"), totals.sum("cache_write")
    cost = usd(price, totals.sum("fresh"), cached, written, totals.output)
    rates = f"${price.input:g} / ${price.output:g} per million tokens in / out"
    if cached:
        rates += f", cache reads ${price.read_rate:g}" + (
            "" if price.cached is not None else " (no cache price known: as input)"
        )
    if written:
        rates += f", cache writes ${price.write_rate:g}"
    return f"cost: ~${cost:.4f} (estimated: {source}, {rates})"


def turn_cost(
    t: TurnUsage, model: str, overrides: Mapping[str, Price], catalog: Mapping[str, Price]
) -> dict[str, object]:
    """-p --json's `cost`: the turn's estimated cost in USD (None when no price is known),
    where the prices came from, and whether the tokens were the provider's or estimated."""
    tokens = "provider-reported" if t.reported else t.label
    if model == "mock":
        return {"usd": 0.0, "prices_from": "the offline mock model (free)", "tokens": tokens}
    found = price_for(model, overrides, catalog)
    if found is None:
        why = f"no price known for {model!r} (add it under [prices] in config.toml)"
        return {"usd": None, "prices_from": None, "tokens": tokens, "why": why}
    price, source = found
    cost = usd(price, t.fresh, t.cached, t.cache_write, t.output)
    return {"usd": round(cost, 6), "prices_from": source, "tokens": tokens}
