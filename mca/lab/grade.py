"""`mca lab grade CLASS_DIR`: every hand-in folder graded, each in a sandboxed child of its own.

Every folder gets a row: graded (`ok`, whatever it scored), or why not (`missing
exercises.py`, `unreadable: ...`, `not UTF-8 ...`, `refused: ...`, `crashed: ...`, `timed out:
...`). A check counts only when it passes on the default fixtures and on every seeded variant.
Rows reach the outputs as they finish (mca/lab/outputs.py); Ctrl-C stops the run and keeps
the rows graded so far. Every row is scrubbed of the grader's keys before any output sees
it. A hand-in that crashes, loops, eats memory or attacks its classmates
gets its own row and changes no other.
"""

from __future__ import annotations

import secrets
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path

from mca.fs.careful import FileTooLarge, NotRegularFile, read_regular
from mca.lab import defaults
from mca.lab.account import Account
from mca.lab.handin import run_handin
from mca.lab.launch import Isolation, Limits
from mca.lab.outputs import Graded, Status, scrubbed
from mca.lab.progress import Progress
from mca.lab.results import combine
from mca.lab.suite import GRADED
from mca.lab.variant import Variants
from mca.sandbox.probe import Mechanisms

__all__ = [
    "FILE",
    "GRADING",
    "MAX_SOURCE",
    "Interrupted",
    "Plan",
    "drawn_seed",
    "grade",
    "grade_folder",
    "hand_ins",
    "not_on_roster",
    "read_hand_in",
    "summary",
    "to_grade",
]

GRADING = Limits(
    defaults.TIMEOUT, defaults.CHECK_SECONDS, defaults.MEMORY_MB, cpu_budget=defaults.CPU_SECONDS
)
FILE = "exercises.py"
MAX_SOURCE = 1024 * 1024


class Interrupted(Exception):
    """Ctrl-C: the run stopped; `graded` holds what was finished (and written)."""

    def __init__(self, graded: list[Graded]) -> None:
        super().__init__("interrupted")
        self.graded = graded


@dataclass(frozen=True)
class Plan:
    """One grading run: the class, how many at once, the variants, limits and isolation."""

    repo: Path  # the lab's content
    submissions: Path
    jobs: int = defaults.JOBS
    seeds: int = defaults.SEEDS  # seeded variants besides the default
    limits: Limits = GRADING
    mechanisms: Mechanisms | None = None  # None: --unsandboxed (limits only)
    deny: tuple[Path, ...] = ()  # the grader's outputs
    env: Mapping[str, str] = field(default_factory=dict)
    roster: tuple[str, ...] | None = None  # every name gets a row; None: every folder does
    # Keys no row may say (None: the environment's *_API_KEY and config.toml's, as mca knows)
    secrets: tuple[str, ...] | None = None
    # Where the seeded variants start: drawn when the run is planned, never a seed a student
    # could have looked at beforehand (`--first-seed N` repeats a run).
    first_seed: int = field(default_factory=lambda: drawn_seed())
    account: Account | None = None  # unsandboxed: who a hand-in runs as (None: the grader)

    def keys(self) -> tuple[str, ...]:
        """The keys scrubbed from every row (config.toml read here when not given)."""
        if self.secrets is not None:
            return self.secrets
        from mca.lab.keys import grader_keys
        from mca.state.crash import home_of

        return grader_keys(self.env, home_of(self.env))

    @property
    def seed_list(self) -> list[int]:
        return [0, *range(self.first_seed, self.first_seed + self.seeds)]

    def isolation(self, workspace: Path) -> Isolation:
        from mca.state.crash import home_of

        home = Path(self.env.get("HOME") or Path.home())
        hidden = (self.submissions.resolve(), *(p.resolve() for p in self.deny))
        return Isolation(
            self.mechanisms,
            workspace,
            home_of(self.env),
            home,
            hidden,
            (self.repo,),
            None if self.mechanisms else self.account,
        )


def drawn_seed() -> int:
    """A first seed for a run, unknown before it runs."""
    floor = defaults.FIRST_SEED_FLOOR
    return floor + secrets.randbelow(2**31 - floor)


def hand_ins(submissions: Path) -> list[Path]:
    """Every folder of the class (hidden ones aside), sorted by name."""
    return sorted(p for p in submissions.iterdir() if not p.name.startswith(".") and p.is_dir())


def to_grade(plan: Plan) -> list[Path]:
    """What gets a row: every name of the roster (a folder or not), else every folder."""
    if plan.roster is None:
        return hand_ins(plan.submissions)
    return [plan.submissions / name for name in plan.roster]


def not_on_roster(plan: Plan) -> list[str]:
    """The class's folders the roster does not name (not graded: reported)."""
    if plan.roster is None:
        return []
    named = set(plan.roster)
    return [p.name for p in hand_ins(plan.submissions) if p.name not in named]


def read_hand_in(folder: Path) -> tuple[str | None, Status, str]:
    """(the source of folder/exercises.py, OK, '') or (None, why it cannot be graded, what to
    say after that). Never follows a symlink: a link to a classmate's file is not a hand-in."""
    if folder.is_symlink():
        return None, Status.UNREADABLE, "the folder is a symbolic link"
    if not folder.exists():  # a roster's name with no folder: nothing handed in
        return None, Status.ABSENT, "(no folder)"
    try:
        data = read_regular(folder / FILE, cap=MAX_SOURCE)
    except FileNotFoundError:
        return None, Status.MISSING, _found_instead(folder)
    except NotRegularFile:
        return None, Status.UNREADABLE, f"{FILE} is a symbolic link or not a regular file"
    except FileTooLarge:
        return None, Status.UNREADABLE, f"{FILE} is over {MAX_SOURCE // 1024} KiB"
    except OSError as e:
        return None, Status.UNREADABLE, e.strerror or type(e).__name__
    try:
        return data.decode("utf-8"), Status.OK, ""
    except UnicodeDecodeError as e:
        return None, Status.NOT_UTF8, f"(byte 0x{data[e.start]:02x} at offset {e.start})"


