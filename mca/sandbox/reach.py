"""What a sandboxed command could reach past the fixed walls, decided again before each command:
the repositories inside the workspace (each kept as the workspace's own `.git` is: read-only
with namespaces, recorded and put back without) and the places outside it where Unix sockets
live (hidden with namespaces); looked at again after it, to name what it left that makes git
run a program.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mca.sandbox import sockets
from mca.sandbox.nested import Before, Repositories
from mca.sandbox.rights import Grant, Policy
from mca.workspace import guard
from mca.workspace.pending import Pending

__all__ = ["Reach", "Seen"]


@dataclass
class Seen:
    """One command's view, before it runs; `reports` grows after it ran."""

    before: Before | None = None  # the workspace's repositories (a command that writes it)
    kept: tuple[Path, ...] = ()  # git directories and `.git` files inside it, kept
    hidden: sockets.Hiding = field(default_factory=sockets.Hiding)
    reports: list[str] = field(default_factory=list)  # said beside the command's output


@dataclass
class Reach:
    """One session's: what the last walks found, what was said once."""

    policy: Policy
    repos: Repositories | None = None
    said: set[str] = field(default_factory=set)
    last: guard.Record | None = None  # the last record with contents (unchanged files reused)
    listing: sockets.Listing = field(default_factory=sockets.Listing)  # folders with sockets
    deny: list[Path] | None = None
    pending: Pending | None = None  # the record on disk while a command runs

    def look(
        self, grant: Grant, env: Mapping[str, str], *, tmp: Path, covered: list[str] | None
    ) -> Seen:
        """Before a command: the repositories (when it may write the workspace) and, with
        namespaces (`covered`: where the plan binds something over, as the private /tmp over
        /tmp), the sockets."""
        seen = Seen()
        if self.policy.writes_workspace:
            if self.repos is None:
                self.repos = Repositories(self.policy.workspace)
            seen.before, notes = self.repos.before()
            seen.reports += notes
            if not grant.write_protected:
                dirs, pointers = self.repos.protect(seen.before.found, self._protected())
                seen.kept = (*dirs, *pointers)
        if covered is not None:
            allowed = [self.policy.workspace, Path(os.path.realpath(tmp))]
            home = self.policy.user_home
            if self.deny is None:  # the secrets that exist, as real paths (once a session)
                deny = [d for d in self.policy.deny_read if os.path.lexists(d)]
                self.deny = [Path(os.path.realpath(d)) for d in deny]
            deny = self.deny
            seen.hidden = sockets.hiding(
                self.policy.sockets,
                env,
                home,
                allowed,
                covered,
                deny,
                self.listing,
                self.policy.shared_tmp,
            )
            new = [n for n in seen.hidden.left if n not in self.said]
            self.said.update(new)
            seen.reports += [f"the sandbox could not hide the unix sockets in {n}" for n in new]
        return seen

    def _protected(self) -> list[Path]:
        out = list(self.policy.protected)
        out += [Path(os.path.realpath(p)) for p in self.policy.protected]
        return out

    def record(
        self,
        protected: tuple[Path, ...],
        seen: Seen,
        *,
        contents: bool,
        mirror: Path | None,
        command: str = "",
    ) -> guard.Record:
        """The protected paths (and, with no mount to keep them, the repositories inside the
        workspace) as they are before the command, kept on disk until it is over (pending.py:
        if mca ends meanwhile, the next mca in the workspace puts them back)."""
        paths = (*protected, *seen.kept) if contents else protected
        base = self.policy.workspace
        rec = guard.record(paths, contents=contents, mirror=mirror, base=base, previous=self.last)
        if rec.entries:
            self.last = rec
        if self.policy.state is not None:
            if self.pending is None:
                self.pending = Pending(self.policy.state, self.policy.workspace)
            try:
                self.pending.save(rec, command)
            except OSError as e:  # the command runs; what is lost if mca dies is said
                seen.reports.append(
                    f"mca could not keep the protected paths' record on disk ({e.strerror or e}):"
                    " if mca ends during this command, the next one cannot put them back"
                )
        return rec

    def env(self, seen: Seen, env: Mapping[str, str], tmp: Path, tmp_inside: str) -> dict[str, str]:
        """A private $XDG_RUNTIME_DIR in the private /tmp when yours is hidden (programs make
        their sockets and locks there)."""
        runtime = env.get("XDG_RUNTIME_DIR", "")
        places = [os.fsdecode(p) for p in seen.hidden.places]
        real = os.path.realpath(runtime) if runtime else ""
        if not real or not any(real == p or real.startswith(p + "/") for p in places):
            return {}
        with contextlib.suppress(OSError):
            (tmp / "runtime").mkdir(mode=0o700, exist_ok=True)
        return {"XDG_RUNTIME_DIR": f"{tmp_inside}/runtime"}

    def after(self, seen: Seen) -> None:
        """After the command (and after the protected paths were put back): nothing is
        pending; what it left in a repository that makes git run a program, added to
        `seen.reports`."""
        if self.pending is not None:
            self.pending.clear()
        if seen.before is not None and self.repos is not None:
            seen.reports.extend(self.repos.after(seen.before))

    def close(self) -> None:
        """The session's sandbox is done: its record on disk goes."""
        if self.pending is not None:
            self.pending.close()
            self.pending = None
