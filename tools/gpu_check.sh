#!/usr/bin/env bash
# Checks anydev on a machine with an NVIDIA GPU: builds it there, runs the
# accelerator conformance suite on the `cuda` backend (C++ and Python), the
# memory suite and the vendor backend tests, the overhead benchmark
# (bench_vendor), the caching allocator's benchmark on cuda (bench_memory:
# the cached pair against malloc+free and cudaMalloc+cudaFree), the graph
# benchmark (bench_graph: N launches against one replay), the fix proof
# (tools/prove_fixes.py) on this machine's PyTorch, and prints a summary.
# Made for a machine with no network: CUDA (headers under
# /usr/local/cuda or $CUDA_HOME, and a driver), Python 3 with pybind11 and
# pytest, CMake, ninja and a C++17 compiler, but no Abseil, GoogleTest or
# Google Benchmark: those travel with the tree in build/deps, which
# tools/vendor_deps.sh makes on a Debian machine (git-ignored, about 11 MiB).
#
#   tools/gpu_check.sh                  # build in build/gpu, check, summarise
#   tools/gpu_check.sh --full           # also the whole ctest and pytest suites
#   tools/gpu_check.sh --allow-no-gpu   # build and test even without a GPU (the
#                                       # cuda checks then report "no GPU")
#   BUILD_DIR=... DEPS_DIR=... PYTHON=python3.12 JOBS=16 tools/gpu_check.sh
#   GPU_CHECK_DRY_RUN_CUDA_LIBRARY=build/gpu/tests/cpp/libanydev_fake_cudart.so \
#     tools/gpu_check.sh --allow-no-gpu  # a dry run of every step on the tests'
#                                       # fake CUDA runtime (host threads, no GPU)
#
# Exit status: 0 every check passed on a GPU; 1 a check failed; 2 this machine
# cannot run the check (no NVIDIA GPU or driver, a missing tool or dependency),
# with the reason on the last lines.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
build=${BUILD_DIR:-$root/build/gpu}
deps=${DEPS_DIR:-$root/build/deps}
python=${PYTHON:-python3}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 4)}
full=0
allow_no_gpu=0
for arg in "$@"; do
  case $arg in
    --full) full=1 ;;
    --allow-no-gpu) allow_no_gpu=1 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "gpu_check: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

logs=$build/gpu_check
mkdir -p "$logs"
summary=()      # lines of the final summary
failed=0
started=$(date +%s)
say() { echo "gpu_check: $*"; }
note() { summary+=("$(printf '%-28s %s' "$1" "$2")"); }
fail() { note "$1" "FAIL: $2"; failed=1; }
# Stops early: the machine cannot run the check.
cannot() {
  note "result" "CANNOT RUN: $*"
  print_summary
  exit 2
}
print_summary() {
  echo
  echo "================ anydev GPU check ================"
  for line in "${summary[@]}"; do echo "$line"; done
  echo "logs: $logs ($(($(date +%s) - started)) s)"
  echo "=================================================="
}
# Runs a step with its output in a log; prints the log's tail on failure.
run_logged() {
  local name=$1 limit=$2
  shift 2
  say "$name: $*"
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  ((rc == 0)) && return 0
  say "$name failed (exit $rc); the end of $logs/$name.log:"
  tail -n 40 "$logs/$name.log" | sed 's/^/    /'
  return $rc
}

# --- 1. the machine ----------------------------------------------------------------
gpu_line="none found"
have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1; then
  if smi=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1); then
    if [[ -n $smi ]]; then
      have_gpu=1
      gpu_line="$(echo "$smi" | wc -l) GPU(s): $(echo "$smi" | head -n 1)"
    fi
  else
    gpu_line="nvidia-smi failed: $(echo "$smi" | head -n 1)"
  fi
elif [[ -d /proc/driver/nvidia/gpus ]] && [[ -n $(ls /proc/driver/nvidia/gpus 2>/dev/null) ]]; then
  have_gpu=1
  gpu_line="$(ls /proc/driver/nvidia/gpus | wc -l) GPU(s) in /proc/driver/nvidia (no nvidia-smi)"
elif [[ ! -e /dev/nvidiactl ]]; then
  gpu_line="no NVIDIA driver (no nvidia-smi, no /dev/nvidiactl)"
