"""Startup stays light: --version and reaching the prompt import neither tiktoken nor httpx."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from pathlib import Path
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from mca.cli import main
from mca.config.settings import load_settings
from mca.cli.start import repl_for
from mca.ui.repl import Repl
from pathlib import Path
import io, tempfile
with tempfile.TemporaryDirectory() as tmp, create_pipe_input() as pipe:
    s = load_settings({"MOCK": "1", "MCA_HOME": tmp}, workspace=Path(tmp))
    repl = repl_for(s, input=pipe, output=DummyOutput(), out=io.StringIO())
    repl.banner()
heavy = (
    "tiktoken",
    "httpx",
    "mca.session.session",
    "mca.assembly.assemble",
    "mca.tokens",
    "mca.skills.policy",
    "mca.events",
    "mca.tools",
)
print(sorted(m for m in heavy if m in sys.modules))
"""


def test_version_imports_nothing_heavy() -> None:
    code = "import sys; from mca.cli import main; main(['--version']); print(sorted(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    for heavy in (
        "'tiktoken'",
        "'httpx'",
        "'prompt_toolkit'",
        "'mca.session.session'",
        "'mca.assembly.assemble'",
    ):
        assert heavy not in out


def test_reaching_the_prompt_imports_neither_tiktoken_nor_httpx() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_one_shot_imports_no_prompt_toolkit(tmp_path: Path) -> None:
    """`mca -p` prints to stdout and stderr: the REPL's toolkit (~50 ms to import) stays out."""
    code = (
        "import sys; from mca.cli import main\n"
        "try:\n    main(['-C', sys.argv[1], '-p', 'hello'])\n"
        "except SystemExit:\n    pass\n"
        "sys.stderr.write(repr(sorted(m for m in sys.modules if m.startswith('prompt_toolkit'))))"
    )
    env = {**os.environ, "MOCK": "1", "MCA_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env
    )
    assert out.stderr.rstrip().endswith("[]"), out.stderr
