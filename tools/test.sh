#!/usr/bin/env bash
# Runs every test: the C++ suites (ctest, over build/py that tools/setup.sh
# made), the Python suite (pytest, against the package installed in .venv,
# with PyTorch 2.13) and anydev.torch's tests once more on Debian's PyTorch
# 1.13 under /usr/bin/python3, and the wheel that tools/setup.sh built and
# installed (build/wheel/) once more in a fresh venv with Debian's C++
# libraries hidden (tools/test_wheels.sh --cli-tests: the CLI smoke tests,
# the CLI and packaging tests and `anydev demo`). Each prints its summary
# line; the exit status is non-zero if any fails.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH"

status=0
ctest --test-dir build/py --output-on-failure -j "$(nproc)" || status=1
.venv/bin/python -m pytest -q tests/python "$@" || status=1

# anydev.torch again, on an old PyTorch without torch.accelerator: Debian's
# python3-torch (1.13) for /usr/bin/python3, which imports the .venv's anydev
# (the same CPython 3.11 ABI) through a folder of links to it and to pytest,
# not the whole site-packages (that would bring the .venv's torch 2.13).
old_py=/usr/bin/python3
venv_ver=$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
echo "== anydev.torch on Debian's PyTorch ($old_py) =="
if [[ ! -x $old_py ]]; then
  echo "torch-old: skipped: $old_py is missing"
elif [[ $("$old_py" -c 'import sys; print("%d.%d" % sys.version_info[:2])') != "$venv_ver" ]]; then
  echo "torch-old: skipped: $old_py is not Python $venv_ver like .venv (the extension's ABI)"
elif ! "$old_py" -c 'import torch' >/dev/null 2>&1; then
  echo "torch-old: skipped: $old_py has no torch (Debian's python3-torch; tools/setup.sh installs it)"
else
  site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  links=build/torch-old-path
  rm -rf "$links" && mkdir -p "$links"
  for m in anydev pytest _pytest pluggy iniconfig packaging py.py pygments; do
    [[ -e $site/$m ]] && ln -s "$site/$m" "$links/$m"
  done
  PYTHONPATH="$root/$links" "$old_py" -m pytest -q -p no:cacheprovider \
    tests/python/pytorch/test_torch_adapter.py || status=1
fi

# The shipped artefact on its own: the manylinux wheel in a fresh venv of the
# .venv's interpreter, where only what the wheel brings can be loaded.
echo "== the wheel in a fresh venv, Debian's C++ libraries hidden =="
shopt -s nullglob
wheels=(build/wheel/anydev-*manylinux*.whl)
shopt -u nullglob
if ((${#wheels[@]} != 1)); then
  echo "wheel: build/wheel/ has ${#wheels[@]} manylinux wheels, not 1: run tools/setup.sh" >&2
  status=1
else
  base_py=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
  rc=0
  tools/test_wheels.sh --cli-tests --python "$base_py" "${wheels[0]}" || rc=$?
  if ((rc == 77)); then
    echo "wheel: skipped: no private mount namespace here to hide Debian's libraries in"
  elif ((rc != 0)); then
    status=1
  fi
fi
exit $status
