#!/usr/bin/env python3
"""Per-call cost of anydev.torch's forwarders on the real PyTorch, in one run.

    .venv/bin/python benchmarks/python/bench_torch_adapter.py [--callgrind] [--json]
    PYTHONPATH=build/torch-old-path /usr/bin/python3 benchmarks/python/bench_torch_adapter.py --callgrind

For ``torch.cuda.device_count()`` and ``torch.cuda.is_available()``:

  * original: the PyTorch function itself (anydev.torch not installed);
  * out of scope: through the installed forwarder from a module outside the
    scope (counted, then the original);
  * in scope: from inside the scope after its site's first warning (counted,
    policy checked, then the original: mode observe);
  * in scope, forward: the same in mode forward, which calls torch.accelerator's
    replacement instead (PyTorch's own, or on a PyTorch before 2.6 the
    backport's: anydev._torch.backport);
  * replacement: that replacement called directly (``torch.accelerator.device_count()``).

Targets (docs/torch.md, "Performance"): out of scope <= 1.2x the original,
in scope <= 1.5x the original, or, for an original so cheap that the
forwarder's fixed cost is more than that (torch 1.13's device_count, an
lru_cache'd C call of about 460 instructions), at most that fixed cost over it:
150 instructions (10 ns in wall time); forward: in scope, forward <= 1.5x the
replacement called directly (the forwarder's own cost, as in observe mode),
and the replacement <= 3x the original where it is the backport's (its cost
is anydev's; PyTorch's own replacement costs what PyTorch makes it cost).

The ratios come from one run, never from one wall time:

  * --callgrind (valgrind on PATH, a C compiler for its client requests):
    the variants run one after another in one process under callgrind, each
    between two counter dumps (CALLGRIND_DUMP_STATS_AT), so each gets its
    instructions per call, less those of the same loop calling nothing.
    Instructions do not move with the machine's load: the targets are checked
    on them, and "TARGETS MISSED" means a target is missed.
  * without it, the wall time: --repeat rounds, each timing every variant once
    in turn (interleaved, so that a change of load touches all alike), the
    ratio taken within each round and its median over the rounds reported.
    Wall-clock ratios are indicative: one over its target is reported as
    "over target in wall time (confirm with --callgrind)", never as a miss.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

NAMES = ("device_count", "is_available")
KINDS = ("original", "out of scope", "in scope", "in scope, forward", "replacement")
# (label, numerator, denominator, target, when it applies)
TARGETS = (
    ("out of scope / original", "out of scope", "original", 1.2, "always"),
    ("in scope / original", "in scope", "original", 1.5, "always"),
    ("in scope, forward / replacement", "in scope, forward", "replacement", 1.5, "always"),
    ("replacement / original", "replacement", "original", 3.0, "backport"),
)
# The forwarder's fixed cost, allowed over an original cheaper than it can
# carry in the ratio (the observe targets only): per call, by measure.
FIXED_COST = {"instructions": 150.0, "ns": 10.0}

_TRIGGER = "desc: Trigger: Client Request: "
_CG_SOURCE = r"""
#include <valgrind/callgrind.h>
void anydev_cg_dump(const char* label) { CALLGRIND_DUMP_STATS_AT(label); }
"""


def _loops(number: int) -> dict:
    """The timed loops, compiled in the globals the scope decides by: one
    module inside the scope and one outside. Each is called as f(number)."""
    import torch

    src = ("def run_{tag}(n, torch=torch):\n"
           "    for _ in range(n):\n"
           "        {stmt}\n")
    loops: dict = {}
    for module in ("bench_inside", "bench_outside"):
        env = {"__name__": module, "torch": torch}
        code = "".join(src.format(tag=f"{n}", stmt=f"torch.cuda.{n}()") for n in NAMES)
        code += "".join(src.format(tag=f"acc_{n}", stmt=f"torch.accelerator.{n}()")
                        for n in NAMES)
        code += src.format(tag="empty", stmt="pass")
        exec(compile(code, f"<{module}>", "exec"), env)
        loops[module] = env
    return loops


def _variants(loops: dict) -> list:
    """(kind, name, mode, loop) for each variant: mode None runs it with
    anydev.torch uninstalled."""
    out = []
    for name in NAMES:
        out.append(("original", name, None, loops["bench_outside"][f"run_{name}"]))
        out.append(("out of scope", name, "observe", loops["bench_outside"][f"run_{name}"]))
        out.append(("in scope", name, "observe", loops["bench_inside"][f"run_{name}"]))
        out.append(("in scope, forward", name, "forward", loops["bench_inside"][f"run_{name}"]))
        out.append(("replacement", name, "observe", loops["bench_outside"][f"run_acc_{name}"]))
    return out


def _install(mode):
    from anydev._torch import adapter

    if mode is None:
        adapter.uninstall()
    else:
        adapter.install(mode=mode, packages=["bench_inside"], main=False)


def _run_all(number: int, each) -> bool:
    """Runs every variant (installing as each needs), calling
    each(kind, name, loop) around the measured loop; the first call of each
    site (its warning) is made before. Returns whether torch.accelerator's
    replacements were the backport's."""
    from anydev._torch import adapter, backport

    loops = _loops(number)
    backported = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mode_now = "unset"
        for kind, name, mode, loop in _variants(loops):
            if mode != mode_now:
                _install(mode)
                mode_now = mode
                backported = backported or any(n in backport.installed() for n in NAMES)
            loop(1)
            each(kind, name, loop)
        each("empty", "", loops["bench_outside"]["run_empty"])
        adapter.uninstall()
    return backported


