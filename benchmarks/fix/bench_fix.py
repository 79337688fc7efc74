#!/usr/bin/env python3
"""What `anydev fix` costs against `anydev scan` of the same tree, at two
sizes (is it linear?), interleaved in one run.

    python benchmarks/fix/bench_fix.py                       # 100 and 400 modules
    python benchmarks/fix/bench_fix.py --modules 200 --scale 4 --rounds 5
    python benchmarks/fix/bench_fix.py --callgrind           # + instruction counts

The trees are written by benchmarks/fix/gen_repo.py (valid Python, the shapes
real projects have). Each round times, on the same tree:

- the commands: ``anydev scan --format json TREE`` and ``anydev fix
  --target-torch T TREE`` on a fresh copy (the copy is not timed), wall and
  CPU time (the child's user + system), interpreter start-up included;
- in this process: ``scan_paths`` and ``fix_paths`` (writing, on a fresh copy),
  CPU time (of the fix's processes too), without the start-up.

It prints the best of the rounds for each and the ratio fix / scan.
``--callgrind`` adds the instructions (valgrind) of the scan and of the fix
alone, in process (one scan thread, one fix process), on the smaller tree:
the figure to trust on a loaded machine; with them, the instructions of
parsing each file that has findings once with ``ast.parse``, which the fix
cannot do without (its analysis walks Python's syntax tree). The fix is run with ``--unsafe-fixes`` unless ``--safe``, so most
findings are rewritten (the costly case).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

IN_PROCESS = r"""
import os, shutil, sys, time
from anydev.fix import fix_paths
from anydev.scan import scan_paths
def cpu():  # this process's threads and the processes it waited for (the fix's)
    # process_time: os.times() counts in clock ticks (10 ms), and the scan of
    # the smaller tree takes less than one
    t = os.times()
    return time.process_time() + t.children_user + t.children_system
tree, copy, target, unsafe = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
t0 = cpu(); scan_paths([tree]); t_scan = cpu() - t0
shutil.rmtree(copy, ignore_errors=True); shutil.copytree(tree, copy)
t0 = cpu(); r = fix_paths([copy], target_torch=target, unsafe=unsafe)
t_fix = cpu() - t0
print(t_scan, t_fix, r.applied, len(r.remaining))
"""

CALLGRIND = r"""
import sys
from anydev.fix import fix_paths
from anydev.scan import scan_paths
tree, what, target, unsafe = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
if what != "none":
    s = scan_paths([tree], jobs=1)
if what == "fix":
    fix_paths([tree], diff=True, scanned=s, target_torch=target, unsafe=unsafe, jobs=1)
if what == "parse":  # each scanned Python file parsed once, as the fix must at least
    import ast
    for p in sorted({f.path for f in s.findings if f.language == "python"}):
        with open(p, "rb") as fh:
            ast.parse(fh.read())
"""


def run(cmd: list[str], **kw) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall s, child CPU s, the result) of one command."""
    before = os.times()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system -
                                                          before.children_system)
    return wall, cpu, p


def precompile() -> None:
    """Writes the bytecode of the anydev package being measured. Where it is
    missing (PYTHONDONTWRITEBYTECODE, a fresh install by a tool that wrote
    none), compiling the modules the scan imports lazily was counted as the
    scan's: 40M of the 68M that the 100-module tree's scan once measured,
    which made the fix look 2.5x cheaper against it than it is."""
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("anydev")
    if spec is not None and spec.origin:
        compileall.compile_dir(os.path.dirname(spec.origin), quiet=1)