fi
note "gpu" "$gpu_line"
if ((!have_gpu && !allow_no_gpu)); then
  cannot "no NVIDIA GPU on this machine ($gpu_line); run it where there is one, or pass --allow-no-gpu to build and test anyway"
fi

# --- 2. tools and dependencies ------------------------------------------------------
for tool in cmake ninja "$python"; do
  command -v "$tool" >/dev/null 2>&1 || cannot "'$tool' is not on PATH"
done
cxx=${CXX:-$(command -v c++ || command -v g++ || command -v clang++ || true)}
[[ -n $cxx ]] || cannot "no C++ compiler (c++, g++ or clang++) on PATH"
pyver=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) ||
  cannot "'$python' does not run"
pybind11_dir=$("$python" -m pybind11 --cmakedir 2>/dev/null) ||
  cannot "$python $pyver has no pybind11 (python -m pybind11 --cmakedir failed)"
"$python" -c 'import pytest' 2>/dev/null || cannot "$python $pyver has no pytest"
cuda_include=""
for dir in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
  if [[ -n $dir && -f $dir/include/cuda_runtime_api.h ]]; then
    cuda_include=$dir/include
    break
  fi
done
[[ -n $cuda_include ]] ||
  cannot "no CUDA headers (cuda_runtime_api.h under \$CUDA_HOME, \$CUDA_PATH or /usr/local/cuda)"
note "tools" "$(cmake --version | head -n 1), ninja $(ninja --version), $($cxx --version | head -n 1), python $pyver"
prefix_path=""
if [[ -d $deps/usr ]]; then
  prefix_path=$deps/usr
  note "dependencies" "$deps ($(sed -n '2,$p' "$deps/MANIFEST" 2>/dev/null | tr '\n' ',' | sed 's/,$//'))"
  export LD_LIBRARY_PATH="$deps/usr/lib/$(ls "$deps/usr/lib" | grep -m1 -- '-linux-gnu' || echo .):${LD_LIBRARY_PATH:-}"
elif [[ -d /usr/include/absl ]]; then
  note "dependencies" "system (no $deps)"
else
  cannot "no $deps and no system Abseil: run tools/vendor_deps.sh on a Debian machine and carry build/deps"
fi
# Child CMake runs (the find_package consumer test) look here too.
export CMAKE_PREFIX_PATH="$prefix_path${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"

# --- 3. build -------------------------------------------------------------------------
build_started=$(date +%s)
if ! run_logged configure 600 cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$prefix_path" \
    -DANYDEV_ENABLE_CUDA=ON \
    -DANYDEV_CUDA_INCLUDE_DIR="$cuda_include" \
    -DANYDEV_BUILD_PYTHON=ON -DANYDEV_BUILD_TESTS=ON -DANYDEV_BUILD_BENCHMARKS=ON \
    -DPython_EXECUTABLE="$(command -v "$python")" \
    -DPython3_EXECUTABLE="$(command -v "$python")" \
    -Dpybind11_DIR="$pybind11_dir"; then
  fail "build" "cmake configure failed ($logs/configure.log)"
  print_summary
  exit 1
fi
if ! run_logged build 1800 cmake --build "$build" -j "$jobs"; then
  fail "build" "compilation failed ($logs/build.log)"
  print_summary
  exit 1
fi
absl_from=$(grep -m1 '^absl_DIR:' "$build/CMakeCache.txt" | cut -d= -f2)
note "build" "ok in $(($(date +%s) - build_started)) s ($build; absl from $absl_from)"

# The Python package from the build tree: the sources plus the extension.
site=$build/gpu_check/site
rm -rf "$site" && mkdir -p "$site"
cp -r "$root/python/anydev" "$site/anydev"
find "$build/python" -maxdepth 1 -name '_C*.so' -exec cp {} "$site/anydev/" \;
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
unset ANYDEV_ACCELERATOR ANYDEV_SIM_DEVICES ANYDEV_SIM_MEMORY ANYDEV_CUDA_LIBRARY
dry_run=""
if [[ -n ${GPU_CHECK_DRY_RUN_CUDA_LIBRARY:-} ]]; then
  dry_run=$(cd "$(dirname "$GPU_CHECK_DRY_RUN_CUDA_LIBRARY")" && pwd)/$(basename "$GPU_CHECK_DRY_RUN_CUDA_LIBRARY")
  export ANYDEV_CUDA_LIBRARY=$dry_run
  note "DRY RUN" "the cuda backend loads $dry_run, not a GPU's runtime"
