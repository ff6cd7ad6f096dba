"""Discovery ahead, in a forked child (mca.skills.ahead): what it gives is exactly what serial
discovery gives, and every way it can fail gives None (the caller then discovers serially),
with the child reaped."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from pathlib import Path

import pytest

from mca.sandbox.spawning import client
from mca.skills.ahead import Ahead, start
from mca.skills.cache import FitsMemo
from mca.skills.discover import Discovery
from mca.skills.policy import PRODUCTION, Policy
from mca.skills.runtime import SkillsConfig, open_discovery
from mca.tokens import Estimator
from tests.skills.conftest import MakeSkill, skill_text

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    """start() forks only a process with one thread, as `mca -p` is when it starts."""
    _alone()


def _alone() -> None:
    """Earlier tests in the same pytest process (and a session a test opened) leave threads
    behind: the shared sandbox spawner's reader (it starts again at the next request) and the
    tokenizer's preload (under load, still running)."""
    client.shared().close()
    _join_tokenizer()
    assert threading.active_count() == 1, threading.enumerate()


def _join_tokenizer() -> None:
    """Wait for the tokenizer's preload (take starts it): no thread left behind."""
    for t in threading.enumerate():
        if t.name == "mca-tokenizer":
            t.join()


def _config(tmp_path: Path, make_skill: MakeSkill, window: int | None = 128_000) -> SkillsConfig:
    """Two explicit roots and a user root: clean skills, a warning, an error, a shadowed
    name, a duplicate at one rank is impossible across roots, a symlinked SKILL.md."""
    a, b, home = tmp_path / "a", tmp_path / "b", tmp_path / "home"
    for i in range(30):
        make_skill(a, f"s{i}", description=f"Use when step {i} of the build breaks.")
    make_skill(a, "warned", text=skill_text("warned", colour="blue"))
    make_skill(a, "broken", text="---\nname: [broken\n---\nBody.\n")
    make_skill(b, "s3", description="Use when the other s3 is wanted.")  # shadowed by a's
    make_skill(home / "skills", "mine")
    (b / "linked").mkdir()
    (b / "linked" / "SKILL.md").symlink_to(a / "s0" / "SKILL.md")
    ws = tmp_path / "ws"
    ws.mkdir()
    return SkillsConfig(
        workspace=ws,
        home=home,
        user_home=tmp_path / "user",
        budget=20_000,
        encoding="o200k_base",
        skills_dirs=(a, b),
        window=window,
    )


def _gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


class _Recorded(Ahead):
    """An Ahead that keeps what it gave."""

    taken: tuple[Discovery, FitsMemo] | None = None

    def take(self, config: SkillsConfig, estimator: Estimator) -> tuple[Discovery, FitsMemo] | None:
        self.taken = super().take(config, estimator)
        return self.taken


def _same(got: Discovery, want: Discovery) -> None:
    assert got.roots == want.roots
    assert got.candidates == want.candidates
    assert got.diagnostics == want.diagnostics
    assert got.catalog == want.catalog and got.budget == want.budget
    assert got.skills == want.skills and list(got.skills) == list(want.skills)
    assert got.dirs == want.dirs and got.seen == want.seen
    assert got.policy is PRODUCTION


def _take(config: SkillsConfig, ahead: Ahead | None) -> tuple[Discovery, FitsMemo] | None:
    assert ahead is not None, "no fork: threads running?" + str(threading.enumerate())
    pid = ahead.pid
    found = ahead.take(config, Estimator())
    assert _gone(pid) and ahead.fd == ahead.out == -1
    _join_tokenizer()
    return found


def test_the_child_finds_what_serial_discovery_finds(tmp_path: Path, make_skill: MakeSkill) -> None:
    config = _config(tmp_path, make_skill)
    open_discovery(config, Estimator())  # the fits memo knows this catalog now
    found = _take(config, start(config))
    want, memo = open_discovery(config, Estimator())
    assert found is not None
    got, got_memo = found
    _same(got, want)
    assert {c.status for c in got.candidates} >= {"loaded", "skipped", "shadowed"}
    assert any(d.code == "symlinked-entry" for c in got.candidates for d in c.diagnostics)
    assert got_memo.path == memo.path and got_memo.known == memo.known
    assert got_memo.unchecked == memo.unchecked and got_memo.pending
    assert got_memo.audit() == 0  # the parent's tokenizer checks what the child took on trust
    assert list(got.skill_set) == list(want.skill_set)


def test_a_character_budget_needs_no_memo(tmp_path: Path, make_skill: MakeSkill) -> None:
    config = _config(tmp_path, make_skill, window=None)
    found = _take(config, start(config))  # a cold start: nothing cached yet
    assert found is not None
    _same(found[0], open_discovery(config, Estimator())[0])


