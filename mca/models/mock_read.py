"""What the offline mock reads in its tools' results: a listing's paths, a file's text, a test
run's verdict and first failure, and the one kind of fix it knows (a missing throw). Pure
functions over the text the tools returned, so the mock decides from what really happened."""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass

__all__ = [
    "Failure",
    "Fix",
    "arithmetic_case",
    "file_text",
    "first_failure",
    "listed_paths",
    "package_description",
    "passed",
    "plan_fix",
    "ran",
    "required_sources",
    "test_command",
    "test_counts",
]

SOURCE_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".py")
# a OP b at 8 and 2, each exact in JavaScript as in Python
OPERATORS = {"+": 10, "-": 6, "*": 16, "/": 4}


def listed_paths(listing: str) -> list[str]:
    """The files of a list_dir tree (two spaces a level; directories end with /)."""
    dirs: list[str] = []
    files: list[str] = []
    for line in listing.splitlines():
        name = line.strip()
        if not name or name.startswith(("…", "[")):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        del dirs[depth:]
        if name.endswith("/"):
            dirs.append(name.rstrip("/"))
        else:
            files.append("/".join([*dirs, name]))
    return files


def file_text(result: str) -> str:
    """The text of a read_file result, without its header and line numbers."""
    lines = result.splitlines()[1:]
    return "\n".join(re.sub(r"^\s*\d+\t", "", ln, count=1) for ln in lines)


def package_description(package_json: str | None) -> str:
    """'NAME ("DESCRIPTION")' from a package.json's text ('' when it says neither)."""
    try:
        data = json.loads(package_json or "")
    except ValueError:
        return ""
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str):
        return ""
    about = data.get("description")
    return name + (f' ("{about}")' if isinstance(about, str) and about else "")


def test_command(paths: list[str], package_json: str | None) -> str | None:
    """How this project runs its tests: package.json's test script, or pytest."""
    if package_json is not None:
        try:
            scripts = json.loads(package_json).get("scripts") or {}
        except (ValueError, AttributeError):
            scripts = {}
        script = scripts.get("test") if isinstance(scripts, dict) else None
        if isinstance(script, str) and "no test specified" not in script:
            return script
        return "node --test"
    if any(p.endswith(".py") and posixpath.basename(p).startswith("test_") for p in paths):
        return "python -m pytest -q"
    return None


def ran(run: str) -> bool:
    """Whether a run_command result is of a command that ran (not refused, not failed to
    start): it says the exit code, or that it timed out."""
    return bool(re.search(r"^(exit code -?\d+|timed out after)", run, re.M))


def passed(run: str) -> bool:
    """Whether a run_command result says the command succeeded."""
    return bool(re.search(r"^exit code 0$", run, re.M))


def test_counts(run: str) -> str:
    """'3 tests, 1 failing' from node's or pytest's summary, '' when it says none."""
    tests = re.search(r"^# tests (\d+)$", run, re.M)
    if tests:
        fail = re.search(r"^# fail (\d+)$", run, re.M)
        return f"{tests[1]} tests, {fail[1] if fail else 0} failing"
    py = re.search(r"=+ (.*(?:passed|failed).*?) in [\d.]+s", run)
    return py[1] if py else ""


@dataclass(frozen=True)
class Failure:
    """A failing test: its name, the file and line it is at, and the error it gave."""

    name: str
    path: str  # as the runner printed it (node: absolute)
    line: int
    error: str


def first_failure(run: str) -> Failure | None:
    """The first failing test in node's TAP output or pytest's short summary."""
    m = re.search(r"^not ok \d+ - (?P<name>.+)$", run, re.M)
    if m:
        after = run[m.end() :]
        loc = re.search(r"location: '(?P<path>[^':]+):(?P<line>\d+):\d+'", after)
        err = re.search(r"error: [|>-]*\s*'?(?P<error>[^'\n]+)", after)
        if loc:
            error = err["error"].strip() if err else ""
            return Failure(m["name"].strip(), loc["path"], int(loc["line"]), error)
    m = re.search(r"^FAILED (?P<path>[^:\s]+)::(?P<name>\S+)(?: - (?P<error>.*))?$", run, re.M)
    if m:
        return Failure(m["name"], m["path"], 0, m["error"] or "")
    return None


