"""Settings -> the small frozen config each part takes, built once at assembly.

The settings (mca/config/settings.py) know every source and every check; no part below the assembly
reads them. Each part gets its own record instead, the way httpx gives each piece its own
`Timeout` and `Limits`: the model client its ModelOptions (and HttpOptions), the skill runtime
its SkillsConfig, the session its SessionConfig, the faces their FaceConfig, the sandbox its
Policy (mca/assembly/sandboxing.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mca.config.settings import Settings
from mca.models import asks_window
from mca.models.options import HttpOptions, ModelOptions
from mca.ui.face import FaceConfig

if TYPE_CHECKING:  # the session and the skills load when a session is built, after the prompt
    from mca.session.session import SessionConfig
    from mca.skills.runtime import SkillsConfig

__all__ = [
    "face_config",
    "http_options",
    "model_options",
    "session_config",
    "skills_config",
]


def http_options(s: Settings) -> HttpOptions:
    """How the model client sends and reads."""
    return HttpOptions(
        s.read_timeout, s.request_timeout, s.retry_base, s.max_response_bytes, s.stream, s.secrets
    )


def model_options(s: Settings) -> ModelOptions:
    """The model the settings chose, and how to reach it."""
    return ModelOptions(
        s.provider,
        s.model,
        s.spec.build,
        http_options(s),
        base_url=s.base_url,
        api_key=s.api_key,
        api_key_var=s.api_key_var,
        wire=s.wire,
        reasoning=s.reasoning,
        thinking=s.thinking,
        max_tokens=s.max_tokens,
        info=s.model_info,
        own_api=s.own_api,
        custom_url=s.base_url not in s.providers.base_urls(),
        context_window=s.context_window,
        context_window_from=s.context_window_from,
        mock_script=s.mock_script,
        record=s.record,
    )


def skills_config(s: Settings, model: ModelOptions | None = None) -> SkillsConfig:
    """Where skills load from and how they are judged; `model`: the window a server gave."""
    from mca.skills.runtime import SkillsConfig

    window = model or model_options(s)
    return SkillsConfig(
        s.workspace,
        s.home,
        s.user_home,
        s.skill_budget,
        s.encoding,
        s.skills_dirs,
        s.strict_skills,
        s.policy,
        window.context_window if window.context_window_known else None,
    )


def session_config(s: Settings) -> SessionConfig:
    """Where the session works and keeps its state, and what it never shows."""
    from mca.session.session import SessionConfig

    catalog = s.providers.prices()
    return SessionConfig(s.workspace, s.home, s.user_home, s.secrets, s.price_table, catalog)


def face_config(s: Settings) -> FaceConfig:
    """What the faces (the REPL, -p) need to know before and beside the session."""
    from mca.assembly.sandboxing import banner

    return FaceConfig(
        s.workspace,
        s.home,
        s.secrets,
        banner=banner(s),
        show_ledger=s.show_ledger,
        verbose=s.verbose,
        debug=s.debug,
        strict_skills=s.strict_skills,
        stream=s.stream,
        mock_reason=s.mock_reason,
        no_color=s.no_color,
        asks_window=asks_window(model_options(s)),
    )
