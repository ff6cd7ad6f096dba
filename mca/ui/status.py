"""/status: what this session is using, in one place: the model and where it is sent, the
approval mode and sandbox, the context window and what fills it, the instruction files read,
the skills loaded and skipped."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from mca.text.counts import plural
from mca.text.sanitize import scrub

if TYPE_CHECKING:
    from mca.session.session import Session

MAX_NAMES = 12  # skill names listed per status line; /skills has them all
ASSUMED = "assumed: no setting, catalog entry or server says; MCA_CONTEXT_WINDOW sets it"


def safe_url(url: str, secrets: tuple[str, ...]) -> str:
    """A base URL as it may be shown: no user or password, no query, known keys scrubbed."""
    if not url:
        return "(none: the offline mock)"
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return scrub(urlunsplit((parts.scheme, netloc, parts.path, "", "")), secrets)


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMES])
    return shown + (f", … {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else "")


def context_lines(session: Session) -> list[str]:
    """The window, and the tokens the next request would carry (estimated, and said so)."""
    from mca.ledger import message_text, tools_text
    from mca.tools import tool_specs

    est, s = session.skills.estimator, session.model
    prompt = est.count(session.system_prompt.text) + est.count(tools_text(tool_specs()))
    history = sum(est.count(message_text(m)) for m in session.messages)
    used = prompt + history
    lines = [
        f"context window {s.context_window:,} tokens ({s.context_window_from or ASSUMED})",
        f"in context now ~{used:,} tokens ({used / s.context_window:.1%}; {est.label}: system"
        f" prompt and tool schemas {prompt:,}, {plural(len(session.messages), 'message')}"
        f" {history:,})",
    ]
    last = session.ledger.last
    if last is not None and last.provider_prompt_tokens:
        lines.append(
            f"the provider counted {last.provider_prompt_tokens:,} prompt tokens in turn"
            f" {last.turn}'s last request (mca estimated {last.tokens:,})"
        )
    return lines


def instruction_lines(session: Session) -> list[str]:
    """Each instructions file in the system prompt: its path, its size, its tokens."""
    from mca.context.prompt import project_doc_dirs

    c = session.config
    top, _ = project_doc_dirs(c.workspace, c.user_home)
    est = session.skills.estimator
    docs = session.system_prompt.docs()
    if not docs:
        return ["instruction files: none (AGENTS.md or CLAUDE.md; /init writes a first AGENTS.md)"]
    lines = [f"instruction files ({plural(len(docs), 'file')}, nearest last):"]
    for label, text in docs:
        path = top / label
        try:
            size = plural(os.stat(path).st_size, "byte")
        except OSError:
            size = "not found there now"
        lines.append(f"  {path} · {size} · {est.count(text):,} tokens in the context")
    return lines


def skill_lines(session: Session) -> list[str]:
    """The startup summary, then which skills were loaded and which skipped."""
    from mca.skills.discover import summary_line

    sk = session.skills
    d = sk.discovery
    lines = [summary_line(d, sk.estimator.count(d.catalog.text), sk.estimator.label)]
    for status in ("loaded", "skipped"):
        names = sorted(c.name for c in d.candidates if c.status == status)
        if names:
            lines.append(f"  {status}: {_names(names)}")
    return lines


def status_text(session: Session) -> str:
    """/status, whole."""
    s, c = session.model, session.config
    key = f"key from {s.api_key_var}" if s.api_key_var else "no API key"
    lines = [
        f"model {s.model} via {s.provider} · base URL {safe_url(s.base_url, c.secrets)} · {key}",
        f"approval mode {session.mode} · sandbox {session.sandbox_text()}",
        *session.sandbox_report(),
        f"workspace {c.workspace} · session {session.id} · {plural(session.turns, 'turn')}",
        *context_lines(session),
        *instruction_lines(session),
        *skill_lines(session),
    ]
    return "\n".join(lines)
