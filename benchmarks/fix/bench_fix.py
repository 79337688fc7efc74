#!/usr/bin/env python3
"""What `anydev fix` costs against `anydev scan` of the same tree, measured
interleaved in one run: on real trees (issue 31's target: at most 3x the
scan), on one file (the editor server and pre-commit pay it per save: under
100 ms for 2,000 lines), and on generated trees at two sizes (is it linear?).

    python benchmarks/fix/bench_fix.py --devset                 # the development set
    python benchmarks/fix/bench_fix.py --tree ~/src/Megatron-LM --rounds 7 --callgrind
    python benchmarks/fix/bench_fix.py --devset --baseline /tmp/old/site-packages
    python benchmarks/fix/bench_fix.py --file src/big_module.py # one file
    python benchmarks/fix/bench_fix.py                          # generated: 100 and 400 modules
    python benchmarks/fix/bench_fix.py --modules 200 --scale 4 --rounds 5 --callgrind

Real trees: --tree PATH (repeatable), or --devset [DIR]: every tree of the
development set (DIR, else $ANYDEV_DEVSET, else /work/devset; a message and
exit 0 where there is none), read only. Each round runs, in an order rotated
from round to round, for each tree: ``anydev scan --format json TREE``; for
each mode (--modes; safe: the tree's own target, 2.13: ``--target-torch
2.13``, unsafe: ``--target-torch 2.13 --unsafe-fixes``) ``anydev fix --diff``
(which reads and analyses every file and writes nothing) and, with --write,
``anydev fix`` of a fresh copy of the tree (the copy, in a temporary folder,
is not timed). It prints the median wall and CPU time (the child's user +
system) of the rounds and the ratios fix / scan of the medians, per tree and
for all trees together, and each command's peak memory (GNU time's maxrss of
the process itself, one run each) with its bytes per byte of the Python and
C++ files that have findings. --baseline PYTHONPATH adds the same commands
run with another anydev package (an older build's folder that holds
``anydev``) to the rounds: before-and-after figures from one run.
--callgrind adds the instructions (valgrind) of each command, whole process,
``-j 1`` (one scan thread, one fix process): the figures to trust on a
loaded machine.

One file: --file PATH (repeatable; else, with --devset, the dev set's
2,000-line module named by --devset-file, and otherwise a 2,000-line module
made of the fixture projects' files) runs ``anydev scan FILE``, ``anydev fix
--diff FILE`` and ``anydev fix`` of a copy, per mode, whole commands with the
interpreter's start-up, and compares the median wall time with 100 ms.

Generated trees (the default): the trees are written by
benchmarks/fix/gen_repo.py (valid Python, the shapes real projects have).
Each round times, on the same tree:

- the commands: ``anydev scan --format json TREE`` and ``anydev fix
  --target-torch T TREE`` on a fresh copy (the copy is not timed), wall and
  CPU time (the child's user + system), interpreter start-up included;
- in this process: ``scan_paths`` and ``fix_paths`` (writing, on a fresh copy),
  CPU time (of the fix's processes too), without the start-up.

It prints the median of the rounds for each and the ratio fix / scan.
``--callgrind`` adds the instructions (valgrind) of the scan and of the fix
alone, in process (one scan thread, one fix process), on the smaller tree:
the figure to trust on a loaded machine; with them, the instructions of
parsing each file that has findings once with ``ast.parse``, which the fix
cannot do without (its analysis walks Python's syntax tree). The fix is run with ``--unsafe-fixes`` unless ``--safe``, so most
findings are rewritten (the costly case).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
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


ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MODES = {"safe": [], "2.13": ["--target-torch", "2.13"],
         "unsafe": ["--target-torch", "2.13", "--unsafe-fixes"]}
#: The dev set's 2,000-line module (a test module of Megatron-LM: 2,047 lines, 60 findings).
DEVSET_FILE = "Megatron-LM/tests/unit_tests/transformer/test_multi_latent_attention.py"
#: What the bytes of the files with findings are counted by (one scan, this anydev).
SIZES = r"""
import json, os, sys
from anydev.scan import scan_paths
s = scan_paths([sys.argv[1]])
files = {f.path for f in s.findings}
print(json.dumps({"bytes": s.bytes, "files": s.files, "findings": len(s.findings),
                  "with_findings": sum(os.path.getsize(p) for p in files if os.path.isfile(p)),
                  "files_with_findings": len(files)}))
