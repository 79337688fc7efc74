#!/usr/bin/env python3
"""Per-call cost of a legacy shim after its first warning, against the direct
call to its replacement and Python's own ``warnings.warn``, in one run.

    .venv/bin/python benchmarks/python/bench_compat.py [--json]

Rows (ns per call, best of --repeat runs of --number calls):
  * direct: ``anydev.accelerator.current_device_index()``, the replacement;
  * shim: ``anydev.cuda.current_device()`` after its call site has warned
    (it counts the call natively, checks the site's policy, and forwards);
  * warnings.warn: ``warnings.warn(msg, FutureWarning)`` under Python's
    default once-per-location filter, after its first (shown) warning: what a
    pure-Python deprecation shim pays on every call before doing anything.

Targets (issue 3): shim <= 1.3x direct, and (shim - direct) <= 1/5 of one
warnings.warn call. Also reported: a shim with an argument
(``anydev.cuda.set_device(0)`` vs ``set_device_index(0)``) and a class shim.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import timeit
import warnings

os.environ.setdefault("ANYDEV_SIM_DEVICES", "2")

import anydev  # noqa: E402
import anydev.cuda  # noqa: E402


def best_ns(stmt: str, env: dict, number: int, repeat: int) -> float:
    timer = timeit.Timer(stmt, globals=env)
    timer.timeit(1)  # the first call from the timeit frame warns; not timed
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e9


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--number", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    acc = anydev.accelerator
    cuda = anydev.cuda
    env = {"acc": acc, "cuda": cuda, "warnings": warnings, "FW": FutureWarning}
    with warnings.catch_warnings():
        warnings.simplefilter("default")           # Python's once-per-location behaviour
        warnings.filterwarnings("ignore", category=anydev.compat.LegacyAPIWarning)
        rows = {
            "direct current_device_index()": best_ns("acc.current_device_index()", env, args.number, args.repeat),
            "shim cuda.current_device()": best_ns("cuda.current_device()", env, args.number, args.repeat),
            "direct set_device_index(0)": best_ns("acc.set_device_index(0)", env, args.number, args.repeat),
            "shim cuda.set_device(0)": best_ns("cuda.set_device(0)", env, args.number, args.repeat),
            "direct anydev.Stream()": best_ns("anydev.Stream()", dict(env, anydev=anydev), args.number // 10, args.repeat),
            "shim cuda.Stream()": best_ns("cuda.Stream()", env, args.number // 10, args.repeat),
        }
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            rows["warnings.warn (default filter, after first)"] = best_ns(
                "warnings.warn('legacy', FW)", env, args.number, args.repeat)
    direct, shim = rows["direct current_device_index()"], rows["shim cuda.current_device()"]
    ww = rows["warnings.warn (default filter, after first)"]
    ratios = {
        "shim / direct (target <= 1.3)": shim / direct,
        "(shim - direct) / warnings.warn (target <= 0.2)": (shim - direct) / ww,
        "set_device shim / direct": rows["shim cuda.set_device(0)"] / rows["direct set_device_index(0)"],
        "Stream class shim / direct": rows["shim cuda.Stream()"] / rows["direct anydev.Stream()"],
    }
    if args.json:
        print(json.dumps({"ns_per_call": rows, "ratios": ratios}, indent=2))
        return 0
    print(f"anydev {anydev.__version__}, python {sys.version.split()[0]}, "
          f"best of {args.repeat} x {args.number} calls")
    w = max(map(len, list(rows) + list(ratios)))
    for name, ns in rows.items():
        print(f"  {name:<{w}}  {ns:8.1f} ns")
    for name, r in ratios.items():
        print(f"  {name:<{w}}  {r:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
