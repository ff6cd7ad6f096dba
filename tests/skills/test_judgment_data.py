"""The judgment's weights are data (mca/data/judgment.json, written by `python -m
bench.train_judge --write`), and they have not drifted from the repository's training data:
its hash is the one they were trained on, and dev re-scored with them gives the figures the
file records. Runs from a clone without ../shared/corpus (issue 35, item 3)."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bench import judge_data
from mca.skills import judgment
from mca.skills.model import Skill
from mca.skills.trigger import SkillSet, judge

ROOT = Path(__file__).resolve().parents[2]
RETRAIN = "meant? `python -m bench.train_judge --write` (then `make decisions`)"


def test_the_runtime_uses_the_shipped_weights_and_margin() -> None:
    data = judge_data.shipped()
    model = judgment.default_model()
    assert tuple(data["weights"][name] for name in judgment.FEATURES) == model.weights
    assert data["margin"] == model.margin


def test_a_data_file_without_every_feature_is_refused(tmp_path: Path) -> None:
    data = judge_data.shipped()
    del data["weights"]["rival_name"]
    bad = tmp_path / "judgment.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="rival_name"):
        judgment.load_weights(bad)


def test_the_training_data_is_what_the_weights_were_trained_on() -> None:
    shipped = judge_data.shipped()["training"]
    cases = judge_data.training_cases()  # dev and the external pool's train half
    assert judge_data.digest(cases) == shipped["sha256"], f"training data changed: {RETRAIN}"
    assert (len(cases), sum(len(c.items) for c in cases)) == (
        shipped["files"],
        shipped["queries"],
    )


CHECK = """
import json
from bench import judge_data
cases = judge_data.training_cases()
dev = [c for c in cases if c.split == "dev"]
print(json.dumps({"sha256": judge_data.digest(cases), "dev": judge_data.figures(dev)}))
"""


@pytest.mark.slow
def test_dev_rescored_in_a_clone_without_the_corpus_gives_the_shipped_figures(
    tmp_path: Path,
) -> None:
    clone = tmp_path / "clone" / "mca"  # no ../shared beside it
    for part in ("bench", "mca", "fixtures", "skills"):
        shutil.copytree(ROOT / part, clone / part)
    assert not (clone.parent / "shared").exists()
    run = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=clone,
        env={"PYTHONPATH": str(clone)},
        capture_output=True,
        text=True,
        check=True,
    )
    now = json.loads(run.stdout)
    data = judge_data.shipped()
    assert now["sha256"] == data["training"]["sha256"], f"training data changed: {RETRAIN}"
    assert now["dev"] == data["dev"], f"dev figures drifted: {RETRAIN}"


def test_a_model_passed_in_judges_and_the_shipped_one_is_left_as_it_was() -> None:
    # The weights, margin, background and competitors are a value: a stage given another
    # model judges by it, and nothing of mca.skills is rebound (bench.train_judge does this).
    shipped = judgment.default_model()
    skill = Skill("gif", "slack gif maker", Path("/nowhere/gif/SKILL.md"), "gif body")
    sentence = "make me a gif of the openai logo"
    eager = replace(shipped, weights=(10.0, *shipped.weights[1:]))
    assert judge(SkillSet([skill], model=eager), sentence, []) != []
    assert judge(SkillSet([skill]), sentence, []) == []
    assert judgment.default_model() is shipped and shipped.weights[0] < 0


def _targets(node: ast.AST) -> list[ast.expr]:
    """What a node may rebind: an assignment's targets, setattr's first argument."""
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("setattr"):
        return node.args[:1]
    return []


def _rebinds(tree: ast.Module) -> list[str]:
    """Where a module's code rebinds an attribute of a module of mca.skills."""
    modules = {
        a.asname or a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "mca.skills"
        for a in node.names
    }
    modules |= {
        a.asname
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for a in node.names
        if a.name.startswith("mca.skills.") and a.asname
    }
    found = []
    for node in ast.walk(tree):
        called = isinstance(node, ast.Call)
        for t in _targets(node):
            for e in ast.walk(t):
                if isinstance(e, ast.Attribute) and ast.unparse(e.value) in modules:
                    found.append(f"{t.lineno}: {ast.unparse(e)}")
                elif called and isinstance(e, ast.Name) and e.id in modules:
                    found.append(f"{t.lineno}: setattr({e.id}, ...)")
                elif (
                    called and isinstance(e, ast.Constant) and str(e.value).startswith("mca.skills")
                ):
                    found.append(f"{t.lineno}: setattr({e.value!r}, ...)")
    return found


def test_no_trainer_or_test_rebinds_an_attribute_of_the_skills_modules() -> None:
    found = {
        str(path.relative_to(ROOT)): rebinds
        for part in ("bench", "tests")
        for path in sorted((ROOT / part).rglob("*.py"))
        if (rebinds := _rebinds(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert not found, f"pass a value in (mca.skills.judgment.Model, SkillSet(model=...)): {found}"
    sample = "from mca.skills import judgment\njudgment.WEIGHTS = (1.0,)\nsetattr(judgment, 'X', 1)"
    assert len(_rebinds(ast.parse(sample))) == 2  # the check sees what it looks for
