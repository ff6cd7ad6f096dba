"""What each of the lab's checks does, offline and deterministic, on one variant of the lab.

Every check runs the production code paths on the lab's packs (skills/) and fixtures, with the
policy under test, so a naive version fails exactly the checks its trap breaks. What a check
looks for comes from Names (mca/lab/variant.py): seed 0 is the lab as it ships, other seeds
rename it, so no check can be passed by special-casing the fixtures. Which checks exist, in what
order, with which exercise and hint, is the table in mca/lab/suite.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mca.config.specs import DEFAULT_SKILL_BUDGET
from mca.lab.variant import Names
from mca.skills.catalog import Budget
from mca.skills.discover import Discovery, char_fits, discover
from mca.skills.model import Root, displayer
from mca.skills.policy import Policy
from mca.skills.scan import load_candidate
from mca.skills.stage import StageResult, evaluate
from mca.tools import TOOL_NAMES

EIGHT = (
    "read_file",
    "list_dir",
    "find_files",
    "search_text",
    "write_file",
    "edit_file",
    "run_command",
    "update_plan",
)


class CheckFailed(Exception):
    """What a check saw instead of what it wanted."""


class CheckSkipped(Exception):
    """The check cannot run on this machine; the message says what to install."""


NODE_MAJOR = 18  # `node --test` and the scripts' ES modules need it
NODE_HELP = f"install Node.js {NODE_MAJOR} or newer (https://nodejs.org, or the nodejs package)"


def need_node(lab: Lab) -> str:
    """The `node` to run, or CheckSkipped saying what to install (looked up once a run)."""
    if "node" not in lab.memo:
        lab.memo["node"] = _node_problem()
    problem = lab.memo["node"]
    if problem:
        raise CheckSkipped(f"{problem}: {NODE_HELP}")
    return "node"


def _node_problem() -> str:
    node = shutil.which("node")
    if node is None:
        return "node not found"
    try:
        version = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"node does not run ({type(e).__name__})"
    major = re.match(r"v(\d+)\.", version)
    if major is None or int(major.group(1)) < NODE_MAJOR:
        return f"node {version or '(no version)'} is too old"
    return ""


class Unanswered(BaseException):
    """A student's function gave no usable answer (a crash, a time-out, a wrong type, not the
    student's code): the running check fails with this message. A BaseException, so production
    code on the way (`except Exception`) cannot take it for one of its own errors."""


def expect(condition: bool, saw: str) -> None:
    """Fail the running check with what was seen."""
    if not condition:
        raise CheckFailed(saw)


@dataclass
class Lab:
    """Where the lab's content lives (one variant of it), and the policy under test."""

    repo: Path
    policy: Policy
    names: Names = field(default_factory=Names)
    shipped: Path | None = None  # the lab as it ships (the end-to-end check runs on it)
    memo: dict[str, str] = field(default_factory=dict)  # shared by a run's checks (node's output)

    @property
    def skills(self) -> Path:
        return self.repo / "skills"

    @property
    def fixtures(self) -> Path:
        return self.repo / "fixtures"

    @property
    def workspace(self) -> Path:
        return self.fixtures / "workspace"

    def discover(self) -> Discovery:
        """The lab's packs as a session in fixtures/workspace sees them (paths relative to it)."""
        root = Root(self.skills, "explicit", 400)
        ws = self.workspace

        shown = displayer(ws, Path("/nonexistent-home"))
        budget = Budget(8000, "chars", "selftest")
        return discover([root], budget, char_fits, self.policy, shown=shown)

    def stage(
        self, sentence: str, budget: int = DEFAULT_SKILL_BUDGET, paths: Sequence[str] = ()
    ) -> StageResult:
        skills = self.discover().skill_set
        return evaluate(
            skills, sentence, budget=budget, root=self.repo, extra_paths=paths, policy=self.policy
        )


# -- the checks --------------------------------------------------------------------------------
def check_rule_in_body(lab: Lab) -> None:
    path = lab.skills / lab.names.calc / "SKILL.md"
    text = path.read_text(encoding="utf-8")
    cand = load_candidate(path, None, lab.policy)
    expect(cand.skill is not None, f"{lab.names.calc} did not load: {cand.diagnostics}")
    assert cand.skill is not None
    lines = text.split("\n")
    end = next(i for i, ln in enumerate(lines[1:], 1) if ln.strip() == "---")
    whole = "\n".join(lines[end + 1 :]).strip()  # the file's own body, rule included
    expect("\n---\n" in whole, "the lab's calc body lost its --- rule (content changed?)")
    body = cand.skill.body.strip()
    expect(body == whole, f"body is {len(body)} chars, the file's body is {len(whole)}")


def check_unclosed_fence(lab: Lab) -> None:
    cand = load_candidate(lab.fixtures / "broken-packs/no-closing-fence/SKILL.md", None, lab.policy)
    codes = [d.code for d in cand.diagnostics]
    expect(cand.skill is None, f"the file loaded as a skill (diagnostics: {codes})")
    expect(any(d.level == "error" for d in cand.diagnostics), f"no error diagnostic: {codes}")


