#!/usr/bin/env python3
"""Per-call cost of a legacy shim after its first warning, against the direct
call to its replacement and Python's own ``warnings.warn``, in one run.

    .venv/bin/python benchmarks/python/bench_compat.py [--json]

Rows (ns per call, best of --repeat interleaved rounds of --number calls):
  * direct: ``anydev.accelerator.current_device_index()``, the replacement;
  * shim: ``anydev.cuda.current_device()`` after its call site has warned
    (it counts the call natively, checks the site's policy, and forwards);
  * warnings.warn: ``warnings.warn(msg, FutureWarning)`` under Python's
    default once-per-location filter, after its first (shown) warning: what a
    pure-Python deprecation shim pays on every call before doing anything.

Targets (issues 3 and 14): a function shim at most 1.3x its direct call, a
class shim (``anydev.cuda.Stream()`` against ``anydev.Stream()``) at most 1.5x,
in time and, with --callgrind, in instructions; and (shim - direct) at most
1/5 of one warnings.warn call. Also reported: a shim with an argument
(``anydev.cuda.set_device(0)`` vs ``set_device_index(0)``).

With --callgrind (valgrind on PATH) each row's instructions per call are
counted too: each statement runs in a child under callgrind twice, --calls
and 21 x --calls times, and the difference is divided by the extra calls, so
start-up and the first (warning) call cancel out. Instructions do not move
with the machine's load, which the nanoseconds do.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import timeit
import warnings
from typing import Optional

os.environ.setdefault("ANYDEV_SIM_DEVICES", "2")

import anydev  # noqa: E402
import anydev.cuda  # noqa: E402


# name -> (statement, share of --number: a constructor is ten times slower)
ROWS = {
    "direct current_device_index()": ("acc.current_device_index()", 1),
    "shim cuda.current_device()": ("cuda.current_device()", 1),
    "direct set_device_index(0)": ("acc.set_device_index(0)", 1),
    "shim cuda.set_device(0)": ("cuda.set_device(0)", 1),
    "direct anydev.Stream()": ("anydev.Stream()", 10),
    "shim cuda.Stream()": ("cuda.Stream()", 10),
    "warnings.warn (default filter, after first)": ("warnings.warn('legacy', FW)", 1),
}

# ratio -> (numerator row, denominator row, target)
RATIOS = {
    "current_device shim / direct": ("shim cuda.current_device()", "direct current_device_index()", 1.3),
    "set_device shim / direct": ("shim cuda.set_device(0)", "direct set_device_index(0)", 1.3),
    "Stream class shim / direct": ("shim cuda.Stream()", "direct anydev.Stream()", 1.5),
}


def _env() -> dict:
    return {"acc": anydev.accelerator, "cuda": anydev.cuda, "anydev": anydev,
            "warnings": warnings, "FW": FutureWarning}


def _filters(stmt: str) -> None:
    warnings.simplefilter("default")  # Python's once-per-location behaviour
    if "warnings.warn" not in stmt:
        warnings.filterwarnings("ignore", category=anydev.compat.LegacyAPIWarning)


def _child(stmt: str, calls: int) -> int:
    """Runs `stmt` once (its first call warns), then `calls` times."""
    _filters(stmt)
    timer = timeit.Timer(stmt, globals=_env())
    timer.timeit(1)
    timer.timeit(calls)
    return 0


def _instructions(stmt: str, calls: int) -> Optional[float]:
    """Instructions per call of `stmt`, by callgrind (see the docstring)."""
    counts = []
    for n in (calls, 21 * calls):
        p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                            sys.executable, os.path.abspath(__file__), "--child", stmt, str(n)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, PYTHONHASHSEED="0"))
        found = [line for line in p.stderr.splitlines() if "Collected :" in line]
        if p.returncode != 0 or not found:
            return None
        counts.append(int(found[-1].split(":")[-1]))
    return (counts[1] - counts[0]) / (20 * calls)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--number", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--callgrind", action="store_true",
                    help="also count each row's instructions per call with valgrind's callgrind")
    ap.add_argument("--calls", type=int, default=10_000,
                    help="with --callgrind: calls of the shorter child run (default: 10000)")
    ap.add_argument("--child", nargs=2, metavar=("STMT", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return _child(args.child[0], int(args.child[1]))

    env = _env()
    # Interleaved: each of --repeat rounds times every row once, so that a
    # change in the machine's load touches all rows alike; the best round counts.
    timers = {name: timeit.Timer(stmt, globals=env) for name, (stmt, _) in ROWS.items()}
    rows: dict = {name: float("inf") for name in ROWS}
    for round_ in range(args.repeat + 1):
        for name, (stmt, share) in ROWS.items():
            with warnings.catch_warnings():
                _filters(stmt)
                if round_ == 0:
                    timers[name].timeit(1)  # the first call from the timeit frame warns
                    continue
                number = max(1, args.number // share)
                rows[name] = min(rows[name], timers[name].timeit(number) / number * 1e9)
    direct, shim = rows["direct current_device_index()"], rows["shim cuda.current_device()"]
    ww = rows["warnings.warn (default filter, after first)"]
    ratios = {f"{k} (target <= {t})": rows[a] / rows[b] for k, (a, b, t) in RATIOS.items()}
    ratios["(shim - direct) / warnings.warn (target <= 0.2)"] = (shim - direct) / ww
    instructions: dict = {}
    instruction_ratios: dict = {}
    if args.callgrind:
        if not shutil.which("valgrind"):
            print("bench_compat: --callgrind needs valgrind on PATH", file=sys.stderr)
            return 2
        for name, (stmt, share) in ROWS.items():
            instructions[name] = _instructions(stmt, max(1, args.calls // share))
        for k, (a, b, t) in RATIOS.items():
            if instructions.get(a) and instructions.get(b):
                instruction_ratios[f"{k} (target <= {t})"] = instructions[a] / instructions[b]
    if args.json:
        print(json.dumps({"ns_per_call": rows, "ratios": ratios,
                          "instructions_per_call": instructions,
                          "instruction_ratios": instruction_ratios}, indent=2))
        return 0
    print(f"anydev {anydev.__version__}, python {sys.version.split()[0]}, "
          f"best of {args.repeat} x {args.number} calls")
    w = max(map(len, list(rows) + list(ratios) + list(instruction_ratios)))
    for name, ns in rows.items():
        ins = instructions.get(name)
        print(f"  {name:<{w}}  {ns:8.1f} ns" + (f"  {ins:8.0f} instructions" if ins else ""))
    print("time:")
    for name, r in ratios.items():
        print(f"  {name:<{w}}  {r:8.2f}")
    if instruction_ratios:
        print("instructions (callgrind):")
        for name, r in instruction_ratios.items():
            print(f"  {name:<{w}}  {r:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