def _found_instead(folder: Path) -> str:
    """'(found Exercises.py)': the Python files the folder has instead ('' for none)."""
    try:
        names = sorted(p.name for p in folder.iterdir() if p.suffix.lower() in (".py", ".txt"))
    except OSError:
        names = []
    return f"(found {', '.join(names[:3])})" if names else ""


def grade_folder(
    plan: Plan,
    variants: Variants,
    isolation: Isolation,
    folder: Path,
    cancel: threading.Event,
) -> Graded:
    """One student's result; a bug of mca's in one hand-in is that hand-in's row, not the end
    of the run."""
    return _graded(plan, variants, isolation, folder, cancel)[0]


def _graded(
    plan: Plan,
    variants: Variants,
    isolation: Isolation,
    folder: Path,
    cancel: threading.Event,
) -> tuple[Graded, bool]:
    """The row, and whether the system killed one of its children (to grade it again alone)."""
    name = folder.name
    try:
        source, status, note = read_hand_in(folder)
        if source is None:
            return Graded(name, status, note=note), False
        filename = f"{name}/{FILE}"
        seeds = plan.seed_list
        run = run_handin(variants, source, filename, seeds, isolation, plan.limits, GRADED, cancel)
        route, starved = isolation.route, run.killed_by_system
        if run.status is not Status.OK:
            row = Graded(name, run.status, [], run.seconds, run.runtime, run.message, route)
            return row, starved
        checks = combine(run.checks, seeds, "not run", GRADED)
        return Graded(name, Status.OK, checks, run.seconds, run.runtime, route=route), starved
    except Exception as e:  # mca's own bug: reported in this row, the others go on
        why = f"mca could not grade it ({type(e).__name__}: {e})"
        return Graded(name, Status.ERROR, note=why), False


def grade(
    plan: Plan,
    on_graded: Callable[[Graded], None] = lambda g: None,
    progress: Progress | None = None,
) -> list[Graded]:
    """Every hand-in of the class, `plan.jobs` at a time; `on_graded` sees each as it
    finishes. Interrupted (with what was finished) on Ctrl-C."""
    folders = to_grade(plan)
    cancel = threading.Event()
    graded: list[Graded] = []
    keys = plan.keys()
    with Variants(plan.repo) as variants, ThreadPoolExecutor(max(plan.jobs, 1)) as pool:
        isolation = plan.isolation(variants.root)
        trial(variants, isolation, plan.limits)

        def one(folder: Path) -> tuple[Graded, bool]:
            if progress is not None:
                progress.start(folder.name)
            try:
                g, starved = _graded(plan, variants, isolation, folder, cancel)
                return scrubbed(g, keys), starved
            finally:
                if progress is not None:
                    progress.finish(folder.name)

        pending = {pool.submit(one, f): f for f in folders}
        again: list[Path] = []  # killed by the system beside others: graded again, alone
        try:
            _collect(pending, graded, on_graded, progress, again if plan.jobs > 1 else None)
            for folder in again:
                g, _ = one(folder)
                note = "(graded again alone: the system killed it while others were graded)"
                graded.append(replace(g, note=f"{g.note} {note}".strip()))
                on_graded(graded[-1])
        except KeyboardInterrupt:
            cancel.set()
            for f in pending:
                f.cancel()
            raise Interrupted(graded) from None
        finally:
            if progress is not None:
                progress.clear()
    return graded


def trial(variants: Variants, isolation: Isolation, limits: Limits) -> None:
    """Before the first hand-in: the starter (mca's own file, no student's code) imported in a
    child started as every hand-in's will be. Where that child cannot start (its view or its
    sandbox cannot be made here), no hand-in is graded: each would be scored 0 for it."""
    from importlib import resources

    from mca.errors import McaError

    starter = resources.files("mca.lab").joinpath("naive.py").read_text(encoding="utf-8")
    run = run_handin(variants, starter, "exercises.py", [0], isolation, limits, ())
    if run.status != Status.OK:
        raise McaError(
            f"mca lab grade: a child for a hand-in cannot start here ({isolation.describe()}):"
            f" the starter was {run.status}: {run.message}. No hand-in was graded;"
            " `mca sandbox check --lab` says what this system allows."
        )


def _collect(
    pending: dict[Future[tuple[Graded, bool]], Path],
    graded: list[Graded],
    on_graded: Callable[[Graded], None],
    progress: Progress | None,
    again: list[Path] | None,
) -> None:
    while pending:
        done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
        for future in done:
            folder = pending.pop(future)
            g, starved = future.result()
            if starved and again is not None:  # beside others: again, alone
                again.append(folder)
                continue
            graded.append(g)
            on_graded(g)
        if progress is not None:
            progress.draw()


def summary(graded: Sequence[Graded], total: int) -> str:
    """'graded 33 of 34 hand-ins (1 missing exercises.py)'."""
    kinds = Counter(g.status for g in graded if g.status is not Status.OK)
    ran = sum(g.status is Status.OK for g in graded)
    extra = ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
    return f"graded {ran} of {total} hand-ins" + (f" ({extra})" if extra else "")
