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

from mca.words import plural

if TYPE_CHECKING:  # on the REPL's path to its first prompt: import nothing heavy
    from mca.ledger import TurnLedger
    from mca.models.registry import Registry
    from mca.tokens import Estimator
    from mca.types import Message, Request, Usage


def price_for(
    model: str, overrides: Mapping[str, tuple[float, float]], providers: Registry
) -> tuple[tuple[float, float], str] | None:
    """(input, output) USD per million tokens and where the figure comes from, or None.
    An exact override wins; otherwise the longest table entry the model name starts with."""
    if model in overrides:
        return overrides[model], "config.toml [prices]"
    builtin = providers.prices()
    for table, source in ((overrides, "config.toml [prices]"), (builtin, "built-in table")):
        found = [k for k in table if model.startswith(k)]
        if found:
            return table[max(found, key=len)], source
    return None


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
    cached: int = 0


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
    return TurnUsage(turn, sent, answered, calls, seconds, False, estimator.label)


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


def _tokens(n_in: int, n_out: int, estimated: bool) -> str:
    mark = "~" if estimated else ""
    return f"{mark}{n_in:,} in / {mark}{n_out:,} out"


def turn_line(t: TurnUsage, totals: Totals) -> str:
    """The dim line after a turn."""
    source = "provider-reported" if t.reported else t.label
    calls = plural(t.calls, "model call")
    session = _tokens(totals.input, totals.output, totals.estimated)
    return (
        f"{_tokens(t.input, t.output, not t.reported)} tokens ({source}) · {calls} ·"
        f" {t.seconds:.1f} s · session {session}"
    )


def cost_text(
    totals: Totals,
    model: str,
    overrides: Mapping[str, tuple[float, float]],
    providers: Registry,
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
    cached = sum(t.cached for t in totals.turns)
    if cached:
        lines.append(f"of the input, {cached:,} tokens were read from the provider's cache")
    if resumed:
        lines.append(earlier)
    found = price_for(model, overrides, providers)
    if model == "mock":
        lines.append("cost: nothing (the offline mock model)")
        return "\n".join(lines)
    if found is None:
        lines.append(
            f"cost: no price known for {model!r} (add it under [prices] in config.toml:"
            f' "{model}" = {{ input = 1.0, output = 2.0 }}, USD per million tokens)'
        )
        return "\n".join(lines)
    (p_in, p_out), source = found
    usd = totals.input * p_in / 1e6 + totals.output * p_out / 1e6
    lines.append(
        f"cost: ~${usd:.4f} (estimated: {source}, ${p_in:g} / ${p_out:g} per million tokens"
        f" in / out{'; cached input priced as ordinary input' if cached else ''})"
    )
    return "\n".join(lines)
