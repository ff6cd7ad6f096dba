"""The sandbox a session's settings ask for, and what mca says about it (the banner, a notice):
the bridge from the settings to the sandbox's Policy, at assembly (the sandbox itself never
sees the settings)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mca import __version__
from mca.config.settings import Settings
from mca.sandbox.landlock import abi_version
from mca.sandbox.rights import Mode, build_policy

if TYPE_CHECKING:  # the banner is on the path to the first prompt: the rest loads with the session
    from mca.sandbox.box import Sandbox

__all__ = [
    "banner",
    "banner_line",
    "engine_warning",
    "put_back_left",
    "sandbox_for",
    "unsandboxed_notice",
]


def put_back_left(settings: Settings) -> list[str]:
    """Before anything reads the workspace: the protected paths an earlier mca could not put
    back after a sandboxed command (it ended during one), put back now and said."""
    from mca.sandbox.rights import state_dir
    from mca.workspace.pending import recover

    ws = settings.workspace.resolve()
    return recover(state_dir(settings.home, ws), ws)


def sandbox_for(settings: Settings) -> Sandbox:
    """The sandbox run_command's commands run in: --sandbox, the network setting, the secret
    list plus config.toml's and where mca's environment moves tools' credentials, the skills
    directories inside the workspace kept read-only. The system is probed once here (a fork);
    an inactive sandbox means commands ask first."""
    from mca.sandbox.box import Sandbox
    from mca.sandbox.probe import Mechanisms, probe

    mode = Mode(settings.sandbox)
    mechanisms = probe() if mode is not Mode.OFF else Mechanisms(0, False, None)
    policy = build_policy(
        mode,
        settings.workspace,
        settings.user_home,
        settings.home,
        network=settings.network,
        deny_read=tuple(str(p) for p in settings.sandbox_deny_read),
        protected_dirs=settings.skills_dirs,
        writable=settings.sandbox_writable,
        write_git=settings.allow_git,
        env=dict(settings.place_vars),
    )
    return Sandbox(policy, mechanisms)


def unsandboxed_notice(settings: Settings, box: Sandbox | None) -> list[str]:
    """Said once when commands will run with the user's full rights, or in a sandbox that
    holds less than everything here (which property, and what mca does instead)."""
    if box is None:
        return []
    if box.active:
        import os

        from mca.sandbox.properties import weaker_line

        line = weaker_line(box.mechanisms, root=os.geteuid() == 0)
        return ([line] if line else []) + engine_warning(box, settings.user_home)
    if settings.sandbox == "off":
        return [f"commands run unsandboxed, with your full rights ({settings.sandbox_source} off)"]
    return [
        f"warning: commands run unsandboxed: {box.mechanisms.describe()}; in auto-edit mode"
        " every command asks first"
    ]


def engine_warning(
    box: Sandbox, user_home: Path, env: Mapping[str, str] | None = None
) -> list[str]:
    """Where nothing hides unix sockets from sandboxed commands (no user namespaces, Landlock
    before ABI 9): a container engine's socket you may use is a way out of the sandbox."""
    if not box.active or box.namespaces or box.mechanisms.landlock_abi >= 9:
        return []
    import os

    from mca.sandbox.sockets import engine_sockets

    found = engine_sockets(os.environ if env is None else env, user_home)
    if not found:
        return []
    return [
        f"warning: sandboxed commands can reach {', '.join(found)} here (no user namespaces to"
        " hide it): through it a command can run a container with this machine's files mounted,"
        " as root; run mca where user namespaces are allowed, or as a user without access to"
        " it (mca sandbox check)"
    ]


def banner_line(s: Settings) -> str:
    """The banner's word on the sandbox (the kernel's Landlock ABI: one system call; the rest
    of the mechanism is probed with the session, and /status shows it)."""
    if s.sandbox == "off":
        return f"commands run unsandboxed, with your full rights ({s.sandbox_source} off)"
    abi = abi_version()
    if not abi:  # user namespaces are tried with the session (a fork): the next notice says
        return "no Landlock here: commands run in user namespaces where allowed (/status)"
    net = "network allowed" if s.network else "no network"
    net += ", .git/ writable" if s.allow_git and s.sandbox == "workspace-write" else ""
    return f"commands run in the sandbox: {s.sandbox}, {net} (Landlock ABI {abi}; /status)"


def banner(s: Settings) -> str:
    """The REPL's first lines: version, workspace, model (or why the mock), sandbox, the keys."""
    lines = [f"mca {__version__} · workspace {s.workspace}"]
    if s.provider == "mock":
        keys = [spec.key_vars[0] for spec in s.providers if spec.key_vars]
        either = " or ".join(filter(None, (", ".join(keys[:-1]), *keys[-1:])))
        lines.append(f"using the offline mock model ({s.mock_reason}); set {either} for a real one")
    else:
        lines.append(f"model {s.model} via {s.provider}")
    lines.append(banner_line(s))
    lines.append("type /help for commands; Esc-Enter for a newline; Ctrl-D to exit")
    return "\n".join(lines)
