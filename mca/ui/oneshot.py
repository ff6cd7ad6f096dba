"""`mca -p SENTENCE`: one turn, the answer on stdout, progress on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from mca.cancel import ended_early
from mca.errors import McaError, error_line
from mca.events import LedgerRecorded, SessionResumed
from mca.ledger import TurnLedger
from mca.process import signals
from mca.session.faces import UI
from mca.session.session import Session
from mca.text.counts import plural
from mca.text.sanitize import (
    for_terminal,
    scrub,
    scrub_data,
    visible,
)
from mca.turn import StopReason, TurnResult
from mca.ui.face import FaceConfig
from mca.ui.jsonl import StreamUI
from mca.ui.outcome import cancelled
from mca.ui.render import ledger_table
from mca.ui.spinner import ASKING
from mca.ui.stderr_ui import StderrUI
from mca.ui.stream_events import Failed, TurnEnded, UsageReported
from mca.ui.width import fitted

__all__ = ["EXIT_INTERRUPTED", "OneShot", "Opener", "StderrUI", "turn_json"]

EXIT_INTERRUPTED = 130  # Ctrl-C (SIGTERM and SIGHUP: 143, 129)


def turn_json(session: Session, result: TurnResult) -> dict[str, Any]:
    """The --json object for a turn."""
    obj: dict[str, Any] = {
        "session": session.id,
        "answer": result.answer,
        "turn": result.turn,
        "stopped": (result.answer or None) if result.stopped_early else None,
        "stop": str(result.stop),  # why the turn ended: end, step_limit, error, interrupted
        "notice": result.notice or None,
        "error": None,
        "tool_calls": [
            {"name": t.name, "arguments": dict(t.arguments), "ok": t.ok, "result": t.result}
            for t in result.tools
        ],
        "usage": {
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "cached_tokens": result.usage.cached_tokens,
            "cache_write_tokens": result.usage.cache_write_tokens,
            "reasoning_tokens": result.usage.reasoning_tokens,
            "reported_by_provider": result.usage_reported,
        },
        "model": {"provider": session.model.provider, "name": session.model.model},
        "duration_ms": round(result.seconds * 1000),
        "cost": _cost(session, result),
    }
    stage = session.skills.stage.last
    if stage is not None:
        skills = stage.to_json()
        skills["injected_tokens"] = session.skills.estimator.count(stage.injected_text)
        skills["tokens_label"] = session.skills.estimator.label
        obj["skills"] = skills
    if session.ledger.last is not None:
        obj["ledger"] = session.ledger.last.to_json()
    return obj


def _cost(session: Session, result: TurnResult) -> dict[str, object]:
    """The turn's estimated cost and where its prices came from (as /cost prices a session)."""
    from mca.usage import turn_cost, turn_usage

    est, ledger = session.skills.estimator, session.ledger.last
    usage, reported = result.usage, result.usage_reported
    t = turn_usage(
        result.turn, usage, reported, result.requests, session.messages, est, ledger, result.seconds
    )
    return turn_cost(t, session.model.model, session.config.prices, session.config.catalog)


Opener = Callable[[UI], Session]  # the assembly's: a session around this face's UI (one shot)


