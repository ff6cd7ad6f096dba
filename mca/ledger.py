"""The injection ledger: per turn, every piece of context sent, why, and what it cost.

Rows are built from the very request that was sent (the turn's last model call, the largest
context), so their characters add up to that request exactly. Token figures are estimates by
the session's encoding; when the provider reports prompt tokens the ledger shows both and a
per-model calibration factor (a moving average kept in $MCA_HOME/calibration.json).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mca.fs.careful import atomic_write, private_dir, read_regular
from mca.types import (
    KIND_CHAT,
    Message,
    Reasoning,
    Request,
    ToolSpec,
)

__all__ = [
    "CALIBRATION_BYTES",
    "CALIBRATION_FILE",
    "CALIBRATION_WINDOW",
    "Calibration",
    "LedgerBook",
    "Row",
    "TurnLedger",
    "carried",
    "message_text",
    "request_chars",
    "tools_text",
]

CALIBRATION_FILE = "calibration.json"
CALIBRATION_WINDOW = 20  # samples in the moving average
OUTLIER_LOW, OUTLIER_HIGH = 0.25, 4.0  # provider/estimate ratios outside are never used
CALIBRATION_BYTES = 1024 * 1024


def _entry_ok(entry: Any) -> bool:
    """{"factor": a ratio samples could give, "samples": 1 to CALIBRATION_WINDOW}."""
    if not isinstance(entry, dict):
        return False
    factor, samples = entry.get("factor"), entry.get("samples")
    if isinstance(factor, bool) or not isinstance(factor, int | float):
        return False
    if isinstance(samples, bool) or not isinstance(samples, int):
        return False
    return OUTLIER_LOW <= factor <= OUTLIER_HIGH and 1 <= samples <= CALIBRATION_WINDOW


@dataclass
class Row:
    """One piece of context (or a considered skill that was left out: 0 chars)."""

    label: str
    kind: str
    chars: int
    tokens: int
    reason: str = ""


@dataclass
class TurnLedger:
    """The ledger of one turn."""

    turn: int
    rows: list[Row]
    window: int
    encoding: str
    provider_prompt_tokens: int | None = None
    cached_tokens: int | None = None  # of the prompt, read from the provider's cache
    cache_write_tokens: int | None = None  # of the prompt, written to the provider's cache
    reasoning_tokens: int | None = None  # the turn's answers' reasoning, as reported
    calibration: float | None = None
    calibration_used: bool = True  # False: this turn's sample was an outlier, not folded in
    model_calls: int = 1
    compaction: dict[str, Any] | None = None

    @property
    def chars(self) -> int:
        return sum(r.chars for r in self.rows)

    @property
    def tokens(self) -> int:
        return sum(r.tokens for r in self.rows)

    @property
    def calibrated(self) -> int | None:
        return round(self.tokens * self.calibration) if self.calibration else None

    def stage_tokens(self, kind: str) -> int:
        return sum(r.tokens for r in self.rows if r.kind == kind)

    def to_json(self) -> dict[str, Any]:
        return {
            "turn": self.turn,
            "estimate": f"estimated, {self.encoding}",
            "rows": [asdict(r) for r in self.rows],
            "total_chars": self.chars,
            "total_tokens": self.tokens,
            "window": self.window,
            "window_remaining": self.window - self.tokens,
            "provider_prompt_tokens": self.provider_prompt_tokens,
            "provider_cached_tokens": self.cached_tokens,
            "provider_cache_write_tokens": self.cache_write_tokens,
            "provider_reasoning_tokens": self.reasoning_tokens,
            "calibration_factor": self.calibration,
            "calibrated_tokens": self.calibrated,
            "model_calls": self.model_calls,
            "compaction": self.compaction,
        }


def message_text(m: Message) -> str:
    """The text of a message as the ledger prices it (content plus tool-call arguments)."""
    calls = "".join(c.name + json.dumps(dict(c.arguments)) for c in m.tool_calls)
    return m.content + calls


def carried(msgs: Sequence[Message]) -> list[Reasoning]:
    """The reasoning a request sends back that the provider reads as input: the current
    turn's (after the last sentence), to the model that wrote it. Earlier turns' reasoning is
    sent too, but providers drop it from the context."""
    chats = [i for i, m in enumerate(msgs) if m.role == "user" and m.kind == KIND_CHAT]
    start = chats[-1] + 1 if chats else 0
    return [r for m in msgs[start:] for r in m.reasoning if r.origin]


def tools_text(tools: Sequence[ToolSpec]) -> str:
    """The tool schemas as sent (compact JSON)."""
    return json.dumps(
        [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools],
        separators=(",", ":"),
    )


def request_chars(request: Request) -> int:
    """Characters of everything a request carries, counted the ledger's way."""
    return (
        len(request.system)
        + len(tools_text(request.tools))
        + sum(len(message_text(m)) for m in request.messages)
        + sum(len(r.text) for r in carried(request.messages))
    )


class Calibration:
    """Provider-reported prompt tokens per estimated token, for one model at one base URL (a
    moving average kept in $MCA_HOME/calibration.json). A sample far from the average (a server
    that dropped the tools counts far fewer) is rejected rather than folded in."""

    def __init__(self, home: Path, model: str = "", base_url: str = "") -> None:
        self.path = home / CALIBRATION_FILE
        self.key = f"{model} @ {base_url}" if base_url else model

    def _load(self) -> dict[str, dict[str, Any]]:
        """The entries that are what mca writes (a regular file, read as untrusted data): an
        entry of another shape, or a factor outside the range samples can give, is dropped."""
        try:
            data = json.loads(read_regular(self.path, cap=CALIBRATION_BYTES))
        except (OSError, ValueError, RecursionError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: e for k, e in data.items() if _entry_ok(e)}

    def factor(self, model: str | None = None) -> float | None:
        entry = self._load().get(self.key if model is None else model)
        return float(entry["factor"]) if entry else None

    def update(self, estimated: int, reported: int) -> tuple[float, bool]:
        """Fold one observation in; (the factor, whether this sample was used)."""
        data = self._load()
        entry = data.get(self.key, {"factor": 0.0, "samples": 0})
        n = min(entry["samples"], CALIBRATION_WINDOW - 1)
        ratio = reported / max(estimated, 1)
        old = float(entry["factor"])
        if not OUTLIER_LOW <= ratio <= OUTLIER_HIGH or (n >= 3 and not old / 2 <= ratio <= old * 2):
            return (old or ratio), False
        factor = (old * n + ratio) / (n + 1)
        data[self.key] = {"factor": round(factor, 4), "samples": n + 1}
        with contextlib.suppress(OSError):  # $MCA_HOME unusable: the factor holds for this turn
            private_dir(self.path.parent)
            atomic_write(self.path, json.dumps(data, indent=1).encode(), 0o600)
        return factor, True


@dataclass
class LedgerBook:
    """All turn ledgers of a session."""

    turns: list[TurnLedger] = field(default_factory=list)

    @property
    def last(self) -> TurnLedger | None:
        return self.turns[-1] if self.turns else None