"""


class Tool:
    """One anydev: this checkout's (the interpreter's own) or a baseline's
    (a folder holding another ``anydev`` package, put first on PYTHONPATH)."""

    def __init__(self, name: str, pythonpath: str | None = None):
        self.name, self.env = name, dict(os.environ)
        if pythonpath:
            self.env["PYTHONPATH"] = os.pathsep.join(
                [os.path.abspath(pythonpath)] + ([self.env["PYTHONPATH"]]
                                                 if self.env.get("PYTHONPATH") else []))
        self.argv = [sys.executable, "-m", "anydev"]

    def compile(self) -> None:
        """Writes the package's bytecode (Note on precompile), in its own process."""
        subprocess.run([sys.executable, "-c", "import compileall, importlib.util, os; "
                        "s = importlib.util.find_spec('anydev'); "
                        "compileall.compile_dir(os.path.dirname(s.origin), quiet=1)"],
                       env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def peak_kb(argv: list[str], env: dict, cwd: str) -> int | None:
    """The command's own peak memory (GNU time's maxrss, KB), or None without GNU time."""
    gnu_time = shutil.which("time") if os.path.exists("/usr/bin/time") else None
    if not gnu_time:
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out.name, *argv], env=env, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            return int(out.read().split()[-1])
        except (ValueError, IndexError):
            return None


def command_instructions(argv: list[str], env: dict, cwd: str) -> int:
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                       cwd=cwd)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if not m:
        raise SystemExit(f"callgrind failed ({p.returncode}): {p.stderr[-2000:]}")
    return int(m.group(1))


def devset_root(given: str | None) -> str | None:
    """The development set: ``given`` (and only it, where given), else
    $ANYDEV_DEVSET, else /work/devset; None where that is no folder with trees."""
    for d in ((given,) if given else (os.environ.get("ANYDEV_DEVSET"), "/work/devset")):
        if d and os.path.isdir(d) and os.listdir(d):
            return d
    return None


