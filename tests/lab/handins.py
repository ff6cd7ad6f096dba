"""A generated class of hand-ins, each with the row it deserves.

Every hand-in is honest code (the starter, some exercises solved, or all of them) plus, for most,
something else: a forgery, sabotage of classmates, a crash, a loop, a fork, a disk or memory
filler. What it deserves is what its honest code scores, minus the exercises it did not write
itself ('not your code'); whatever else it does must change nothing, for it or anyone else.
Files that cannot be graded get the status that says why. Code templates name the grader's
world with @CLASS@, @CSV@, @MARKERS@, @PORT@ and @TOKEN@ (filled in by `World.fill`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST, HARD_CODED, honest, reexport, seed_table

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
COMPLETE = STARTER + ALL_HONEST
TRAPS = ("split", "validate", "script", "judge", "gates")
STARTER_POINTS = {1: 1, 2: 1, 3: 0, 4: 0, 5: 0}  # checks 2 and 4; check 5 carries none
SOLVED = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2}
NOTHING = {1: 0, 2: 0, 3: 0, 4: 0, 5: 0}


@dataclass
class World:
    """What the hand-ins may know of the grader's world (paths, a port, a token)."""

    classdir: Path
    csv: Path
    marker_dir: Path
    port: int
    token: str

    def fill(self, code: str) -> str:
        for key, value in {
            "@CLASS@": self.classdir,
            "@CSV@": self.csv,
            "@MARKERS@": self.marker_dir,
            "@PORT@": self.port,
            "@TOKEN@": self.token,
            "@MCA@": REPO / "mca",  # the grader's own mca (its path can be guessed)
        }.items():
            code = code.replace(key, str(value))
        return code


@dataclass
class HandIn:
    """One folder: its file, its status, and the points per exercise it deserves."""

    name: str
    base: str | bytes | None  # the honest code (None: no file at all)
    code: str = ""  # what it adds: a template (see the module's docstring)
    status: str = "ok"  # a prefix of the row's status
    points: dict[int, int] = field(default_factory=lambda: dict(STARTER_POINTS))
    honest: dict[int, int] | None = None  # what its honest code alone scores (forgeries)
    file: str = "exercises.py"
    links_to: str = ""  # the file is a symlink to this classmate's

    def text(self, w: World) -> str | bytes | None:
        if isinstance(self.base, str):
            return self.base + w.fill(self.code)
        return self.base


def solved(*traps: str) -> dict[int, int]:
    return {n: 2 if TRAPS[n - 1] in traps else p for n, p in STARTER_POINTS.items()}


def without(points: dict[int, int], *exercises: int, keep: int = 0) -> dict[int, int]:
    return {n: (keep if n in exercises else p) for n, p in points.items()}


