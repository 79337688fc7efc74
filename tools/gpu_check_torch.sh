#!/usr/bin/env bash
# Checks anydev.torch (issue 7) against the PyTorch of a GPU machine (a CUDA
# build such as 2.11): the adapter's tests (both modes, scope, warnings,
# uninstall, backport), a legacy program run with `anydev run --torch` in
# mode observe and in mode forward against its migrated version, and the
# forwarders' overhead benchmark. tools/gpu_check.sh calls it after its own
# checks; it also runs on its own:
#
#   PYTHONPATH=<a folder with the built anydev> tools/gpu_check_torch.sh
#   PYTHON=python3.12 tools/gpu_check_torch.sh
#
# Prints one summary line per check ("torch: NAME  PASS|FAIL|SKIP: ..."). Exit
# status: 0 passed, 1 a check failed, 2 cannot run here (no torch or no anydev).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
python=${PYTHON:-python3}
logs=${LOG_DIR:-$root/build/gpu_check_torch}
mkdir -p "$logs"
failed=0
line() { printf 'torch: %-26s %s\n' "$1" "$2"; }

if ! info=$("$python" -c 'import torch, anydev; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.device_count())' 2>"$logs/import.log"); then
  line "setup" "CANNOT RUN: $python cannot import torch and anydev ($(tail -n 1 "$logs/import.log"))"
  exit 2
fi
read -r tver tcuda tavail tcount <<<"$info"
line "pytorch" "$tver (CUDA $tcuda), is_available=$tavail, $tcount device(s)"
[[ $tavail == True ]] || line "note" "no CUDA device for PyTorch: the checks run as on a CPU build"

# 1. The adapter's tests (they cover both modes).
if timeout 900 "$python" -m pytest -q -p no:cacheprovider -rs \
    tests/python/pytorch/test_torch_adapter.py >"$logs/pytest.log" 2>&1; then
  line "tests" "PASS: $(grep -E '^[0-9]+ (passed|failed)' "$logs/pytest.log" | tail -n 1)"
else
  line "tests" "FAIL: $(grep -E '[0-9]+ (passed|failed)' "$logs/pytest.log" | tail -n 1) ($logs/pytest.log)"
  failed=1
fi

# 2. A legacy program on the GPU, observed and forwarded, against its migrated form.
work=$(mktemp -d)
cat >"$work/legacy.py" <<'EOF'
import torch
torch.manual_seed(0)
n = torch.cuda.device_count()
print("available", torch.cuda.is_available(), "devices", n)
if n:
    torch.cuda.set_device(n - 1)
    with torch.cuda.device(0):
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            x = torch.randn(64, 64, device="cuda")
            with torch.cuda.amp.autocast(dtype=torch.float16):
                y = (x @ x).float()
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        print("device", torch.cuda.current_device(), "sum %.2f" % float(y.sum()))
        print("allocated>0", torch.cuda.memory_allocated() > 0)
    print("back on", torch.cuda.current_device())
    torch.cuda.empty_cache()
EOF
cat >"$work/migrated.py" <<'EOF'
import torch
import anydev.torch  # noqa: F401  (the backport, for a PyTorch that lacks part of torch.accelerator)
torch.manual_seed(0)
n = torch.accelerator.device_count()
print("available", torch.accelerator.is_available(), "devices", n)
if n:
    torch.accelerator.set_device_index(n - 1)
    with torch.accelerator.device_index(0):
        s = torch.Stream()
        with s:
            x = torch.randn(64, 64, device="cuda")
            with torch.amp.autocast("cuda", dtype=torch.float16):
                y = (x @ x).float()
        torch.accelerator.current_stream().wait_stream(s)
        torch.accelerator.synchronize()
        print("device", torch.accelerator.current_device_index(), "sum %.2f" % float(y.sum()))
        print("allocated>0", torch.accelerator.memory_allocated() > 0)
    print("back on", torch.accelerator.current_device_index())
    torch.accelerator.empty_cache()
EOF
ok=1
( cd "$work" && "$python" legacy.py >plain.out 2>plain.err ) || ok=0
for mode in observe forward; do
  ( cd "$work" && "$python" -m anydev run --mode "$mode" legacy.py >"$mode.out" 2>"$mode.err" ) || ok=0
done
( cd "$work" && "$python" migrated.py >migrated.out 2>migrated.err ) || ok=0
cp "$work"/*.out "$work"/*.err "$logs/" 2>/dev/null
if ((ok)) && cmp -s "$work/plain.out" "$work/observe.out" && cmp -s "$work/plain.out" "$work/forward.out" \
    && cmp -s "$work/plain.out" "$work/migrated.out"; then
  line "legacy program" "PASS: plain = observe = forward = migrated ($(tr '\n' ' ' <"$work/plain.out" | cut -c1-100))"
else
  line "legacy program" "FAIL: outputs differ or a run failed (see $logs/*.out, *.err)"
  failed=1
fi
rm -rf "$work"

# 3. The forwarders' overhead.
if timeout 600 "$python" benchmarks/python/bench_torch_adapter.py >"$logs/bench.log" 2>&1; then
  while read -r l; do line "bench" "$l"; done < <(grep -E '/ original|targets' "$logs/bench.log")
else
  line "bench" "FAIL: ($logs/bench.log)"
  failed=1
fi
if ((failed)); then line "result" "FAIL"; exit 1; fi
line "result" "PASS"
exit 0
