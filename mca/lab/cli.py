"""`mca lab init DIR` and `mca lab grade SUBMISSIONS_DIR [--out F] [--jobs N] [--seeds K]`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mca.sandbox.probe import Mechanisms


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mca lab", description="the lab kit: students and graders")
    sub = p.add_subparsers(dest="action", required=True)
    init = sub.add_parser("init", help="write a student workspace (exercises.py, README.md)")
    init.add_argument("dir")
    grade = sub.add_parser("grade", help="grade every */exercises.py under a directory")
    grade.add_argument("submissions")
    grade.add_argument("--out", metavar="FILE", help="write the CSV here (default: stdout)")
    grade.add_argument("--jobs", type=int, default=2, help="submissions graded at once")
    grade.add_argument("--seeds", type=int, default=1, help="seeded variants besides the default")
    grade.add_argument("--timeout", type=float, default=180.0, help="seconds per submission")
    grade.add_argument("--memory-mb", type=int, default=2048, help="memory per submission")
    grade.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without mca's sandbox (only inside a throwaway container or VM)",
    )
    return p


def sandbox_or_refuse(mechanisms: Mechanisms | None, unsandboxed: bool) -> Mechanisms | None:
    """The sandbox to grade in. --unsandboxed: None (student code runs with the grader's
    rights, limits only); without it, a machine with no sandbox refuses to grade."""
    from mca.errors import McaError
    from mca.sandbox.probe import probe

    if unsandboxed:
        sys.stderr.write("mca lab grade: --unsandboxed: student code runs with your rights\n")
        return None
    mech = probe() if mechanisms is None else mechanisms
    if mech.available:
        return mech
    raise McaError(
        f"mca lab grade: {mech.describe()}, so student code would run with your rights and"
        " could read and change your files, its classmates' and the grades. Grade inside a"
        " throwaway container or VM and add --unsandboxed there."
    )


def run_lab_command(
    argv: Sequence[str], env: Mapping[str, str], mechanisms: Mechanisms | None = None
) -> int:
    """Entry for `mca lab ...`; returns the exit code. `mechanisms`: what the sandbox can use
    (probed when not given)."""
    from mca.content import find_repo
    from mca.errors import ConfigError

    args = _parser().parse_args(argv)
    if args.action == "init":
        from mca.lab.kit import init_lab

        for path in init_lab(Path(args.dir)):
            sys.stdout.write(f"wrote {path}\n")
        sys.stdout.write(f"next: cd {args.dir} && mca selftest --lab exercises.py\n")
        return 0
    from mca.lab.grade import grade, to_csv
    from mca.lab.launch import Limits

    folder = Path(args.submissions)
    if not folder.is_dir():
        raise ConfigError(f"mca lab grade: {folder} is not a directory")
    if args.jobs < 1 or args.seeds < 0 or args.timeout <= 0 or args.memory_mb < 256:
        raise ConfigError(
            "mca lab grade: --jobs >= 1, --seeds >= 0, --timeout > 0, --memory-mb >= 256"
        )
    limits = Limits(seconds=args.timeout, check_seconds=10.0, memory_mb=args.memory_mb)
    mech = sandbox_or_refuse(mechanisms, args.unsandboxed)
    outs = [Path(args.out)] if args.out else []
    rows = grade(
        find_repo(Path.cwd()),
        folder,
        jobs=args.jobs,
        seeds=args.seeds,
        limits=limits,
        mechanisms=mech,
        deny=outs,
        env=env,
    )
    text = to_csv(rows)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        sys.stdout.write(f"graded {len(rows)} submission(s): {args.out}\n")
    else:
        sys.stdout.write(text)
    return 0
