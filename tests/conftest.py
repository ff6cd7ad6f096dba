"""Shared fixtures. Every test runs with no API keys, no base URLs and a private MCA_HOME."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from mca.events import drop
from mca.session.faces import HeadlessUI
from mca.tools.base import Approvals, ToolEnv, TurnState
from mca.workspace.store import WorkspaceStore
from mca.workspace.walk import OFF
from tests.leftovers import commands_left, has_children, reap_zombies, running_children

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "skills"

# In CI every property test runs the same examples on every run (derandomize: chosen from the
# test itself, no example database carried between runs), with no time limits on 2 shared
# cores: a change goes red for what it changed, never for a draw. Locally tests explore.
settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session", autouse=True)
def nothing_left_running() -> Iterator[None]:
    """No test leaves a process behind. This process is made the subreaper of everything the
    suite starts, so whatever a test leaves running (a daemon, a server, a command's child) ends
    up its child, wherever /proc may be read or not; at the end, with mca's spawner closed,
    none may be left (asked of the kernel: waitid)."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    yield
    from mca.sandbox.spawning.client import shared

    shared().close()
    deadline = time.monotonic() + 10
    while has_children() and time.monotonic() < deadline:  # a moment to end after a kill
        reap_zombies()
        time.sleep(0.05)
    left = running_children()
    assert left == [], f"processes left running by the suite: {left}"


@pytest.fixture(autouse=True)
def no_zombies() -> Iterator[None]:
    """What ended under this process (a command's orphan, a test's child) is reaped after each
    test, so none stays a zombie for the rest of the run; and no command a test ran through
    this process's spawner left a process running once the test is done (so that a test that
    asks the spawner counts only its own)."""
    yield
    reap_zombies()
    left = commands_left(5)
    assert left == 0, f"{left} ended command(s) of this test still have a process running"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No real network is reachable from a test: keys and base URLs are stripped."""
    for key in list(os.environ):
        if key.endswith("_API_KEY") or key.startswith("MCA_") or key in ("MOCK", "SELFTEST"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MCA_HOME", str(tmp_path_factory.mktemp("mca_home")))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace directory."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def env(ws: Path) -> Iterator[ToolEnv]:
    """The tools' environment on the workspace: every command approved, edits applied,
    protected paths refused, events dropped."""
    store = WorkspaceStore(ws, ws.parent / "store", "test01", "20260101T000000", OFF)
    yield ToolEnv(store, Approvals(HeadlessUI()), drop)


@pytest.fixture
def turn() -> TurnState:
    """Turn 1's state, for tools called directly."""
    return TurnState(1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under the CI profile, no property test may bring randomness back with its own settings."""
    if not os.environ.get("CI"):
        return
    random = [
        item.nodeid
        for item in items
        if (s := getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None))
        and (not s.derandomize or s.database is not None or s.deadline is not None)
    ]
    if random:
        raise pytest.UsageError("property tests not deterministic in CI: " + ", ".join(random))


@pytest.hookimpl(tryfirst=True)
def _ctrl_c_as_a_terminal_gives_it() -> None:
    """Ctrl-C as mca gets it in a terminal: a run started in the background of a script (`cmd
    &` in a non-interactive shell, as a CI runner may start it) inherits SIGINT ignored, and
    Python then installs no handler; the tests that press Ctrl-C, and every mca they start,
    would see nothing. Each worker starts from here too."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """A temp root of this run's own, removed after it. pytest's shared /tmp/pytest-of-$USER,
    pruned by every concurrent run on the machine, left an unclosed scandir in pytest's own
    cleanup (`cleanup_candidates`), and `filterwarnings = error` failed a run whose tests all
    passed. `--basetemp` given on the command line still wins."""
    _ctrl_c_as_a_terminal_gives_it()
    if config.option.basetemp is None:
        own = tempfile.mkdtemp(prefix="mca-pytest-")
        config.option.basetemp = os.path.join(own, "t")
        config.add_cleanup(lambda: _remove_tree(own))


def _remove_tree(path: str) -> None:
    """rm -rf, not shutil.rmtree: some tests build trees deeper than Python's recursion limit."""
    subprocess.run(["rm", "-rf", "--", path], check=False)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The sandboxes this run's tests used, for CI's proof that none was dropped."""
    from tests.sandbox.mechanisms import write_log

    write_log()
