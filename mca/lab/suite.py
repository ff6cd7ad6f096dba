"""The lab's checks as one table, and the one loop that runs them.

Every consumer iterates CHECKS (or a table passed in instead): the self-test in process, a
student's hand-in (mca/lab/handin.py), the reports (text, JSON, JUnit) and the grader's CSV. A
check added here runs and shows everywhere; nothing counts to a fixed number. Each check runs
production with only its own exercise's function swapped in (exercise_policy).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mca.lab import checks as c
from mca.lab.exercises import BY_TRAP, Exercise
from mca.lab.variant import Variants, names_for
from mca.skills.policy import PRODUCTION, Policy

__all__ = [
    "CHECKS",
    "GRADED",
    "Check",
    "exercise_policy",
    "labs",
    "run_check",
    "run_suite",
    "trapped",
]


@dataclass(frozen=True)
class Check:
    """One check: what it holds, its exercise (None: the runtime as a whole), and the hint a
    failure prints."""

    id: int
    name: str
    run: Callable[[c.Lab], None]
    hint: str
    exercise: Exercise | None = None
    # The exercise's naive starter fails it: the check its trap is tied to (the design notes tie
    # one check to each of the first three traps, two to the last two); the exercise's other
    # check holds even for the starter, on small data.
    trapped: bool = False
    # It does not depend on the variant's names: run once, on the first seed.
    shipped_only: bool = False
    # What passing it is worth in a grade. Each exercise is worth 2; a runtime check (no
    # exercise) runs mca's own code alone and is worth nothing, and neither is a check whose
    # outcome depends on the grader's machine (Node.js), so no grade does.
    points: int = 1

    @property
    def catches(self) -> str:
        """The trap this check catches ('' when none does)."""
        return self.exercise.trap if self.trapped and self.exercise else ""


CHECKS = (
    Check(
        1,
        "a --- horizontal rule in a body leaves the body whole",
        c.check_rule_in_body,
        "split by lines: the first line must be ---; the header ends at the first later line"
        " that is exactly ---, so a rule further down the body stays in the body",
        BY_TRAP["split"],
        trapped=True,
    ),
    Check(
        2,
        "a file with no closing fence is rejected with an error",
        c.check_unclosed_fence,
        "a file whose frontmatter is never closed must not load; raise FrontmatterError",
        BY_TRAP["split"],
    ),
    Check(
        3,
        "the pack without a description is skipped, naming the field",
        c.check_missing_description,
        "a pack without a description must be skipped with an error Diagnostic naming the field",
        BY_TRAP["validate"],
        trapped=True,
    ),
    Check(
        4,
        "a wrong-type extension field (priority: high) is dropped, the skill kept",
        c.check_wrong_type,
        "a wrong-typed extension field is dropped (priority 0), the skill itself still loads",
        BY_TRAP["validate"],
    ),
    Check(
        5,
        "the release skill's injection carries a runnable command line",
        c.check_command_line,
        "offer each script as one command line the model can run from the workspace",
        BY_TRAP["script"],
        points=0,
    ),
    Check(
        6,
        "no byte of the script's body enters the injected text",
        c.check_script_not_read,
        "never read a script into the context: its command line is all the model needs",
        BY_TRAP["script"],
        trapped=True,
        points=2,
    ),
    Check(
        7,
        "a sentence naming src/calc.js hits calc-conventions with a path reason",
        c.check_path_reason,
        "score each path of the sentence that a skill's `paths` glob matches (10 points, 'path')",
        BY_TRAP["judge"],
        trapped=True,
    ),
    Check(
        8,
        "the trigger `test` does not match 'latest' or 'contest'",
        c.check_word_boundaries,
        "ASCII triggers match on word boundaries: 'test' must not fire on 'latest'",
        BY_TRAP["judge"],
        trapped=True,
    ),
    Check(
        9,
        "divide-by-zero loads only the higher-scoring calc convention",
        c.check_domain_gate,
        "one skill per domain: the highest score wins; the other's reason names the winner",
        BY_TRAP["gates"],
        trapped=True,
    ),
    Check(
        10,
        "under a small budget a body is left out with its reason",
        c.check_budget_gate,
        "keep a total character budget; the left-out body says 'body is N chars, only M left'",
        BY_TRAP["gates"],
        trapped=True,
    ),
    Check(
        11,
        "a sentence matching nothing injects 0 characters at stage two",
        c.check_zero_injection,
        "a sentence that matches nothing must inject nothing at stage two",
        points=0,
    ),
    Check(
        12,
        "the catalog holds one entry per loaded skill and no body text",
        c.check_catalog,
        "the catalog lists every loaded skill by name and carries no body text",
        points=0,
    ),
    Check(
        13,
        "the tool registry holds exactly eight tools before and after skills load",
        c.check_registry,
        "skills never add or remove tools: the request carries the same eight",
        points=0,
    ),
    Check(
        14,
        "end to end: the mock follows the injected convention; tests pass; /undo",
        c.check_end_to_end,
        "the mock model follows whichever calc convention reached its context",
        shipped_only=True,
        points=0,
    ),
)


GRADED = tuple(check for check in CHECKS if check.exercise is not None)  # what a grade runs


def trapped(checks: Sequence[Check] = CHECKS) -> dict[str, tuple[int, ...]]:
    """The ids of the checks each trap's starter fails, by trap (the starter fails them all)."""
    out: dict[str, tuple[int, ...]] = {}
    for check in checks:
        if check.catches:
            out[check.catches] = (*out.get(check.catches, ()), check.id)
    return out