def check_missing_description(lab: Lab) -> None:
    d = lab.discover()
    broken = lab.names.broken
    cand = next((c for c in d.candidates if c.path.parent.name == broken), None)
    expect(cand is not None, f"skills/{broken} was not found")
    assert cand is not None
    expect(cand.status == "skipped", f"status {cand.status!r}, not skipped")
    diag = next((x for x in cand.diagnostics if x.code == "missing-description"), None)
    expect(diag is not None, f"no missing-description diagnostic ({cand.diagnostics})")
    assert diag is not None
    expect("description" in diag.message and diag.level == "error", f"diagnostic: {diag}")


def check_wrong_type(lab: Lab) -> None:
    cand = load_candidate(lab.fixtures / "broken-packs/bad-priority/SKILL.md", None, lab.policy)
    codes = [x.code for x in cand.diagnostics]
    expect(cand.skill is not None, f"the pack with priority: high did not load ({codes})")
    assert cand.skill is not None
    expect(cand.skill.priority == 0, f"priority: high became {cand.skill.priority}")


def _release(lab: Lab) -> tuple[str, Path]:
    n = lab.names
    result = lab.stage(n.release_sentence)
    expect([b.name for b in result.blocks] == [n.release], f"{n.release} was not injected")
    return result.injected_text, lab.skills / n.release / "scripts" / n.script


def check_command_line(lab: Lab) -> None:
    text, script = _release(lab)
    shown = f"../../skills/{lab.names.release}/scripts/{lab.names.script}"  # from the workspace
    line = next((ln for ln in text.splitlines() if ln.endswith(shown)), "")
    expect(line == f"node {shown}", f"no `node {shown}` line in the injection")
    where = lab.repo / "skills" / lab.names.release / "scripts" / lab.names.script
    expect(where.resolve() == script.resolve(), f"{shown} is not the script")
    need_node(lab)  # the line is right; running it needs Node.js
    printed = lab.memo.get(str(script))
    if printed is None:  # the same script for every hand-in of a run: run it once
        printed = lab.memo[str(script)] = _bump(script)
    expect(printed == "1.5.0", f"running it printed {printed!r}")


def _bump(script: Path) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "package.json").write_text('{"name": "x", "version": "1.4.9"}\n')
        run = subprocess.run(
            ["node", str(script), "minor"], cwd=tmp, capture_output=True, text=True, timeout=60
        )
        return run.stdout.strip()


def check_script_not_read(lab: Lab) -> None:
    text, script = _release(lab)
    source = script.read_text(encoding="utf-8")
    names = lab.names.script_functions
    expect(all(n in source for n in names), "the script's function names changed")
    leaked = [n for n in names if n in text]
    expect(not leaked, f"the injected text contains {', '.join(leaked)}")


def check_path_reason(lab: Lab) -> None:
    n = lab.names
    result = lab.stage(n.path_sentence)
    hit = next((h for h in result.hits if h.skill.name == n.calc), None)
    expect(hit is not None, f"hits were {[h.skill.name for h in result.hits]}")
    assert hit is not None
    reasons = [str(r) for r in hit.reasons]
    expect(f"path {n.calc_file} (10)" in reasons, f"reasons were {reasons}")


def check_word_boundaries(lab: Lab) -> None:
    n = lab.names
    for sentence in n.hider_sentences:
        names = [h.skill.name for h in lab.stage(sentence).hits]
        expect(n.testing not in names, f"{sentence!r} hit {n.testing}")
    names = [h.skill.name for h in lab.stage(n.trigger_sentence).hits]
    expect(n.testing in names, f"{n.trigger_sentence!r} did not hit {n.testing} at all")


def check_domain_gate(lab: Lab) -> None:
    n = lab.names
    result = lab.stage(n.divide_sentence)
    scores = {h.skill.name: h.score for h in result.hits}
    expect(
        set(scores) >= {n.calc, n.archived},
        f"hits were {scores} (both conventions should match)",
    )
    loaded = [d.name for d in result.decisions if d.loaded]
    expect(loaded == [n.calc], f"loaded {loaded}")
    expect(scores[n.calc] > scores[n.archived], f"scores {scores}")
    loser = next(d for d in result.decisions if d.name == n.archived)
    want = f"same {n.domain} domain as {n.calc}, which won"
    expect(loser.reason == want, f"the archived one's reason was {loser.reason!r}")