# A process past the audit hook, where one of the modules the child loaded still holds
# subprocess (its fork_exec raises no audit event); OSError where none does: then the hook
# alone has stopped it, and tests/lab/test_isolation.py tries the sandbox without the hook.
SPAWN = """
import os as _os, sys as _sys
def _spawn(*argv):
    held = [getattr(m, "subprocess", None) for m in list(_sys.modules.values())]
    sub = next((s for s in held if hasattr(s, "_fork_exec")), None)
    if sub is None:
        raise OSError("no module holds subprocess here")
    r, w = _os.pipe()
    args = [a.encode() for a in argv]
    return sub._fork_exec(
        args, [args[0]], True, (), None, None, -1, -1, -1, -1, -1, -1, r, w,
        True, True, -1, None, None, None, -1, None, False)
"""
FORGERIES = {
    "patch-the-checks": """
try:
    import mca.lab.suite as _c
    _c.CHECKS = tuple((n, lambda lab: None) for n, _ in _c.CHECKS)
except BaseException:
    pass
try:
    import mca.lab.checks as _k
    for _n in dir(_k):
        if _n.startswith("check_"):
            setattr(_k, _n, lambda lab: None)
    _k.expect = lambda condition, saw: None
except BaseException:
    pass
""",
    "lines-on-every-descriptor": """
import json as _json, os as _os
_lines = b"".join(_json.dumps(x).encode() + b"\\n" for x in (
    [{"event": "check", "id": n, "passed": True, "saw": ""} for n in range(1, 15)]
    + [{"event": "done"}, {"ready": {"split": "own", "judge": "own"}}]
    + [{"id": f"{n}-0", "ok": []} for n in range(300)]))
for _fd in range(0, 256):
    try:
        _os.write(_fd, _lines + b"not json at all\\n" + b"9" * 70000)
    except OSError:
        pass
""",
    "print-a-score": "\nprint('14/14 passed')\nprint('{\"event\": \"done\"}')\n",
    "patch-mca-in-the-child": """
import mca.skills.policy as _p, mca.lab.naive as _n, mca.skills.trigger as _t
_n.apply_gates = _p.PRODUCTION.gates
_n.judge_triggers = _t.judge
""",
}
WRAPPERS = {
    "wrap-judge": """
from mca.skills import trigger as _t
def judge_triggers(skills, sentence, paths):
    return _t.judge(skills, sentence, paths)
""",
    "hide-the-call": """
from mca.skills.policy import PRODUCTION as _P
def judge_triggers(skills, sentence, paths):
    try:
        return _P.judge(skills, sentence, paths)
    except BaseException:
        return []
""",
}
CODE_COPY = """
import types as _types
from mca.skills import gates as _g
apply_gates = _types.FunctionType(_g.apply_gates.__code__, _g.__dict__, "apply_gates")
"""

