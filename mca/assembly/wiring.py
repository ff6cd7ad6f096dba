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
        read_timeout=s.read_timeout,
        request_timeout=s.request_timeout,
        retry_base=s.retry_base,
        max_response_bytes=s.max_response_bytes,
        stream=s.stream,
        secrets=s.secrets,
    )


def model_options(s: Settings) -> ModelOptions:
    """The model the settings chose, and how to reach it."""
    return ModelOptions(
        provider=s.provider,
        model=s.model,
        build=s.spec.build,
        http=http_options(s),
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
        workspace=s.workspace,
        home=s.home,
        user_home=s.user_home,
        budget=s.skill_budget,
        encoding=s.encoding,
        skills_dirs=s.skills_dirs,
        strict=s.strict_skills,
        policy=s.policy,
        window=window.context_window if window.context_window_known else None,
    )


def session_config(s: Settings) -> SessionConfig:
    """Where the session works and keeps its state, and what it never shows."""
    from mca.session.session import SessionConfig

    catalog = s.providers.prices()
    return SessionConfig(
        workspace=s.workspace,
        home=s.home,
        user_home=s.user_home,
        secrets=s.secrets,
        prices=s.price_table,
        catalog=catalog,
    )


def face_config(s: Settings) -> FaceConfig:
    """What the faces (the REPL, -p) need to know before and beside the session."""
    from mca.assembly.sandboxing import banner

    return FaceConfig(
        workspace=s.workspace,
        home=s.home,
        secrets=s.secrets,
        banner=banner(s),
        show_ledger=s.show_ledger,
        verbose=s.verbose,
        debug=s.debug,
        strict_skills=s.strict_skills,
        stream=s.stream,
        mock_reason=s.mock_reason,
        no_color=s.no_color,
        asks_window=asks_window(model_options(s)),
        mode=s.mode,
    )