def fixture_module(work: str, lines: int = 2000) -> str:
    """A module of ``lines`` lines or more made of the fixture projects' Python
    files, one after another (their ``from __future__`` imports dropped): the
    code of a real project, denser in legacy calls than most."""
    base = os.path.join(ROOT, "tests", "fixtures", "projects")
    sources = sorted(os.path.join(d, f) for d, _, fs in os.walk(base) for f in fs
                     if f.endswith(".py") and ".fixed" not in d)
    parts: list[str] = []
    n = 0
    while n < lines and sources:
        for path in sources:
            with open(path, encoding="utf-8") as fh:
                text = "".join(ln for ln in fh if not ln.startswith("from __future__"))
            parts.append(f"# --- {os.path.relpath(path, base)}\n{text}\n")
            n += text.count("\n") + 2
            if n >= lines:
                break
    out = os.path.join(work, "module_2000.py")
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("".join(parts))
    with open(out, "rb") as fh:
        compile(fh.read(), out, "exec", dont_inherit=True)  # it must parse
    return out


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def real_trees(args, tools: list[Tool], trees: list[str], work: str) -> None:
    """The real trees: medians of interleaved rounds, ratios fix / scan."""
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            raise SystemExit(f"--modes: unknown mode {m!r} (safe, 2.13, unsafe)")
    jobs = []  # (tool, tree, what, mode)
    for t in trees:
        for tool in tools:
            jobs.append((tool, t, "scan", ""))
            for m in modes:
                jobs.append((tool, t, "diff", m))
                if args.write:
                    jobs.append((tool, t, "write", m))
    runs: dict[tuple, list[tuple[float, float]]] = {}
    for r in range(args.rounds):
        k = r % len(jobs)
        for tool, t, what, m in jobs[k:] + jobs[:k]:  # rotated: the load falls on all alike
            parent, name = os.path.split(os.path.abspath(t))
            target = name
            if what == "write":
                copy = os.path.join(work, "copy")
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(t, os.path.join(copy, name), symlinks=True,
                                ignore=shutil.ignore_patterns(".git"))
                parent = copy
            argv = tool.argv + (["scan", "--format", "json", target] if what == "scan" else
                                ["fix"] + (["--diff"] if what == "diff" else []) + MODES[m] +
                                [target])
            w, c, p = run(argv, env=tool.env, cwd=parent)
            if p.returncode not in (0, 1):
                raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr[-2000:]}")
            runs.setdefault((tool.name, t, what, m), []).append((w, c))
        shutil.rmtree(os.path.join(work, "copy"), ignore_errors=True)

    def med(tool, t, what, m, i):
        return median([x[i] for x in runs[(tool.name, t, what, m)]])

    sizes = {}
    for t in trees:
        p = subprocess.run([sys.executable, "-c", SIZES, os.path.basename(os.path.abspath(t))],
                           cwd=os.path.dirname(os.path.abspath(t)), capture_output=True,
                           text=True)
        sizes[t] = json.loads(p.stdout) if p.returncode == 0 else {}
    print(f"anydev fix against anydev scan of the same tree: whole commands, medians of "
          f"{args.rounds} interleaved rounds; cores: {os.cpu_count()}, load: "
          f"{os.getloadavg()[0]:.1f}; fix --diff reads and analyses every file, writes nothing"
          + ("; fix: a copy, written" if args.write else ""))
    head = f"{'tree':>22} | {'mode':>6} | {'anydev':>8} | {'scan wall/CPU':>15} | " \
           f"{'fix --diff wall/CPU':>19} | {'ratio wall/CPU':>14}"
    if args.write:
        head += f" | {'fix wall':>8} | ratio"
    print(head)
    total: dict[tuple, float] = {}
    for t in trees:
        label = os.path.basename(os.path.abspath(t))
        for tool in tools:
            sw, sc = med(tool, t, "scan", "", 0), med(tool, t, "scan", "", 1)
            for m in modes:
                fw, fc = med(tool, t, "diff", m, 0), med(tool, t, "diff", m, 1)
                line = (f"{label:>22} | {m:>6} | {tool.name:>8} | {sw:6.3f}s/{sc:6.3f}s | "
                        f"{fw:8.3f}s/{fc:8.3f}s | {fw / sw:5.1f}x/{fc / max(sc, 1e-9):5.1f}x")
                if args.write:
                    ww = med(tool, t, "write", m, 0)
                    line += f" | {ww:7.3f}s | {ww / sw:4.1f}x"
                    total[(tool.name, m, "write")] = total.get((tool.name, m, "write"), 0) + ww
                print(line)
                for key, v in (("scan wall", sw), ("scan cpu", sc)):
                    if m == modes[0]:
                        total[(tool.name, "", key)] = total.get((tool.name, "", key), 0) + v
                total[(tool.name, m, "diff wall")] = total.get((tool.name, m, "diff wall"), 0) + fw
                total[(tool.name, m, "diff cpu")] = total.get((tool.name, m, "diff cpu"), 0) + fc
    if len(trees) > 1:
        for tool in tools:
            sw, sc = total[(tool.name, "", "scan wall")], total[(tool.name, "", "scan cpu")]
            for m in modes:
                fw, fc = total[(tool.name, m, "diff wall")], total[(tool.name, m, "diff cpu")]
                line = (f"{'all ' + str(len(trees)) + ' trees':>22} | {m:>6} | {tool.name:>8} | "
                        f"{sw:6.3f}s/{sc:6.3f}s | {fw:8.3f}s/{fc:8.3f}s | "
                        f"{fw / sw:5.1f}x/{fc / max(sc, 1e-9):5.1f}x")
                if args.write:
                    ww = total[(tool.name, m, "write")]
                    line += f" | {ww:7.3f}s | {ww / sw:4.1f}x"
                print(line)
    if len(tools) > 1:
        base, cur = tools[1], tools[0]
        for m in modes:
            a = sum(med(base, t, "diff", m, 1) for t in trees)
            b = sum(med(cur, t, "diff", m, 1) for t in trees)
            print(f"{cur.name} against {base.name}, fix --diff {m}, CPU of all trees: "
                  f"{a:.3f}s -> {b:.3f}s ({a / max(b, 1e-9):.2f}x faster)")
    if args.memory:
        print("peak memory of each command (maxrss, one run each; bytes per byte of the files "
              "with findings):")
        for t in trees:
            label = os.path.basename(os.path.abspath(t))
            parent = os.path.dirname(os.path.abspath(t))
            with_findings = sizes[t].get("with_findings") or 1
            for tool in tools:
                scan_kb = None
                for what, m in [("scan", "")] + [("diff", m) for m in modes]:
                    argv = tool.argv + (["scan", "--format", "json", label] if what == "scan"
                                        else ["fix", "--diff"] + MODES[m] + [label])
                    kb = peak_kb(argv, tool.env, parent)
                    if kb is None:
                        print("  (GNU time not found: no peak memory)")
                        break
                    scan_kb = kb if scan_kb is None else scan_kb
                    more = (kb - scan_kb) * 1024
                    print(f"{label:>22} | {tool.name:>8} | {what + ' ' + m:>12} | "
                          f"{kb / 1024:7.1f} MB | {kb * 1024 / with_findings:6.0f} B/B; over the "
                          f"scan {more / 2**20:6.1f} MB = {more / with_findings:5.0f} B/B "
                          f"({with_findings / 1e6:.1f} MB with findings)")
    if args.callgrind:
        print("instructions (callgrind, whole process, -j 1):")
        for t in trees:
            label = os.path.basename(os.path.abspath(t))
            parent = os.path.dirname(os.path.abspath(t))
            for tool in tools:
                scan = command_instructions(
                    tool.argv + ["scan", "-j", "1", "--format", "json", label], tool.env, parent)
                cells = []
                for m in modes:
                    fix = command_instructions(tool.argv + ["fix", "-j", "1", "--diff"] +
                                               MODES[m] + [label], tool.env, parent)
                    cells.append(f"fix --diff {m} {fix / 1e6:,.0f}M = {fix / scan:.1f}x")
                print(f"{label:>22} | {tool.name:>8} | scan {scan / 1e6:,.0f}M | " +
                      " | ".join(cells))
    for t in trees:
        z = sizes[t]
        if z:
            print(f"{os.path.basename(os.path.abspath(t))}: {z['files']} files scanned, "
                  f"{z['bytes'] / 1e6:.1f} MB; {z['findings']} findings in "
                  f"{z['files_with_findings']} files ({z['with_findings'] / 1e6:.1f} MB)")