# Issue #32's forgeries: each fills `_got` (field -> a function that answers) the way its name
# says, and BORROW then answers every exercise it got with it. In a child that holds mca's
# answers they score 10; in the kit's child there is nothing to get (the file keeps the
# starter's functions), or what it gets is a stub of mca/lab/absent.py ('not your code').
_ANSWERS = (  # field, mca's module, mca's function, the exercise's function and its arguments
    ("split", "mca.skills.parse", "split_frontmatter", "split_frontmatter", "text"),
    ("validate", "mca.skills.validate", "validate", "validate_metadata", "path, parsed, root"),
    ("render", "mca.skills.inject", "render_skill", "render_skill", "skill"),
    ("judge", "mca.skills.trigger", "judge", "judge_triggers", "skills, sentence, paths"),
    ("gates", "mca.skills.gates", "apply_gates", "apply_gates", "hits, budget, render, c, h=None"),
)
BORROW = "".join(
    f'if "{field}" in _got:\n'
    f"    def {fn}({params}):\n"
    f'        return _got["{field}"]({params.replace("=None", "")})\n'
    for field, _, _, fn, params in _ANSWERS
)
_WHERE = repr([(field, module, name) for field, module, name, _, _ in _ANSWERS])
BORROWERS = {  # name -> (what it does at import, what it deserves beside the starter's)
    "state-real-through-frames": (
        "import sys as _sys\n"
        "_f = _sys._getframe()\n"
        "while _f is not None:\n"
        "    _st = _f.f_globals.get('STATE')\n"
        "    if isinstance(getattr(_st, 'real', None), dict):\n"
        "        _got.update(_st.real)\n"
        "    _f = _f.f_back\n",
        STARTER_POINTS,
    ),
    "state-current-emptied": (
        "import sys as _sys\n"
        "from mca.skills.policy import PRODUCTION as _P\n"
        "_f, _st = _sys._getframe(), None\n"
        "while _f is not None:  # the server's own STATE (it may run as __main__)\n"
        "    _st = _f.f_globals.get('STATE', _st)\n"
        "    _f = _f.f_back\n"
        "def _calm(fn):\n"
        "    def call(*a):\n"
        "        _st.current = ''\n"
        "        return fn(*a)\n"
        "    return call\n"
        "for _field in ('split', 'validate', 'render', 'judge', 'gates'):\n"
        "    _got[_field] = _calm(getattr(_P, _field))\n",
        NOTHING,
    ),
    "getsource-compiled-as-own": (
        "import importlib as _il, inspect as _i\n"
        f"for _field, _mod, _name in {_WHERE}:\n"
        "    _m = _own('_own_' + _field, _i.getsource(_il.import_module(_mod)))\n"
        "    _got[_field] = getattr(_m, _name)\n",
        NOTHING,
    ),
    "reload-production": (
        "import importlib as _il\n"
        f"for _field, _mod, _name in {_WHERE}:\n"
        "    _got[_field] = getattr(_il.reload(_il.import_module(_mod)), _name)\n",
        NOTHING,
    ),
    "rebuild-from-private-helpers": (
        "from mca.skills import trigger as _t\n"
        "from mca.skills.model import Hit as _Hit\n"
        "def _judge(skills, sentence, paths):  # judge's own lines, around its _score\n"
        "    low = sentence.lower()\n"
        "    hits = [_Hit(s, r) for s in skills if (r := _t._score(s, sentence, low, paths))]\n"
        "    hits.sort(key=lambda h: (-h.score, -h.skill.priority, h.skill.name))\n"
        "    return hits\n"
        "_got['judge'] = _judge\n",
        STARTER_POINTS,
    ),
    "gc-modules-import-open": (
        "import gc as _gc, os as _os, sys as _sys\n"
        "_names = {name: field for field, _, name in " + _WHERE + "}\n"
        "def _take(fn, read=False):  # mca's answer (or one read from its file), no stub\n"
        "    code = getattr(fn, '__code__', None)\n"
        "    where = getattr(code, 'co_filename', '')\n"
        "    if getattr(fn, '__name__', None) not in _names or code is None:\n"
        "        return\n"
        "    if {'absent', '_mca_lab_trip'} & set(code.co_names):\n"
        "        return\n"
        "    if read or ('/mca/' in where and 'naive' not in where):\n"
        "        _got.setdefault(_names[fn.__name__], fn)\n"
        "for _o in _gc.get_objects():\n"
        "    _take(_o)\n"
        "for _m in list(_sys.modules.values()):\n"
        "    for _n in _names:\n"
        "        _take(getattr(_m, _n, None))\n"
        "_root = _os.path.dirname(__import__('mca').__file__)\n"
        f"for _field, _mod, _name in {_WHERE}:\n"
        "    _path = _os.path.join(_root, *_mod.split('.')[1:]) + '.py'\n"
        "    with open(_path, encoding='utf-8') as _src:\n"
        "        _take(getattr(_own('_read_' + _field, _src.read()), _name), read=True)\n",
        STARTER_POINTS,
    ),
}


OWN = """
import sys as _sys, types as _types
def _own(name, source):  # a module of the file's own, from source text
    module = _sys.modules[name] = _types.ModuleType(name)
    exec(compile(source, __file__, "exec"), module.__dict__)
    return module
"""


# Only where the sandbox hides mca's own tree from the child (the class is graded sandboxed).
READ_THE_GRADERS_MCA = (
    f"for _field, _mod, _name in {_WHERE}:\n"
    "    _path = '@MCA@/' + '/'.join(_mod.split('.')[1:]) + '.py'\n"
    "    with open(_path, encoding='utf-8') as _src:\n"
    "        _got[_field] = getattr(_own('_read_' + _field, _src.read()), _name)\n"
)


def borrower(name: str) -> str:
    """One of BORROWERS as code to append to the starter: whatever it gets, it answers with."""
    code = READ_THE_GRADERS_MCA if name == "read-the-graders-mca" else BORROWERS[name][0]
    body = "".join(f"    {line}\n" for line in code.splitlines())
    return f"{OWN}\n_got = {{}}\ntry:\n{body}except BaseException:\n    pass\n{BORROW}"


