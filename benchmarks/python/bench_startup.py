#!/usr/bin/env python3
"""Start-up time of the ``anydev`` command and of ``import anydev``, against
the interpreter's own start-up and (when installed) ``ruff check``, in one
interleaved run.

    .venv/bin/python benchmarks/python/bench_startup.py [--runs 30] [--json]

Rows (milliseconds, the median and the best of --runs runs, each a fresh
process; the rows are interleaved run by run so that a change in the
machine's load touches them all alike): wall time, and CPU time (user +
system of the child), which a loaded machine inflates much less:

  * python -c pass: the floor every row pays;
  * python -c "import anydev": the package (target: at most 25 ms);
  * anydev --version, anydev scan one_file.py: the console script next to
    this interpreter (target for the scan: at most 40 ms), in a project
    folder whose pyproject.toml is a real project's (build system, metadata,
    dependencies that name torch and anydev, [tool.ruff], [tool.pytest]) with
    no [tool.anydev] table;
  * anydev scan one_file.py, [tool.anydev]: the same in a project whose
    pyproject.toml also holds a [tool.anydev] table (then it is parsed);
  * ruff check one_file.py: for comparison, when ``ruff`` is on PATH (it runs
    --isolated: it reads no configuration).

With hyperfine on PATH, it is also run over the same commands (--hyperfine).
With --callgrind (valgrind on PATH), each row's instruction count is measured
once as well: the figure that does not move with the machine's load.
Also printed: the ten slowest imports of ``anydev scan`` by ``python -X
importtime`` (self time, microseconds).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Optional


# The pyproject.toml of the benchmark's project folder: what a real project's
# holds, anydev named as a dependency but no [tool.anydev] table.
PYPROJECT = """\
[build-system]
requires = ["setuptools>=64", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "trainer"
version = "0.1.0"
description = "A training loop written for torch.cuda"
readme = "README.md"
requires-python = ">=3.9"
license = {text = "Apache-2.0"}
dependencies = ["torch>=2.1", "numpy>=1.24", "anydev>=0.1"]

[project.optional-dependencies]
dev = ["pytest>=7", "ruff>=0.4"]

[project.scripts]
trainer = "trainer.cli:main"

[tool.setuptools.packages.find]
where = ["src"]

[tool.ruff]
line-length = 100
target-version = "py39"

[tool.ruff.lint]
select = ["E", "F", "I"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-q"
"""
# The same with a [tool.anydev] table (the row that parses it).
PYPROJECT_CONFIGURED = PYPROJECT + """
[tool.anydev]
select = ["AD1", "AD6"]
exclude = ["third_party/"]
per-file-ignores = { "tests/**" = ["AD1"] }
"""
ONE_FILE = "import torch\n\ntorch.cuda.synchronize()\nx = torch.cuda.current_device()\n"


def _project(root: str, name: str, pyproject: str) -> str:
    d = os.path.join(root, name)
    os.makedirs(d)
    with open(os.path.join(d, "pyproject.toml"), "w") as f:
        f.write(pyproject)
    with open(os.path.join(d, "one_file.py"), "w") as f:
        f.write(ONE_FILE)
    return d


def _time(argv: list[str], env: dict, cwd: str) -> tuple[float, float]:
    """(wall ms, CPU ms: user + system of the child) of one run."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, _, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t0) * 1000
    p.returncode = 0  # reaped by wait4
    return wall, (ru.ru_utime + ru.ru_stime) * 1000


def _instructions(argv: list[str], env: dict, cwd: str) -> Optional[int]:
    """Instructions of one run under callgrind (the process itself, not its
    children), or None when valgrind fails."""
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                        *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    for line in p.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1].strip())
    return None


