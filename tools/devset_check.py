#!/usr/bin/env python3
"""Runs `anydev fix` on copies of real repositories and checks what a
maintainer would check before merging the result (docs/scan.md, "A fix is a
promise"; issue 29's measure):

    tools/devset_check.py DEVSET_ROOT [--repos a,b] [--modes safe,2.13,unsafe]
                          [--work DIR] [--python PY] [--tests [--sim]] [--compile]

For each repository under DEVSET_ROOT (a folder per repository, read only:
the script works on copies under --work) and each mode

    safe     `anydev fix .`                                (the default target)
    2.13     `anydev fix . --target-torch 2.13`
    unsafe   `anydev fix . --target-torch 2.13 --unsafe-fixes`

it counts the findings (`anydev scan`), the fixes applied, the files changed;
checks that every changed Python file still parses and, with --compile, that
every changed C/C++/CUDA file still compiles where the original did (g++ or
nvcc -fsyntax-only against the torch headers of PY's torch and CUDA under
/usr/local/cuda); runs the fix a second time on the fixed copy and counts
what it changes (zero is the bar); counts the
`getattr(torch.accelerator.current_accelerator(), "type", "cuda")` forms
and the new lines over the project's configured line length (ruff, black,
flake8 or isort settings; 88 where none). With --tests it runs the
repository's own CPU-runnable tests (TESTS below, pytest, each test's outcome
from a JUnit report) on the original copy and on each fixed copy, and counts
the flips: tests that passed before and fail after. With --sim it runs them
once more under `anydev run --accelerator sim` (anydev's simulated accelerator
as PyTorch's own: the non-CUDA machine the migration is for), before and after
each fix, and counts those flips too.

The table goes to stdout (Markdown) and a JSON report to WORK/report.json.
Without DEVSET_ROOT (or with an empty one) the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import configparser
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Optional

MODES = {
    "safe": [],
    "2.13": ["--target-torch", "2.13"],
    "unsafe": ["--target-torch", "2.13", "--unsafe-fixes"],
}
GETATTR = 'getattr(torch.accelerator.current_accelerator(), "type", "cuda")'
PY = (".py",)
CPP = (".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hh", ".hpp", ".cuh", ".inc")

#: Test subsets that run on a CPU-only machine (pytest node ids or paths,
#: relative to the repository) and the pure-Python packages they need.
TESTS: dict[str, dict] = {
    "detectron2": {"paths": ["tests/test_model_zoo.py", "tests/config",
                             "tests/test_checkpoint.py", "tests/structures/test_boxes.py"],
                   # antlr4: omegaconf's and hydra's parser (installed --no-deps: without
                   # it hydra's pytest plugin fails to load and every run ends in rc 3)
                   "deps": ["fvcore", "iopath", "omegaconf", "hydra-core", "yacs", "tabulate",
                            "termcolor", "cloudpickle", "antlr4-python3-runtime==4.9.3",
                            "portalocker", "setuptools<81"], "pythonpath": ["."]},
    # Python >= 3.12 (typing.override): --test-python, with torch installed there
    "Megatron-LM": {"paths": ["tests/unit_tests/test_utils.py",
                              "tests/unit_tests/test_num_microbatches_calculator.py",
                              "tests/unit_tests/test_training.py"],
                    "deps": ["einops", "packaging", "pytest-mock", "mock", "triton", "click",
                             "requests", "urllib3", "idna", "certifi"], "pythonpath": ["."]},
    "accelerate": {"paths": ["tests/test_utils.py", "tests/test_state_checkpointing.py",
                             "tests/test_cpu.py"],
                   "deps": ["psutil", "pyyaml", "huggingface_hub", "safetensors", "parameterized",
                            "pytest-mock"], "pythonpath": ["src"]},
    "pytorch-lightning": {"paths": ["tests/tests_fabric/accelerators",
                                    "tests/tests_fabric/utilities/test_device_parser.py"],
                          "deps": ["lightning-utilities", "fsspec", "pyyaml", "tqdm",
                                   "typing-extensions", "torchmetrics", "packaging"],
                          "pythonpath": ["src"]},
    "mmengine": {"paths": ["tests/test_device", "tests/test_utils/test_dl_utils"],
                 "deps": ["addict", "pyyaml", "rich", "termcolor", "yapf", "opencv-python-headless"],
                 "pythonpath": ["."]},
    "pytorch-image-models": {"paths": ["tests/test_utils.py"],
                             "deps": ["pyyaml", "huggingface_hub", "safetensors"],
                             "pythonpath": ["."]},
    "torchtitan": {"paths": ["tests/unit_tests/test_lr_scheduler.py"],
                   "deps": ["tomli", "tyro"], "pythonpath": ["."]},
    "DeepSpeed": {"paths": ["tests/unit/utils/test_get_optim_files.py"],
                  # pydantic with the core and helpers it pins (installed --no-deps)
                  "deps": ["hjson", "py-cpuinfo", "pydantic==2.14.4", "pydantic-core==2.50.5",
                           "annotated-types", "typing-inspection", "psutil", "ninja", "msgpack",
                           "einops"],
                  "pythonpath": ["."]},
}


def run(cmd: list[str], cwd: Path, timeout: int = 1800, env=None) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                              env=env)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or "", (e.stderr or "") +
                                           f"\ntimed out after {timeout} s")


def copy_tree(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".git"))


def source_files(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
        for n in files:
            if n.endswith(PY + CPP):
                p = Path(dirpath) / n
                if p.is_symlink():
                    continue
                try:
                    out[str(p.relative_to(root))] = p.read_bytes()
                except OSError:
                    pass
    return out


def line_length(root: Path) -> int:
    """The project's configured line length: ruff, black, then flake8, isort; 88."""
    cands: list[tuple[int, int]] = []
    py = root / "pyproject.toml"
    if py.is_file():
        try:
            import tomllib
            doc = tomllib.loads(py.read_text(encoding="utf-8"))
        except Exception:
            doc = {}
        tool = doc.get("tool", {}) if isinstance(doc, dict) else {}
        for rank, (name, key) in enumerate((("ruff", "line-length"), ("black", "line-length"),
                                            ("black", "line_length"), ("isort", "line_length"))):
            v = tool.get(name, {}).get(key) if isinstance(tool.get(name), dict) else None
            if isinstance(v, int):
                cands.append((rank, v))
    for name in ("ruff.toml", ".ruff.toml"):
        p = root / name
        if p.is_file():
            m = re.search(r"(?m)^line-length\s*=\s*(\d+)", p.read_text(errors="replace"))
            if m:
                cands.append((0, int(m.group(1))))
    for name in ("setup.cfg", ".flake8", "tox.ini"):
        p = root / name
        if not p.is_file():
            continue
        cp = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            cp.read(p, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        for sect, key, rank in (("flake8", "max-line-length", 4), ("flake8", "max_line_length", 4),
                                ("isort", "line_length", 5), ("yapf", "column_limit", 5)):
            if cp.has_option(sect, key):
                try:
                    cands.append((rank, int(cp.get(sect, key).split("#")[0].strip())))
                except ValueError:
                    pass
    return min(cands)[1] if cands else 88


def parses(data: bytes) -> bool:
    try:
        compile(data, "<fixed>", "exec", flags=0x400, dont_inherit=True)  # PyCF_ONLY_AST
        return True
    except (SyntaxError, ValueError):
        return False


def torch_includes(python: str) -> list[str]:
    got = subprocess.run([python, "-c", "import torch.utils.cpp_extension as c;"
                          "print('\\n'.join(c.include_paths()))"],
                         capture_output=True, text=True)
    return [p for p in got.stdout.split() if p]


def compiles(path: Path, root: Path, incs: list[str]) -> tuple[bool, str]:
    """Whether one C/C++/CUDA file compiles (-fsyntax-only), with the torch
    headers, CUDA's, and the repository's likely include folders."""
    dirs = {path.parent, root, root / "csrc", root / "include"}
    for p in path.parents:
        if p == root:
            break
        dirs.add(p)
        for sub in ("include", "csrc", "src"):
            if (p / sub).is_dir():
                dirs.add(p / sub)
    flags = [f"-I{d}" for d in sorted(map(str, dirs))] + [f"-I{i}" for i in incs]
    cuda = Path("/usr/local/cuda")
    suffix = path.suffix
    if suffix in (".cu", ".cuh"):
        nvcc = cuda / "bin" / "nvcc"
        if not nvcc.exists():
            return False, "no nvcc"
        cmd = [str(nvcc), "-std=c++17", "-x", "cu", "--expt-relaxed-constexpr",
               "-Xcompiler", "-fsyntax-only", "-c", "-o", "/dev/null", *flags, str(path)]
    else:
        lang = "c++-header" if suffix in (".h", ".hh", ".hpp", ".inc") else "c++"
        cmd = ["g++", "-std=c++17", "-fsyntax-only", "-x", lang, *flags,
               f"-I{cuda / 'include'}", "-DWITH_CUDA", str(path)]
    got = run(cmd, cwd=path.parent, timeout=600)
    return got.returncode == 0, (got.stderr or "").strip().splitlines()[0:1] and \
        (got.stderr or "").strip().splitlines()[0] or ""


def anydev(python: str, args: list[str], cwd: Path, timeout: int = 3600
           ) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1")
    return run([python, "-m", "anydev", *args], cwd=cwd, timeout=timeout, env=env)


def count_findings(python: str, root: Path) -> int:
    got = anydev(python, ["scan", ".", "--format", "json", "--exit-zero"], root)
    try:
        return len(json.loads(got.stdout).get("findings", []))
    except (ValueError, AttributeError):
        m = re.search(r"Found (\d+)", got.stdout + got.stderr)
        return int(m.group(1)) if m else -1


_FIXED = re.compile(r"anydev fix: (?:would fix|fixed) (\d+) finding")


def fixed_count(stderr: str) -> int:
    m = _FIXED.search(stderr)
    return int(m.group(1)) if m else 0


def new_long_lines(before: bytes, after: bytes, limit: int) -> int:
    a = before.decode("utf-8", "replace").splitlines()
    b = after.decode("utf-8", "replace").splitlines()
    old = {line for line in a if len(line) > limit}
    n = 0
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            n += sum(1 for line in b[j1:j2] if len(line) > limit and line not in old)
    return n


def junit_outcomes(xml: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        tree = ET.parse(xml)
    except (ET.ParseError, OSError):
        return out
    for tc in tree.iter("testcase"):
        name = f"{tc.get('classname')}::{tc.get('name')}"
        kinds = {c.tag for c in tc}
        out[name] = "failed" if kinds & {"failure", "error"} else \
            "skipped" if "skipped" in kinds else "passed"
    return out


def run_tests(repo: str, root: Path, python: str, deps_dir: Path, report: Path,
              sim: bool = False) -> dict:
    """The outcome of each test of the repository's CPU subset; with ``sim``,
    run under `anydev run --accelerator sim`, where anydev's simulated
    accelerator is PyTorch's accelerator: the non-CUDA machine the migration
    is for."""
    spec = TESTS.get(repo)
    if spec is None:
        return {"ran": False, "why": "no CPU test subset listed"}
    paths = [p for p in spec["paths"] if (root / p.split("::")[0]).exists()]
    if not paths:
        return {"ran": False, "why": "the listed tests are absent"}
    env = dict(os.environ)
    pp = [str(root / p) for p in spec.get("pythonpath", ["."])] + [str(deps_dir)]
    if os.environ.get("PYTHONPATH"):  # where anydev itself comes from (a checkout's python/)
        pp.append(os.environ["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(pp)
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    runner = [python, "-m", "anydev", "run", "--accelerator", "sim", "-m", "pytest"] if sim \
        else [python, "-m", "pytest"]
    got = run([*runner, "-q", "-p", "no:cacheprovider",
               "--timeout=120" if _has_timeout(python) else "-q", f"--junitxml={report}",
               "-o", "addopts=", *paths], cwd=root, timeout=1500, env=env)
    res = junit_outcomes(report)
    return {"ran": True, "outcomes": res, "rc": got.returncode,
            "tail": ((got.stdout or "") + (got.stderr or ""))[-400:]}


_TIMEOUT_PLUGIN: dict[str, bool] = {}


def _has_timeout(python: str) -> bool:
    if python not in _TIMEOUT_PLUGIN:
        _TIMEOUT_PLUGIN[python] = subprocess.run(
            [python, "-c", "import pytest_timeout"], capture_output=True).returncode == 0
    return _TIMEOUT_PLUGIN[python]


def install_deps(python: str, deps_dir: Path, repos: list[str]) -> None:
    want = sorted({d for r in repos for d in TESTS.get(r, {}).get("deps", [])})
    if not want:
        return
    deps_dir.mkdir(parents=True, exist_ok=True)
    stamp = deps_dir / ".installed"
    have = set(stamp.read_text().split()) if stamp.exists() else set()
    todo = [d for d in want if d not in have]
    if not todo:
        return
    # pure-Python wheels only where they exist; never a CUDA build, never torch
    got = run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "--target", str(deps_dir), "--no-deps", *todo], cwd=deps_dir, timeout=1200)
    if got.returncode != 0:
        print(f"devset_check: some test dependencies did not install:\n{got.stderr[-800:]}",
              file=sys.stderr)
    stamp.write_text("\n".join(sorted(have | set(todo))))


def check_repo(repo: str, src: Path, work: Path, python: str, modes: list[str],
               do_compile: bool, do_tests: bool, deps_dir: Path, incs: list[str],
               do_sim: bool = False, test_python: Optional[str] = None) -> dict:
    res: dict = {"repo": repo, "modes": {}}
    tpy = test_python or python
    base = work / repo / "orig"
    copy_tree(src, base)
    res["findings"] = count_findings(python, base)
    limit = res["line_length"] = line_length(base)
    orig = source_files(base)
    tests_before = run_tests(repo, base, tpy, deps_dir, work / repo / "junit-orig.xml") \
        if do_tests else {"ran": False, "why": "--tests not given"}
    res["tests_before"] = {k: v for k, v in tests_before.items() if k != "outcomes"}
    sim_before = run_tests(repo, base, tpy, deps_dir, work / repo / "junit-orig-sim.xml",
                           sim=True) if do_sim and tests_before.get("ran") else {"ran": False}
    res["sim_before"] = {k: v for k, v in sim_before.items() if k != "outcomes"}
    compiled_before: dict[str, bool] = {}
    for mode in modes:
        dst = work / repo / mode
        copy_tree(src, dst)
        t0 = time.monotonic()
        first = anydev(python, ["fix", ".", *MODES[mode]], dst)
        wall = time.monotonic() - t0
        after = source_files(dst)
        changed = sorted(k for k in after if orig.get(k) != after[k])
        m: dict = {"fixed": fixed_count(first.stderr), "rc": first.returncode,
                   "wall_s": round(wall, 1), "changed_files": len(changed)}
        if first.returncode not in (0, 1):
            m["error"] = first.stderr.strip().splitlines()[-3:]
        m["internal_errors"] = first.stderr.count("internal error")
        bad_py = [k for k in changed if k.endswith(PY) and not parses(after[k])]
        m["py_not_parsing"] = bad_py
        m["getattr_forms"] = sum(after[k].decode("utf-8", "replace").count(GETATTR) -
                                 orig[k].decode("utf-8", "replace").count(GETATTR)
                                 for k in changed)
        m["long_lines"] = sum(new_long_lines(orig[k], after[k], limit)
                              for k in changed if k.endswith(PY))
        if do_compile:
            broke, ok, skipped = [], 0, 0
            for k in changed:
                if not k.endswith(CPP):
                    continue
                if k not in compiled_before:
                    compiled_before[k] = compiles(base / k, base, incs)[0]
                if not compiled_before[k]:
                    skipped += 1
                    continue
                good, why = compiles(dst / k, dst, incs)
                if good:
                    ok += 1
                else:
                    broke.append(f"{k}: {why}")
            m["cpp"] = {"compiled": ok, "broke": broke, "not_compiling_before": skipped}
        # the second run: zero changes is the bar
        second = anydev(python, ["fix", ".", *MODES[mode]], dst)
        again = source_files(dst)
        m["second_run_fixed"] = fixed_count(second.stderr)
        m["second_run_changed_files"] = sorted(k for k in again if after.get(k) != again[k])
        if do_tests and tests_before.get("ran"):
            # the tests run on the first run's output (the second changed nothing, or is counted)
            now = run_tests(repo, dst, tpy, deps_dir, work / repo / f"junit-{mode}.xml")
            before = tests_before["outcomes"]
            flips = sorted(t for t, o in now.get("outcomes", {}).items()
                           if o == "failed" and before.get(t) == "passed")
            m["tests"] = {"passed_before": sum(1 for o in before.values() if o == "passed"),
                          "passed_after": sum(1 for o in now.get("outcomes", {}).values()
                                              if o == "passed"),
                          "flips": flips}
        if sim_before.get("ran"):
            now = run_tests(repo, dst, tpy, deps_dir, work / repo / f"junit-{mode}-sim.xml",
                            sim=True)
            before = sim_before["outcomes"]
            m["sim"] = {"passed_before": sum(1 for o in before.values() if o == "passed"),
                        "passed_after": sum(1 for o in now.get("outcomes", {}).values()
                                            if o == "passed"),
                        "flips": sorted(t for t, o in now.get("outcomes", {}).items()
                                        if o == "failed" and before.get(t) == "passed")}
        res["modes"][mode] = m
    return res


def sim_cell(ms: dict) -> str:
    """The sim column: flips per mode and the tests that passed on sim before."""
    got = [ms[m].get("sim") for m in ms]
    if not any(got):
        return "n/a"
    before = next(g["passed_before"] for g in got if g)
    return "/".join(str(len(g["flips"])) if g else "-" for g in got) + f" ({before})"


def table(results: list[dict], modes: list[str]) -> str:
    head = ["repository", "findings"] + [f"fixed {m}" for m in modes] + \
        [f"2nd run {m}" for m in modes] + ["flips " + "/".join(modes),
                                           "getattr " + "/".join(modes),
                                           "long lines " + "/".join(modes),
                                           "C++ compiled/broke " + "/".join(modes),
                                           "tests passed before",
                                           "sim: flips " + "/".join(modes) + " (passed before)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        ms = r["modes"]

        def each(key, fmt=str):
            return "/".join(fmt(ms[m].get(key)) if m in ms else "-" for m in modes)

        def flips(m):
            t = ms.get(m, {}).get("tests")
            return str(len(t["flips"])) if t else "n/a"

        def cpp(m):
            c = ms.get(m, {}).get("cpp")
            return f"{c['compiled']}/{len(c['broke'])}" if c else "n/a"

        tb = r.get("tests_before", {})
        row = [r["repo"], str(r["findings"])] + \
            [str(ms[m]["fixed"]) if m in ms else "-" for m in modes] + \
            [f"{ms[m]['second_run_fixed']} ({len(ms[m]['second_run_changed_files'])} files)"
             if m in ms else "-" for m in modes] + \
            ["/".join(flips(m) for m in modes), each("getattr_forms"), each("long_lines"),
             "/".join(cpp(m) for m in modes),
             str(next((v["tests"]["passed_before"] for v in ms.values() if v.get("tests")),
                      "n/a") if tb.get("ran") else f"n/a ({tb.get('why', '')})"),
             sim_cell(ms)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", help="the folder holding one folder per repository")
    ap.add_argument("--repos", help="comma-separated names (default: all)")
    ap.add_argument("--modes", default="safe,2.13,unsafe")
    ap.add_argument("--work", default="/tmp/devset_check")
    ap.add_argument("--python", default=sys.executable,
                    help="the interpreter with anydev and torch installed")
    ap.add_argument("--test-python", metavar="PY",
                    help="the interpreter that runs the repositories' tests (default: --python), "
                         "for a repository that needs a newer Python than anydev's")
    ap.add_argument("--deps", metavar="DIR",
                    help="where the tests' dependencies are installed (default: WORK/deps)")
    ap.add_argument("--compile", action="store_true", help="compile the changed C++ files")
    ap.add_argument("--tests", action="store_true", help="run the repositories' CPU tests")
    ap.add_argument("--sim", action="store_true",
                    help="with --tests, run them again with anydev's simulated accelerator as "
                         "PyTorch's (`anydev run --accelerator sim`) and count its flips too")
    args = ap.parse_args()
    if args.sim and not args.tests:
        ap.error("--sim runs the tests again on sim: give --tests too")
    if not args.root or not Path(args.root).is_dir():
        print(f"devset_check: no development set at {args.root!r}; nothing to check")
        return 0
    root = Path(args.root).resolve()
    if os.sep in args.python:
        args.python = os.path.abspath(args.python)
    repos = sorted(p.name for p in root.iterdir() if p.is_dir())
    if args.repos:
        wanted = args.repos.split(",")
        repos = [r for r in repos if r in wanted]
    if not repos:
        print(f"devset_check: no repositories under {root}; nothing to check")
        return 0
    modes = [m for m in args.modes.split(",") if m]
    for m in modes:
        if m not in MODES:
            ap.error(f"unknown mode {m!r}; one of {', '.join(MODES)}")
    work = Path(args.work).resolve()
    if work == root or root in work.parents:
        ap.error("--work must not be inside the development set")
    work.mkdir(parents=True, exist_ok=True)
    deps_dir = Path(args.deps).resolve() if args.deps else work / "deps"
    test_python = os.path.abspath(args.test_python) if args.test_python and \
        os.sep in args.test_python else args.test_python
    if args.tests:
        install_deps(test_python or args.python, deps_dir, repos)
    incs = torch_includes(args.python) if args.compile else []
    results = []
    for repo in repos:
        print(f"devset_check: {repo} ...", file=sys.stderr, flush=True)
        r = check_repo(repo, root / repo, work, args.python, modes, args.compile, args.tests,
                       deps_dir, incs, args.sim, test_python)
        results.append(r)
        (work / "report.json").write_text(json.dumps(results, indent=1))
        for mode in modes:
            shutil.rmtree(work / repo / mode, ignore_errors=True) if os.environ.get(
                "DEVSET_CLEAN") else None
    print(table(results, modes))
    bad = [r["repo"] for r in results if "safe" in r["modes"] and (
        r["modes"]["safe"]["second_run_fixed"] or r["modes"]["safe"]["py_not_parsing"] or
        r["modes"]["safe"].get("tests", {}).get("flips"))]
    if bad:
        print(f"\ndevset_check: safe mode misses the bar in: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