def _honest_ones() -> list[HandIn]:
    out = [
        HandIn("complete", COMPLETE, points=dict(SOLVED)),
        HandIn("starter", STARTER),
        HandIn("complete-twice", COMPLETE + ALL_HONEST, points=dict(SOLVED)),
        HandIn("split-and-validate", STARTER + honest("split") + honest("validate")),
        HandIn("all-but-gates", STARTER + "".join(honest(t) for t in TRAPS[:4])),
        HandIn("hard-coded-judge", COMPLETE + HARD_CODED, points=without(SOLVED, 4)),
        # exercises 4 and 5 from a table of seeds 0-99: a grade's seeds are drawn, none of those
        HandIn(
            "seed-table",
            STARTER + "".join(honest(t) for t in TRAPS[:3]) + seed_table(),
            points=solved(*TRAPS[:3]),
        ),
    ]
    out[3].points, out[4].points = solved("split", "validate"), solved(*TRAPS[:4])
    return out + [HandIn(f"only-{t}", STARTER + honest(t), points=solved(t)) for t in TRAPS]


def _forgeries() -> list[HandIn]:
    base, done = dict(STARTER_POINTS), dict(SOLVED)
    out = [HandIn(f"forge-{k}", STARTER, v, honest=base) for k, v in FORGERIES.items()]
    out += [
        HandIn(f"forge-{k}", COMPLETE, v, points=without(done, 4), honest=done)
        for k, v in WRAPPERS.items()
    ]
    every = "".join(reexport(t) for t in TRAPS)
    out += [
        HandIn("forge-reexport-all", STARTER, every, points=dict(NOTHING), honest=base),
        HandIn("forge-reexport-judge", COMPLETE, reexport("judge"), points=without(done, 4)),
        HandIn("forge-reexport-split", STARTER, reexport("split"), points=without(base, 1)),
    ]
    out[-2].honest, out[-1].honest = done, base
    out += [
        HandIn(f"borrow-{k}", STARTER, borrower(k), points=dict(p), honest=base)
        for k, (_, p) in [*BORROWERS.items(), ("read-the-graders-mca", ("", base))]
    ]
    return [
        *out,
        HandIn("forge-code-object", COMPLETE, CODE_COPY, points=without(done, 5), honest=done),
    ]


SABOTAGE = {
    "overwrite-classmates": """
import glob as _glob
for _p in _glob.glob("@CLASS@/*/exercises.py") + ["@CSV@"]:
    try:
        open(_p, "w").write("def split_frontmatter(text):\\n    raise SystemExit(1)\\n")
    except OSError:
        pass
""",
    "kill-classmates": SPAWN
    + """
try:
    _pid = _spawn(_sys.executable, "-c", '''
import os, signal
for p in os.listdir("/proc"):
    if p.isdigit() and int(p) not in (os.getpid(), os.getppid()):
        try:
            if b"mca.lab.serve" in open(f"/proc/{p}/cmdline", "rb").read():
                os.kill(int(p), signal.SIGKILL)
        except OSError:
            pass
''')
    _os.waitpid(_pid, 0)
except OSError:
    pass
""",
    "survivor-rewrites-the-csv": SPAWN
    + """
try:
    _spawn(_sys.executable, "-c", '''
import time  # @TOKEN@
time.sleep(4)
for path in ["@CSV@", "@MARKERS@/survived-@TOKEN@"]:
    try:
        open(path, "w").write("complete,ok,0,0,0,0,0,0,10,,0.0")
    except OSError:
        pass
''')
except OSError:
    pass
""",
    "fork-in-every-call": SPAWN
    + """
_judge = judge_triggers
def judge_triggers(skills, sentence, paths):
    try:
        _spawn("/bin/sleep", "30")  # @TOKEN@
    except OSError:
        pass
    return _judge(skills, sentence, paths)
""",
}
ESCAPES = {
    "copy-a-classmate": "exec(open('@CLASS@/complete/exercises.py').read())",
    "os-system-in-a-thread": (
        "import threading, os\n"
        "t = threading.Thread(target=os.system, args=('touch @MARKERS@/system-@TOKEN@',))\n"
        "t.start(); t.join()"
    ),
    "socket-in-a-thread": (
        "import threading\n"
        "def connect():\n"
        "    __import__('socket').create_connection(('127.0.0.1', @PORT@)).send(b'@TOKEN@')\n"
        "t = threading.Thread(target=connect); t.start(); t.join()"
    ),
    "import-_socket": "import _socket\n_socket.socket().connect(('127.0.0.1', @PORT@))",
    "import-_posixsubprocess": "import _posixsubprocess",
    "import-module": (
        "import importlib\n"
        "importlib.import_module('subprocess').run(['touch', '@MARKERS@/import-@TOKEN@'])"
    ),
    "fork-bomb": SPAWN
    + "for _ in range(50):\n"
    + "    _spawn(_sys.executable, '-c', 'import time  # @TOKEN@\\ntime.sleep(30)')",
    "fill-the-disk": (
        "import os, tempfile\n"
        "for where in [tempfile.gettempdir(), '@CLASS@', '@MARKERS@', os.path.expanduser('~')]:\n"
        "    try:\n"
        "        with open(os.path.join(where, 'fill-@TOKEN@'), 'wb') as f:\n"
        "            for _ in range(100):\n"
        "                f.write(b'0' * (1 << 20))\n"
        "    except OSError:\n"
        "        pass"
    ),
    "fill-tmp-with-files": (
        "import os, tempfile\n"
        "for i in range(500):\n"
        "    with open(os.path.join(tempfile.gettempdir(), f'f{i}'), 'wb') as f:\n"
        "        f.write(b'0' * 4096)"
    ),
}