# --- callgrind ---------------------------------------------------------------------


def _child_callgrind(lib: str, number: int) -> int:
    dump = ctypes.CDLL(lib).anydev_cg_dump
    dump.argtypes = [ctypes.c_char_p]
    import torch  # noqa: F401
    from anydev._torch import adapter  # noqa: F401

    def each(kind: str, name: str, loop) -> None:
        dump(b"skip")  # what came before
        loop(number)
        dump(f"{kind}|{name}".encode())

    print(json.dumps({"backport": _run_all(number, each)}))
    return 0


def _callgrind(number: int) -> tuple[dict, bool]:
    """{(kind, name): instructions per call}, and whether the backport answered."""
    with tempfile.TemporaryDirectory(prefix="bench-torch-cg-") as d:
        src = os.path.join(d, "cg.c")
        lib = os.path.join(d, "libcg.so")
        with open(src, "w") as f:
            f.write(_CG_SOURCE)
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise SystemExit("bench_torch_adapter: --callgrind needs a C compiler (cc)")
        subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", lib, src], check=True)
        out = os.path.join(d, "cg.out")
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            sys.executable, os.path.abspath(__file__), "--child-callgrind", lib,
                            str(number)], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONHASHSEED="0"))
        if p.returncode != 0:
            raise SystemExit(f"bench_torch_adapter: the callgrind run failed:\n{p.stderr[-2000:]}")
        lines = p.stdout.strip().splitlines()
        if not lines:
            raise SystemExit(f"bench_torch_adapter: the callgrind run said nothing:\n"
                             f"{p.stderr[-2000:]}")
        backport = json.loads(lines[-1])["backport"]
        totals: dict = {}
        for name in sorted(os.listdir(d)):
            if not name.startswith("cg.out"):
                continue
            label = total = None
            with open(os.path.join(d, name)) as f:
                for line in f:
                    if line.startswith(_TRIGGER):
                        label = line[len(_TRIGGER):].strip()
                    elif line.startswith(("summary:", "totals:")):
                        total = int(line.split()[1])
            if label and label != "skip" and total is not None:
                totals[label] = total
    empty = totals["empty|"]
    per_call = {}
    for label, total in totals.items():
        if label != "empty|":
            kind, name = label.split("|")
            per_call[(kind, name)] = (total - empty) / number
    return per_call, backport


