"""mca's own environment block (what /proc/<mca>/environ shows to root or a ptrace-capable
process) no longer holds the keys once mca started; its Python copy still does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHILD = """
import os
from mca.process.harden import scrub_environ_block
n = scrub_environ_block(["OPENAI_API_KEY", "OTHER_API_KEY"])
block = open("/proc/self/environ", "rb").read()
print(n, b"sk-planted" in block, os.environ["OPENAI_API_KEY"], b"KEEP=this" in block)
"""


@pytest.mark.skipif(
    not os.access("/proc/self/environ", os.R_OK), reason="/proc cannot be read here"
)
def test_keys_leave_the_environment_block_but_not_os_environ() -> None:
    env = {**os.environ, "OPENAI_API_KEY": "sk-planted-0123456789", "KEEP": "this"}
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["1", "False", "sk-planted-0123456789", "True"]