class OneShot:
    """One -p run: the face's config, how its session is opened, and where it reads and
    writes (stdout the answer, stderr the rest, stdin the answers to questions)."""

    def __init__(
        self,
        face: FaceConfig,
        opener: Opener,
        *,
        out: TextIO | None = None,
        err: TextIO | None = None,
        stdin: TextIO | None = None,
    ) -> None:
        self.face, self.opener = face, opener
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.stdin = stdin or sys.stdin

    def note(self, text: str) -> None:
        """A line on stderr, as every line there goes: keys scrubbed, controls made visible."""
        self.err.write(fitted(for_terminal(text, self.face.secrets), self.err) + "\n")

    def _error(self, e: McaError) -> int:
        self.err.write(fitted(error_line(e, self.face.secrets), self.err))
        return e.exit_code

    def _print_json(self, obj: dict[str, Any]) -> None:
        """--json's object, every string in it scrubbed (the answer, the error, tool results)."""
        text = json.dumps(scrub_data(obj, self.face.secrets), indent=2, ensure_ascii=False)
        self.out.write(text + "\n")
        self.out.flush()

    def _mock_note(self) -> None:
        if self.face.mock_reason:
            self.note(f"mca: using the offline mock model ({self.face.mock_reason})")

    def _open(self, ui: StderrUI) -> Session:
        """The session, a spinner on a terminal saying so while the server is asked for its
        context window."""
        spinner = ui.spinner if self.face.asks_window else None
        if spinner is not None:
            spinner.start(ASKING)
        try:
            return self.opener(ui)
        finally:
            if spinner is not None:
                spinner.stop()

    def resume(self, session: Session, wanted: str, fork: bool = False) -> SessionResumed:
        """Go on with a saved conversation (an id, or 'last'), under its id (`fork`: a copy,
        under a new one)."""
        from mca.state.conversations import pick

        if not wanted:
            raise McaError(
                "--resume without an id lists conversations to pick from: that needs the"
                " REPL (with -p, give the id, or use --continue)"
            )
        saved = pick(self.face.home / "sessions", self.face.workspace, wanted)
        session.restore(saved, fork)
        for note in saved.notes:
            self.note(f"mca: {note}")
        how = f"forked {saved.id} as {session.id}" if fork else f"resumed {saved.id}"
        self.note(f"mca: {how} ({plural(saved.turns, 'turn')})")
        if early := ended_early(saved.messages):
            self.note(f"mca: {early}")
        return SessionResumed(saved.id, saved.turns, forked_as=session.id if fork else "")

    def run(
        self, sentence: str, output: str = "text", resume: str | None = None, fork: bool = False
    ) -> int:
        """Run one turn; exit 0 on an answer, 1 when the turn stopped early or failed. With
        --json a failed turn still prints its object, with `error` and the tool calls that did
        run; stream-json writes every event as a JSON line as the turn goes (streamed)."""
        if output == "stream-json":
            return self.streamed(sentence, resume, fork)
        as_json = output == "json"
        to = None if as_json or not self.face.stream else self.out
        ui = StderrUI(self.face, self.err, to, self.stdin)
        session = self._open(ui)
        try:
            if resume is not None:
                self.resume(session, resume, fork)
            self._mock_note()
            return self._turn(session, ui, sentence, as_json)
        finally:
            session.close()

    def _turn(self, session: Session, ui: StderrUI, sentence: str, as_json: bool) -> int:
        show_ledger = self.face.show_ledger
        try:
            result = session.run_turn(sentence, ledger=as_json or show_ledger)
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM, SIGHUP
            ui.end_stream()  # what streamed of the answer ends its line
            line = self._cancelled(session)
            if as_json:  # --json still prints its object on Ctrl-C, SIGTERM, SIGHUP
                last = session.last_turn or TurnResult(session.turns + 1, "")
                ended = {"stop": str(StopReason.INTERRUPTED), "stopped": line}
                self._print_json(turn_json(session, last) | ended)
            self.note(f"mca: {line}")
            return signals.exit_code(EXIT_INTERRUPTED)
        except McaError as e:
            if not as_json or session.last_turn is None:
                raise
            ended = {"error": str(e), "stop": str(StopReason.ERROR)}
            self._print_json(turn_json(session, session.last_turn) | ended)
            return self._error(e)
        ui.end_stream()
        if as_json:
            self._print_json(turn_json(session, result))
        else:
            if not ui.any_streamed and not result.stopped_early:
                answer = scrub(result.answer.rstrip("\n"), self.face.secrets)
                shown = fitted(visible(answer), self.out) if self.out.isatty() else answer
                self.out.write(shown + "\n")
            self.out.flush()
            if result.stopped_early:  # stdout keeps the model's words; why it stopped: here
                self.note(f"mca: {result.answer}")
            if show_ledger and session.ledger.last is not None:
                self.note(ledger_table(session.ledger.last))
            elif not show_ledger:
                session.finish_turn(result)  # after the answer: the tokenizer is not on its path
        if result.notice:
            self.note(f"mca: {result.notice}")
        return 1 if result.stopped_early else 0

    @staticmethod
    def _cancelled(session: Session) -> str:
        """The turn was stopped: what the conversation kept of it, and how to go on."""
        then = "the session is saved: mca --continue goes on with it"
        return cancelled(session.last_turn, None, then)

    def streamed(self, sentence: str, resume: str | None = None, fork: bool = False) -> int:
        """-p with --output-format stream-json: session.start, every event of the turn as it
        happens, then usage and turn.end (error and turn.end when it fails) on stdout, one JSON
        object per line. Questions are asked on the terminal, as without it."""
        ui = StreamUI(self.out, self.face.secrets, StderrUI(self.face, self.err, None, self.stdin))
        session = self.opener(ui)
        self._mock_note()
        try:
            resumed = None
            try:  # session.start first, with the id the conversation goes on under
                resumed = self.resume(session, resume, fork) if resume is not None else None
            finally:
                ui.start(session.started())
            if resumed is not None:
                ui.event(resumed)
            result = session.run_turn(sentence, ledger=False)
            ui.end_text()
            entry = session.finish_turn(result)
            if self.face.show_ledger:
                ui.event(LedgerRecorded(entry))
            for event in _end_events(result, entry, _cost(session, result)):
                ui.event(event)
        except (McaError, KeyboardInterrupt) as e:
            last = session.last_turn
            turn = last.turn if last is not None else session.turns + 1
            if isinstance(e, KeyboardInterrupt):  # Ctrl-C, SIGTERM, SIGHUP
                line = self._cancelled(session)
                ui.event(TurnEnded(turn, "", StopReason.INTERRUPTED, line))
                return signals.exit_code(EXIT_INTERRUPTED)
            ui.event(Failed(str(e), e.exit_code))
            ui.event(TurnEnded(turn, "", StopReason.ERROR, ""))
            return self._error(e)
        finally:
            session.close()
        return 1 if result.stopped_early else 0


def _end_events(
    result: TurnResult, entry: TurnLedger, cost: dict[str, object]
) -> tuple[UsageReported, TurnEnded]:
    """The last two lines of a streamed turn: its usage, then its answer and why it ended."""
    u = result.usage
    usage = UsageReported(
        result.turn,
        u.prompt_tokens,
        u.completion_tokens,
        result.usage_reported,
        len(result.requests),
        entry.tokens,
        entry.encoding,
        u.cached_tokens,
        u.cache_write_tokens,
        u.reasoning_tokens,
        round(result.seconds * 1000),
        cost,
    )
    return usage, TurnEnded(result.turn, result.answer, result.stop, result.notice)