def exercise_policy(policy: Policy, check: Check) -> Policy:
    """What a check runs: production, with only its own exercise's function taken from
    `policy` (a runtime check, with no exercise, runs production alone). A bug in one exercise
    fails that exercise's checks and no other."""
    if check.exercise is None:
        return PRODUCTION
    field = check.exercise.field
    return replace(PRODUCTION, name=policy.name, **{field: getattr(policy, field)})


def run_check(lab: c.Lab, check: Check) -> dict[str, Any]:
    """One check: passed, what it saw, its exercise and hint."""
    skipped = False
    try:
        check.run(lab)
        passed, saw = True, ""
    except c.CheckFailed as e:
        passed, saw = False, str(e)
    except c.CheckSkipped as e:  # this machine cannot run it (Node.js): neither pass nor fail
        passed, saw, skipped = False, str(e), True
    except c.Unanswered as e:  # the student's function gave no usable answer: why
        passed, saw = False, str(e)
    except Exception as e:  # a crash is a failed check, reported like one
        passed, saw = False, f"crashed: {type(e).__name__}: {e}"
    return {
        "id": check.id,
        "name": check.name,
        "exercise": check.exercise.label if check.exercise else None,
        "passed": passed,
        "skipped": skipped,
        "saw": saw,
        "hint": check.hint,
    }


def labs(variants: Variants, seeds: Sequence[int], policy: Policy) -> Iterator[c.Lab]:
    """One Lab per seed (the variant's content, the shipped lab beside it, the run's memo)."""
    for seed in seeds:
        names = names_for(seed)
        yield c.Lab(variants.path(seed), policy, names, shipped=variants.repo, memo=variants.memo)


def run_suite(
    repo: Path,
    policy: Policy,
    seeds: Sequence[int],
    checks: Sequence[Check] = CHECKS,
) -> Iterator[dict[str, Any]]:
    """Every check on every seed's variant of the lab (shipped-only ones on the first seed),
    in this process, one result each, as it finishes. For mca's own policies (production, the
    starter): a student's file runs through mca/lab/handin.py instead."""
    with Variants(repo) as variants:
        for lab in labs(variants, seeds, policy):
            for check in checks:
                if lab.names.seed != seeds[0] and check.shipped_only:
                    continue
                one = replace(lab, policy=exercise_policy(policy, check))
                yield {"seed": lab.names.seed, **run_check(one, check)}
