#!/usr/bin/env python3
"""Per-call cost of anydev.torch's forwarders on the real PyTorch, in one run.

    .venv/bin/python benchmarks/python/bench_torch_adapter.py [--json]

For ``torch.cuda.device_count()`` and ``torch.cuda.is_available()`` (on a CPU
build both are short Python functions, ~0.5 us), ns per call, best of
--repeat interleaved rounds of --number calls:

  * original: the PyTorch function itself (captured before install);
  * out of scope: a call through the installed forwarder from a module outside
    the scope (counted, then the original);
  * in scope: a call from inside the scope after its site's first warning
    (counted, policy checked, then the original: mode observe);
  * in scope, forward: the same in mode forward, which calls
    torch.accelerator's replacement instead (its own cost is PyTorch's).

Targets (issue 7): out of scope <= 1.2x the original, in scope <= 1.5x.
"""

from __future__ import annotations

import argparse
import json
import sys
import timeit
import warnings

import torch
import torch.cuda

from anydev._torch import adapter
from anydev.compat import LegacyAPIWarning


def ns_per_call(stmt: str, env: dict, number: int) -> float:
    return timeit.Timer(stmt, globals=env).timeit(number) / number * 1e9


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--number", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    names = ("device_count", "is_available")
    # The statements run in these globals: the module name decides the scope.
    inside = {"__name__": "bench_inside", "torch": torch}
    outside = {"__name__": "bench_outside", "torch": torch}
    best: dict[str, float] = {}

    def measure(label: str, stmt: str, env: dict) -> None:
        ns_per_call(stmt, env, 1)  # the first call from a site resolves it (and warns)
        ns = ns_per_call(stmt, env, args.number)
        best[label] = min(ns, best.get(label, float("inf")))

    # Rounds interleave the variants, so that a noisy machine slows them alike;
    # the best of the rounds is kept. The same statement, torch.cuda.NAME(),
    # reaches the original (not installed), or the forwarder (installed).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LegacyAPIWarning)
        for _ in range(args.repeat):
            adapter.uninstall()
            for name in names:
                measure(f"original torch.cuda.{name}()", f"torch.cuda.{name}()", outside)
            adapter.install(mode="observe", packages=["bench_inside"], main=False)
            for name in names:
                measure(f"out of scope torch.cuda.{name}()", f"torch.cuda.{name}()", outside)
                measure(f"in scope torch.cuda.{name}()", f"torch.cuda.{name}()", inside)
            adapter.install(mode="forward", packages=["bench_inside"], main=False)
            for name in names:
                measure(f"in scope, forward torch.cuda.{name}()", f"torch.cuda.{name}()", inside)
        adapter.uninstall()
    order = ["original", "out of scope", "in scope", "in scope, forward"]
    rows = {f"{k} torch.cuda.{n}()": best[f"{k} torch.cuda.{n}()"] for n in names for k in order}
    originals = names
    ratios = {}
    for name in originals:
        o = rows[f"original torch.cuda.{name}()"]
        ratios[f"{name}: out of scope / original (target <= 1.2)"] = \
            rows[f"out of scope torch.cuda.{name}()"] / o
        ratios[f"{name}: in scope / original (target <= 1.5)"] = \
            rows[f"in scope torch.cuda.{name}()"] / o
        ratios[f"{name}: forwarder overhead, out of scope (ns)"] = \
            rows[f"out of scope torch.cuda.{name}()"] - o
        ratios[f"{name}: forwarder overhead, in scope (ns)"] = \
            rows[f"in scope torch.cuda.{name}()"] - o
    if args.json:
        print(json.dumps({"torch": torch.__version__, "ns_per_call": rows, "ratios": ratios},
                         indent=2))
        return 0
    print(f"torch {torch.__version__}, python {sys.version.split()[0]}, "
          f"best of {args.repeat} interleaved rounds of {args.number} calls")
    w = max(map(len, list(rows) + list(ratios)))
    for name, ns in rows.items():
        print(f"  {name:<{w}}  {ns:8.1f} ns")
    for name, r in ratios.items():
        print(f"  {name:<{w}}  {r:8.2f}" + ("" if "(ns)" in name else "x"))
    ok = all(r <= (1.2 if "out of scope /" in n else 1.5)
             for n, r in ratios.items() if "/ original" in n)
    print("targets met" if ok else "TARGETS MISSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