def instructions(script: str, args: list[str]) -> int:
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        sys.executable, "-c", script, *args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        raise SystemExit(f"callgrind failed ({p.returncode}): {p.stderr[-2000:]}")
    return int(m.group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modules", type=int, default=100, help="modules of the smaller tree")
    ap.add_argument("--scale", type=int, default=4, help="the larger tree is this many times larger")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target", default="2.13", help="--target-torch of the fix")
    ap.add_argument("--safe", action="store_true", help="safe fixes only (default: --unsafe-fixes)")
    ap.add_argument("--callgrind", action="store_true", help="add instruction counts (valgrind)")
    ap.add_argument("--workdir", default=None, help="where the trees go (default: a temp folder)")
    args = ap.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="anydev-bench-fix-")
    os.makedirs(work, exist_ok=True)
    unsafe = "0" if args.safe else "1"
    anydev = [sys.executable, "-m", "anydev"]
    sizes = [args.modules, args.modules * args.scale]
    trees = {}
    for n in sizes:
        tree = os.path.join(work, f"m{n}")
        subprocess.run([sys.executable, os.path.join(HERE, "gen_repo.py"), "--modules", str(n),
                        "--out", tree, "--torch", f"torch>={args.target}"], check=True)
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tree) for f in fs)
        trees[n] = (tree, size)
    best: dict[tuple[int, str], float] = {}

    def keep(key: tuple[int, str], v: float) -> None:
        best[key] = min(best.get(key, float("inf")), v)

    counts = {}
    for _ in range(args.rounds):
        for n in sizes:
            tree, _ = trees[n]
            copy = tree + ".fix"
            w, c, p = run(anydev + ["scan", "--format", "json", tree])
            if p.returncode not in (0, 1):
                raise SystemExit(f"anydev scan failed: {p.stderr[-2000:]}")
            keep((n, "scan wall"), w)
            keep((n, "scan cpu"), c)
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(tree, copy)
            fix = anydev + ["fix", "--target-torch", args.target] + \
                ([] if args.safe else ["--unsafe-fixes"]) + [copy]
            w, c, p = run(fix)
            if p.returncode not in (0, 1):
                raise SystemExit(f"anydev fix failed: {p.stderr[-2000:]}")
            keep((n, "fix wall"), w)
            keep((n, "fix cpu"), c)
            _, _, p = run([sys.executable, "-c", IN_PROCESS, tree, copy, args.target, unsafe])
            t_scan, t_fix, applied, left = p.stdout.split()
            keep((n, "scan_paths cpu"), float(t_scan))
            keep((n, "fix_paths cpu"), float(t_fix))
            counts[n] = (int(applied), int(left))
            shutil.rmtree(copy, ignore_errors=True)

    mode = "safe fixes" if args.safe else "--unsafe-fixes"
    print(f"anydev fix --target-torch {args.target} ({mode}) against anydev scan, "
          f"best of {args.rounds} interleaved rounds; cores: {os.cpu_count()}, "
          f"load: {os.getloadavg()[0]:.1f}")
    print(f"{'tree':>22} | {'what':>15} | {'scan':>8} | {'fix':>8} | fix/scan")
    for n in sizes:
        _, size = trees[n]
        label = f"{n} modules, {size / 1e6:.1f} MB"
        for what, a, b in (("commands, wall", "scan wall", "fix wall"),
                           ("commands, CPU", "scan cpu", "fix cpu"),
                           ("in process, CPU", "scan_paths cpu", "fix_paths cpu")):
            s, f = best[(n, a)], best[(n, b)]
            ratio = f"{f / s:5.1f}x" if s > 0 else "  n/a (scan under the clock's resolution)"
            print(f"{label:>22} | {what:>15} | {s:7.3f}s | {f:7.3f}s | {ratio}")
        print(f"{'':>22} | {counts[n][0]} rewritten, {counts[n][1]} left")
    lo, hi = sizes
    for what in ("fix wall", "fix_paths cpu"):
        r = best[(hi, what)] / best[(lo, what)]
        print(f"linearity: {what} {hi} / {lo} modules = {r:.2f} (size ratio "
              f"{trees[hi][1] / trees[lo][1]:.2f})")
    if args.callgrind:
        precompile()
        tree, _ = trees[lo]
        none = instructions(CALLGRIND, [tree, "none", args.target, unsafe])
        scan = instructions(CALLGRIND, [tree, "scan", args.target, unsafe]) - none
        fix = instructions(CALLGRIND, [tree, "fix", args.target, unsafe]) - none - scan
        parse = instructions(CALLGRIND, [tree, "parse", args.target, unsafe]) - none - scan
        print(f"instructions ({lo} modules, in process, one scan thread, one fix process, the fix "
              f"in diff mode): "
              f"scan {scan / 1e6:.0f}M, fix alone {fix / 1e6:.0f}M = {fix / scan:.1f}x the scan, "
              f"scan + fix {(scan + fix) / scan:.1f}x; "
              f"ast.parse of each file with findings once (a floor of the fix as it is built: "
              f"it needs each one's syntax tree) {parse / 1e6:.0f}M = {parse / scan:.1f}x the scan")
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
