"""`make e2e-local`'s set-up (tests/e2e_local/run.sh), with the tools it calls replaced by ones
that log what they are asked: it says its time up front, and a run stopped half-way (in the
install, in the build) goes on from where it stopped the next time, never from scratch and never
on a broken install."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from tests.conftest import REPO

SCRIPT = REPO / "tests" / "e2e_local" / "run.sh"
FAKE_PIP = r"""#!/bin/sh
echo "pip $*" >> "$LOG"
[ -e "$STOP/pip" ] && exit 1
if [ "$1" = download ]; then
  d=$(mktemp -d); mkdir -p "$d/llama_cpp_python-0.3.36/vendor/llama.cpp"
  touch "$d/llama_cpp_python-0.3.36/vendor/llama.cpp/CMakeLists.txt"
  for to; do :; done  # the last argument: -d's folder
  mkdir -p "$to"; tar czf "$to/llama_cpp_python-0.3.36.tar.gz" -C "$d" llama_cpp_python-0.3.36
fi
exit 0
"""
FAKE_PYTHON3 = r"""#!/bin/sh
echo "python3 $*" >> "$LOG"
mkdir -p "$3/bin"; cp "$FAKES/pip" "$3/bin/pip"; cp "$FAKES/pip" "$3/bin/python"
"""
FAKE_CMAKE = r"""#!/bin/sh
echo "cmake $*" >> "$LOG"
if [ "$1" = --build ]; then
  [ -e "$STOP/build" ] && exit 1
  mkdir -p "$2/bin"; printf '#!/bin/sh\n' > "$2/bin/llama-server"; chmod +x "$2/bin/llama-server"
fi
exit 0
"""


def fakes(tmp_path: Path) -> dict[str, str]:
    bin_ = tmp_path / "fakes"
    bin_.mkdir()
    for name, text in (("pip", FAKE_PIP), ("python3", FAKE_PYTHON3), ("cmake", FAKE_CMAKE)):
        (bin_ / name).write_text(text)
        (bin_ / name).chmod(stat.S_IRWXU)
    (tmp_path / "stop").mkdir()
    return {
        "PATH": f"{bin_}:{os.environ['PATH']}",
        "FAKES": str(bin_),
        "LOG": str(tmp_path / "log"),
        "STOP": str(tmp_path / "stop"),
        "MCA_E2E_LOCAL": str(tmp_path / "local"),
        "MCA_E2E_PREPARE_ONLY": "1",
    }


def run(env: dict[str, str], tmp_path: Path) -> tuple[int, list[str], str]:
    log = tmp_path / "log"
    log.write_text("")
    done = subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120
    )
    return done.returncode, log.read_text().splitlines(), done.stderr


def test_the_first_run_says_its_time_and_later_runs_do_nothing_again(tmp_path: Path) -> None:
    env = fakes(tmp_path)
    code, calls, said = run(env, tmp_path)
    assert code == 0, said
    assert "20-30 min" in said and "goes on from the step it reached" in said
    assert any(c.startswith("pip install") for c in calls)
    code, calls, said = run(env, tmp_path)
    assert code == 0 and calls == [] and said == ""  # everything was done


def test_an_install_stopped_half_way_is_installed_again(tmp_path: Path) -> None:
    env = fakes(tmp_path)
    (tmp_path / "stop" / "pip").touch()
    assert run(env, tmp_path)[0] != 0  # the venv exists, its packages do not
    (tmp_path / "stop" / "pip").unlink()
    code, calls, _ = run(env, tmp_path)
    assert code == 0 and any(c.startswith("pip install") for c in calls)
    assert not any(c.startswith("python3 -m venv") for c in calls)  # the venv kept


def test_a_build_stopped_half_way_goes_on_without_fetching_or_configuring_again(
    tmp_path: Path,
) -> None:
    env = fakes(tmp_path)
    (tmp_path / "stop" / "build").touch()
    assert run(env, tmp_path)[0] != 0
    (tmp_path / "stop" / "build").unlink()
    code, calls, said = run(env, tmp_path)
    assert code == 0, said
    assert [c.split()[:2] for c in calls] == [["cmake", "--build"]], calls