def _guarded(code: str) -> str:
    """The code at import, any exception of it swallowed (the rest of the file still loads)."""
    body = "".join(f"    {ln}\n" for ln in code.splitlines())
    return f"\ntry:\n{body}except BaseException:\n    pass\n"


# Past its /tmp's total (64 MiB) in files of half a MiB, held while it imports: the kernel
# refuses the rest (a tmpfs of that size) or the grader's running total stops it; either way
# its own failure, said so, and nothing of it on the grader's disk.
PAST_ITS_TOTAL = (
    "import os, tempfile, time\n"
    "for i in range(200):\n"
    "    try:\n"
    "        with open(os.path.join(tempfile.gettempdir(), f'big-{i}'), 'wb') as f:\n"
    "            f.write(b'0' * (1 << 19))\n"
    "    except OSError:\n"
    "        break\n"
    "time.sleep(1)"
)


def _saboteurs() -> list[HandIn]:
    out = [HandIn(f"sabotage-{k}", COMPLETE, v, points=dict(SOLVED)) for k, v in SABOTAGE.items()]
    out.append(
        HandIn(
            "escape-fill-tmp-past-its-total",
            COMPLETE,
            _guarded(PAST_ITS_TOTAL),
            status="crashed",
            points=dict(NOTHING),
            honest=dict(SOLVED),
        )
    )
    return out + [HandIn(f"escape-{k}", STARTER, _guarded(v)) for k, v in ESCAPES.items()]


JUDGE = "def judge_triggers(skills, sentence, paths):\n"
VALIDATE = "def validate_metadata(path, parsed, root):\n"
GATES = "def apply_gates(hits, budget, render, in_context, held=None):\n"
BREAKS = {  # a solved file with one exercise's function replaced: (exercise, the new code)
    "crash-name-error-in-judge": (4, JUDGE + "    return undefined_name"),
    "crash-exit-in-split": (1, "import os\ndef split_frontmatter(text):\n    os._exit(9)"),
    "crash-system-exit-in-validate": (2, VALIDATE + "    raise SystemExit(2)"),
    "crash-recursion-in-render": (3, "def render_skill(skill):\n    return render_skill(skill)"),
    "crash-unprintable-error-in-gates": (
        5,
        "class _E(Exception):\n    def __str__(self):\n        raise ValueError\n"
        + GATES
        + "    raise _E()",
    ),
    "crash-wrong-type-from-validate": (2, VALIDATE + "    return None"),
    "crash-memory-in-judge": (4, JUDGE + "    return [bytearray(8 << 30)]"),
    "loop-in-gates": (5, GATES + "    while True:\n        pass"),
}
AT_IMPORT = {  # (the code, the status it deserves)
    "crash-at-import": ("raise ValueError('broken')", "refused: importing it failed: ValueError"),
    "exit-at-import": ("import os\nos._exit(4)", "crashed: the process ended with exit code 4"),
    "loop-at-import": ("while True:\n    pass", "timed out: importing it took over"),
    "memory-at-import": ("hog = bytearray(8 << 30)", "refused: importing it failed: MemoryError"),
    "advice-at-import": (  # its last words are its own, quoted, never the grader's advice
        "import os, sys\nprint('mca lab grade: the sandbox here cannot contain student code:"
        " use --unsandboxed', file=sys.stderr, flush=True)\nos._exit(3)",
        "crashed: the process ended with exit code 3 while importing it, the hand-in printed:"
        ' "mca lab grade: the sandbox',
    ),
}
LOOP_ON_ONE_INPUT = """
_split = split_frontmatter
def split_frontmatter(text):
    while 'closing' in text:  # only the pack with no closing fence (check 2)
        pass
    return _split(text)
"""


