"""The session's sandbox: prepares each command's child, and cleans up after it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mca.sandbox import landlock, mounts, seccomp
from mca.sandbox.linux import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    Child,
    ChildPlan,
    drop_list,
    locked_flags,
    rlimits,
)
from mca.sandbox.policy import Grant, Mode, Policy
from mca.sandbox.probe import Mechanisms
from mca.sandbox.reach import Reach, Seen
from mca.sandbox.rules import read_grants, signature
from mca.sandbox.tasks import (
    children,
    children_of,
    kill_cgroup,
    make_cgroup,
    reap,
    remove_cgroup,
    set_subreaper,
)
from mca.workspace import guard

__all__ = ["SETUP_FAILED", "SINKS", "TMP_DIRS", "Launch", "Sandbox"]

# Devices every program may write to (sinks); everything else in /dev is read-only.
SINKS = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")  # each is the private directory inside
SETUP_FAILED = 126  # the exit status of a command whose sandbox could not be set up
# Children mca started on purpose (sandboxed commands, possibly several at once from the
# lab's grader threads): never taken for something a command left behind.
_launched: set[int] = set()
_launch_lock = threading.Lock()


@dataclass
class Launch:
    """One command's preparation: what the child runs before exec, its environment, and what
    mca checks afterwards."""

    preexec: Callable[[], None]
    env: dict[str, str]
    record: guard.Record
    grant: Grant
    children_before: frozenset[int] = frozenset()  # mca's children when it started (no PID ns)
    seen: Seen = field(default_factory=Seen)  # nested repositories, hidden sockets (reach.py)

    @property
    def reports(self) -> list[str]:  # said beside the output (a repository setting left …)
        return self.seen.reports


@dataclass
class _Cached:
    ruleset: landlock.Ruleset
    signature: tuple[tuple[str, int], ...]
    kept: tuple[bytes, ...] = ()  # what a cover hides the way to, granted itself (reach.py)


@dataclass
class Sandbox:
    """Commands for the model run through this. `active` is False when the policy is off or
    the system has no mechanism; then `prepare` must not be called."""

    policy: Policy
    mechanisms: Mechanisms
    _tmp: Path | None = None
    _rulesets: dict[bool, _Cached] = field(default_factory=dict)
    _cgroup: Path | None = None
    _child: Child | None = None
    _enforcer: landlock.Enforcer | None = None
    _subreaper: bool = False
    _state: bytes | None = None
    _filter: seccomp.Installer | None = None
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
        net = "network allowed" if self.policy.network else "no network"
        return f"{self.policy.mode} ({net}; {self.mechanisms.describe()})"

    def summary(self, grant: Grant | None = None) -> str:
        """A few words for the tool line: 'sandboxed: workspace-write, no network'."""
        network = self.policy.network or (grant is not None and grant.network)
        parts = [str(self.policy.mode), "network" if network else "no network"]
        if grant is not None and grant.write_protected:
            parts.append(".git/ writable")
        return "sandboxed: " + ", ".join(parts)

    # -- preparing a command ---------------------------------------------------------------
    def tmp(self) -> Path:
        """The private temporary directory (one per session, removed at close)."""
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="mca-sandbox-"))
        return self._tmp

    def _ruleset(self, network: bool, kept: tuple[bytes, ...] = ()) -> landlock.Ruleset:
        cached = self._rulesets.get(network)
        if cached is not None:
            same = signature(Path(p) for p, _ in cached.signature) == cached.signature
            if same and cached.kept == kept:
                return cached.ruleset
            cached.ruleset.close()
        grants = read_grants(self.policy.deny_read)
        # In a network namespace the sandbox has its own loopback (test servers work) and no
        # way out; Landlock's TCP rules would forbid even that loopback, so only a sandbox
        # without namespaces has them.
        tcp_open = network or self.namespaces
        rs = landlock.create(self.mechanisms.landlock_abi, network=tcp_open)
        for path in grants.list_only:
            _allow(rs, path, landlock.READ_DIR)
        for path in grants.whole:
            _allow(rs, path, landlock.READ)
        writable = [self.tmp()]
        if self.policy.writes_workspace:
            writable.append(self.policy.workspace)
        for path in writable:
            _allow(rs, path, landlock.WRITE)
        for sink in SINKS:
            _allow(rs, Path(sink), landlock.READ_FILE | landlock.WRITE_FILE)
        for source in kept:
            _allow(rs, Path(os.fsdecode(source)), landlock.READ)
        self._rulesets[network] = _Cached(rs, signature(grants.walked), kept)
        return rs

    def prepare(self, grant: Grant, env: Mapping[str, str]) -> Launch:
        """Everything one command's child needs, built in mca (the child only makes calls)."""
        network = self.policy.network or grant.network
        bound = [t.decode() for _, t in self._binds()[0]] if self.namespaces else None
        seen = self._reach.look(grant, env, tmp=self.tmp(), covered=bound)
        kept = seen.hidden.sources
        ruleset_fd = self._ruleset(network, kept).fd if self.mechanisms.landlock_abi else -1
        if self._child is None:
            self._child, self._enforcer = Child(), landlock.Enforcer()
            self._filter = self._metadata_filter()
            if os.geteuid() == 0 and self.mechanisms.pids_cgroup is not None:
                self._cgroup = make_cgroup(self.mechanisms.pids_cgroup, self._task_limit())
            if not self.namespaces:
                self._subreaper = set_subreaper()
        plan = self._plan(grant, network, ruleset_fd, seen)
        reals = tuple(Path(p.decode()) for p in self._protected_reals())
        named = self.policy.protected
        protected = () if grant.write_protected else (*named, *(r for r in reals if r not in named))
        record = self._reach.record(
            protected, seen, contents=not self.namespaces, mirror=self._mirror()
        )
        child, enforcer, no_metadata = self._child, self._enforcer, self._filter
        assert child is not None and enforcer is not None
        cwd = str(self.policy.workspace)

        def enforce(fd: int) -> None:
            enforcer.no_new_privs()
            if fd >= 0:
                enforcer.restrict(fd)
            if no_metadata is not None:
                no_metadata.install()

        def preexec() -> None:
            try:
                child.setup(plan, enforce)
                if plan.namespaces:
                    os.chdir(cwd)  # through the new mounts, so the read-only ones apply
            except OSError as e:  # the command's own error, said on its stderr: never run it
                os.write(2, f"mca: {e.strerror or e}\n".encode(errors="replace"))
                os._exit(SETUP_FAILED)

        child_env = dict(env)
        covered = any(target == b"/tmp" for _, target in plan.binds)
        child_env["TMPDIR"] = "/tmp" if covered else str(self.tmp())
        child_env.update(self._reach.env(seen, env, self.tmp(), child_env["TMPDIR"]))
        before = frozenset() if self.namespaces or self._cgroup else children(os.getpid())
        return Launch(preexec, child_env, record, grant, before, seen)

    def _mirror(self) -> Path | None:
        """Where git's objects are hard-linked when no mount protects .git (mca's state)."""
        state = self.policy.state
        if self.namespaces or state is None:
            return None
        from mca.fsutil import private_dir

        try:
            return private_dir(state / "objects")
        except OSError:
            return None

    def _plan(self, grant: Grant, network: bool, ruleset_fd: int, seen: Seen) -> ChildPlan:
        ns, strict, mask_dir = 0, False, b""
        masks: tuple[tuple[bytes, bool], ...] = ()
        remount: tuple[tuple[bytes, int], ...] | None = None
        binds: list[tuple[bytes, bytes]] = []
        writable: list[bytes] = []
        read_only: list[tuple[bytes, int]] = []
        if self.namespaces:
            ns = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC
            ns |= 0 if network else CLONE_NEWNET
            binds, writable = self._binds()
            if not grant.write_protected or not self.policy.writes_workspace:
                read_only = [(p, locked_flags(p.decode())) for p in self._protected_reals()]
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
            cgroup_procs=bytes(self._cgroup / "cgroup.procs") if self._cgroup else b"",
            drop_caps=drop_list(landlock=bool(self.mechanisms.landlock_abi)),
            ruleset_fd=ruleset_fd,
            masks=masks,
            mask_dir=mask_dir,
            remount=remount,
            strict=strict,
            hide=seen.hidden.places,
            keep=seen.hidden.keep,
        )

    def _metadata_filter(self) -> seccomp.Installer | None:
        """Read-only mode writes nothing outside its /tmp: no chmod, chown, utime or xattr
        either, refused by seccomp (Landlock does not cover them; mounts do only with
        namespaces)."""
        if self.policy.writes_workspace:
            return None
        program = seccomp.no_metadata_changes()
        return seccomp.Installer(program) if program is not None else None

    def _mask_dir(self) -> bytes:
        """mca's own state directory for this workspace, where the child makes the covers of
        secret files in a tmpfs of its own (b'' where there is none)."""
        if self._state is None:
            self._state = b""
            if self.policy.state is not None:
                from mca.fsutil import private_dir

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

    def _protected_reals(self) -> list[bytes]:
        """Each protected path that exists, as its real path when that stays in the workspace
        (a `.git` or `.mca` that is a link to a folder inside it protects that folder; one that
        leads out is read-only there anyway)."""
        ws, out = self.policy.workspace, []
        for p in self.policy.protected:
            real = Path(os.path.realpath(p))
            inside = real == ws or real.is_relative_to(ws)
            if os.path.exists(real) and inside and real != ws and bytes(real) not in out:
                out.append(bytes(real))
        return out

    def _binds(self) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
        """The private directory over /tmp, /var/tmp and /dev/shm (not over one that holds the
        workspace), the workspace bound onto itself; and which of them stay writable."""
        ws, tmp = self.policy.workspace, self.tmp()
        binds: list[tuple[bytes, bytes]] = []
        covered = []
        for target in TMP_DIRS[::-1]:  # /tmp last: the private directory is reached through it
            if os.path.isdir(target) and not ws.is_relative_to(target):
                binds.append((bytes(tmp), target.encode()))
                covered.append(target.encode())
        if b"/tmp" not in covered:
            binds.insert(0, (bytes(tmp), bytes(tmp)))
            covered.append(bytes(tmp))
        writable = list(covered)
        if self.policy.writes_workspace:
            binds.insert(0, (bytes(ws), bytes(ws)))
            writable.append(bytes(ws))
        return binds, writable

    def popen(self, argv: list[str], launch: Launch, **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start a prepared command (registered, so cleaning up after another command never
        takes it for a leftover)."""
        with _launch_lock:
            proc = subprocess.Popen(
                argv, env=launch.env, preexec_fn=launch.preexec, start_new_session=True, **kwargs
            )
            _launched.add(proc.pid)
        return proc

    # -- after a command -------------------------------------------------------------------
    def finish(self, launch: Launch, pid: int) -> list[str]:
        """After the command's process ended: stop what it left running, put the protected
        paths back. Returns what a person should hear (one line each)."""
        self.stop_leftovers(pid, launch.children_before)
        with _launch_lock:
            _launched.discard(pid)
        notes = guard.restore(launch.record, self.policy.workspace)
        self._reach.after(launch.seen)
        return notes

    def stop_leftovers(self, pid: int, before: frozenset[int] = frozenset()) -> None:
        """Kill every process the command started that is still running. In a PID namespace
        the kernel has already done it; otherwise the pids cgroup or mca's orphans say which."""
        if self.namespaces:
            return
        if pid > 1 and pid != os.getpgrp():  # the command's own group (it was made leader)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        if self._cgroup is not None:
            kill_cgroup(self._cgroup)
        elif self._subreaper:
            _kill_orphans(before)

    def close(self) -> None:
        """Remove the private /tmp and the cgroup; close the rulesets."""
        for cached in self._rulesets.values():
            cached.ruleset.close()
        self._rulesets.clear()
        if self._cgroup is not None:
            kill_cgroup(self._cgroup)
            remove_cgroup(self._cgroup)
            self._cgroup = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


def _allow(rs: landlock.Ruleset, path: Path, rights: int) -> None:
    with contextlib.suppress(FileNotFoundError, PermissionError):
        landlock.allow_path(rs, str(path), rights)


def _kill_orphans(before: frozenset[int]) -> None:
    """mca is a subreaper: what a command left running became mca's children. Kill each new
    child's whole tree and reap it (commands run one at a time, so a child mca did not have
    before the command is the command's)."""
    me = os.getpid()
    for _ in range(50):
        with _launch_lock:
            tree = children_of()
            orphans = [p for p in tree.get(me, []) if p not in before and p not in _launched]
        if not orphans:
            return
        todo, seen = list(orphans), set()
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            todo += tree.get(p, [])
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)
        reap(orphans)