fi

# --- 4. what anydev sees --------------------------------------------------------------
"$python" -m anydev doctor >"$logs/doctor.log" 2>&1
cuda_row=$(grep -m1 '^cuda ' "$logs/doctor.log" || echo "cuda (doctor failed: see $logs/doctor.log)")
note "anydev doctor" "$(echo "$cuda_row" | tr -s ' ' | cut -c1-160)"
sed -n '/^accelerator:/,$p' "$logs/doctor.log" | sed 's/^/    /'
cuda_available=0
if "$build/tests/cpp/run_if_available" cuda /bin/true >"$logs/probe.log" 2>&1; then
  cuda_available=1
fi
if ((!cuda_available)); then
  reason=$(head -n 1 "$logs/probe.log")
  note "cuda backend" "NO GPU for anydev: $reason"
fi

# --- 5. C++: the conformance suite on cuda, the vendor tests ------------------------
# gtest's summary lines -> "N passed, N skipped, N failed".
gtest_counts() {
  local log=$1 passed skipped failed_n
  passed=$(grep -m1 -oE '\[  PASSED  \] [0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  skipped=$(grep -m1 -oE '\[  SKIPPED \] [0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  failed_n=$(grep -m1 -oE '[0-9]+ FAILED TEST' "$log" | grep -oE '^[0-9]+' || echo 0)
  echo "${passed:-0} passed, ${skipped:-0} skipped, ${failed_n:-0} failed"
}
if ((cuda_available)); then
  if run_logged cpp_conformance_cuda 900 env ANYDEV_ACCELERATOR=cuda \
      "$build/tests/cpp/accelerator_conformance_test"; then
    counts=$(gtest_counts "$logs/cpp_conformance_cuda.log")
    skipped_names=$(grep -oE '^\[  SKIPPED \] [A-Za-z0-9_]+\.[A-Za-z0-9_]+' "$logs/cpp_conformance_cuda.log" |
                    awk '{print $NF}' | sed 's/^AcceleratorConformance\.//' | sort -u | tr '\n' ' ')
    note "C++ conformance (cuda)" "PASS: $counts${skipped_names:+ (skipped: ${skipped_names% })}"
  else
    fail "C++ conformance (cuda)" "$(gtest_counts "$logs/cpp_conformance_cuda.log") ($logs/cpp_conformance_cuda.log)"
  fi
else
  fail "C++ conformance (cuda)" "not run: no CUDA device for anydev"
fi
if run_logged ctest_vendor 900 ctest --test-dir "$build" -R '^(conformance\.|memory\.|vendor_backend)' \
    --output-on-failure; then
  note "ctest conformance+memory+vendor" "PASS: $(grep -m1 -E 'tests passed' "$logs/ctest_vendor.log")"
else
  fail "ctest conformance+memory+vendor" "$(grep -m1 -E 'tests passed|tests failed' "$logs/ctest_vendor.log") ($logs/ctest_vendor.log)"
fi
# (ctest clears ANYDEV_CUDA_LIBRARY for every test, so a dry run skips them.)
if ((cuda_available)) && [[ -z $dry_run ]]; then
  for suite in conformance memory; do
    if ! grep -qE "$suite\.cuda .*Passed" "$logs/ctest_vendor.log"; then
      fail "ctest $suite.cuda" "not passed (skipped means anydev saw no device)"
    fi
  done
fi

# --- 6. Python: the conformance suite on cuda, the vendor tests ----------------------
pytest_counts() { grep -E '^(=+ )?[0-9]+ (passed|failed|skipped|error)' "$1" | tail -n 1 | tr -d '='; }
if ((cuda_available)); then
  if run_logged py_conformance_cuda 900 env ANYDEV_ACCELERATOR=cuda "$python" -m pytest -q \
      -p no:cacheprovider -rs "$root/tests/python/runtime/test_accelerator_conformance.py" \
      "$root/tests/python/runtime/test_vendor_backends.py" "$root/tests/python/runtime/test_graph.py"; then
    note "Python conformance (cuda)" "PASS: $(pytest_counts "$logs/py_conformance_cuda.log")"
  else
    fail "Python conformance (cuda)" "$(pytest_counts "$logs/py_conformance_cuda.log") ($logs/py_conformance_cuda.log)"
  fi
else
  if run_logged py_vendor 600 "$python" -m pytest -q -p no:cacheprovider -rs \
      "$root/tests/python/runtime/test_vendor_backends.py"; then
    note "Python vendor tests" "PASS: $(pytest_counts "$logs/py_vendor.log") (no cuda device)"
  else
    fail "Python vendor tests" "$(pytest_counts "$logs/py_vendor.log") ($logs/py_vendor.log)"
  fi
  fail "Python conformance (cuda)" "not run: no CUDA device for anydev"
fi

# --- 7. the overhead benchmark ---------------------------------------------------------
if run_logged bench_vendor 600 "$build/benchmarks/cpp/bench_vendor" --benchmark_min_time=0.5 \
    --benchmark_color=false; then
  while read -r line; do
    note "bench" "${line#bench_vendor: }"
  done < <(grep '^bench_vendor:' "$logs/bench_vendor.log")
  if grep -q '^bench_vendor: .* OVER$' "$logs/bench_vendor.log"; then
    note "bench target" "MISSED: some operation is over 1.1x raw (noise? rerun: $build/benchmarks/cpp/bench_vendor)"
  fi
else
  fail "bench" "bench_vendor failed ($logs/bench_vendor.log)"
fi

# --- 7a. the caching allocator on cuda (issue 5's targets) --------------------------------
# The cached allocate+free pair against malloc+free (x_malloc, target <= 5) and
# against cudaMalloc+cudaFree (raw/cached, target >= 100), measured in one run
# by BM_CachedPair, and the trace's reserved/allocated (target <= 1.25).
if ((cuda_available)); then
  if run_logged bench_memory 600 "$build/benchmarks/cpp/bench_memory" --benchmark_min_time=0.2 \
      --benchmark_filter='MallocFree|(CachedPair|BackendPair|TraceReplay)<DeviceType::kCUDA>' \
      --benchmark_out="$logs/bench_memory.json" --benchmark_out_format=json --benchmark_color=false; then
    while read -r line; do
      note "bench_memory" "$line"
    done < <("$python" - "$logs/bench_memory.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
missed = []
for r in runs:
    name = r["name"]
    if r.get("error_occurred"):
        print(f"{name}: not measured: {r.get('error_message', '?')}")
        if "kCUDA" in name:
            missed.append(name)
    elif name.startswith("BM_CachedPair<DeviceType::kCUDA>/") and "threads" not in name:
        size = int(name.rsplit("/", 1)[1])
        xm, rc = r.get("x_malloc", 0.0), r.get("raw/cached", 0.0)
        print(f"cuda {size:>9} B: {r['cpu_time']:.1f} {r['time_unit']}, x_malloc {xm:.2f}, "
              f"raw/cached {rc:.0f}")
        if xm > 5 or rc < 100:
            missed.append(f"{size} B")
    elif name.startswith("BM_TraceReplay<DeviceType::kCUDA>"):
        print(f"cuda trace: reserved/allocated {r['reserved/allocated']:.3f}")
        if r["reserved/allocated"] > 1.25:
            missed.append("trace")
if missed:
    print("MISSED: x_malloc > 5 or raw/cached < 100 at " + ", ".join(missed))
PY
)
  else
    fail "bench_memory" "bench_memory failed ($logs/bench_memory.log)"
  fi
fi

# --- 7a'. graphs on cuda: N direct launches against one replay of the same N ----------------
# bench_graph's x_direct is the replay's speed-up over the direct run of the same
# N fills, measured in one run; a graph that is not faster at N=256 is a miss.
if ((cuda_available)); then
  if run_logged bench_graph 600 env ANYDEV_ACCELERATOR=cuda "$build/benchmarks/cpp/bench_graph" \
      --benchmark_min_time=0.2 --benchmark_out="$logs/bench_graph.json" \
      --benchmark_out_format=json --benchmark_color=false; then
    while read -r line; do
      note "bench_graph" "$line"
    done < <("$python" - "$logs/bench_graph.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
for r in runs:
    if r.get("error_occurred"):
        print(f"{r['name']}: not measured: {r.get('error_message', '?')}")
    elif r["name"].startswith("BM_GraphReplay/"):
        n = r["name"].split("/")[1]
        x = r.get("x_direct", 0.0)
        print(f"cuda N={n:>3}: {r['ops/s'] / 1e6:.2f} M fills/s replayed, x_direct {x:.2f}"
              + ("  MISSED" if n == "256" and x <= 1.0 else ""))
PY
)
  else
    fail "bench_graph" "bench_graph failed ($logs/bench_graph.log)"
  fi
fi

# --- 7b. anydev.torch against this machine's PyTorch (both modes) -------------------------
# tools/gpu_check_torch.sh prints "torch: NAME  RESULT" lines; a machine without
# PyTorch makes it exit 2, which is a note here, not a failure.
LOG_DIR=$logs/torch PYTHON=$python tools/gpu_check_torch.sh >"$logs/torch.log" 2>&1
torch_rc=$?
while read -r line; do
  note "torch" "${line#torch: }"
done < <(grep -E '^torch: ' "$logs/torch.log")
case $torch_rc in
  0) ;;
  2) note "torch" "not checked: $(tail -n 1 "$logs/torch.log")" ;;
  *) fail "torch" "anydev.torch checks failed ($logs/torch.log)" ;;
