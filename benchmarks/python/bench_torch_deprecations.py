#!/usr/bin/env python3
"""Added compile time of the forced <anydev/torch_deprecations.h> on a typical
extension source, in one run: the same file compiled without and with
``-include``, interleaved (ABBA, so drift on a loaded machine hits both).

    .venv/bin/python benchmarks/python/bench_torch_deprecations.py [--compiler g++]
        [--reps 3] [--mode c|syntax] [--source FILE] [--json]

The file is tests/fixtures/cpp_ext/typical_ext.cpp (torch/extension.h,
ATen/cuda/CUDAContext.h, c10/cuda/CUDAGuard.h, one legacy call), against the
installed PyTorch's headers, CUDA's (/usr/local/cuda, or $CUDA_HOME) and the
test-only stand-ins of tests/fixtures/cpp_ext/include for what a CPU wheel and
a CUDA toolkit without cuBLAS lack. Reported: the CPU time (user + sys of the
compiler) and wall time of each build, the medians, and the median of the
per-rep ratios (with / without). ``--source
tests/fixtures/cpp_ext/cpu_binding.cpp`` is the worst case: a file without
CUDA includes, into which the header brings c10/cuda's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "cpp_ext")


def build_command(compiler: str, mode: str, out: str, source: str) -> list[str]:
    import sysconfig

    from torch.utils import cpp_extension

    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    cmd = [compiler, "-std=c++17", "-DTORCH_EXTENSION_NAME=typical_ext"]
    for inc in cpp_extension.include_paths():
        cmd += ["-isystem", inc]
    cmd += ["-isystem", os.path.join(cuda, "include"),
            "-isystem", os.path.join(FIXTURE, "include"),
            "-isystem", sysconfig.get_paths()["include"]]
    if compiler.endswith("nvcc"):
        cmd += ["-x", "cu"]
    else:
        cmd += ["-fPIC"]
    cmd += ["-O2", "-c", "-o", out] if mode == "c" else ["-fsyntax-only"]
    return cmd + [source]


def timed(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"bench: the compile failed ({p.returncode}):\n{' '.join(cmd)}\n{p.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compiler", default="g++")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mode", choices=("c", "syntax"), default="c",
                    help="c: -O2 -c, as a build does (default); syntax: -fsyntax-only")
    ap.add_argument("--source", default=os.path.join(FIXTURE, "typical_ext.cpp"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if shutil.which(args.compiler) is None:
        sys.exit(f"bench: {args.compiler} is not installed")
    header = os.path.join(ROOT, "shims", "include", "anydev", "torch_deprecations.h")
    with tempfile.TemporaryDirectory() as tmp:
        base = build_command(args.compiler, args.mode, os.path.join(tmp, "x.o"), args.source)
        forced = base[:1] + ["-include", header] + base[1:]
        runs: dict[str, list[tuple[float, float]]] = {"without": [], "with": []}
        timed(base)  # warm the file cache; not counted
        for rep in range(args.reps):
            order = ("without", "with") if rep % 2 == 0 else ("with", "without")
            for name in order:
                runs[name].append(timed(forced if name == "with" else base))
    ratios = [w[0] / b[0] for w, b in zip(runs["with"], runs["without"])]
    result = {
        "compiler": args.compiler, "mode": args.mode, "reps": args.reps,
        "source": os.path.relpath(args.source, ROOT),
        "cpu_s": {k: [round(c, 3) for c, _ in v] for k, v in runs.items()},
        "wall_s": {k: [round(w, 3) for _, w in v] for k, v in runs.items()},
        "median_cpu_s": {k: round(statistics.median(c for c, _ in v), 3) for k, v in runs.items()},
        "cpu_ratio_median": round(statistics.median(ratios), 4),
        "cpu_ratios": [round(r, 4) for r in ratios],
    }
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        m = result["median_cpu_s"]
        print(f"{args.compiler} ({args.mode}), {args.reps} interleaved reps: "
              f"without {m['without']:.2f} s CPU, with {m['with']:.2f} s CPU; "
              f"ratio with/without {result['cpu_ratio_median']:.3f} "
              f"(per rep: {', '.join(f'{r:.3f}' for r in ratios)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