def _importtime(argv: list[str], env: dict, cwd: str) -> list[tuple[int, str]]:
    p = subprocess.run(argv, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rows = []
    for line in p.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            parts = line.split("|")
            try:
                rows.append((int(parts[0].split(":")[1]), parts[2].rstrip()))
            except ValueError:
                continue
    return sorted(rows, reverse=True)[:10]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--hyperfine", action="store_true")
    ap.add_argument("--callgrind", action="store_true",
                    help="also count each row's instructions with valgrind's callgrind")
    args = ap.parse_args()

    py = sys.executable
    script = os.path.join(os.path.dirname(py), "anydev")
    if not os.path.exists(script):
        script = shutil.which("anydev") or ""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANYDEV_")}
    tmp = tempfile.mkdtemp(prefix="anydev-startup-")
    proj = _project(tmp, "project", PYPROJECT)
    configured = _project(tmp, "configured", PYPROJECT_CONFIGURED)
    one = os.path.join(proj, "one_file.py")
    # name -> (argv, the folder it runs in)
    rows: dict[str, tuple[list[str], str]] = {
        "python -c pass": ([py, "-c", "pass"], proj),
        "python -c 'import anydev'": ([py, "-c", "import anydev"], proj),
    }
    if script:
        rows["anydev --version"] = ([script, "--version"], proj)
        rows["anydev scan one_file.py"] = ([script, "scan", "one_file.py"], proj)
        rows["  ... with [tool.anydev]"] = ([script, "scan", "one_file.py"], configured)
    else:
        rows["python -m anydev scan one_file.py"] = ([py, "-m", "anydev", "scan", "one_file.py"],
                                                     proj)
    ruff = shutil.which("ruff")
    if ruff:
        rows["ruff check one_file.py"] = ([ruff, "check", "--no-cache", "--isolated",
                                           "one_file.py"], proj)
    for argv, cwd in rows.values():  # warm the caches (.pyc, the page cache)
        _time(argv, env, cwd)
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in rows}
    for _ in range(args.runs):
        for name, (argv, cwd) in rows.items():
            times[name].append(_time(argv, env, cwd))
    result = {}
    for name, t in times.items():
        wall, cpu = [w for w, _ in t], [c for _, c in t]
        result[name] = {"median_ms": round(statistics.median(wall), 2),
                        "best_ms": round(min(wall), 2),
                        "cpu_median_ms": round(statistics.median(cpu), 2),
                        "cpu_best_ms": round(min(cpu), 2)}
    floor = result["python -c pass"]["median_ms"]
    if args.callgrind and shutil.which("valgrind"):
        for name, (argv, cwd) in rows.items():
            result[name]["instructions"] = _instructions(argv, env, cwd)
    slow = _importtime([py, "-X", "importtime", *([script] if script else ["-m", "anydev"]),
                        "scan", one], env, proj)
    if args.json:
        print(json.dumps({"rows": result, "slowest_imports_us": slow}, indent=1))
    else:
        print(f"{'command':32} {'wall median':>11} {'best':>6} {'over python':>11}  "
              f"{'cpu median':>10} {'best':>6}")
        for name, r in result.items():
            print(f"{name:32} {r['median_ms']:11.1f} {r['best_ms']:6.1f} "
                  f"{r['median_ms'] - floor:11.1f}  {r['cpu_median_ms']:10.1f} "
                  f"{r['cpu_best_ms']:6.1f}")
        if args.callgrind:
            base = result["python -c pass"].get("instructions")
            print(f"\n{'command':32} {'instructions':>14} {'x python -c pass':>17}")
            for name, r in result.items():
                n = r.get("instructions")
                if n:
                    ratio = f"{n / base:17.2f}" if base else ""
                    print(f"{name:32} {n:14,d} {ratio}")
        imp = result["python -c 'import anydev'"]["median_ms"]
        scan = next((r["median_ms"] for k, r in result.items() if "scan" in k), 0.0)  # the first
        print(f"\ntargets (issue 14): import anydev <= 25 ms: {imp:.1f}; anydev scan "
              f"one_file.py <= 40 ms: {scan:.1f} (wall medians; on a loaded machine "
              "compare the instructions)")
        print("\nslowest imports of `anydev scan one_file.py` (self, us):")
        for us, mod in slow:
            print(f"  {us:8d}  {mod.strip()}")
    if args.hyperfine and shutil.which("hyperfine"):
        subprocess.run(["hyperfine", "-N", "--warmup", "3",
                        *[" ".join(a) for a, cwd in rows.values() if cwd == proj]],
                       cwd=proj, check=False)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
