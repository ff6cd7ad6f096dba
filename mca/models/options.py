"""What a model client is told: small frozen records built once from the settings at assembly
(mca/assembly/wiring.py), the way httpx gives each part its own `Timeout` and `Limits`. Nothing here
reads the environment or knows the settings' shape."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mca.models.known import ModelInfo
    from mca.types import Model

__all__ = ["MAX_RESPONSE_BYTES", "RETRY_BASE", "Builder", "HttpOptions", "ModelOptions", "Notice"]

Notice = Callable[[str], None]
# Defaults that are the model client's facts (the settings' defaults are these: mca/config/specs.py)
MAX_RESPONSE_BYTES = 8 * 1024 * 1024  # a body, a stream line, an assembled reply
RETRY_BASE = 1.0  # seconds before the first retry (then doubled)
Builder = Callable[["ModelOptions", Notice], "Model"]


@dataclass(frozen=True, kw_only=True)
class HttpOptions:
    """How requests are sent and read: timeouts, retries, how much a server may send."""

    read_timeout: float  # seconds without a byte before a read gives up
    request_timeout: float  # seconds a whole request may take, retries included
    retry_base: float  # the first wait before a retry (then doubled)
    max_response_bytes: int  # a body, a stream line, an assembled reply
    stream: bool = True
    secrets: tuple[str, ...] = field(default=(), repr=False)  # never sent, whatever asks


@dataclass(frozen=True, kw_only=True)
class ModelOptions:
    """The model in use: who serves it, where, with which key, and how it is told to reason."""

    provider: str
    model: str
    build: Builder = field(repr=False, compare=False)  # the provider's client
    http: HttpOptions
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    api_key_var: str = ""  # where the key came from (said, never the key)
    wire: str = ""  # chat, responses, messages ('' for the mock)
    reasoning: str = ""  # the effort asked for ('' : the model's own default)
    thinking: int = 0  # Anthropic extended thinking's budget (0: off)
    max_tokens: int = 0  # the answer's length limit (0: the session's output budget decides)
    info: ModelInfo | None = None  # what the catalog knows of the model
    own_api: bool = False  # the base URL is the provider's own (not a compatible server)
    custom_url: bool = False  # the base URL is no provider's own (a local server, a proxy)
    context_window: int = 0
    context_window_from: str = ""  # where the figure came from ('' : assumed, the default)
    mock_script: Path | None = None  # the scripted mock's transcript
    record: Path | None = None  # --record: where responses are recorded for replay

    @property
    def context_window_known(self) -> bool:
        """The window came from a setting, the catalog or the server (not assumed)."""
        return bool(self.context_window_from)

    def with_(self, **changes: Any) -> ModelOptions:
        """A copy with some fields changed."""
        return replace(self, **changes)
