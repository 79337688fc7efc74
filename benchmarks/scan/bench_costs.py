#!/usr/bin/env python3
"""Costs of the scanner that must grow linearly with the input (issue 14),
each on a generated input at two sizes, with the ratio of the times printed
(linear: about the size ratio; quadratic: its square). Not a test: the
ratios are read, not asserted.

    python benchmarks/scan/bench_costs.py            # sizes N and 4N
    python benchmarks/scan/bench_costs.py --scale 2  # N = 2x the default
    python benchmarks/scan/bench_costs.py --memory-only  # the memory rows alone

- columns: N findings on one line (LineMap::Column used to count from the
  line start for each: 10k took 3.4 s, 80k 131 s);
- long line: a one-line file of N x 100 bytes with a finding every 100;
- suppressions: N lines, each a finding and an `# anydev: ignore` comment
  (every finding used to loop over every marker: 80k lines took 38 s);
- literals: a one-line call of N `device="cuda"` arguments and N more in a
  list (the literal rules read back from every string to the start of its
  call: 40,000 took 3-4 s) and N nested `.cuda(` calls (each call's end was
  found by a scan forwards);
- conditionals: malformed nested conditionals, `"cuda" if COND if ...`
  N times and then `else "gpu"`, and `"cuda" if "cuda" if ... COND else
  "cpu"` (each value's scan for its `else` used to read to the end of the
  expression: 40,000 took seconds);
- checks: a one-line expression of N availability checks joined by `or`
  (each check walked back to the line's start for an `if`: 20,000 took
  1.58 s; Note [One walk back a line] in core/scan/src/python_scan.cc);
- glob: a `*a*a*...*b` .gitignore line against ever longer names (a
  backtracking matcher is exponential in the stars; this one is linear in
  the name);
- TOML: anydev's own reader of pyproject.toml (anydev/_common/toml.py) on a key of N
  dotted parts and on a header of N parts with N keys under it (tomllib is
  quadratic in both: 20,000 parts took 7 s);
- memory: the peak resident memory a child process adds while it scans a
  tree of N files of 200 findings each, streamed (iter_scan_paths, one
  batch held at a time: must not grow with N) and whole (scan_paths: the
  result holds every finding, so it grows); and what `anydev scan` adds
  (the CLI, `--jobs 1`, the report to /dev/null) with each format: text,
  JSON and GitHub are streamed (Note [Streamed reports] in anydev/scan.py:
  flat), SARIF holds the tree's findings (grows).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from anydev import _C
from anydev._common import toml as _toml
from anydev.scan import scan_source


def best(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def columns(n: int) -> bytes:
    return b"import torch\n" + b"x=torch.cuda.synchronize();" * n + b"\n"


def long_line(n: int) -> bytes:
    chunk = b"torch.cuda.synchronize()+" + b"a" * 75  # 100 bytes
    return b"import torch\n" + chunk * n + b"0\n"


def suppressions(n: int) -> bytes:
    return b"import torch\n" + b"torch.cuda.synchronize()  # anydev: ignore[AD107]\n" * n


def literals(n: int) -> bytes:
    return (b"import torch\nf(" + b'device="cuda", ' * n + b"[" + b'"cuda", ' * n + b"])\n"
            + b"x" + b".cuda(y" * n + b")" * n + b"\n")


AVAILABLE = b"torch.cuda.is_available()"


def conditionals(n: int) -> bytes:
    return (b"import torch\nd = " + (b'"cuda" if ' + AVAILABLE + b" if ") * n + b' else "gpu"\n'
            + b"e = " + b'"cuda" if ' * n + AVAILABLE + b' else "cpu"\n')


def checks(n: int) -> bytes:
    return b"import torch\nx = (" + b" or ".join([AVAILABLE] * n) + b")\n"


def toml_key(n: int) -> str:
    return "a" + ".a" * n + " = 1\n"


def toml_header(n: int) -> str:
    return "[" + "h." * n + "h]\n" + "".join(f"k{i} = {i}\n" for i in range(n))


def glob_case(n: int) -> tuple[str, str]:
    return "*a" * 12 + "*b", "a" * n


# VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's.
MEMORY_CHILD = r"""
import sys
from anydev import scan
def hwm():
    with open("/proc/self/status") as f:
        return int(next(l for l in f if l.startswith("VmHWM:")).split()[1])