esac

# --- 7c. the fix proof on this machine's PyTorch ----------------------------------------
# tools/prove_fixes.py runs every Python row's legacy call and its rewrite by
# `anydev fix` on this machine's torch (the calls that raise on a CPU-only build
# run on the GPU here). The document goes to $OUT/prove_fixes (or the logs);
# compare it with compat_map/proofs.json. Exit 1: a row marked safe differs
# here; 2: no torch.
proof_dir=${OUT:-$logs}/prove_fixes
mkdir -p "$proof_dir"
if ! "$python" -c 'import torch' >/dev/null 2>&1; then
  note "fix proof" "not run: $python has no torch"
elif run_logged prove_fixes 900 "$python" "$root/tools/prove_fixes.py" \
    --json "$proof_dir/proofs.json"; then
  note "fix proof" "PASS: $(grep -m1 -E '^prove_fixes: [0-9]+ rows' "$logs/prove_fixes.log" |
    sed 's/^prove_fixes: //') ($proof_dir/proofs.json)"
else
  proof_rc=$?
  if ((proof_rc == 1)); then
    fail "fix proof" "a row marked safe differs on this torch: $(grep -c 'marked safe but not proven' \
      "$logs/prove_fixes.log") row(s) ($proof_dir/prove_fixes.log)"
  else
    fail "fix proof" "did not run (exit $proof_rc; $proof_dir/prove_fixes.log)"
  fi
