#!/usr/bin/env bash
# Runs every test: the C++ suites (ctest, over build/py that tools/setup.sh
# made) and the Python suite (pytest, against the package installed in .venv).
# Both print their summary lines; the exit status is non-zero if either fails.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH"

status=0
ctest --test-dir build/py --output-on-failure -j "$(nproc)" || status=1
.venv/bin/python -m pytest -q tests/python "$@" || status=1
exit $status
