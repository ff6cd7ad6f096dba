"""One Codec per exercise: how a call to its function and its answer cross the pipe.

The grader encodes the arguments (`args_out`) and rebuilds the answer (`result_in`), checking
every field; the child rebuilds the arguments (`args_in`) and encodes whatever the student's
function returned (`result_out`), refusing a value of the wrong type with that type's name.
Answers refer to the skills and hits they were given by index, so the grader's checks see
its own objects again. Where an exercise's function is given one of mca's answers (apply_gates
is given render), the grader runs it and sends what it returns for every skill of the call: the
child has none of mca's answers (mca/lab/childkit.py), only their results as data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mca.lab.wire import (
    WireError,
    as_bool,
    as_int,
    as_list,
    as_obj,
    as_str,
    block_in,
    block_out,
    candidate_in,
    candidate_out,
    hit_in,
    hit_out,
    parsed_in,
    parsed_out,
    pick,
    root_in,
    root_out,
    skill_in,
    skill_out,
)
from mca.skills.gates import Decision
from mca.skills.inject import Block
from mca.skills.model import Candidate, Hit, Skill
from mca.skills.parse import FrontmatterError

Args = tuple[Any, ...]


@dataclass(frozen=True)
class Codec:
    """Both directions of one exercise's call."""

    args_out: Callable[[Args], dict[str, Any]]  # grader -> child
    args_in: Callable[[dict[str, Any]], Args]  # child: rebuilt
    result_out: Callable[[Any, Args], Any]  # child -> grader; WireError(type name) if wrong
    result_in: Callable[[Any, Args], Any]  # grader: rebuilt and checked


def _wrong(value: Any) -> WireError:
    return WireError(type(value).__name__)


# -- 1 split -----------------------------------------------------------------------------------
def _split_result_out(v: Any, args: Args) -> Any:
    ok = isinstance(v, tuple) and len(v) == 3 and isinstance(v[0], str) and isinstance(v[1], str)
    if not ok or not isinstance(v[2], int):
        raise _wrong(v)
    return [v[0], v[1], int(v[2])]


def _split_result_in(data: Any, args: Args) -> tuple[str, str, int]:
    items = as_list(data, "the answer")
    if len(items) != 3:
        raise WireError("not three items")
    head, body, line = items
    if not isinstance(head, str) or not isinstance(body, str):
        raise WireError("the frontmatter or the body is not a string")
    if not isinstance(line, int) or isinstance(line, bool):
        raise WireError("the line is not an integer")
    return head, body, line


SPLIT = Codec(
    args_out=lambda a: {"text": a[0]},
    args_in=lambda d: (as_str(d, "text"),),
    result_out=_split_result_out,
    result_in=_split_result_in,
)


# -- 2 validate --------------------------------------------------------------------------------
def _validate_in(d: dict[str, Any]) -> Args:
    return (Path(as_str(d, "path")), parsed_in(d.get("parsed")), root_in(d.get("root")))


def _candidate_out(v: Any, args: Args) -> Any:
    if not isinstance(v, Candidate):
        raise _wrong(v)
    return candidate_out(v)


VALIDATE = Codec(
    args_out=lambda a: {"path": str(a[0]), "parsed": parsed_out(a[1]), "root": root_out(a[2])},
    args_in=_validate_in,
    result_out=_candidate_out,
    result_in=lambda data, args: candidate_in(data),
)


# -- 3 render ----------------------------------------------------------------------------------
def _block_out(v: Any, args: Args) -> Any:
    if not isinstance(v, Block):
        raise _wrong(v)
    return block_out(v)


RENDER = Codec(
    args_out=lambda a: {"skill": skill_out(a[0])},
    args_in=lambda d: (skill_in(d.get("skill")),),
    result_out=_block_out,
    result_in=lambda data, args: block_in(data),
)


# -- 4 judge -----------------------------------------------------------------------------------
def _judge_out(a: Args) -> dict[str, Any]:
    skills, sentence, paths = a
    return {
        "skills": [skill_out(s) for s in skills],
        "sentence": sentence,
        "paths": [[p, where] for p, where in paths],
    }


