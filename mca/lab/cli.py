"""`mca lab init DIR`, `mca lab gradescope DIR` and `mca lab grade CLASS_DIR [--out PATH]
[--gradescope DIR] [--junit FILE] [--logs DIR] [--roster FILE] ...` (`--help` lists them all)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mca.cli.parents import actions
from mca.lab import defaults
from mca.lab.defaults import GRACE

if TYPE_CHECKING:
    from mca.cli.parents import Parents, Subparsers
    from mca.lab.grade import Plan
    from mca.lab.outputs import Writer
    from mca.sandbox.probe import Mechanisms

EXIT_INTERRUPTED = 130


__all__ = ["add_parser", "run"]
ABOUT = "the lab kit: students and graders"


def add_parser(parent: Subparsers, parents: Parents) -> None:
    """`lab init DIR | grade CLASS_DIR ...`: no workspace (a class is not one)."""
    sub = actions(parent, "lab", ABOUT, run)
    init = sub.add_parser("init", help="write a student workspace (exercises.py, README.md)")
    init.add_argument("dir")
    kit = sub.add_parser(
        "gradescope", help="write the Gradescope autograder kit (setup.sh, run_autograder, README)"
    )
    kit.add_argument("dir")
    grade = sub.add_parser("grade", help="grade every hand-in folder (*/exercises.py) of a class")
    _output_options(grade)
    _limit_options(grade)


def _output_options(grade: argparse.ArgumentParser) -> None:
    """What `lab grade` reads and writes."""
    grade.add_argument("submissions", metavar="CLASS_DIR")
    grade.add_argument(
        "--out", metavar="PATH", help="the CSV (default: stdout); a directory for gradescope"
    )
    grade.add_argument(
        "--format",
        choices=("csv", "gradescope"),
        default="csv",
        help="what --out is (default: %(default)s); gradescope: OUT/STUDENT/results/results.json",
    )
    grade.add_argument(
        "--gradescope",
        metavar="DIR",
        help="also Gradescope's DIR/STUDENT/results/results.json, in the same run (default: none)",
    )
    grade.add_argument(
        "--junit", metavar="FILE", help="also one JUnit XML report for the class (default: none)"
    )
    grade.add_argument(
        "--logs",
        metavar="DIR",
        help="also DIR/STUDENT.log: every failed check's whole text (the CSV's cells are cut at"
        " a word; default: none)",
    )
    grade.add_argument(
        "--roster",
        metavar="FILE",
        help="who is in the class: a CSV with a `student` column, or one name a line; every name"
        " gets a row, folders it does not name are reported, not graded (default: every folder)",
    )


def _limit_options(grade: argparse.ArgumentParser) -> None:
    """How `lab grade` runs each hand-in."""
    grade.add_argument(
        "--jobs",
        type=int,
        default=defaults.JOBS,
        help="hand-ins graded at once (default: %(default)s)",
    )
    grade.add_argument(
        "--seeds",
        type=int,
        default=defaults.SEEDS,
        help="seeded variants besides the default (default: %(default)s)",
    )
    grade.add_argument(
        "--first-seed",
        type=int,
        metavar="N",
        help="the seeded variants are N, N+1, ... (default: drawn when the run starts, so no"
        " student can try them first; the run says which)",
    )
    grade.add_argument(
        "--timeout",
        type=float,
        default=defaults.TIMEOUT,
        help="seconds per hand-in (default: %(default)s)",
    )
    grade.add_argument(
        "--check-seconds",
        type=float,
        default=defaults.CHECK_SECONDS,
        help="seconds per check (default: %(default)s)",
    )
    grade.add_argument(
        "--cpu-seconds",
        type=float,
        default=defaults.CPU_SECONDS,
        help="CPU per hand-in, all its checks together; past it each check gets"
        f" {GRACE:g} s, so a loop gives its slot back (default: %(default)s)",
    )
    grade.add_argument(
        "--memory-mb",
        type=int,
        default=None,
        help=f"memory per hand-in (default: {defaults.MEMORY_MB}, or what is free when less)",
    )
    grade.add_argument(
        "--unsandboxed",
        action="store_true",
        help="grade without mca's sandbox, each hand-in as the account of --as-user (only as"
        " root, inside a throwaway container or VM; default: off)",
    )
    grade.add_argument(
        "--as-user",
        metavar="NAME",
        default=defaults.ACCOUNT,
        help="--unsandboxed: the unprivileged account hand-ins run as; it must not be able to"
        " read mca's package or your files (default: %(default)s)",
    )
    grade.add_argument(
        "--private",
        action="append",
        metavar="PATH",
        help="--unsandboxed: one more path that account must not read, checked before grading"
        " (repeatable; mca's package, your home, the class and the outputs always are;"
        " default: none)",
    )


def run(
    args: argparse.Namespace, env: Mapping[str, str], mechanisms: Mechanisms | None = None
) -> int:
    """Entry for `mca lab ...`; returns the exit code. `mechanisms`: what the sandbox can use
    (probed when not given)."""
    if args.action == "init":
        from mca.lab.kit import init_lab

        for path in init_lab(Path(args.dir)):
            sys.stdout.write(f"wrote {path}\n")
        sys.stdout.write(f"next: cd {args.dir} && mca selftest --lab exercises.py\n")
        return 0
    if args.action == "gradescope":
        from mca.lab.kit import gradescope_kit

        for path in gradescope_kit(Path(args.dir)):
            sys.stdout.write(f"wrote {path}\n")
        sys.stdout.write(f"next: read {Path(args.dir) / 'README.md'} before you zip it\n")
        return 0
    return _grade(args, env, mechanisms)


def _writer(args: argparse.Namespace) -> Writer:
    """The outputs, written empty now: a path that cannot be written fails before grading.
    One run writes any of them together: the CSV, Gradescope's results, the JUnit report."""
    from mca.errors import ConfigError
    from mca.lab.outputs import Writer

    out = Path(args.out) if args.out else None
    if args.format == "gradescope" and out is None:
        raise ConfigError("mca lab grade: --format gradescope needs --out DIR")
    as_gradescope = args.format == "gradescope"
    gradescope = out if as_gradescope else None
    if args.gradescope:
        if gradescope is not None:
            raise ConfigError("mca lab grade: --gradescope DIR or --format gradescope, not both")
        gradescope = Path(args.gradescope)
    junit = Path(args.junit) if args.junit else None
    logs = Path(args.logs) if args.logs else None
    writer = Writer(None if as_gradescope else out, gradescope, junit, logs)
    try:
        writer.check()
    except OSError as e:
        where = e.filename or out or junit
        raise ConfigError(f"mca lab grade: cannot write {where}: {e.strerror or e}") from None
    return writer


