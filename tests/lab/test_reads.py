"""What a hand-in can read: the runtime, the lab, its own /tmp; nothing of the grader's world.

Oracle style: secrets are planted where a course keeps them (the instructor's home and its
shell start-up file with the grader's key, a reference solution, another section's hand-ins,
an earlier run's grades.csv and results.json, a root-only file standing in for /etc/shadow, an
autograder's source); hostile hand-ins open, list, stat and glob each one and raise with what
they found. Not one planted string may appear in any output the grader writes (CSV, Gradescope,
JUnit, the per-student logs, stdout), under every sandbox mechanism this system has. A control
read (the standard library, which a hand-in may read) shows the hand-ins did run their reads.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import replace
from pathlib import Path

import pytest

from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits
from mca.lab.outputs import Writer, csv_text
from mca.sandbox.probe import Mechanisms, probe
from tests.conftest import REPO

pytestmark = pytest.mark.slow  # hand-ins in sandboxes

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
MECH = probe()
LIMITS = Limits(seconds=60, check_seconds=10, memory_mb=1024)


def _modes() -> list[pytest.param]:  # type: ignore[valid-type]
    """Each way this system can contain a hand-in: both mechanisms, and each alone."""
    out = []
    if MECH.landlock_abi and MECH.user_namespaces:
        out.append(pytest.param(MECH, id="landlock+namespaces"))
    if MECH.landlock_abi:
        out.append(pytest.param(replace(MECH, user_namespaces=False), id="landlock"))
    if MECH.user_namespaces:
        out.append(pytest.param(replace(MECH, landlock_abi=0), id="namespaces"))
    return out or [pytest.param(None, marks=pytest.mark.skip(reason="no sandbox here"))]


# Reads every target four ways; raises with what came back that it should never have seen,
# after a control read of the standard library (which it may read).
PEEK = """
import os, pathlib
TARGETS = {targets!r}
def _peek():
    got = []
    for p in TARGETS:
        for how in (
            lambda p: open(p).read(),
            lambda p: " ".join(os.listdir(p)),
            lambda p: " ".join(str(x) for x in pathlib.Path(p).glob("*")),
            lambda p: str(os.stat(p)),
        ):
            try:
                got.append(how(p))
            except Exception as e:
                pass
    control = "CONTROL-" + str("def " in open(os.__file__).read())
    return control + " " + " ".join(x for x in got if {token!r} in x)
"""


class World:
    """The grader's machine, planted: every string in `planted` is a secret."""

    def __init__(self, root: Path) -> None:
        self.token = secrets.token_hex(6)
        self.key = "sk-test-" + secrets.token_hex(24)
        self.home = root / "home"
        self.subs = root / "class" / "section-1"
        self.planted: list[str] = [self.key]
        self.targets: list[str] = []
        self._plant(self.home / ".bashrc", f"export OPENAI_API_KEY={self.key}\n")
        self._plant(self.home / "course" / "reference" / "solution.py")
        self._plant(self.home / f"notes-{self.token}-names.txt")
        self._plant(root / "class" / "section-2" / "carol" / "exercises.py")
        self._plant(root / "earlier" / "grades.csv")
        self._plant(root / "earlier" / "carol" / "results" / "results.json")
        self._plant(root / "autograder" / "source" / "reference.py")
        shadow = self._plant(root / "etc" / "shadow")
        shadow.chmod(0o600)
        shadow.parent.chmod(0o700)
        self.targets += [
            str(self.home),
            str(self.home / "course"),
            str(root / "class"),
            str(root / "class" / "section-2"),
            str(self.subs),
            str(root / "earlier"),
            str(root / "autograder" / "source"),
            str(root / "etc"),
        ]
        bob = self.subs / "bob" / "exercises.py"
        bob.parent.mkdir(parents=True)
        bob.write_text(STARTER + f"\n# bob's own answer SECRET-BOB-{self.token}\n")
        self.planted.append(f"SECRET-BOB-{self.token}")
        self.targets.append(str(bob))

    def _plant(self, path: Path, text: str = "") -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        secret = f"PLANTED-{path.name}-{self.token}"
        path.write_text(text + secret + "\n")
        self.planted.append(secret)
        self.targets.append(str(path))
        return path

    def hostile(self) -> None:
        """Three hand-ins: one raises what it read in a function, one at import, one prints it
        and raises its own key-shaped find in a validate call."""
        peek = PEEK.format(targets=self.targets, token=self.token)
        files = {
            "mallory": "\ndef split_frontmatter(text):\n    raise ValueError(_peek())\n",
            "eve": "\nraise RuntimeError(_peek())\n",
            "trudy": "\nimport sys\nprint(_peek())\nprint(_peek(), file=sys.stderr)\n"
            "def validate_metadata(path, parsed, root):\n    raise KeyError(_peek())\n",
        }
        for name, tail in files.items():
            (self.subs / name).mkdir(parents=True)
            (self.subs / name / "exercises.py").write_text(STARTER + peek + tail)

    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "MCA_HOME": str(self.home / ".mca")}


