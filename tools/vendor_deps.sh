#!/usr/bin/env bash
# Copies the C++ libraries anydev builds against (Abseil, GoogleTest, Google
# Benchmark) out of this Debian machine's packages into build/deps, so that
# the tree can be built where they are not installed and there is no network
# (tools/gpu_check.sh on a GPU machine). build/deps is git-ignored; carry it
# with the tree (about 9 MiB).
#
#   tools/vendor_deps.sh [DIR]     # default: build/deps
#
# The layout is Debian's, under DIR/usr: headers in include/, libraries and
# their CMake packages in lib/<multiarch>/. The packages' CMake files locate
# themselves relative to where they are, so `-DCMAKE_PREFIX_PATH=DIR/usr`
# finds them there. The libraries are the Debian 12 builds (glibc 2.36,
# libstdc++ of GCC 12): the target machine needs at least those.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/build/deps}
say() { echo "vendor_deps: $*" >&2; }

command -v dpkg-query >/dev/null || { say "needs a Debian machine (dpkg-query)"; exit 2; }

# The development packages, and the runtime packages their .so links point at
# (their names carry the library version, so they are looked up).
pkgs=(libabsl-dev libgtest-dev libbenchmark-dev)
for pattern in 'libabsl2*' 'libbenchmark1*'; do
  while read -r name status; do
    [[ $status == installed ]] && pkgs+=("$name")
  done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$pattern" 2>/dev/null || true)
done
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -q '^installed$' || missing+=("$p")
done
if ((${#missing[@]})); then
  say "missing Debian packages: ${missing[*]} (tools/setup.sh installs them)"
  exit 2
fi

rm -rf "$out"
mkdir -p "$out"
count=0
for p in "${pkgs[@]}"; do
  while read -r f; do
    case $f in
      /usr/include/*|/usr/lib/*) ;;
      *) continue ;;
    esac
    if [[ -L $f || -f $f ]]; then
      mkdir -p "$out$(dirname "$f")"
      cp -a "$f" "$out$f"
      count=$((count + 1))
    fi
  done < <(dpkg -L "$p")
done

# A manifest of what came from where, for whoever reads the folder.
{
  echo "# anydev build dependencies copied by tools/vendor_deps.sh from $(hostname) on $(date -u +%F)"
  for p in "${pkgs[@]}"; do dpkg-query -W -f='${Package} ${Version}\n' "$p"; done
} > "$out/MANIFEST"

size=$(du -sm "$out" | cut -f1)
say "copied $count files (${size} MiB) from ${pkgs[*]} into $out"
say "use: cmake -DCMAKE_PREFIX_PATH=$out/usr ... (tools/gpu_check.sh does)"
