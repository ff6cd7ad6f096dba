"""The judgment's weights are data (mca/data/judgment.json, written by `python -m
bench.train_judge --write`), and they have not drifted from the repository's training data:
its hash is the one they were trained on, and dev re-scored with them gives the figures the
file records. Runs from a clone without ../shared/corpus (issue 35, item 3)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import judge_data
from mca.skills import judgment

ROOT = Path(__file__).resolve().parents[2]
RETRAIN = "meant? `python -m bench.train_judge --write` (then `make decisions`)"


def test_the_runtime_uses_the_shipped_weights_and_margin() -> None:
    data = judge_data.shipped()
    assert tuple(data["weights"][name] for name in judgment.FEATURES) == judgment.WEIGHTS
    assert data["margin"] == judgment.MARGIN


def test_a_data_file_without_every_feature_is_refused(tmp_path: Path) -> None:
    data = judge_data.shipped()
    del data["weights"]["rival_name"]
    bad = tmp_path / "judgment.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="rival_name"):
        judgment.load_model(bad)


def test_the_training_data_is_what_the_weights_were_trained_on() -> None:
    shipped = judge_data.shipped()["training"]
    cases = judge_data.dev_cases()
    assert judge_data.digest(cases) == shipped["sha256"], f"training data changed: {RETRAIN}"
    assert (len(cases), sum(len(c.items) for c in cases)) == (
        shipped["files"],
        shipped["queries"],
    )


CHECK = """
import json
from bench import judge_data
cases = judge_data.dev_cases()
print(json.dumps({"sha256": judge_data.digest(cases), "dev": judge_data.figures(cases)}))
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