# --- wall time ---------------------------------------------------------------------


def _wall(number: int, repeat: int) -> tuple[dict, dict, bool]:
    """({(kind, name): median ns per call}, {(kind, name): median ratio to the
    same round's original}, whether the backport answered)."""
    rounds: list = []
    backport = False
    for _ in range(repeat):
        got: dict = {}

        def each(kind: str, name: str, loop) -> None:
            start = time.perf_counter()
            loop(number)
            got[(kind, name)] = (time.perf_counter() - start) / number * 1e9

        backport = _run_all(number, each) or backport
        empty = got.pop(("empty", ""))
        rounds.append({k: v - empty for k, v in got.items()})
    keys = rounds[0].keys()
    ns = {k: statistics.median(r[k] for r in rounds) for k in keys}
    return ns, {"rounds": rounds}, backport


def _ratio(values: dict, num: str, den: str, name: str) -> float:
    return values[(num, name)] / values[(den, name)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--number", type=int, default=100_000, help="calls per variant")
    ap.add_argument("--repeat", type=int, default=9, help="wall time: interleaved rounds")
    ap.add_argument("--callgrind", action="store_true",
                    help="count instructions with valgrind's callgrind (the targets' measure)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child-callgrind", nargs=2, metavar=("LIB", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_callgrind:
        return _child_callgrind(args.child_callgrind[0], int(args.child_callgrind[1]))

    import torch

    if args.callgrind:
        if not shutil.which("valgrind"):
            print("bench_torch_adapter: --callgrind needs valgrind on PATH", file=sys.stderr)
            return 2
        values, backport = _callgrind(args.number)
        unit, measure = "instructions", "instructions per call (callgrind)"
        ratios = {name: {label: _ratio(values, num, den, name)
                         for label, num, den, _, _ in TARGETS} for name in NAMES}
    else:
        values, extra, backport = _wall(args.number, args.repeat)
        unit, measure = "ns", f"ns per call, median of {args.repeat} interleaved rounds"
        ratios = {name: {label: statistics.median(r[(num, name)] / r[(den, name)]
                                                  for r in extra["rounds"])
                         for label, num, den, _, _ in TARGETS} for name in NAMES}
    checked = {}
    for name in NAMES:
        for label, num, den, target, when in TARGETS:
            if when == "backport" and not backport:
                continue
            if den == "original" and num in ("out of scope", "in scope"):
                original = values[("original", name)]
                target = round(max(target, (original + FIXED_COST[unit]) / original), 2)
            checked[f"{name}: {label} (target <= {target})"] = (ratios[name][label], target)
    if args.json:
        print(json.dumps({"torch": torch.__version__, "measure": measure, "backport": backport,
                          "per_call": {f"{k} torch.cuda.{n}()": v
                                       for (k, n), v in values.items()},
                          "ratios": {k: r for k, (r, _) in checked.items()}}, indent=2))
        return 0
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}, {measure}, "
          f"{args.number} calls per variant"
          + ("; torch.accelerator is anydev's backport" if backport else ""))
    w = max(len(f"{k} torch.cuda.{n}()") for k in KINDS for n in NAMES)
    for name in NAMES:
        for kind in KINDS:
            print(f"  {kind + f' torch.cuda.{name}()':<{w}}  {values[(kind, name)]:10.1f} {unit}")
    w = max(map(len, checked))
    over = []
    for label, (r, target) in checked.items():
        print(f"  {label:<{w}}  {r:6.2f}x")
        if r > target:
            over.append(label)
    if not over:
        print("targets met")
    elif args.callgrind:
        print("TARGETS MISSED: " + "; ".join(over))
        return 1
    else:
        print("over target in wall time (confirm with --callgrind): " + "; ".join(over))
    return 0


if __name__ == "__main__":
    sys.exit(main())
