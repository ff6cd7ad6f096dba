"""--record FILE: every model response of a session, in MCA_MOCK_SCRIPT format, without secrets."""

from __future__ import annotations

import os
from pathlib import Path

from mca.fs.careful import open_private
from mca.models.mock import script_line
from mca.text.sanitize import scrub
from mca.types import Model, Request, Response, TextSink


class RecordingModel:
    """Wraps a model and appends each response it returns to a replayable script."""

    def __init__(self, inner: Model, path: Path, secrets: tuple[str, ...] = ()) -> None:
        self.inner = inner
        self.name = inner.name
        self.path = path
        self.secrets = secrets
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(open_private(path, append=False))

    def complete(
        self,
        request: Request,
        on_text: TextSink | None = None,
        on_thinking: TextSink | None = None,
    ) -> Response:
        response = self.inner.complete(request, on_text, on_thinking)
        line = scrub(script_line(response.message, response.usage), self.secrets)
        fd = open_private(self.path)
        try:
            os.write(fd, (line + "\n").encode("utf-8", "backslashreplace"))
        finally:
            os.close(fd)
        return response

    def close(self) -> None:
        self.inner.close()