def check_budget_gate(lab: Lab) -> None:
    n = lab.names
    result = lab.stage(n.divide_sentence, budget=n.budget)
    left_out = [d for d in result.decisions if d.name == n.calc]
    expect(bool(left_out) and not left_out[0].loaded, f"{n.calc} loaded under {n.budget} chars")
    reason = left_out[0].reason
    expect(
        re.fullmatch(rf"body is \d+ chars, only {n.budget} left", reason) is not None,
        f"reason {reason!r}",
    )
    expect(result.injected_text == "", f"{len(result.injected_text)} chars injected anyway")
    # the rival still loses to the domain's winner, though the winner did not fit
    rival = next((d for d in result.decisions if d.name == n.archived), None)
    want = f"same {n.domain} domain as {n.calc}, which won but did not fit the budget"
    expect(rival is not None and rival.reason == want, f"{n.archived}: {rival and rival.reason!r}")


def check_zero_injection(lab: Lab) -> None:
    result = lab.stage("what does this project do?")
    expect(len(result.injected_text) == 0, f"{len(result.injected_text)} chars injected")


def check_catalog(lab: Lab) -> None:
    d = lab.discover()
    loaded = sorted(d.skills)
    entries = re.findall(r"^- ([^:\n]+)(?::|$)", d.catalog.text, re.M)
    expect(sorted(entries) == loaded, f"catalog names {entries}, loaded {loaded}")
    for skill in d.skills.values():
        for line in skill.body.splitlines():
            if len(line) > 30:
                expect(line not in d.catalog.text, f"body text of {skill.name} is in the catalog")


def check_registry(lab: Lab) -> None:
    from mca.agent import Agent
    from mca.context.engine import Engine
    from mca.context.prompt import SystemPrompt
    from mca.events import drop
    from mca.session.faces import HeadlessUI
    from mca.skills.stage import SkillStage
    from mca.tools.base import Approvals, ToolEnv
    from mca.types import Message as Msg
    from mca.types import Request, Response, TextSink
    from mca.workspace.store import WorkspaceStore
    from mca.workspace.walk import OFF

    expect(TOOL_NAMES == EIGHT, f"registry before: {TOOL_NAMES}")
    seen: list[int] = []

    class Counter:
        name = "count"

        def complete(
            self,
            request: Request,
            on_text: TextSink | None = None,
            on_thinking: TextSink | None = None,
        ) -> Response:
            seen.append(len(request.tools))
            return Response(Msg("assistant", "ok"))

        def close(self) -> None:
            return None

    skills = lab.discover().skills
    budget = DEFAULT_SKILL_BUDGET
    stage = SkillStage(skills, budget=budget, root=lab.repo, emit=drop, policy=lab.policy)
    with tempfile.TemporaryDirectory() as tmp:
        store = WorkspaceStore(Path(tmp), Path(tmp) / "store", "selftest", "00000000T000000", OFF)
        env = ToolEnv(store, Approvals(HeadlessUI(commands=False)), drop)
        Agent(Engine(Counter(), SystemPrompt("s")), env, pre_turn=stage).run_turn(
            f"{lab.names.divide_sentence} and {lab.names.release_sentence}"
        )
    expect(TOOL_NAMES == EIGHT and seen == [8], f"registry after: {TOOL_NAMES}, request had {seen}")


def check_end_to_end(lab: Lab) -> None:
    from mca.assembly.assemble import open_session
    from mca.config.settings import load_settings
    from mca.models.mock import MockModel
    from mca.session.faces import HeadlessUI
    from mca.types import KIND_SKILLS

    need_node(lab)  # the check runs the workspace's tests with node --test
    shipped = lab.shipped or lab.repo  # the mock model speaks the shipped lab's words
    original = (shipped / "fixtures/workspace/src/calc.js").read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "workspace"
        shutil.copytree(shipped / "fixtures/workspace", ws)
        env = {"MCA_HOME": str(Path(tmp) / "home"), "HOME": tmp, "MOCK": "1"}
        skills = (shipped / "skills",)
        settings = load_settings(env, workspace=ws).with_(skills_dirs=skills, mode="yolo")
        session = open_session(settings, HeadlessUI(), model=MockModel(), log_to_disk=False)
        result = session.run_turn("fix the divide-by-zero problem in src/calc.js")
        injected = [m for m in session.agent.messages if m.kind == KIND_SKILLS]
        names = [n for m in injected for n in m.skills]
        expect("calc-conventions" in names, f"injected skills: {names}")
        source = (ws / "src/calc.js").read_text()
        expect("throw new RangeError" in source, "src/calc.js does not throw after the turn")
        tests = subprocess.run(
            ["node", "--test"], cwd=ws, capture_output=True, text=True, timeout=120
        )
        expect(tests.returncode == 0, f"node --test exited {tests.returncode}")
        ran = [t.name for t in result.tools]
        expect(ran[:3] == ["read_file", "edit_file", "run_command"], f"tool calls: {ran}")
        records, _ = session.workspace.journal.read()
        files = [f.path for r in records if r.writes is not None for f in r.writes.files]
        expect(files == ["src/calc.js"], f"snapshots: {files}")
        report = session.undo()
        expect(report.restored == ["src/calc.js"], f"/undo: {report}")
        expect((ws / "src/calc.js").read_bytes() == original, "/undo did not restore the bytes")
        session.close()