def test_a_fit_the_memo_does_not_know_is_left_to_the_parent(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    # ~2,000 bytes against a budget of a few hundred tokens: only counting settles it, and the
    # memo is empty: the child would need the tokenizer
    config = dataclasses.replace(_config(tmp_path, make_skill), window=16_000)
    assert _take(config, start(config)) is None


def test_a_fit_the_length_settles_needs_no_tokenizer(tmp_path: Path, make_skill: MakeSkill) -> None:
    config = _config(tmp_path, make_skill)  # an empty memo, but ~2,000 bytes fit any budget of
    found = _take(config, start(config))  # as many tokens
    assert found is not None
    _same(found[0], open_discovery(config, Estimator())[0])


def test_a_failing_child_gives_none(tmp_path: Path, make_skill: MakeSkill) -> None:
    def fails(config: SkillsConfig, estimator: Estimator) -> tuple[Discovery, FitsMemo]:
        raise OSError("disk on fire")

    config = _config(tmp_path, make_skill, window=None)
    ahead = start(config, fails)
    assert _take(config, ahead) is None
    assert ahead is not None and ahead.why == "the child exited with status 1"


def test_another_config_gives_none_and_the_child_is_stopped(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    def slow(config: SkillsConfig, estimator: Estimator) -> tuple[Discovery, FitsMemo]:
        time.sleep(60)
        raise AssertionError("never reached")

    config = _config(tmp_path, make_skill, window=None)
    other = SkillsConfig(
        workspace=config.workspace,
        home=config.home,
        user_home=config.user_home,
        budget=1,
        encoding="o200k_base",
    )
    ahead = start(config, slow)
    assert _take(other, ahead) is None
    assert ahead is not None and ahead.why == "the skills' config changed"


def test_a_child_slower_than_the_wait_gives_none(tmp_path: Path, make_skill: MakeSkill) -> None:
    def slow(config: SkillsConfig, estimator: Estimator) -> tuple[Discovery, FitsMemo]:
        time.sleep(60)
        raise AssertionError("never reached")

    config = _config(tmp_path, make_skill, window=None)
    ahead = start(config, slow)
    assert ahead is not None
    ahead.wait = 0.2
    assert _take(config, ahead) is None
    assert ahead.why == "the child was not done within 0.2 s"
    assert ahead.take(config, Estimator()) is None  # taken once: nothing left
    assert ahead.why == "already taken"


def test_a_lab_policy_is_never_discovered_ahead(tmp_path: Path, make_skill: MakeSkill) -> None:
    config = _config(tmp_path, make_skill, window=None)
    lab = SkillsConfig(
        workspace=config.workspace,
        home=config.home,
        user_home=config.user_home,
        budget=1,
        encoding="o200k_base",
        policy=Policy("lab"),
    )
    assert start(lab) is None


def test_no_fork_while_another_thread_runs(tmp_path: Path, make_skill: MakeSkill) -> None:
    config = _config(tmp_path, make_skill, window=None)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert start(config) is None  # a lock it holds would stay held in the child
    finally:
        stop.set()
        other.join()
    assert _take(config, start(config)) is not None


def test_a_one_shot_session_takes_the_child_s_skills(tmp_path: Path, make_skill: MakeSkill) -> None:
    from mca.assembly.assemble import open_session
    from mca.cli.start import discover_ahead
    from mca.config.settings import load_settings
    from mca.session.faces import HeadlessUI

    config = _config(tmp_path, make_skill)
    env = {"MOCK": "1", "MCA_HOME": str(config.home), "HOME": str(tmp_path)}
    settings = load_settings(env, workspace=config.workspace).with_(skills_dirs=config.skills_dirs)
    serial = open_session(settings, HeadlessUI(), one_shot=True)  # memo and caches written
    serial.close()
    _alone()
    started = discover_ahead(settings)
    assert started is not None
    ahead = _Recorded(started.config, started.pid, started.fd, started.out)
    session = open_session(settings, HeadlessUI(), one_shot=True, ahead=ahead)
    session.close()
    assert _gone(started.pid) and ahead.fd == -1
    assert ahead.taken is not None and session.skills.discovery is ahead.taken[0]
    assert session.skills.memo is ahead.taken[1] and ahead.taken[1].pending  # fits on trust
    _same(session.skills.discovery, serial.skills.discovery)
    _join_tokenizer()


def test_a_session_that_falls_back_to_serial_discovery_logs_why(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    from mca.assembly.assemble import open_session
    from mca.config.settings import load_settings
    from mca.session.faces import HeadlessUI

    def fails(config: SkillsConfig, estimator: Estimator) -> tuple[Discovery, FitsMemo]:
        raise OSError("disk on fire")

    config = _config(tmp_path, make_skill)
    env = {"MOCK": "1", "MCA_HOME": str(config.home), "HOME": str(tmp_path)}
    settings = load_settings(env, workspace=config.workspace).with_(skills_dirs=config.skills_dirs)
    serial = open_session(settings, HeadlessUI(), one_shot=True)
    serial.close()
    assert not [e for e in serial.log.events if e.get("code") == "discovery-serial"]
    _alone()
    from mca.assembly.wiring import skills_config

    ahead = start(skills_config(settings), fails)
    assert ahead is not None
    session = open_session(settings, HeadlessUI(), one_shot=True, ahead=ahead)
    session.close()
    notes = [e for e in session.log.events if e.get("code") == "discovery-serial"]
    assert [n["message"] for n in notes] == [
        "skills discovered serially: the discovery begun ahead gave nothing"
        " (the child exited with status 1)"
    ]
    assert session.skills.discovery.skills.keys() == serial.skills.discovery.skills.keys()
    _join_tokenizer()


def test_a_session_that_fails_before_it_takes_leaves_no_child(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    from mca.cli.start import _opener, discover_ahead
    from mca.config.settings import load_settings
    from mca.session.faces import HeadlessUI

    config = _config(tmp_path, make_skill)
    env = {"MOCK": "1", "MCA_HOME": str(config.home), "HOME": str(tmp_path)}
    settings = load_settings(env, workspace=config.workspace).with_(skills_dirs=config.skills_dirs)
    ahead = discover_ahead(settings)
    assert ahead is not None
    pid = ahead.pid

    class Broken(HeadlessUI):
        def __getattribute__(self, name: str) -> object:
            raise RuntimeError("no face")  # the first thing open_session asks of its UI

    with pytest.raises(RuntimeError, match="no face"):
        _opener(settings, True, ahead)(Broken())
    assert _gone(pid) and ahead.fd == ahead.out == -1 and ahead.pid == 0


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity here")
def test_no_fork_on_one_core(tmp_path: Path, make_skill: MakeSkill) -> None:
    config = _config(tmp_path, make_skill, window=None)
    cpus = os.sched_getaffinity(0)
    if len(cpus) < 2:
        assert start(config) is None
        return
    os.sched_setaffinity(0, {min(cpus)})
    try:
        assert start(config) is None
    finally:
        os.sched_setaffinity(0, cpus)
    assert _take(config, start(config)) is not None


def test_no_fork_where_no_root_exists(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    none = SkillsConfig(
        workspace=ws,
        home=tmp_path / "home",
        user_home=tmp_path / "user",
        budget=1,
        encoding="o200k_base",
    )
    assert start(none) is None
    (tmp_path / "home" / "skills").mkdir(parents=True)  # an empty root is still a root
    assert _take(none, start(none)) is not None


def test_no_child_when_a_server_will_be_asked_for_its_window(
    tmp_path: Path, make_skill: MakeSkill
) -> None:
    """Its answer changes the skills' config, so the child's work would go unused."""
    from mca.cli.start import discover_ahead
    from mca.config.settings import load_settings

    make_skill(tmp_path / "home" / "skills", "mine")
    env = {"MCA_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    local = {"MCA_PROVIDER": "openai", "MCA_BASE_URL": "http://127.0.0.1:9/v1", "MCA_MODEL": "x"}
    assert discover_ahead(load_settings({**env, **local}, workspace=tmp_path)) is None
    known = {**local, "MCA_CONTEXT_WINDOW": "32000"}  # said: nothing to ask
    ahead = discover_ahead(load_settings({**env, **known}, workspace=tmp_path))
    assert ahead is not None
    ahead.close()


def test_with_sigchld_ignored_the_child_is_never_killed_after_it_is_reaped(
    tmp_path: Path, make_skill: MakeSkill, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The system reaps it then, and its pid may be another process's by the time of close."""
    import signal

    config = _config(tmp_path, make_skill, window=None)
    old = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        ahead = start(config)
        assert ahead is not None
        pid, killed = ahead.pid, []
        monkeypatch.setattr(os, "kill", lambda p, sig: killed.append(p))
        assert ahead.take(config, Estimator()) is None  # no exit status: serial discovery
        assert ahead.pid == 0 and ahead.fd == ahead.out == -1
        assert pid not in killed  # gone before take looked: nothing may be sent to its pid
    finally:
        signal.signal(signal.SIGCHLD, old)
