"""The offline mock works the sample workspace's common requests as an agent would (issue 46,
item 3): it lists, reads, runs the tests in the sandbox, edits, runs them again and says what
it did, each step decided from what the tools returned. The oracle is the workspace's own
tests, run by node after mca is done."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mca.agent import Agent
from mca.models.mock import HELP, MockModel
from mca.sandbox.probe import probe
from mca.tools.base import ToolEnv
from tests.conftest import REPO
from tests.helpers import engine
from tests.ptyscreen import MCA, child_env

SAMPLE = REPO / "fixtures" / "workspace"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node runs the sample workspace's tests")


def sample(ws: Path) -> Path:
    shutil.copytree(SAMPLE, ws, dirs_exist_ok=True)
    return ws


def node_tests(ws: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NODE), "--test"], cwd=ws, capture_output=True, text=True, timeout=60, check=False
    )


def mock_agent(env: ToolEnv) -> Agent:
    return Agent(engine(MockModel(), "sys"), env)


def test_fix_the_failing_test_reads_runs_edits_and_runs_again(env: ToolEnv, ws: Path) -> None:
    sample(ws)
    assert node_tests(ws).returncode != 0
    r = mock_agent(env).run_turn("fix the failing test")
    names = [t.name for t in r.tools]
    assert names[0] == "list_dir" and names.count("run_command") == 2
    assert names.index("edit_file") > names.index("run_command")
    assert names[-1] == "run_command" and r.tools[-1].ok  # the first run failed, as it should
    assert "divide by zero throws a RangeError" in r.answer and "the tests pass" in r.answer
    assert node_tests(ws).returncode == 0


def test_tests_that_pass_already_are_left_alone(env: ToolEnv, ws: Path) -> None:
    sample(ws)
    test = ws / "test" / "calc.test.js"
    test.write_text(
        test.read_text()
        .replace("RangeError (team", "nothing (team")
        .replace(
            "assert.throws(() => divide(1, 0), RangeError);",
            "assert.equal(divide(1, 0), Infinity);",
        )
    )
    before = (ws / "src" / "calc.js").read_text()
    r = mock_agent(env).run_turn("fix the failing test")
    assert "Nothing to fix" in r.answer and "edit_file" not in [t.name for t in r.tools]
    assert (ws / "src" / "calc.js").read_text() == before


def test_a_failure_it_cannot_fix_is_said_and_nothing_changes(env: ToolEnv, ws: Path) -> None:
    sample(ws)
    test = ws / "test" / "calc.test.js"
    test.write_text(test.read_text().replace("add(2, 3), 5", "add(2, 3), 6"))
    r = mock_agent(env).run_turn("fix the failing test")
    assert "'add, subtract, multiply' failed" in r.answer and "not one I can fix" in r.answer
    assert not any(t.name == "edit_file" for t in r.tools)


def test_what_does_this_project_do_reads_and_says(env: ToolEnv, ws: Path) -> None:
    sample(ws)
    r = mock_agent(env).run_turn("what does this project do?")
    assert {t.name for t in r.tools} == {"list_dir", "read_file"}
    assert "A tiny calculator" in r.answer and "add, subtract, multiply, divide" in r.answer
    assert "`node --test`" in r.answer and 'calc-sample ("Sample workspace' in r.answer


def test_add_a_test_for_writes_one_that_runs(env: ToolEnv, ws: Path) -> None:
    sample(ws)
    r = mock_agent(env).run_turn("add a test for multiply")
    written = ws / "test" / "multiply.test.js"
    assert "assert.equal(multiply(8, 2), 16);" in written.read_text()
    assert [t.name for t in r.tools][-2:] == ["write_file", "run_command"]
    assert "4 tests, 1 failing" in r.answer  # the new one passes; the old failure is still there
    assert "# pass 3" in node_tests(ws).stdout


def test_a_function_that_is_not_there_is_said(env: ToolEnv, ws: Path) -> None:
    sample(ws)
    r = mock_agent(env).run_turn("add a test for modulo")
    assert "found no function modulo" in r.answer and not (ws / "test" / "modulo.test.js").exists()


def test_anything_else_still_gets_the_help(env: ToolEnv, ws: Path) -> None:
    sample(ws)
    assert mock_agent(env).run_turn("tell me a joke").answer == HELP


@pytest.mark.e2e
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
@pytest.mark.skipif(not probe().available, reason="no sandbox: -p asks before each command")
def test_mock_p_fix_the_failing_test_makes_it_pass(tmp_path: Path) -> None:
    ws = sample(tmp_path / "ws")
    done = subprocess.run(
        [str(MCA), "-p", "fix the failing test"],
        cwd=ws, env=child_env(ws, MOCK="1"), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the tests pass" in done.stdout
    assert node_tests(ws).returncode == 0


def test_a_failure_it_cannot_read_is_said(env: ToolEnv, ws: Path) -> None:
    sample(ws)
    (ws / "package.json").write_text('{"scripts": {"test": "no-such-runner --all"}}')
    r = mock_agent(env).run_turn("fix the failing test")
    assert not any(t.name == "edit_file" for t in r.tools)
    assert "`no-such-runner --all`: the tests fail" in r.answer  # exit 127, from the shell
    assert "cannot tell which test failed" in r.answer and "nothing changed" in r.answer
