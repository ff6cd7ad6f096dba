"""What the sandbox holds, property by property: the table of what each set of mechanisms
means to hold (pure), and `mca sandbox check`, which tries each property in a real child and
must agree with that table on this system (under tests/confine.py, on what the kernel left)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from mca.sandbox import seccomp
from mca.sandbox.box import Launch, Sandbox
from mca.sandbox.check import check, lines, refusal
from mca.sandbox.probe import Mechanisms, probe
from mca.sandbox.properties import LAB_NEEDS, Prop, expected, no_network, weaker_line
from mca.sandbox.rights import Grant, Mode, build_policy
from mca.sandbox.spawning.client import Setup, shared
from tests.sandbox.mechanisms import chosen, used

pytestmark = pytest.mark.slow  # each property tried in a real child

FULL = probe()
ROOT = os.geteuid() == 0
VARIANTS = chosen(only=("namespaces", "namespaces-only", "landlock", "landlock-abi3"))


def _held(mech: Mechanisms, root: bool = False, read_only: bool = False) -> set[Prop]:
    return {e.prop for e in expected(mech, root=root, read_only=read_only) if e.held}


def test_namespaces_hold_everything_for_any_user() -> None:
    for abi in (0, 1, 7):
        for root in (False, True):
            mech = Mechanisms(abi, True, None, proc=False)
            assert _held(mech, root) == set(Prop), (abi, root)
            assert weaker_line(mech, root=root) == ""


@pytest.mark.skipif(not seccomp.known(), reason="no seccomp program for this machine")
def test_landlock_alone_says_what_it_lacks() -> None:
    mech = Mechanisms(7, False, None)
    assert _held(mech) == set(Prop) - {Prop.METADATA, Prop.SOCKETS}  # seccomp: no UDP either
    held_read_only = set(Prop) - {Prop.SOCKETS}  # seccomp: no chmod
    assert _held(mech, read_only=True) == held_read_only
    line = weaker_line(mech, root=False)
    assert "chmod" in line and "mca sandbox check" in line and "network" not in line
    assert "ssh-agent" in line and "container engine socket" in line
    assert "abstract" not in line  # Landlock ABI 6's scope holds those
    assert Prop.SOCKETS in _held(Mechanisms(9, False, None))  # RESOLVE_UNIX
    old = Mechanisms(3, False, None)
    assert Prop.SIGNALS not in _held(old) and Prop.NETWORK in _held(old)  # seccomp, any ABI
    assert "nor a scope for abstract ones" in weaker_line(old, root=False)
    for each in (mech, old, Mechanisms(0, True, None)):  # what the tool line says: true
        assert no_network(each) == "no network"


def test_survivors_and_fork_bombs_without_proc_or_as_root() -> None:
    hidden = Mechanisms(7, False, None, proc=False)
    assert Prop.SURVIVORS in _held(hidden)  # the command's group: nothing may leave it
    assert Prop.PROCESSES in _held(hidden)  # the kernel counts, not /proc
    root_no_cgroup = Mechanisms(7, False, None)
    assert Prop.PROCESSES not in _held(root_no_cgroup, root=True)  # root is exempt
    assert Prop.PROCESSES in _held(Mechanisms(7, False, Path("/sys/fs/cgroup/x")), root=True)


def test_no_mechanism_means_every_command_asks() -> None:
    none = Mechanisms(0, False, None)
    assert _held(none) == set()
    assert all("asks first" in e.by for e in expected(none, root=False))
    assert weaker_line(none, root=False) == ""  # the unsandboxed notice says it instead


@pytest.mark.parametrize("name", sorted(VARIANTS) or ["none"])
def test_the_trial_agrees_with_the_table(name: str, tmp_path: Path) -> None:
    """Each property tried in a real child holds exactly where the table says it does."""
    if name == "none":
        pytest.skip("no sandbox mechanism on this system")
    mech = VARIANTS[name]
    used(mech)
    for mode in (Mode.WORKSPACE_WRITE, Mode.READ_ONLY):
        policy = build_policy(mode, tmp_path, tmp_path / "home", tmp_path / "mcahome")
        found = {f.prop: f for f in check(Sandbox(policy, mech))}
        means = _held(mech, ROOT, read_only=mode is Mode.READ_ONLY)
        wrong = {p: found[p].saw for p in Prop if found[p].held != (p in means)}
        assert wrong == {}, (mode, wrong)


@dataclasses.dataclass
class Unsandboxed(Sandbox):
    """A sandbox that contains nothing: the trial's oracles must say so for every property."""

    def prepare(
        self,
        grant: Grant,
        env: Mapping[str, str],
        mca_env: Mapping[str, str] | None = None,
        *,
        command: str = "",
    ) -> Launch:
        launch = super().prepare(grant, env, mca_env, command=command)
        return dataclasses.replace(launch, setup=Setup(None, confine=False))


def test_the_trial_sees_a_sandbox_that_holds_nothing(tmp_path: Path) -> None:
    if not FULL.available:
        pytest.skip("no sandbox here to take apart")
    policy = build_policy(Mode.WORKSPACE_WRITE, tmp_path, tmp_path / "home", tmp_path / "mh")
    found = check(Sandbox(policy, FULL), make=Unsandboxed)
    shared().close()  # what the trials left running, unconfined (the spawner kills their groups)
    held = {f.prop for f in found if f.held}
    # what the clean-up after a command still does, with nothing in the child: put .git back
    # (no namespaces: recorded and restored), stop what is left (cgroup, subreaper)
    assert held <= {Prop.PROTECTED, Prop.SURVIVORS}, lines(found)
    assert refusal(found, LAB_NEEDS)


def test_mca_sandbox_check_reports_each_property(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "MCA_HOME": str(tmp_path / "mh")}
    mca = [sys.executable, "-m", "mca", "sandbox", "check", "--json"]
    proc = subprocess.run(mca, env=env, capture_output=True, text=True, timeout=120)
    report = json.loads(proc.stdout)
    assert [p["property"] for p in report["properties"]] == [str(p) for p in Prop]
    assert proc.returncode == (0 if report["held"] else 1), proc.stderr
    assert report["held"] == all(p["held"] for p in report["properties"])
    assert report["user"] == ("root" if ROOT else f"uid {os.getuid()}")