def one_file(args, tools: list[Tool], files: list[str], work: str) -> None:
    """One file: the editor server's and pre-commit's case (under 100 ms)."""
    modes = [m for m in args.modes.split(",") if m]
    runs: dict[tuple, list[float]] = {}
    jobs = [(tool, f, what, m) for f in files for tool in tools
            for what, m in [("scan", "")] + [(w, m) for m in modes for w in ("diff", "write")]]
    for r in range(args.rounds):
        k = r % len(jobs)
        for tool, f, what, m in jobs[k:] + jobs[:k]:
            name = os.path.basename(f)
            cwd = os.path.join(work, "one")
            shutil.rmtree(cwd, ignore_errors=True)
            os.makedirs(cwd)
            shutil.copy(f, os.path.join(cwd, name))
            argv = tool.argv + (["scan", name] if what == "scan" else
                                ["fix"] + (["--diff"] if what == "diff" else []) + MODES[m] +
                                [name])
            w, c, p = run(argv, env=tool.env, cwd=cwd)
            if p.returncode not in (0, 1):
                raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr[-2000:]}")
            runs.setdefault((tool.name, f, what, m), []).append(w)
            runs.setdefault((tool.name, f, what, m, "cpu"), []).append(c)
    print(f"one file, whole commands (start-up included), median wall (and CPU) of "
          f"{args.rounds} interleaved rounds; target: anydev fix under 100 ms for 2,000 lines; "
          f"load {os.getloadavg()[0]:.1f} (on a loaded machine the CPU time and the "
          f"instructions tell, not the wall)")
    for f in files:
        with open(f, "rb") as fh:
            lines = fh.read().count(b"\n")
        for tool in tools:
            scan = median(runs[(tool.name, f, "scan", "")])
            scan_cpu = median(runs[(tool.name, f, "scan", "", "cpu")])
            cells = []
            for m in modes:
                d, w = median(runs[(tool.name, f, "diff", m)]), median(runs[(tool.name, f, "write", m)])
                dc = median(runs[(tool.name, f, "diff", m, "cpu")])
                wc = median(runs[(tool.name, f, "write", m, "cpu")])
                ok = "ok" if max(d, w) < 0.1 else "OVER"
                cells.append(f"{m}: --diff {d * 1e3:4.0f} ({dc * 1e3:3.0f}) ms, fix "
                             f"{w * 1e3:4.0f} ({wc * 1e3:3.0f}) ms ({ok})")
            print(f"{os.path.basename(f)} ({lines} lines) | {tool.name} | scan {scan * 1e3:4.0f} "
                  f"({scan_cpu * 1e3:3.0f}) ms | " + " | ".join(cells))
        if args.callgrind:
            for tool in tools:
                cwd = os.path.join(work, "one")
                shutil.rmtree(cwd, ignore_errors=True)
                os.makedirs(cwd)
                shutil.copy(f, cwd)
                name = os.path.basename(f)
                scan = command_instructions(tool.argv + ["scan", name], tool.env, cwd)
                cells = [f"fix --diff {m} {command_instructions(tool.argv + ['fix', '--diff'] + MODES[m] + [name], tool.env, cwd) / 1e6:,.0f}M"
                         for m in modes]
                print(f"  instructions, {tool.name}: scan {scan / 1e6:,.0f}M | " + " | ".join(cells))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modules", type=int, default=100, help="modules of the smaller tree")
    ap.add_argument("--scale", type=int, default=4, help="the larger tree is this many times larger")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target", default="2.13", help="--target-torch of the fix")
    ap.add_argument("--safe", action="store_true", help="safe fixes only (default: --unsafe-fixes)")
    ap.add_argument("--callgrind", action="store_true", help="add instruction counts (valgrind)")
    ap.add_argument("--workdir", default=None, help="where the trees go (default: a temp folder)")
    ap.add_argument("--tree", action="append", default=[], help="a real tree (repeatable)")
    ap.add_argument("--devset", nargs="?", const="", default=None, metavar="DIR",
                    help="every tree of the development set (DIR, $ANYDEV_DEVSET, /work/devset)")
    ap.add_argument("--file", action="append", default=[], help="one file (repeatable)")
    ap.add_argument("--devset-file", default=DEVSET_FILE,
                    help="with --devset: the one file measured (relative to the dev set)")
    ap.add_argument("--modes", default="safe,2.13,unsafe",
                    help="real trees and files: safe (the tree's target), 2.13, unsafe")
    ap.add_argument("--write", action="store_true",
                    help="real trees: also anydev fix of a fresh copy (written)")
    ap.add_argument("--memory", action="store_true", help="real trees: each command's peak memory")
    ap.add_argument("--baseline", metavar="PYTHONPATH",
                    help="also measure the anydev package in this folder (before and after)")
    args = ap.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="anydev-bench-fix-")
    os.makedirs(work, exist_ok=True)
    if args.tree or args.devset is not None or args.file:
        tools = [Tool("this")] + ([Tool("baseline", args.baseline)] if args.baseline else [])
        for tool in tools:
            tool.compile()
        trees = list(args.tree)
        files = list(args.file)
        if args.devset is not None:
            root = devset_root(args.devset or None)
            if root is None:
                print("bench_fix: no development set (give --devset DIR or set ANYDEV_DEVSET); "
                      "nothing measured")
                return 0
            trees += sorted(os.path.join(root, d) for d in os.listdir(root)
                            if os.path.isdir(os.path.join(root, d)))
            if not files:
                one = os.path.join(root, args.devset_file)
                files.append(one if os.path.isfile(one) else fixture_module(work))
        try:
            if trees:
                real_trees(args, tools, trees, work)
            if files:
                one_file(args, tools, files, work)
        finally:
            if args.workdir is None:
                shutil.rmtree(work, ignore_errors=True)
        return 0
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
    runs: dict[tuple[int, str], list[float]] = {}

    def keep(key: tuple[int, str], v: float) -> None:
        runs.setdefault(key, []).append(v)

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

    best = {k: statistics.median(v) for k, v in runs.items()}  # the medians
    mode = "safe fixes" if args.safe else "--unsafe-fixes"
    print(f"anydev fix --target-torch {args.target} ({mode}) against anydev scan, "
          f"median of {args.rounds} interleaved rounds; cores: {os.cpu_count()}, "
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