root, mode = sys.argv[1], sys.argv[2]
scan._rules()
before = hwm()
if mode == "stream":  # what a streamed format holds: one batch at a time
    n = sum(len(part.findings) for part in scan.iter_scan_paths([root], jobs=1))
elif mode == "whole":  # the whole result at once
    n = len(scan.scan_paths([root], jobs=1).findings)
else:  # `anydev scan --format FORMAT`, its report to /dev/null
    import os
    from anydev._cli import main as cli, scan as _scan_cli
    from anydev._migrate import formats as _scan_formats
    fmt = mode.split()[1]
    out = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    before = hwm()
    rc = cli.main(["scan", "--no-config", "--jobs", "1", "--format", fmt, root])
    sys.stdout.flush()
    os.dup2(out, 1)
    n = rc
print(hwm() - before, n)
"""


def tree(base: str, n: int) -> str:
    root = os.path.join(base, f"tree-{n}")
    os.makedirs(root, exist_ok=True)
    body = b"import torch\n" + b"torch.cuda.synchronize()\n" * 200
    for i in range(n):
        with open(os.path.join(root, f"m{i:06d}.py"), "wb") as f:
            f.write(body)
    return root


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--memory-only", action="store_true",
                    help="only the memory rows (the scanner's and the CLI's peak memory)")
    a = ap.parse_args()
    k = a.scale
    if a.memory_only:
        return memory(k)

    cases = [
        ("columns", columns, int(20_000 * k), lambda d: scan_source(d, "x.py")),
        ("long line", long_line, int(100_000 * k), lambda d: scan_source(d, "x.py")),
        ("suppressions", suppressions, int(20_000 * k), lambda d: scan_source(d, "x.py")),
        ("literals", literals, int(10_000 * k), lambda d: scan_source(d, "x.py")),
        ("conditionals", conditionals, int(10_000 * k), lambda d: scan_source(d, "x.py")),
        ("checks", checks, int(5_000 * k), lambda d: scan_source(d, "x.py")),
        ("toml key", toml_key, int(20_000 * k), _toml.loads),
        ("toml header", toml_header, int(20_000 * k), _toml.loads),
    ]
    print(f"{'case':14} {'N':>9} {'time N':>9} {'time 4N':>9} {'ratio':>6}  (linear: ~4)")
    for name, make, n, run in cases:
        small, big = make(n), make(4 * n)
        t1 = best(lambda: run(small), a.runs)
        t4 = best(lambda: run(big), a.runs)
        print(f"{name:14} {n:9d} {t1:9.4f} {t4:9.4f} {t4 / t1:6.2f}", flush=True)

    g, n = glob_case(int(100_000 * k))
    _, n4 = glob_case(int(400_000 * k))
    t1 = best(lambda: _C._scan.glob_match(g, n), a.runs)
    t4 = best(lambda: _C._scan.glob_match(g, n4), a.runs)
    print(f"{'glob':14} {len(n):9d} {t1:9.4f} {t4:9.4f} {t4 / t1:6.2f}", flush=True)
    return memory(k)


def memory(k: float) -> int:
    with tempfile.TemporaryDirectory(prefix="anydev-costs-") as tmp:
        files = int(250 * k)
        roots = [tree(tmp, n) for n in (files, 4 * files)]
        print(f"{'memory':14} {'files':>9} {'KiB N':>9} {'KiB 4N':>9} {'ratio':>6}", flush=True)
        for mode in ("stream", "whole", "cli text", "cli json", "cli github", "cli sarif"):
            rss, found = [], []
            for root in roots:
                out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, root, mode],
                                     check=True, capture_output=True, text=True).stdout.split()
                rss.append(max(int(out[0]), 1))
                found.append(int(out[1]))
            flat = mode in ("stream", "cli text", "cli json", "cli github")
            what = (f"exit {found[0]} and {found[1]}" if mode.startswith("cli")
                    else f"{found[0]} and {found[1]} findings")
            print(f"{mode:14} {files:9d} {rss[0]:9d} {rss[1]:9d} {rss[1] / rss[0]:6.2f}"
                  f"  (KiB over the import, {200 * files} and {800 * files} findings, {what}; "
                  f"{'flat: ~1' if flat else 'grows with the findings'})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
