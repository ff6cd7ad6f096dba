"""Estimator golden counts, ledger rows that add up to the request, calibration, compare."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mca.cli.ledger_compare import compare
from mca.ledger import Calibration, request_chars
from mca.skills.catalog import Budget
from mca.skills.discover import char_fits, discover
from mca.skills.model import Root
from mca.tokens import Estimator, load_encoding
from mca.types import Usage
from tests.conftest import REPO
from tests.helpers import FakeModel, call, lab_session, say

GOLDEN = REPO / "fixtures" / "tokens" / "sample.txt"
# Regenerate with: make golden (prints the counts for fixtures/tokens/sample.txt)
GOLDEN_COUNTS = {"o200k_base": 173, "cl100k_base": 182}


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_golden_counts(encoding: str) -> None:
    text = GOLDEN.read_text(encoding="utf-8")
    assert Estimator(encoding).count(text) == GOLDEN_COUNTS[encoding]


def test_known_token_ids() -> None:
    assert load_encoding("cl100k_base").encode_ordinary("hello world") == [15339, 1917]
    assert load_encoding("o200k_base").encode_ordinary("hello world") == [24912, 2375]


def test_estimator_caches_and_labels() -> None:
    est = Estimator("cl100k_base")
    assert est.label == "estimated, cl100k_base"
    assert est.count("") == 0 and est.count("hello world") == 2
    assert est.fits("abc", 3) and not est.fits("hello world " * 50, 10)


_PIECES = st.sampled_from(
    [
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "a",
        "Word",
        "it's",
        "x/y",
        "--",
        "...",
        "(",
        "1234567",
        "é",
        "日本語",
        "한국어",
        "🙂",
        "\u200b",
        "\u00a0",
        ":",
        "- name:",
        "`code`",
        "ABCdef",
        "'ll",
    ]
)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@given(st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=40).map("".join))
def test_a_text_has_a_token_or_more_per_run_of_non_spaces(encoding: str, text: str) -> None:
    """What the catalog relies on to skip renders that cannot fit (mca.skills.catalog)."""
    assert Estimator(encoding).count(text) >= len(text.split())


def test_rows_add_up_to_the_request_sent(ws: Path) -> None:
    shutil.copytree(REPO / "fixtures/workspace", ws, dirs_exist_ok=True)
    model = FakeModel([say("first"), call("read_file", path="src/calc.js"), say("done")])
    s = lab_session(ws, model)
    s.run_turn("hello")
    s.run_turn("fix the divide-by-zero problem, see @README.md")
    entry = s.ledger.last
    assert entry is not None
    assert entry.chars == request_chars(model.requests[-1])
    labels = [r.label for r in entry.rows]
    expected = [
        "system base prompt",
        "skill catalog (stage one)",
        "tool schemas (8 tools)",
        "skill body: calc-conventions",
        "@references: README.md",
        "your sentence",
        "conversation history (2 messages)",
        "this turn's tool calls and results",
        "skill not loaded: calc-conventions-archived",
    ]
    assert set(expected) <= set(labels)
    body = next(r for r in entry.rows if r.label == "skill body: calc-conventions")
    assert "keyword" in body.reason and body.reason.endswith("→ loaded")
    assert entry.tokens == sum(r.tokens for r in entry.rows)
    assert entry.to_json()["window_remaining"] == entry.window - entry.tokens


def test_attachment_rows_for_scripts(ws: Path) -> None:
    model = FakeModel([say("ok")])
    s = lab_session(ws, model)
    s.run_turn("cut a release")
    entry = s.ledger.last
    assert entry is not None and entry.chars == request_chars(model.requests[-1])
    rows = [r for r in entry.rows if r.kind == "stage3"]
    assert len(rows) == 1 and rows[0].label.startswith("attachment: node ")


def test_calibration_from_provider_usage(ws: Path) -> None:
    model = FakeModel([say("a", Usage(1500, 3)), say("b", Usage(1560, 3))])
    s = lab_session(ws, model)
    s.run_turn("hello")
    first = s.ledger.last
    assert first is not None and first.provider_prompt_tokens == 1500
    assert first.calibration == pytest.approx(1500 / first.tokens, rel=1e-3)
    s.run_turn("again")
    second = s.ledger.last
    assert second is not None and second.calibrated is not None
    stored = json.loads((ws.parent / "home" / "calibration.json").read_text())
    assert stored["mock"]["samples"] == 2
    assert Calibration(ws.parent / "home").factor("mock") == pytest.approx(
        second.calibration, rel=1e-3
    )


def test_ledger_in_json_and_log(ws: Path) -> None:
    s = lab_session(ws, FakeModel([say("ok")]))
    s.run_turn("hello")
    events = [e for e in s.log.events if e["event"] == "ledger"]
    assert len(events) == 1 and events[0]["total_tokens"] > 0


def test_compare_on_the_lab_packs() -> None:
    d = discover([Root(REPO / "skills", "explicit", 400)], Budget(10**6, "chars", "t"), char_fits)
    est = Estimator()
    report = compare(
        d, ["what does this project do?", "fix the divide-by-zero problem"], est, 12_000, REPO
    )
    nothing, divide = report["sentences"]
    assert nothing["strategies"]["gated"]["stage2_tokens"] == 0
    assert nothing["strategies"]["eager"]["saving_pct"] == 0
    assert (
        divide["strategies"]["matched"]["stage2_tokens"]
        > divide["strategies"]["gated"]["stage2_tokens"]
        > 0
    )
    for strat in ("eager", "matched", "gated"):
        total = report["total"][strat]
        assert total["total_tokens"] == sum(
            r["strategies"][strat]["total_tokens"] for r in report["sentences"]
        )
        assert set(total) == {"stage1_tokens", "stage2_tokens", "total_tokens", "saving_pct"}
    assert report["total"]["gated"]["saving_pct"] > report["total"]["matched"]["saving_pct"] > 0


def test_table_shows_a_calibrated_column_once_calibrated(ws: Path) -> None:
    from mca.ui.render import ledger_summary, ledger_table

    s = lab_session(ws, FakeModel([say("a", Usage(3000, 3))]))
    s.run_turn("hello")
    assert s.ledger.last is not None
    table = ledger_table(s.ledger.last)
    assert "calibr." in table and "provider reported 3,000 prompt tokens" in table
    assert "estimated with o200k_base" in table
    assert ledger_summary(s.ledger.turns).splitlines()[2].split()[0] == "1"


def test_calibration_is_per_model_and_base_url_and_rejects_outliers(tmp_path: Path) -> None:
    local = Calibration(tmp_path, "m", "http://127.0.0.1:8080/v1")
    other = Calibration(tmp_path, "m", "https://api.example.com/v1")
    for reported in (1300, 1350, 1400):
        assert local.update(1000, reported)[1]
    factor, used = local.update(1000, 220)  # a server that dropped the tools: far off
    assert not used and factor == pytest.approx(1.35, rel=1e-2)
    assert local.update(1000, 9000)[1] is False  # beyond any plausible ratio
    assert other.factor() is None  # another server's figures never mix in