def _roster(path: str | None) -> tuple[str, ...] | None:
    """The roster's names (None: no --roster); a ConfigError saying where it is wrong."""
    from mca.errors import ConfigError
    from mca.lab.roster import RosterError, parse_roster

    if path is None:
        return None
    try:
        return tuple(parse_roster(Path(path).read_text(encoding="utf-8-sig")))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"mca lab grade: --roster {path}: cannot read it ({e})") from None
    except RosterError as e:
        raise ConfigError(f"mca lab grade: --roster {path}: {e}") from None


def _grade(args: argparse.Namespace, env: Mapping[str, str], mech: Mechanisms | None) -> int:
    from dataclasses import replace

    from mca.cli.content import lab_content
    from mca.errors import ConfigError
    from mca.lab.grade import Plan
    from mca.lab.launch import Limits
    from mca.lab.memory import fit_jobs, per_handin, usable_mib
    from mca.lab.routes import account_or_refuse, sandbox_or_refuse

    folder = Path(args.submissions)
    if not folder.is_dir():
        raise ConfigError(f"mca lab grade: {folder} is not a directory")
    if (
        args.jobs < 1
        or args.seeds < 0
        or min(args.timeout, args.cpu_seconds) <= 0
        or (args.memory_mb is not None and args.memory_mb < 256)
        or (args.first_seed or 1) < 1
    ):
        raise ConfigError(
            "mca lab grade: --jobs >= 1, --seeds >= 0, --first-seed >= 1, --timeout > 0,"
            " --cpu-seconds > 0, --memory-mb >= 256"
        )
    if not 0 < args.check_seconds <= args.timeout:
        raise ConfigError("mca lab grade: --check-seconds must be > 0 and <= --timeout")
    roster = _roster(args.roster)
    writer = _writer(args)
    usable = usable_mib()
    memory_mb, said = per_handin(args.memory_mb, defaults.MEMORY_MB, usable)
    if said:
        sys.stderr.write(said + "\n")
    limits = Limits(args.timeout, args.check_seconds, memory_mb, cpu_budget=args.cpu_seconds)
    mechanisms = sandbox_or_refuse(mech, args.unsandboxed, env)
    account = None
    if mechanisms is None:
        private = (folder, *writer.paths, *map(Path, args.private or ()))
        account = account_or_refuse(args.as_user, env, private)
    with lab_content() as repo:  # a private copy: never the current directory's skills/
        plan = Plan(repo, folder, args.jobs, args.seeds, limits, mechanisms, (), env, roster)
        in_memory = limits.tmp_mb if mechanisms and mechanisms.user_namespaces else 0  # tmpfs
        jobs, said = fit_jobs(1 if account else plan.jobs, memory_mb, usable, in_memory)
        if said:
            sys.stderr.write(said + "\n")
        plan = replace(plan, account=account, jobs=jobs)
        if args.first_seed is not None:
            plan = replace(plan, first_seed=args.first_seed)
        if plan.seeds:
            seeds = ", ".join(map(str, plan.seed_list))
            sys.stderr.write(f"mca lab grade: seeds {seeds} (--first-seed {plan.first_seed})\n")
        return _run(plan, writer, to_stdout=args.format == "csv" and not args.out)


def _run(plan: Plan, writer: Writer, to_stdout: bool) -> int:
    """Grade; the outputs as each hand-in finishes; the CSV on stdout at the end if asked."""
    from dataclasses import replace

    from mca.lab.grade import Interrupted, grade, not_on_roster, summary, to_grade
    from mca.lab.outputs import csv_text
    from mca.lab.progress import Progress

    plan = replace(plan, deny=tuple(writer.paths))
    total = len(to_grade(plan))
    strangers = not_on_roster(plan)
    if strangers:
        sys.stderr.write(f"mca lab grade: {_strangers(strangers)}\n")
    progress = Progress(total, sys.stderr) if sys.stderr.isatty() else None
    try:
        graded = grade(plan, writer.add, progress)
    except Interrupted as e:
        if to_stdout:
            sys.stdout.write(csv_text(e.graded))
        kept = ", ".join(map(str, writer.paths)) or "stdout"
        sys.stderr.write(f"mca lab grade: interrupted; {summary(e.graded, total)} ({kept})\n")
        return EXIT_INTERRUPTED
    done = summary(graded, total) + (f"; {_strangers(strangers)}" if strangers else "")
    if to_stdout:
        sys.stdout.write(csv_text(graded))
        if strangers:
            sys.stderr.write(f"mca lab grade: {done}\n")
    else:
        sys.stdout.write(f"{done}: {', '.join(map(str, writer.paths))}\n")
    return 0


def _strangers(names: list[str]) -> str:
    """'2 folders not on the roster, not graded: bob, zed'."""
    shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
    return f"{len(names)} folder(s) not on the roster, not graded: {shown}"
