#!/usr/bin/env bash
# Installs each wheel that tools/build_wheels.sh made (dist/*.whl) into a
# fresh virtual environment of its Python, with Debian's C++ libraries hidden,
# and tries it there as a user would: `anydev version`, `doctor`, `scan`,
# `fix --diff`, `rule`, the Python API on the simulated accelerator, and
# `anydev demo`. With --cli-tests it also runs the CLI and packaging tests
# (tests/python/cli/test_cli.py, test_packaging.py) against the installed wheel,
# with --suite the whole Python suite (tests/python; tests that need PyTorch
# skip, since torch==2.13.0 exists for Python 3.11 only here).
#
#   tools/build_wheels.sh && tools/test_wheels.sh [--suite|--cli-tests] [WHEEL...]
#   tools/test_wheels.sh --python PY WHEEL    # that interpreter for the venv
#   tools/test_wheels.sh --install-paths      # and every install command the docs give
#
# --install-paths also runs, outside the hiding (they build from source, which
# needs Abseil), each install path docs/install.md and docs/ci.md document,
# against this repository (ANYDEV_REPO: another clone of it) at the release
# tag v<version> of pyproject.toml: the wheel is tagged as docs/install.md
# says (manylinux_2_34) and installs from its local path; `pip install
# "git+file://REPO@vX.Y.Z"` builds and runs; pre-commit with `repo:
# REPO`, `rev: vX.Y.Z` runs the hooks anydev-scan-system (the anydev on PATH)
# and anydev-scan (pre-commit builds one) and fails a commit with a legacy
# call. A missing tag is an error that says how to make it. Minutes: two
# builds of the C++ core.
#
# tools/test.sh runs it with --cli-tests on the wheel that tools/setup.sh
# built and installed into .venv (build/wheel/).
#
# Hiding: each wheel runs in a private mount namespace (`unshare -m` as root,
# `unshare -r -m` in a user namespace otherwise) where an empty file is bound
# over every libabsl_* library, libgtest*, libbenchmark* and libze_loader*
# under /usr/lib/x86_64-linux-gnu, so anything the wheel did not bring fails
# to load. The script first checks that the hiding works (loading Debian's
# libabsl_base must fail). Exit status: 0 all passed, 1 a wheel failed, 2 bad
# arguments or no wheel, 77 no private mount namespace can be made here.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
say() { echo "test_wheels: $*" >&2; }

suite=0
install_paths=0
tests=()
python=""
wheels=()
while (($#)); do
  case $1 in
    --suite) suite=1; tests=(tests/python) ;;
    --cli-tests) suite=1; tests=(tests/python/cli/test_cli.py tests/python/test_packaging.py) ;;
    --install-paths) install_paths=1 ;;
    --python)
      (($# >= 2)) || { say "--python needs an interpreter"; exit 2; }
      python=$2; shift ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    -*) say "unknown option $1 (see --help)"; exit 2 ;;
    *) wheels+=("$1") ;;
  esac
  shift
