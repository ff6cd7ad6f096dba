"""Command line: argv + env -> a subcommand or a session (mca/cli/args.py says which), and the
one place errors become exit codes."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from mca import __version__
from mca.errors import McaError, error_line

if TYPE_CHECKING:  # kept out of the import path: `mca --version` must start fast
    from collections.abc import Mapping, Sequence

__all__ = ["EXIT_ERROR", "EXIT_INTERRUPTED", "EXIT_OK", "main"]

EXIT_OK, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 130


def _dispatch(argv: Sequence[str], env: Mapping[str, str]) -> int:
    from mca.cli.args import parse_command, repl_parser

    args = parse_command(argv)
    if args is not None:
        workspace = getattr(args, "workspace", None)
        if workspace is not None and not os.path.isdir(workspace):
            from mca.errors import ConfigError

            raise ConfigError(f"-C: workspace {workspace} is not a directory")
        from mca.text.sanitize import scrubbed_stdio

        with scrubbed_stdio(_secrets(env)):  # a command's output is scrubbed like a turn's
            code: int = args.run(args, env)
            return code
    if env.get("SELFTEST") == "1":  # `MOCK=1 SELFTEST=1 mca`: the self-test, with its flags
        from mca.cli import selftest

        found, _ = selftest.parser().parse_known_args(list(argv))
        return selftest.run(found, env)
    from mca.cli.start import run_session

    return run_session(repl_parser().parse_args(list(argv)), env)


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Entry point: returns the exit code (0 ok, 1 error, 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP)."""
    own_process = argv is None  # the command itself, not a caller in the same process
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv == ["--version"]:  # the fast path: nothing else to import
        sys.stdout.write(f"mca {__version__}\n")
        return EXIT_OK
    env = dict(os.environ if env is None else env)
    from mca.process.harden import make_undumpable, scrub_environ_block

    make_undumpable()
    scrub_environ_block(k for k in env if k.endswith("_API_KEY"))
    from mca.process import signals

    if own_process:  # SIGTERM and SIGHUP end a turn as Ctrl-C does, then mca exits
        signals.install()
    try:
        return _dispatch(argv, env)
    except KeyboardInterrupt:
        by = f" ({signals.name()})" if signals.received() else ""
        sys.stderr.write(f"\nmca: interrupted{by}\n")
        return signals.exit_code(EXIT_INTERRUPTED)
    except McaError as e:
        if env.get("MCA_DEBUG") == "1":
            raise
        from mca.ui.width import fitted

        sys.stderr.write(fitted(error_line(e, _secrets(env)), sys.stderr))
        return e.exit_code
    except Exception as e:  # a bug: one line, the details kept for the report
        if env.get("MCA_DEBUG") == "1":
            raise
        from mca.state.crash import home_of, report_bug
        from mca.ui.width import fitted

        sys.stderr.write(fitted(f"mca: {report_bug(e, home_of(env), _secrets(env))}\n", sys.stderr))
        return EXIT_ERROR


def _secrets(env: Mapping[str, str]) -> tuple[str, ...]:
    """Every key the environment and config.toml hold, for what the edge prints or keeps."""
    from mca.config.apikeys import secrets_of
    from mca.state.crash import home_of

    return secrets_of(env, home_of(env))
