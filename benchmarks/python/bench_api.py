#!/usr/bin/env python3
"""Per-call cost of anydev's hot Python calls, against floors measured in the
same run.

    ANYDEV_SIM_DEVICES=2 .venv/bin/python benchmarks/python/bench_api.py [--json]

Floors:
  * `_C._noop()`: a no-op pybind11 function of the module: the cheapest call a
    pybind11 binding can make. Each call below is reported as a ratio to it
    (target: within 2x).
  * `with _C._NoopContext():`: the same for a `with` statement over a no-op
    pybind11 context manager, since a `with` makes three calls (construct,
    __enter__, __exit__) and no single-call floor can be met by it.

Each figure is the best of --repeat runs of --number calls (timeit), in ns per
call; the best is the least disturbed by the rest of the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import timeit

os.environ.setdefault("ANYDEV_SIM_DEVICES", "2")

import anydev  # noqa: E402

acc = anydev.accelerator
C = anydev._C


def measure(stmt: str, env: dict, number: int, repeat: int) -> float:
    best = min(timeit.repeat(stmt, globals=env, number=number, repeat=repeat))
    return best / number * 1e9


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--number", type=int, default=500_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args()
    if acc.current_accelerator() is None:
        print("no accelerator: set ANYDEV_SIM_DEVICES=N", file=sys.stderr)
        return 2
    other = 1 if acc.device_count() > 1 else 0
    env = dict(noop=C._noop, NoopContext=C._NoopContext, cdi=acc.current_device_index,
               sdi=acc.set_device_index, cs=acc.current_stream, di=acc.device_index,
               other=other)
    rows = [
        # name, statement, floor
        ("floor: _C._noop()", "noop()", None),
        ("floor: with _C._NoopContext()", "with NoopContext(): pass", None),
        ("floor: two _C._noop() calls", "noop(); noop()", None),
        ("current_device_index()", "cdi()", "noop()"),
        ("set_device_index(0) (already current)", "sdi(0)", "noop()"),
        ("set_device_index toggling 0/1", "sdi(other); sdi(0)", "noop(); noop()"),
        ("current_stream()", "cs()", "noop()"),
        ("with device_index(0) (already current)", "with di(0): pass", "with NoopContext(): pass"),
        ("with device_index(1) (switches)", "with di(other): pass", "with NoopContext(): pass"),
        ("with device_index(0), against _C._noop()", "with di(0): pass", "noop()"),
    ]
    floors: dict[str, float] = {}
    results = []
    for name, stmt, floor in rows:
        ns = measure(stmt, env, args.number, args.repeat)
        if floor is None:
            floors[stmt] = ns
        ratio = None if floor is None else ns / floors[floor]
        results.append({"name": name, "ns_per_call": round(ns, 1),
                        "ratio_to_floor": None if ratio is None else round(ratio, 2)})
    if args.json:
        print(json.dumps({"accelerator": str(acc.current_accelerator()),
                          "python": sys.version.split()[0], "results": results}, indent=2))
        return 0
    print(f"anydev {anydev.__version__}, accelerator {acc.current_accelerator()}, "
          f"python {sys.version.split()[0]}, best of {args.repeat} x {args.number} calls")
    width = max(len(r["name"]) for r in results)
    for r in results:
        ratio = "" if r["ratio_to_floor"] is None else f"{r['ratio_to_floor']:.2f}x floor"
        print(f"  {r['name']:<{width}}  {r['ns_per_call']:7.1f} ns  {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