done
if ((${#wheels[@]} == 0)); then
  shopt -s nullglob
  wheels=(dist/anydev-*manylinux*.whl)
  shopt -u nullglob
fi
if ((${#wheels[@]} == 0)); then
  say "no wheel in dist/: run tools/build_wheels.sh first"
  exit 2
fi
# A private mount namespace: as root directly, else inside a user namespace.
if [[ $(id -u) -eq 0 ]]; then ns=(unshare -m --propagation private)
else ns=(unshare -r -m --propagation private); fi
if ! command -v unshare >/dev/null || ! "${ns[@]}" true 2>/dev/null; then
  say "cannot make a private mount namespace here (${ns[*]}: needs util-linux, and root" \
      "or unprivileged user namespaces), so Debian's libraries cannot be hidden"
  exit 77
fi

# The interpreter for a wheel's cpXY tag: pyenv's, else python3.X on PATH.
python_for() {
  local tag=$1 v py
  v="${tag:2:1}.${tag:3}"
  for py in "$HOME"/.pyenv/versions/"$v".*/bin/python3 "python$v"; do
    if command -v "$py" >/dev/null 2>&1; then command -v "$py"; return 0; fi
  done
  return 1
}

work=$(mktemp -d /tmp/anydev-wheels.XXXXXX)
trap 'rm -rf "$work"' EXIT
: >"$work/empty"

status=0
for wheel in "${wheels[@]}"; do
  wheel=$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")
  tag=$(basename "$wheel" | cut -d- -f3)
  if [[ -n $python ]]; then
    py=$python
  elif ! py=$(python_for "$tag"); then
    say "$(basename "$wheel"): no Python for $tag here, skipped"
    continue
  fi
  pytag=$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
  if [[ $pytag != "$tag" ]]; then
    say "$(basename "$wheel"): $py is $pytag, not $tag"
    status=1
    continue
  fi
  venv=$work/venv-$tag
  "$py" -m venv "$venv"
  pips=("$wheel")
  ((suite)) && pips+=("pytest>=7" numpy)
  # Installing needs PyPI only for tomli on Python < 3.11 (and the suite's tools).
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${pips[@]}" \
    2> >(grep -v '^WARNING: Location' >&2)
  say "$(basename "$wheel"): installed into a fresh venv ($("$venv/bin/python" --version))"

  run_suite=$suite
  if ! "${ns[@]}" env WORK="$work" VENV="$venv" ROOT="$root" \
         SUITE="$run_suite" TESTS="${tests[*]}" bash -euo pipefail -c '
    lib=/usr/lib/x86_64-linux-gnu
    for f in "$lib"/libabsl_*.so* "$lib"/libgtest*.so* "$lib"/libbenchmark*.so* \
             "$lib"/libze_loader*.so*; do
      [[ -f $f && ! -L $f ]] && mount --bind "$WORK/empty" "$f"
    done
    for probe in "$lib"/libabsl_base.so.*; do
      [[ -f $probe ]] || continue
      if "$VENV/bin/python" -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" \
           "$(basename "$probe")" 2>/dev/null; then
        echo "test_wheels: $probe is still loadable: hiding failed" >&2
        exit 1
      fi
    done
    cd "$WORK"   # not the source tree: only the installed wheel can be imported
    export PATH="$VENV/bin:$PATH" ANYDEV_SIM_DEVICES=2
    step() { echo "+ $*"; "$@"; }
    step anydev version
    step anydev doctor
    printf "import torch\ntorch.cuda.synchronize()\nx = torch.cuda.current_device()\n" >legacy.py
    rc=0; step anydev scan legacy.py || rc=$?
    [[ $rc -eq 1 ]] || { echo "anydev scan: expected exit 1 (findings), got $rc" >&2; exit 1; }
    rc=0; step anydev fix --diff --target-torch 2.13 legacy.py || rc=$?
    [[ $rc -eq 1 ]] || { echo "anydev fix --diff: expected exit 1 (a diff), got $rc" >&2; exit 1; }
    step anydev rule AD107 >/dev/null
    step python -c "
import anydev
acc = anydev.accelerator
assert acc.current_accelerator().type == \"sim\" and acc.device_count() == 2
s = anydev.Stream()
e = anydev.Event(enable_timing=True)
e.record(s)
e.synchronize()
b = anydev.Buffer(64)
b.fill_(7)
assert bytes(b.copy_to_host()) == bytes([7]) * 64
print(\"python api ok:\", anydev.__version__, acc.current_accelerator())
"
    step anydev demo --steps 1 >demo.log 2>&1 || { tail -n 30 demo.log; exit 1; }
    tail -n 1 demo.log
    if [[ $SUITE == 1 ]]; then
      # From the source tree, which has no importable anydev at its top
      # (the package is python/anydev): the tests import the installed wheel.
      cd "$ROOT"
      PYTHONDONTWRITEBYTECODE=1 step python -m pytest -q -p no:cacheprovider $TESTS
    fi
  '; then
    say "$(basename "$wheel"): FAILED"
    status=1
  else
    say "$(basename "$wheel"): ok"
  fi
done

# --- the documented install paths (docs/install.md, docs/ci.md) ---------------
if ((install_paths)); then
  repo=${ANYDEV_REPO:-$root}
  version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/pyproject.toml" | head -n 1)
  rel=v$version
  # The wheels are tagged as docs/install.md promises.
  promised=$(grep -o 'manylinux_2_[0-9]*' docs/install.md | sort -u)
  if [[ $(wc -l <<<"$promised") -ne 1 ]]; then
    say "docs/install.md names more than one manylinux tag: $promised"; status=1
  fi
  for wheel in "${wheels[@]}"; do
    case $(basename "$wheel") in
      *-"${promised}"_x86_64.whl) say "$(basename "$wheel"): tagged $promised, as documented" ;;
      *) say "$(basename "$wheel"): not tagged $promised as docs/install.md says" ; status=1 ;;
    esac
  done
  if ! git -C "$repo" rev-parse -q --verify "refs/tags/$rel^{commit}" >/dev/null; then
    say "$repo has no tag $rel, which docs/install.md and docs/ci.md name: the release"
    say "commit of CHANGELOG.md's [$version] is tagged with"
    say "  git tag -a $rel <that commit> -m 'anydev $version'"
    exit 1
  fi
  say "the install paths, from $repo at $rel ($(git -C "$repo" rev-parse --short "$rel^{commit}"))"
  py=$(command -v python3)
  export PIP_DISABLE_PIP_VERSION_CHECK=1
  printf "import torch\ntorch.cuda.synchronize()\n" >"$work/legacy.py"
  # pip install "git+file://REPO@vX.Y.Z" (docs/install.md, "From source")
  "$py" -m venv "$work/venv-git"
  say "pip install \"git+file://$repo@$rel\" (builds the core)"
  if ! "$work/venv-git/bin/python" -m pip install -q "git+file://$repo@$rel" \
       >"$work/git.log" 2>&1; then
    tail -n 30 "$work/git.log" >&2; say "pip install from the tag: FAILED"; status=1
  else
    got=$("$work/venv-git/bin/anydev" version)
    rc=0; (cd "$work" && "$work/venv-git/bin/anydev" scan legacy.py >/dev/null) || rc=$?
    if [[ $got == "$version" && $rc -eq 1 ]]; then say "pip install from the tag: ok ($got)"
    else say "pip install from the tag: anydev version says $got, scan exited $rc"; status=1; fi
  fi
  # pre-commit, `repo:` this repository, `rev:` the tag (docs/ci.md)
  pre_commit=$(command -v pre-commit || echo "$root/.venv/bin/pre-commit")
  for hook in anydev-scan-system anydev-scan; do
    proj=$work/proj-$hook
    mkdir -p "$proj" && cp "$work/legacy.py" "$proj/"
    git -C "$proj" init -q
    printf 'repos:\n  - repo: %s\n    rev: %s\n    hooks:\n      - id: %s\n' \
      "$repo" "$rel" "$hook" >"$proj/.pre-commit-config.yaml"
    git -C "$proj" add -A
    rc=0
    (cd "$proj" && PATH="$work/venv-git/bin:$PATH" PRE_COMMIT_HOME="$work/pre-commit" \
       "$pre_commit" run --files legacy.py >"$work/$hook.log" 2>&1) || rc=$?
    if [[ $rc -eq 1 ]] && grep -q "AD107" "$work/$hook.log"; then
      say "pre-commit rev: $rel, hook $hook: fails on the legacy call, as documented"
    else
      tail -n 30 "$work/$hook.log" >&2; say "pre-commit hook $hook: exit $rc, FAILED"; status=1
    fi
  done
fi
exit $status