def _outputs(root: Path) -> tuple[Writer, Path]:
    out = root / "out"
    writer = Writer(out / "grades.csv", out / "gradescope", out / "class.xml", out / "logs")
    writer.check()
    return writer, out


def _everything(out: Path, stdout: str) -> str:
    return stdout + "".join(p.read_text() for p in sorted(out.rglob("*")) if p.is_file())


@pytest.mark.parametrize("mech", _modes())
def test_a_hand_in_reads_nothing_of_the_graders_world(
    tmp_path: Path, mech: Mechanisms, capsys: pytest.CaptureFixture[str]
) -> None:
    world = World(tmp_path)
    world.hostile()
    writer, out = _outputs(tmp_path)
    plan = Plan(REPO, world.subs, jobs=2, seeds=0, limits=LIMITS, mechanisms=mech)
    plan = replace(plan, env=world.env(), deny=tuple(writer.paths))
    graded = grade(plan, writer.add)
    print(csv_text(graded))
    text = _everything(out, capsys.readouterr().out)
    rows = {g.student: g for g in graded}
    assert set(rows) == {"bob", "eve", "mallory", "trudy"}
    # the hostile ones ran their reads, and could read what they may (the control)
    assert "CONTROL-True" in text
    assert "crashed: ValueError" in text and 'the hand-in said: "CONTROL-True' in text
    assert "refused" in rows["eve"].text and "CONTROL-True" in rows["eve"].text
    leaked = [s for s in world.planted if s in text]
    assert leaked == []


def test_the_graders_keys_never_reach_an_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Even where the hand-in can read them (unsandboxed with the grader's rights, as a
    student's own self-test runs): the key exported in the grader's shell, and config.toml's,
    are scrubbed from every output, also when the child cut one."""
    world = World(tmp_path)
    config_key = "cfg-" + secrets.token_hex(20)
    mca_home = world.home / ".mca"
    mca_home.mkdir()
    (mca_home / "config.toml").write_text(f'api_key = "{config_key}"\n')
    monkeypatch.setenv("OPENAI_API_KEY", world.key)
    env = {**world.env(), "OPENAI_API_KEY": world.key}
    leak = f"""
import re
_found = re.findall(r"(?:sk-test|cfg)-[0-9a-f]+", open({str(world.home / ".bashrc")!r}).read()
                    + open({str(mca_home / "config.toml")!r}).read())
def split_frontmatter(text):
    raise ValueError(" ".join(_found))
def validate_metadata(path, parsed, root):
    raise ValueError("x" * 280 + _found[0])  # the child cuts its message at 300 characters
"""
    (world.subs / "leaky").mkdir()
    (world.subs / "leaky" / "exercises.py").write_text(STARTER + leak)
    out = tmp_path / "out"
    writer = Writer(out / "grades.csv", out / "gs", out / "j.xml", out / "logs")
    writer.check()
    grade(Plan(REPO, world.subs, limits=LIMITS, mechanisms=None, env=env), writer.add)
    text = _everything(out, capsys.readouterr().out)
    results = json.loads((out / "gs" / "leaky" / "results" / "results.json").read_text())
    assert "crashed: ValueError" in json.dumps(results)
    assert "[REDACTED]" in text
    for key in (world.key, config_key):
        assert key[:16] not in text
    assert os.environ["OPENAI_API_KEY"] == world.key  # the grader's own env is left as it was
