"""What the REPL prints as it starts: the banner (mca/assembly/sandboxing.py builds it), then the
skills summary.

On a terminal the summary is prepared in a thread once the first prompt is on screen
(the session's build never delays the prompt) and printed on the main thread only: above the
running prompt (prompt_toolkit's run_in_terminal), or before the first line is handled. So it
comes out whole and never lands inside a turn's output, however early that line was sent."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import Application, run_in_terminal

from mca.errors import McaError
from mca.ui.spinner import ASKING, STARTING

if TYPE_CHECKING:  # built after the prompt is on screen
    from mca.session.session import Session
    from mca.ui.spinner import Spinner


class LazySession:
    """The REPL's session, built once: in the start-up thread behind the prompt, or on first
    use, whichever comes first; a failure to build it is raised on every use after."""

    def __init__(self, open_session: Callable[[], Session]) -> None:
        self._open = open_session
        self.built: Session | None = None  # None until built (and when building failed)
        self.error: BaseException | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def get(self) -> Session:
        """The session (built now if it is not yet); the failure to build it, raised."""
        self.build()
        if self.error is not None:
            raise self.error
        assert self.built is not None
        return self.built

    def build(self) -> None:
        """Build it, once (a failure is kept for get(), which the main thread reports)."""
        with self._lock:
            if self._ready.is_set():
                return
            try:
                self.built = self._open()
            except McaError as e:
                self.error = e
            except OSError as e:
                self.error = McaError(f"cannot start the session: {e}")
            except Exception as e:  # a bug: re-raised as it is on first use, never dropped
                self.error = e
            finally:
                self._ready.set()

    @contextlib.contextmanager
    def awaited(self, spinner: Spinner | None, asks_window: bool) -> Iterator[None]:
        """While a line waits for the session to be built: `spinner` (on a terminal) says what
        takes the time (a server asked for its context window, most often)."""
        if spinner is None or self.ready:
            yield
            return
        spinner.start(ASKING if asks_window else STARTING)
        try:
            yield
        finally:
            spinner.stop()


def skills_summary(session: Session) -> str:
    """The line about skills under the banner (counts tokens: loads the tokenizer)."""
    from mca.skills.discover import summary_line

    sk = session.skills
    tokens = sk.estimator.count(sk.discovery.catalog.text)
    return summary_line(sk.discovery, tokens, sk.estimator.label)


class DeferredSummary:
    """`prepare` runs once (in the thread, or on the main thread if that comes first) and returns
    the text; `show` prints it, on the main thread, once."""

    def __init__(
        self,
        app: Application[Any],
        prepare: Callable[[], str],
        show: Callable[[str], None],
    ) -> None:
        self.app = app
        self.prepare, self.show = prepare, show
        self._lock = threading.Lock()  # held while preparing: the main thread waits on it
        self._prepared = self._started = self._shown = False
        self._text = ""
        self._error: BaseException | None = None
        app.after_render.add_handler(self._rendered)

    def _rendered(self, app: object) -> None:
        if not self._started:
            self._started = True
            threading.Thread(target=self._run, name="mca-startup", daemon=True).start()

    def _run(self) -> None:
        try:
            self._prepare()
        except Exception as e:  # raised on the main thread, where a line's handler reports it
            self._error = e
            return
        loop, context = self.app.loop, self.app.context
        if loop is None or context is None:
            return  # the prompt has returned: finish() shows it
        # In the prompt's context, where run_in_terminal finds the prompt to hide.
        with contextlib.suppress(RuntimeError):  # that prompt's loop has closed: finish() shows it
            loop.call_soon_threadsafe(self._above_prompt, context=context.copy())

    def _prepare(self) -> None:
        with self._lock:
            if self._prepared:
                return
            try:
                self._text = self.prepare()
            except Exception:
                self._prepared = True  # not tried again: the failure is reported once
                raise
            self._prepared = True

    def _above_prompt(self) -> None:
        """On the prompt's event loop (the main thread), while the prompt may still be up."""
        if self.app.is_running and not self._shown:
            run_in_terminal(self._show, in_executor=False)

    def _show(self) -> None:
        if self._shown:
            return
        self._shown = True
        self.show(self._text)

    def finish(self, wait: bool) -> None:
        """After the prompt returned, on the main thread: shown if prepared. With `wait` (a
        line is about to be handled): prepared first if it is not yet, and a failure to prepare
        it raised (once)."""
        if wait:
            self._prepare()
            error, self._error = self._error, None
            if error is not None:
                raise error
        if self._prepared:
            self._show()