fi
cp "$logs/prove_fixes.log" "$proof_dir/" 2>/dev/null

# --- 8. optional: everything ------------------------------------------------------------
if ((full)); then
  if run_logged ctest_all 1800 ctest --test-dir "$build" -j "$jobs" --output-on-failure; then
    note "ctest (all)" "PASS: $(grep -m1 -E 'tests passed' "$logs/ctest_all.log")"
  else
    fail "ctest (all)" "$(grep -m1 -E 'tests passed|tests failed' "$logs/ctest_all.log") ($logs/ctest_all.log)"
  fi
  if run_logged pytest_all 1800 "$python" -m pytest -q -p no:cacheprovider "$root/tests/python"; then
    note "pytest (all, sim)" "PASS: $(pytest_counts "$logs/pytest_all.log")"
  else
    fail "pytest (all, sim)" "$(pytest_counts "$logs/pytest_all.log") ($logs/pytest_all.log)"
  fi
fi

if ((!cuda_available)); then
  note "result" "NO GPU: built and tested, but anydev found no CUDA device, so nothing ran on a GPU"
  print_summary
  exit 2
fi
if ((failed)); then
  note "result" "FAIL"
  print_summary
  exit 1
fi
if [[ -n $dry_run ]]; then
  note "result" "DRY RUN PASS: every step passed on a fake runtime; no GPU was checked"
else
  note "result" "PASS"
fi
print_summary
exit 0