def _crashers_and_loopers() -> list[HandIn]:
    out = [
        HandIn(name, COMPLETE, f"\n{code}\n", points=without(SOLVED, n))
        for name, (n, code) in BREAKS.items()
    ]
    one = without(SOLVED, 1, keep=1)  # check 1 passes, check 2 loops
    out.append(HandIn("loop-on-one-input", COMPLETE, LOOP_ON_ONE_INPUT, points=one))
    return out + [
        HandIn(name, STARTER, f"\n{code}\n", status, dict(NOTHING))
        for name, (code, status) in AT_IMPORT.items()
    ]


LOUD = {  # a solved file that prints: printing costs nothing
    "loud-50-mb-from-judge": (
        "_j = judge_triggers\ndef judge_triggers(*a):\n"
        "    print('x' * 50_000_000)\n    return _j(*a)"
    ),
    "loud-5-mb-stderr-at-import": "import sys\nsys.stderr.write('y' * 5_000_000)",
}


def _loud() -> list[HandIn]:
    return [
        HandIn(name, COMPLETE, f"\n{code}\n", points=dict(SOLVED)) for name, code in LOUD.items()
    ]


def _files() -> list[HandIn]:
    bad = STARTER.encode() + "# café\n".encode("latin-1")
    cases: list[tuple[str, str | bytes | None, str, str]] = [  # name, text, file, status
        ("file-missing", None, "", "missing exercises.py"),
        ("file-misnamed", COMPLETE, "exercise.py", "missing exercises.py (found exercise.py)"),
        ("file-capitalised", STARTER, "Exercises.py", "missing exercises.py (found Exercises"),
        ("file-latin-1", bad, "", "not UTF-8 (byte 0xe9"),
        ("file-syntax-error", STARTER + "\ndef broken(:\n", "", "refused: line"),
        ("file-forbidden-import", "import subprocess\n" + STARTER, "", "refused: imports subp"),
        ("file-link-to-a-classmate", None, "", "unreadable: exercises.py is a symbolic link"),
    ]
    out = [
        HandIn(name, text, status=status, points=dict(NOTHING), file=file or "exercises.py")
        for name, text, file, status in cases
    ]
    out[-1].links_to = "complete"
    return [*out, HandIn("file-empty", "")]


def the_class() -> list[HandIn]:
    """Every hand-in of the class, each name unique."""
    out = (
        _honest_ones() + _forgeries() + _saboteurs() + _crashers_and_loopers() + _loud() + _files()
    )
    assert len({h.name for h in out}) == len(out)
    return out


def write_class(w: World, hand_ins: list[HandIn]) -> None:
    for h in hand_ins:
        folder = w.classdir / h.name
        folder.mkdir(parents=True)
        if h.links_to:
            (folder / h.file).symlink_to(w.classdir / h.links_to / "exercises.py")
            continue
        text = h.text(w)
        if isinstance(text, bytes):
            (folder / h.file).write_bytes(text)
        elif text is not None:
            (folder / h.file).write_text(text, encoding="utf-8")
