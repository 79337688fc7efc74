#!/usr/bin/env python3
"""What `anydev fix` does to one tree for several target torches: findings
applied and left (by reason), the torch the fixed code needs, and the time
against the scan of the same tree (one run, interleaved).

    python benchmarks/fix/gen_repo.py --out build/fix-repo
    python benchmarks/fix/fix_targets.py build/fix-repo --targets 2.1 2.6 2.13
"""

from __future__ import annotations

import argparse
import collections
import re
import time

from anydev.fix import fix_paths
from anydev.scan import scan_paths


def reason_key(why: str) -> str:
    why = re.sub(r"needs torch >= ([\d.]+) \(target [\d.]+\)", r"needs torch >= \1", why)
    why = re.sub(r"AD\d+", "ADxxx", why)
    why = re.sub(r"`[^`]*`|line \d+|\(line \d+\)", "…", why)
    return why.split(";")[0][:90]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree")
    ap.add_argument("--targets", nargs="+", default=["2.1", "2.6", "2.13"])
    ap.add_argument("--unsafe", action="store_true")
    args = ap.parse_args()
    for target in args.targets:
        t0 = time.perf_counter()
        scanned = scan_paths([args.tree])
        t_scan = time.perf_counter() - t0
        t0 = time.perf_counter()
        r = fix_paths([args.tree], diff=True, target_torch=target, unsafe=args.unsafe)
        t_fix = time.perf_counter() - t0
        reasons = collections.Counter(reason_key(w) for _, w in r.remaining)
        print(f"target {target}{' (unsafe fixes on)' if args.unsafe else ''}: "
              f"{len(scanned.findings)} findings, {r.applied} applied, {len(r.remaining)} left; "
              f"fixed code needs torch >= {r.needs_torch}; fix {t_fix:.2f} s = "
              f"{t_fix / max(t_scan, 1e-9):.0f}x the scan ({t_scan:.3f} s)")
        for why, n in reasons.most_common():
            print(f"  {n:6}  {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
