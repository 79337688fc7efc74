#!/usr/bin/env bash
# Builds the C++ core and its GoogleTest suites with AddressSanitizer and
# UndefinedBehaviorSanitizer in build/asan (no Python extension, no
# benchmarks) and runs them with ctest. Slow on two cores (a full build):
# the CI job of docs/ci/fuzz-workflow.yml runs it, tools/test.sh does not.
#
#   tools/sanitize.sh             # build and run every suite
#   tools/sanitize.sh -R scan     # ctest arguments: only the scanner's
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH="$root/.venv/bin:$PATH"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DANYDEV_BUILD_PYTHON=OFF -DANYDEV_BUILD_BENCHMARKS=OFF -DANYDEV_BUILD_TESTS=ON \
  -DCMAKE_CXX_FLAGS="$san" -DCMAKE_C_FLAGS="$san" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build/asan -j "$(nproc)"
# tools/lsan.supp names the vendor libraries whose own leaks are not ours.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  LSAN_OPTIONS="suppressions=$root/tools/lsan.supp:print_suppressions=0" \
  ctest --test-dir build/asan --output-on-failure -j "$(nproc)" "$@"