def _judge_in(d: dict[str, Any]) -> Args:
    skills = [skill_in(s) for s in as_list(d.get("skills"), "skills")]
    paths = []
    for p in as_list(d.get("paths"), "paths"):
        if not (isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p)):
            raise WireError("a path is not [path, where it came from]")
        paths.append((p[0], p[1]))
    return (skills, as_str(d, "sentence"), paths)


def _hits_out(v: Any, args: Args) -> Any:
    if not isinstance(v, list) or not all(isinstance(h, Hit) for h in v):
        raise _wrong(v)
    return [hit_out(h, args[0]) for h in v]


def _hits_in(data: Any, args: Args) -> list[Hit]:
    return [hit_in(h, args[0]) for h in as_list(data, "the answer")]


JUDGE = Codec(args_out=_judge_out, args_in=_judge_in, result_out=_hits_out, result_in=_hits_in)


# -- 5 gates -----------------------------------------------------------------------------------
def _ints(v: Any, what: str) -> dict[str, int]:
    d = as_obj(v, what)
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in d.values()):
        raise WireError(f"{what} does not map names to integers")
    return dict(d)


def _names(v: Any, what: str) -> dict[str, str] | None:
    if v is None:
        return None
    d = as_obj(v, what)
    if not all(isinstance(x, str) for x in d.values()):
        raise WireError(f"{what} does not map domains to names")
    return dict(d)


def _gates_out(a: Args) -> dict[str, Any]:
    hits, budget, render, in_context, held = a
    return {
        "hits": [hit_out(h) for h in hits],
        "blocks": [block_out(render(h.skill)) for h in hits],  # the grader renders them
        "budget": budget,
        "in_context": dict(in_context),
        "held": None if held is None else dict(held),
    }


class Rendered:
    """apply_gates's render in the child: the blocks the grader rendered for the call's hits."""

    def __init__(self, skills: list[Skill], blocks: list[Block]) -> None:
        self.table = list(zip(skills, blocks, strict=True))

    def __call__(self, skill: Skill) -> Block:
        for s, b in self.table:
            if s is skill or s == skill:
                return Block(b.name, b.text, b.body, list(b.attachments), b.partial)
        name = getattr(skill, "name", type(skill).__name__)
        raise LookupError(f"render: {name!r} is not the skill of any of the hits given")


def _gates_in(d: dict[str, Any]) -> Args:
    hits = [hit_in(h) for h in as_list(d.get("hits"), "hits")]
    blocks = [block_in(b) for b in as_list(d.get("blocks"), "blocks")]
    if len(blocks) != len(hits):
        raise WireError("not one block per hit")
    render = Rendered([h.skill for h in hits], blocks)
    in_context = _ints(d.get("in_context"), "in_context")
    return (hits, as_int(d, "budget"), render, in_context, _names(d.get("held"), "held"))


def _decisions_out(v: Any, args: Args) -> Any:
    if not isinstance(v, list) or not all(isinstance(x, Decision) for x in v):
        raise _wrong(v)
    hits = args[0]
    return [
        {
            "hit": hit_out(x.hit) if (i := _index_of(x.hit, hits)) is None else i,
            "loaded": x.loaded,
            "reason": x.reason,
            "block": None if x.block is None else block_out(x.block),
            "replaces": x.replaces,
        }
        for x in v
    ]


def _index_of(hit: Hit, hits: list[Hit]) -> int | None:
    return next((i for i, h in enumerate(hits) if h is hit), None)


def _decisions_in(data: Any, args: Args) -> list[Decision]:
    out = []
    for item in as_list(data, "the answer"):
        d = as_obj(item, "a decision")
        block = d.get("block")
        out.append(
            Decision(
                pick(d.get("hit"), list(args[0]), hit_in, "hit"),
                as_bool(d, "loaded"),
                as_str(d, "reason"),
                None if block is None else block_in(block),
                as_str(d, "replaces"),
            )
        )
    return out


GATES = Codec(
    args_out=_gates_out, args_in=_gates_in, result_out=_decisions_out, result_in=_decisions_in
)

CODECS: Mapping[str, Codec] = {
    "split": SPLIT,
    "validate": VALIDATE,
    "render": RENDER,
    "judge": JUDGE,
    "gates": GATES,
}
CONTRACT_ERRORS = {"split": FrontmatterError}  # raised by contract, not a crash
