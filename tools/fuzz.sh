#!/usr/bin/env bash
# Builds the fuzz targets of fuzz/ with clang's libFuzzer, AddressSanitizer
# and UndefinedBehaviorSanitizer, and runs each for a given time on a copy of
# its seed corpus (fuzz/corpus/TARGET, never written to). A crash, a leak, a
# broken check or an input slower than -timeout fails the run; the input is
# left in build/fuzz/artifacts/. The report loader, the fixer and the TOML reader are fuzzed
# with atheris.
#
#   tools/fuzz.sh                 # every target, 60 s each
#   tools/fuzz.sh 600 glob        # one target, 10 minutes
#   FUZZ_JOBS=2 tools/fuzz.sh 300 # two processes per target
#
# Installs what it needs when missing: clang and libclang-rt-14-dev (Debian),
# atheris (PyPI, into .venv). Run tools/setup.sh first (.venv, absl).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
say() { echo "fuzz: $*" >&2; }

seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(scan_source glob device report fix toml)

# --- tools ---------------------------------------------------------------------
need=()
command -v clang++ >/dev/null || need+=(clang)
clang_res=$(clang++ -print-resource-dir 2>/dev/null || true)
if [[ -z $clang_res ]] || ! ls "$clang_res"/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  need+=(libclang-rt-14-dev)
fi
if ((${#need[@]})); then
  say "installing Debian packages: ${need[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${need[@]}" >/dev/null
fi

# --- build -----------------------------------------------------------------------
out=build/fuzz
mkdir -p "$out/artifacts"
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -Icore/scan/include -Icore/scan/src -Icore/include
       -Ifuzz)
scan_srcs=(core/scan/src/*.cc)
build() {  # build NAME SOURCES... [-- LIBS...]
  local name=$1
  shift
  local exe=$out/$name
  local newest
  newest=$(ls -t "$@" fuzz/fuzz_common.h core/scan/include/anydev/scan.h core/scan/src/*.h \
             2>/dev/null | head -1)
  if [[ ! -x $exe || $newest -nt $exe ]]; then
    say "building $name"
    clang++ "${flags[@]}" "$@" -o "$exe" -lpthread ${libs[@]+"${libs[@]}"}
  fi
}

status=0
for t in "${targets[@]}"; do
  libs=()
  case $t in
    scan_source) build scan_source_fuzz fuzz/scan_source_fuzz.cc "${scan_srcs[@]}" ;;
    glob) build glob_fuzz fuzz/glob_fuzz.cc "${scan_srcs[@]}" ;;
    device)
      libs=(-labsl_status -labsl_statusor -labsl_strings -labsl_strings_internal
            -labsl_int128 -labsl_throw_delegate -labsl_raw_logging_internal -labsl_cord
            -labsl_str_format_internal)
      build device_fuzz fuzz/device_fuzz.cc core/src/device.cc ;;
    report | fix | toml) ;;
    *) say "unknown target $t (scan_source, glob, device, report, fix, toml)"; exit 2 ;;
  esac
  work=$out/corpus-$t
  rm -rf "$work" && mkdir -p "$work" && cp fuzz/corpus/"$t"/* "$work"/
  say "running $t for ${seconds}s"
  if [[ $t == report || $t == fix || $t == toml ]]; then
    .venv/bin/python -c 'import atheris' 2>/dev/null || {
      say "installing atheris into .venv"
      .venv/bin/python -m pip install -q --disable-pip-version-check atheris
    }
    run=("$root/.venv/bin/python" "$root/fuzz/${t}_fuzz.py")
    if [[ $t == fix ]]; then  # the fixer's seeds: the scan and fix fixtures, with a mode byte
      "${run[@]}" --seeds "$work" tests/fixtures/scan tests/fixtures/fix/cases
    fi
  else
    run=("$root/$out/${t}_fuzz")
  fi
  par=()
  if [[ ${FUZZ_JOBS:-1} -gt 1 ]]; then  # fork mode; its per-job logs go to $out
    par=(-fork="$FUZZ_JOBS")
  fi
  if ! (cd "$out" && "${run[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
          ${par[@]+"${par[@]}"} -artifact_prefix="artifacts/$t-" -print_final_stats=1 \
          "corpus-$t") >"$out/$t.log" 2>&1; then
    tail -n 40 "$out/$t.log" >&2
    say "$t FAILED; the input is in $out/artifacts/, the log $out/$t.log"
    status=1
  else
    echo "fuzz: $t: ok, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$out/$t.log" \
                              | grep -o '[0-9]*$' || echo '?') runs in ${seconds}s"
  fi
done
exit $status