def resolve(printed: str, paths: list[str]) -> str | None:
    """The workspace path a runner printed (absolute or relative), from the listing."""
    printed = printed.replace("\\", "/")
    found = [p for p in paths if printed == p or printed.endswith("/" + p)]
    return max(found, key=len) if found else None


def required_sources(test_path: str, test_text: str, paths: list[str]) -> list[str]:
    """The workspace files a test file requires or imports, in order."""
    found = []
    here = posixpath.dirname(test_path)
    for m in re.finditer(r"""(?:require\(|from\s+)['"](?P<mod>\.{1,2}/[^'"]+)['"]""", test_text):
        target = posixpath.normpath(posixpath.join(here, m["mod"]))
        for candidate in (target, *(target + s for s in SOURCE_SUFFIXES)):
            if candidate in paths and candidate not in found:
                found.append(candidate)
    return found


def _test_block(text: str, name: str, line: int) -> str:
    """The failing test's source: from its line (or its name) to the next test."""
    lines = text.splitlines()
    start = line - 1 if 0 < line <= len(lines) else 0
    for i, ln in enumerate(lines):
        if name and name in ln:
            start = i
            break
    end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("test(")), None)
    return "\n".join(lines[start:end])


@dataclass(frozen=True)
class Fix:
    """One edit the mock will make, and how it says it."""

    path: str
    old: str
    new: str
    why: str


def plan_fix(failure: Failure, test_text: str, source_path: str, source: str) -> Fix | None:
    """A guard that throws what the test expects (`assert.throws(() => f(.., 0), Err)`) when
    the function does not; None for any other failure (the mock says so instead)."""
    block = _test_block(test_text, failure.name, failure.line)
    m = re.search(
        r"assert\.throws\(\s*\(\)\s*=>\s*(?P<fn>\w+)\((?P<args>[^()]*)\)\s*,\s*(?P<err>\w+)",
        block,
    )
    if m is None:
        return None
    head = re.search(
        rf"^(?P<indent>[ \t]*)(?:export\s+)?function\s+{m['fn']}\s*"
        r"\((?P<params>[^)]*)\)\s*\{[ \t]*$",
        source,
        re.M,
    )
    if head is None:
        return None
    params = [p.strip() for p in head["params"].split(",")]
    args = [a.strip() for a in m["args"].split(",")]
    zero = next((i for i, a in enumerate(args) if a == "0"), None)
    if zero is None or zero >= len(params):
        return None
    p, err, ind = params[zero], m["err"], head["indent"] + "  "
    guard = (
        f"{ind}if ({p} === 0) {{\n{ind}  throw new {err}('{m['fn']}: {p} must not be 0');\n{ind}}}"
    )
    old = head[0]
    why = (
        f"the test expects {m['fn']}({m['args']}) to throw a {err}, and {m['fn']} in"
        f" {source_path} did not: it now throws one when {p} is 0"
    )
    return Fix(source_path, old, f"{old}\n{guard}", why)


def arithmetic_case(fn: str, source: str) -> tuple[str, str] | None:
    """A call of `fn` and its value, when `fn` is `return a OP b;` over its two parameters."""
    m = re.search(
        rf"function\s+{fn}\s*\(\s*(?P<a>\w+)\s*,\s*(?P<b>\w+)\s*\)\s*\{{\s*"
        r"return\s+(?P<x>\w+)\s*(?P<op>[-+*/])\s*(?P<y>\w+)\s*;\s*\}",
        source,
    )
    if m is None or (m["x"], m["y"]) != (m["a"], m["b"]):
        return None
    return f"{fn}(8, 2)", str(OPERATORS[m["op"]])
