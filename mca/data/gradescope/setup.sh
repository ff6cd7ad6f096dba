#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image (Ubuntu).
# It installs Python 3.11 and mca from the wheel shipped in the autograder zip, and Node.js for
# checks 5 and 14 (they carry no points: a grade never depends on whether Node is there).
set -euo pipefail

apt-get install -y --no-install-recommends python3.11 python3.11-venv nodejs
python3.11 -m venv /opt/mca
/opt/mca/bin/pip install --no-cache-dir /autograder/source/mca-*.whl
/opt/mca/bin/mca selftest >/dev/null  # the lab itself passes here (checks 5/14 skip without Node)

# Where mca's sandbox cannot hold in the container, run_autograder grades --unsandboxed, and mca
# then runs each hand-in as this account, which must read neither mca's package (the answers
# are in it) nor the autograder's files: mca checks both before it grades, and refuses if not.
id -u mca-student >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin mca-student
chmod -R go-rwx /opt/mca /autograder/source
