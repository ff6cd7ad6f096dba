"""The session's sandbox: prepares each command's child, and cleans up after it."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mca.sandbox import landlock, mounts, seccomp
from mca.sandbox.limits import drop_list, rlimits
from mca.sandbox.linux import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    KEEP_DIR,
    SYS_PIVOT_ROOT,
    ChildPlan,
)
from mca.sandbox.mounts import TMP_DIRS, locked_flags, tmp_binds
from mca.sandbox.nproc import nproc_room
from mca.sandbox.probe import Mechanisms
from mca.sandbox.properties import no_network
from mca.sandbox.reach import Reach, Seen
from mca.sandbox.rights import Grant, Mode, Policy
from mca.sandbox.rulesets import Rulesets
from mca.sandbox.spawning.client import Setup, Spawned, shared
from mca.sandbox.tasks import kill_cgroup, make_cgroup, remove_cgroup
from mca.workspace import guard

__all__ = ["SETUP_FAILED", "TMP_DIRS", "Launch", "Sandbox"]

SETUP_FAILED = 126  # the exit status of a command whose sandbox could not be set up


@dataclass
class Launch:
    """One command's preparation: what the child does before exec (as data: the spawner's
    child does it), its environment, and what mca checks afterwards."""

    setup: Setup
    env: dict[str, str]
    record: guard.Record
    grant: Grant
    seen: Seen = field(default_factory=Seen)  # nested repositories, hidden sockets (reach.py)

    @property
    def reports(self) -> list[str]:  # said beside the output (a repository setting left …)
        return self.seen.reports


@dataclass
class Sandbox:
    """Commands for the model run through this. `active` is False when the policy is off or
    the system has no mechanism; then `prepare` must not be called."""

    policy: Policy
    mechanisms: Mechanisms
    reuse: bool = True  # commands share the user and network namespaces (one sandbox's many)
    _tmp: Path | None = None
    _rulesets: Rulesets | None = None
    _cgroup: Path | None = None
    _ready: bool = False
    _state: bytes | None = None
    _filters: dict[bool, bytes | None] = field(default_factory=dict, init=False)  # by network
    _share: str = ""
    _read_only: Sandbox | None = None
    _view: Path | None = None
    _reach: Reach = field(init=False)

    def __post_init__(self) -> None:
        self._reach = Reach(self.policy)

    @property
    def active(self) -> bool:
        return self.policy.mode is not Mode.OFF and self.mechanisms.available

    @property
    def namespaces(self) -> bool:
        return self.active and self.mechanisms.user_namespaces

    def describe(self) -> str:
        """'workspace-write (Landlock ABI 7, user namespaces …)' or why there is none."""
        if self.policy.mode is Mode.OFF:
            return "off (--sandbox off): commands run with your full rights"
        if not self.mechanisms.available:
            return f"none: {self.mechanisms.describe()}; commands run unsandboxed"
        net = "network allowed" if self.policy.network else no_network(self.mechanisms)
        more = "".join(f", {w}" for w in self.policy.widened(Grant()))
        return f"{self.policy.mode} ({net}{more}; {self.mechanisms.describe()})"

    def summary(self, grant: Grant | None = None) -> str:
        """A few words for the tool line: 'sandboxed: workspace-write, no network'."""
        grant = grant or Grant()
        network = self.policy.network or grant.network
        parts = [str(self.policy.mode), "network" if network else no_network(self.mechanisms)]
        return "sandboxed: " + ", ".join(parts + self.policy.widened(grant, configured=False))

    def read_only(self) -> Sandbox:
        """The read-only approval mode's sandbox: nothing writable but a private /tmp of its
        own, no network (made once, closed with this one)."""
        if self.policy == self.policy.read_only():
            return self
        if self._read_only is None:
            self._read_only = Sandbox(self.policy.read_only(), self.mechanisms, self.reuse)
        return self._read_only

    # -- preparing a command ---------------------------------------------------------------
    def tmp(self) -> Path:
        """The private temporary directory (one per session, removed at close)."""
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="mca-sandbox-"))
        return self._tmp

    def _writable(self, grant: Grant) -> tuple[Path, ...]:
        """The directories outside the workspace this command may write, each made first when
        it is missing (a cache the person named that no tool has made yet)."""
        out = []
        for d in self.policy.writable_dirs(grant):
            with contextlib.suppress(OSError):
                d.mkdir(mode=0o700, parents=True, exist_ok=True)
            if d.is_dir():
                out.append(d)
        return tuple(out)

    def _ruleset(
        self, network: bool, extra: tuple[Path, ...], kept: tuple[bytes, ...] = ()
    ) -> landlock.Ruleset:
        if self._rulesets is None:
            abi, p = self.mechanisms.landlock_abi, self.policy
            self._rulesets = Rulesets(abi, p.deny_read, p.read_only_from)
        writable = (self.tmp(), *extra)
        if self.policy.writes_workspace:
            writable += (self.policy.workspace,)
        # In a network namespace the sandbox has its own loopback (test servers work) and no
        # way out; Landlock's TCP rules would forbid even that loopback, so only a sandbox
        # without namespaces has them.
        return self._rulesets.get(network or self.namespaces, writable, kept)

    def prepare(
        self,
        grant: Grant,
        env: Mapping[str, str],
        mca_env: Mapping[str, str] | None = None,
        *,
        command: str = "",
    ) -> Launch:
        """Everything one command's child needs, built in mca (the child only makes calls):
        `env` is its environment; the sockets `mca_env` names (mca's own, which holds what the
        command's lost: $SSH_AUTH_SOCK) are hidden too. The protected paths' record is on disk
        before it returns (reach.py): if mca ends before `finish`, the next mca in the
        workspace puts them back."""
        network = self.policy.network or grant.network
        extra = self._writable(grant)
        bound = (
            [t.decode() for _, t in tmp_binds(self.policy, self.tmp(), extra)[0]]
            if self.namespaces
            else None
        )
        looked = env if mca_env is None else {**mca_env, **env}
        seen = self._reach.look(grant, looked, tmp=self.tmp(), covered=bound)
        kept = seen.hidden.sources
        ruleset_fd = self._ruleset(network, extra, kept).fd if self.mechanisms.landlock_abi else -1
        if not self._ready:
            self._ready = True
            self._share = secrets.token_hex(8) if self.reuse and self.namespaces else ""
            if os.geteuid() == 0 and self.mechanisms.pids_cgroup is not None:
                # a session's sandbox: one more task, the spawner's forker for it, which lives
                # in the cgroup (a fork into it is free, joining it is not)
                room = self._task_limit() + (1 if self.reuse and self.namespaces else 0)
                self._cgroup = make_cgroup(self.mechanisms.pids_cgroup, room)
        plan = self._plan(grant, network, ruleset_fd, extra, seen)
        named = self.policy.held(grant)
        reals = tuple(Path(p.decode()) for p in self._protected_reals(named))
        protected = (*named, *(r for r in reals if r not in named))
        record = self._reach.record(
            protected, seen, contents=not self.namespaces, mirror=self._mirror(), command=command
        )
        # the child's calls, made in the spawner's child: the plan, then no_new_privs, Landlock
        # and seccomp; with namespaces a chdir to the workspace through the new mounts (so the
        # read-only ones apply). A failure is said on the command's stderr, exit 126.
        ws = str(self.policy.workspace)
        program = self._seccomp(network)
        setup = Setup(plan, program, confine=True, workdir=ws, share=self._share)
        child_env = dict(env)
        covered = any(target == b"/tmp" for _, target in plan.binds)
        child_env["TMPDIR"] = "/tmp" if covered else str(self.tmp())
        child_env.update(self._reach.env(seen, env, self.tmp(), child_env["TMPDIR"]))
        return Launch(setup, child_env, record, grant, seen)

    def _mirror(self) -> Path | None:
        """Where git's objects are hard-linked when no mount protects .git (mca's state)."""
        state = self.policy.state
        if self.namespaces or state is None:
            return None
        from mca.fs.careful import private_dir

        try:
            return private_dir(state / "objects")
        except OSError:
            return None

    def _plan(
        self, grant: Grant, network: bool, ruleset_fd: int, extra: tuple[Path, ...], seen: Seen
    ) -> ChildPlan:
        ns, strict, mask_dir = 0, False, b""
        masks: tuple[tuple[bytes, bool], ...] = ()
        remount: tuple[tuple[bytes, int], ...] | None = None
        binds: list[tuple[bytes, bytes]] = []
        writable: list[bytes] = []
        read_only: list[tuple[bytes, int]] = []
        view, entries = b"", tuple[tuple[int, bytes, bytes, int], ...]()
        if self.namespaces and self.viewed:  # nothing but the allow-list: nothing to cover
            ns = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC
            ns |= 0 if network else CLONE_NEWNET
            strict = not self.mechanisms.landlock_abi
            view, entries = self._view_plan()
        elif self.namespaces:
            ns = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC
            ns |= 0 if network else CLONE_NEWNET
            binds, writable = tmp_binds(self.policy, self.tmp(), extra)
            held = self._protected_reals(self.policy.held(grant))
            read_only = [(p, locked_flags(p.decode())) for p in held]
            read_only += mounts.read_only(seen.kept)  # the repositories inside the workspace
            strict = not self.mechanisms.landlock_abi
            mask_dir = self._mask_dir()
            masks = mounts.masks(self.policy.deny_read, files=bool(mask_dir))
            masks += tuple((f, False) for f in seen.hidden.files) if mask_dir else ()
            remount = mounts.mount_points(writable, seen.hidden.places) if strict else None
        return ChildPlan(
            namespaces=ns,
            uid=os.getuid(),
            gid=os.getgid(),
            loopback_up=bool(ns & CLONE_NEWNET),
            binds=tuple(binds),
            writable=tuple(writable),
            read_only=tuple(read_only),
            mount_proc=bool(ns),
            rlimits=tuple(self._rlimits(bool(ns))),
            nproc_room=nproc_room(self._task_limit(), bool(ns)),
            cgroup_procs=bytes(self._cgroup / "cgroup.procs") if self._cgroup else b"",
            drop_caps=drop_list(landlock=bool(self.mechanisms.landlock_abi)),
            ruleset_fd=ruleset_fd,
            masks=masks,
            mask_dir=mask_dir,
            remount=remount,
            strict=strict,
            hide=() if view else seen.hidden.places,
            keep=() if view else seen.hidden.keep,
            view=view,
            view_entries=entries,
        )

    @property
    def viewed(self) -> bool:
        """Reads by allow-list, made a view of its own with namespaces (mca/sandbox/view.py)."""
        return self.policy.read_only_from is not None and SYS_PIVOT_ROOT >= 0

    def _view_plan(self) -> tuple[bytes, tuple[tuple[int, bytes, bytes, int], ...]]:
        """The empty directory the child's new root is mounted on, and what is made in it:
        the allow-list read-only, the private /tmp writable (sized: a tmpfs of its own, which
        Landlock grants), a place for the child's /proc."""
        from mca.sandbox.view import layout

        if self._view is None:
            self._view = Path(tempfile.mkdtemp(prefix="mca-view-"))
        p, rights = self.policy, landlock.writable(self.mechanisms.landlock_abi)
        entries = layout(p.read_only_from or (), (self.tmp(),), p.deny_read, p.tmp_size, rights)
        return bytes(self._view), ((KEEP_DIR, b"/proc", b"", 0), *entries)

    def _seccomp(self, network: bool) -> bytes | None:
        """Read-only mode writes nothing outside its /tmp: no chmod, chown, utime or xattr
        either (Landlock does not cover them; mounts do only with namespaces). Without a PID
        namespace, no process of a command may leave its group, which one kill ends whole
        (root's pids cgroup counts them; the group is what the spawner kills when mca dies).
        Without a network namespace or the network, no socket but a unix one. The program,
        made once for each value of the network right (a grant is per command); the
        spawner's child installs it."""
        if network not in self._filters:
            self._filters[network] = seccomp.program(
                metadata=not self.policy.writes_workspace,
                groups=not self.namespaces,
                no_network=not (network or self.namespaces),
            )
        return self._filters[network]

    def _mask_dir(self) -> bytes:
        """mca's own state directory for this workspace, where the child makes the covers of
        secret files in a tmpfs of its own (b'' where there is none)."""
        if self._state is None:
            self._state = b""
            if self.policy.state is not None:
                from mca.fs.careful import private_dir

                with contextlib.suppress(OSError):
                    self._state = bytes(private_dir(self.policy.state))
        return self._state

    def _task_limit(self) -> int:
        """The policy's tasks count the sandbox's own: with a PID namespace, a waiting parent
        as well as the command. Without one there is no such parent, and the command gets the
        same room, not one task more."""
        return self.policy.max_processes - (0 if self.namespaces else 1)

    def _rlimits(self, in_user_ns: bool) -> list[tuple[int, int]]:
        p = self.policy
        tasks = self._task_limit()
        return rlimits(tasks, p.max_file_bytes, in_user_ns, p.max_memory_bytes, p.max_cpu_seconds)

    def _protected_reals(self, paths: tuple[Path, ...]) -> list[bytes]:
        """Each of these protected paths that exists, as its real path when that stays in the
        workspace (a `.git` or `.mca` that is a link to a folder inside it protects that folder;
        one that leads out is read-only there anyway)."""
        ws, out = self.policy.workspace, []
        for p in paths:
            real = Path(os.path.realpath(p))
            inside = real == ws or real.is_relative_to(ws)
            if os.path.exists(real) and inside and real != ws and bytes(real) not in out:
                out.append(bytes(real))
        return out

    def popen(
        self,
        argv: list[str],
        launch: Launch,
        *,
        cwd: str | None = None,
        stdin: Any = None,
        stdout: Any = None,
        stderr: Any = None,
        pass_fds: Iterable[int] = (),
    ) -> Spawned:
        """Start a prepared command from the spawner, the small single-threaded helper made
        once per process: no set-up code runs in mca's (threaded, large) process between fork
        and exec. The command leads a session of its own, as with start_new_session."""
        return shared().spawn(
            argv,
            launch.env,
            launch.setup,
            cwd=cwd,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            pass_fds=pass_fds,
        )

    # -- after a command -------------------------------------------------------------------
    def finish(self, launch: Launch, pid: int) -> list[str]:
        """After the command's process ended: stop what it left running, put the protected
        paths back. Returns what a person should hear (one line each)."""
        self.stop_leftovers(pid)
        notes = guard.restore(launch.record, self.policy.workspace)
        self._reach.after(launch.seen)
        return notes

    def stop_leftovers(self, pid: int) -> None:
        """Kill every process the command started that is still running. In a PID namespace
        the kernel has already done it; otherwise the pids cgroup holds them all, or the
        command's group does (seccomp keeps them in it; the spawner, their subreaper, reaps
        them)."""
        if self.namespaces:
            return
        if self._cgroup is not None:  # all of it, the group too: each one seen is reaped
            kill_cgroup(self._cgroup)
            return
        if pid > 1 and pid != os.getpgrp():  # the command's own group (it was made leader)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

    def close(self) -> None:
        """Remove the private /tmp and the cgroup; close the rulesets; the spawner lets this
        sandbox's namespaces go."""
        if self._read_only is not None:
            self._read_only.close()
            self._read_only = None
        self._reach.close()
        if self._share:
            shared().release(self._share)
            self._share, self._ready = "", False
        if self._rulesets is not None:
            self._rulesets.close()
        if self._cgroup is not None:
            kill_cgroup(self._cgroup)
            remove_cgroup(self._cgroup)
            self._cgroup = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        if self._view is not None:
            with contextlib.suppress(OSError):
                self._view.rmdir()
            self._view = None
