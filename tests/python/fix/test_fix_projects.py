"""`anydev fix` on whole fixture projects, as a maintainer runs it: the project's
own tests pass on the real PyTorch before the fix and after it, for each target
torch, and the fixed tree is exactly the expected one.

tests/fixtures/projects/NAME/ is a project (a pyproject.toml declaring its
torch, a package under src/, its own tests/); tests/fixtures/projects/
NAME.fixed/TARGET/ holds each file the fix changes, as it must be after
`anydev fix [--target-torch TARGET] .` ("declared": no option, the target
comes from the pyproject.toml). Regenerate after a deliberate change with
ANYDEV_UPDATE_FIXTURES=1 and review the diff.

The project's tests also run on a non-CUDA accelerator, before the fix and after
it: `anydev run --torch --accelerator sim -m pytest` (sim inside the real
PyTorch, docs/torch.md). No test that passes there before the fix may fail after
it; NAME.fixed/TARGET/sim.txt records each test's outcome before and after (the
ones that fail before take a CUDA-only path) and the CUDA-only call sites the
tests reach after the fix, as the run's report names them. A run's outcome
depends only on the tree, so each distinct tree (the unfixed one; a fix that
changed nothing; two targets that fix alike) is run once.

The fixed files must read as a maintainer would write them: changed lines within
the project's line length, no dead `"cuda"` fallback under a check that an
accelerator is there, no guarded block that only repeats the statement before
it. KNOWN_UNREADABLE lists what the fixer still writes otherwise (each a fixer
bug, with its input), so that the test fails when it changes either way.
"""

from __future__ import annotations

import ast
import filecmp
import hashlib
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from anydev._common import toml
from fix_default import newest_default_target  # noqa: F401 (autouse)

pytest.importorskip("torch")

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
UPDATE = os.environ.get("ANYDEV_UPDATE_FIXTURES") == "1"
#: (project, target, extra fix options)
CASES = [
    ("trainer", "declared", []),
    ("trainer", "2.6", []),
    ("trainer", "2.13", []),
    # a training package written against torch.cuda (torch>=2.1 declared)
    ("trainkit", "declared", []),
    ("trainkit", "2.13", []),
    ("trainkit", "2.13", ["--unsafe-fixes"]),
]
IDS = ["trainer-declared", "trainer-2.6", "trainer-2.13", "trainkit-declared", "trainkit-2.13",
       "trainkit-2.13-unsafe"]


def _want_dir(name: str, target: str, extra: list[str]) -> Path:
    return PROJECTS / f"{name}.fixed" / (target + ("-unsafe" if "--unsafe-fixes" in extra else ""))


def _run_project_tests(root: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root / "src"), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-W", "ignore::DeprecationWarning", "-W", "ignore::FutureWarning",
                           "tests"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


class SimRun:
    """The project's tests on sim: each test's outcome and the CUDA-only call
    sites the run's report names (path relative to the project, line, legacy,
    rule)."""

    def __init__(self, root: Path, tmp: Path):
        junit, report = tmp / "junit.xml", tmp / "report.json"
        env = dict(os.environ, PYTHONPATH=str(root / "src"), PYTHONDONTWRITEBYTECODE="1")
        env.pop("ANYDEV_SIM_DEVICES", None)
        self.proc = subprocess.run(
            [sys.executable, "-m", "anydev", "run", "--torch", "--accelerator", "sim",
             "--report", str(report), "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "-W", "ignore::DeprecationWarning", "-W", "ignore::FutureWarning",
             f"--junitxml={junit}", "tests"],
            cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False)
        assert self.proc.returncode in (0, 1), self.proc.stdout + self.proc.stderr
        self.outcomes: dict[str, str] = {}
        for case in ET.parse(junit).iter("testcase"):
            tid = f"{case.get('classname')}::{case.get('name')}"
            kinds = {child.tag for child in case}
            self.outcomes[tid] = ("failed" if kinds & {"failure", "error"} else
                                  "skipped" if "skipped" in kinds else "passed")
        calls = json.loads(report.read_text())["calls"]
        self.cuda_only = sorted(
            (os.path.relpath(c["file"], root), c["line"], c["legacy"], c["rule"])
            for c in calls if c.get("cuda_only"))


def _sim_text(before: SimRun, after: SimRun) -> str:
    lines = ["# The project's tests on sim (`anydev run --torch --accelerator sim -m pytest`),",
             "# each test's outcome before -> after the fix, and the CUDA-only call sites",
             "# (asked for CUDA while sim was the accelerator) the tests reach before and after.",
             ""]
    for tid in sorted(set(before.outcomes) | set(after.outcomes)):
        lines.append(f"{tid}: {before.outcomes.get(tid, 'absent')} -> "
                     f"{after.outcomes.get(tid, 'absent')}")
    for when, run in (("before", before), ("after", after)):
        lines += ["", f"CUDA-only call sites {when}: {len(run.cuda_only)}"]
        lines += [f"  {f}:{n}  {legacy}  [{rule}]" for f, n, legacy, rule in run.cuda_only]
    return "\n".join(lines) + "\n"


def _fix(root: Path, target: str, extra: list[str]) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "anydev", "fix", ".", *extra]
    if target != "declared":
        args += ["--target-torch", target]
    return subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=300,
                          check=False)


def _files(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def _tree_key(root: Path) -> str:
    """The tree's content: the files, their paths and bytes."""
    h = hashlib.sha256()
    for rel, p in _files(root).items():
        h.update(rel.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


@pytest.fixture(scope="module")
def project_tests(tmp_path_factory):
    """The project's own tests on the CPU and on sim, for a tree (a copy, run
    once per distinct content: the results are a function of it)."""
    done: dict[str, tuple[subprocess.CompletedProcess, SimRun]] = {}

    def run(root: Path) -> tuple[subprocess.CompletedProcess, SimRun]:
        key = _tree_key(root)
        if key not in done:
            done[key] = (_run_project_tests(root),
                         SimRun(root, tmp_path_factory.mktemp(f"{root.name}-sim")))
        return done[key]

    return run


@pytest.fixture(scope="module")
def tests_before(tmp_path_factory, project_tests):
    """The projects' own tests on the unfixed code: on the CPU, and on sim."""
    done = {}
    for name in sorted({c[0] for c in CASES}):
        root = tmp_path_factory.mktemp(f"{name}-before") / name
        shutil.copytree(PROJECTS / name, root, ignore=shutil.ignore_patterns("__pycache__"))
        done[name] = project_tests(root)
    return done


@pytest.mark.parametrize("name,target,extra", CASES, ids=IDS)
def test_fixed_project_keeps_passing_its_tests(tmp_path, tests_before, project_tests, name,
                                               target, extra):
    before, sim_before = tests_before[name]
    assert before.returncode == 0, f"{name}'s own tests fail before the fix:\n{before.stdout}"
    root = tmp_path / name
    shutil.copytree(PROJECTS / name, root, ignore=shutil.ignore_patterns("__pycache__"))
    fixed = _fix(root, target, extra)
    assert fixed.returncode in (0, 1), fixed.stderr
    assert "Traceback" not in fixed.stderr
    want_dir = _want_dir(name, target, extra)
    orig, now = _files(PROJECTS / name), _files(root)
    changed = {rel for rel, p in now.items() if rel not in orig or not filecmp.cmp(p, orig[rel], shallow=False)}
    if UPDATE:
        shutil.rmtree(want_dir, ignore_errors=True)
        for rel in changed:
            dst = want_dir / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(now[rel], dst)
        (want_dir / "fix.stderr").parent.mkdir(parents=True, exist_ok=True)
        (want_dir / "fix.stderr").write_text(fixed.stderr.replace(str(root), "PROJECT"))
    want = {rel: p for rel, p in _files(want_dir).items() if rel not in ("fix.stderr", "sim.txt")}
    assert sorted(changed) == sorted(want), "the fix changed other files than expected"
    for rel, p in want.items():
        assert now[rel].read_bytes() == p.read_bytes(), f"{rel} differs from {p}"
    assert fixed.stderr.replace(str(root), "PROJECT") == (want_dir / "fix.stderr").read_text()
    after, sim_after = project_tests(root)
    assert after.returncode == 0, f"{name}'s own tests fail after the fix:\n{after.stdout}"
    # On sim: no test that passed before fails after the fix.
    broken = [t for t, o in sim_before.outcomes.items()
              if o == "passed" and sim_after.outcomes.get(t) != "passed"]
    assert not broken, (f"passed on sim before the fix, not after: {broken}\n"
                        f"{sim_after.proc.stdout[-3000:]}")
    text = _sim_text(sim_before, sim_after)
    if UPDATE:
        (want_dir / "sim.txt").write_text(text)
    assert text == (want_dir / "sim.txt").read_text()
    # running it again changes nothing
    again = _fix(root, target, extra)
    assert _files(root).keys() == now.keys()
    assert all(now[rel].read_bytes() == p.read_bytes() for rel, p in _files(root).items()), \
        again.stderr


# --- the fixed files read as a maintainer would write them ----------------------------------

#: What the fixer still writes that a maintainer would not, by case and file: each
#: is a fixer bug (python/anydev/_migrate/fix/), reported with its input. When the
#: fixer changes, regenerate the fixtures and update this list to what they hold.
KNOWN_UNREADABLE: dict[str, list[str]] = {
    # (none left: trainkit's guarded "cuda" fallback and its repeated seed block are
    # gone, Notes [No fallback under a check] and [A block that repeats])
}


def _line_length(project: Path) -> int:
    """The project's configured line length: [tool.ruff], else [tool.black],
    else ruff's and black's default, 88."""
    conf = toml.loads((project / "pyproject.toml").read_text()).get("tool", {})
    for tool in ("ruff", "black"):
        n = conf.get(tool, {}).get("line-length")
        if isinstance(n, int):
            return n
    return 88


_FALLBACK = 'getattr(torch.accelerator.current_accelerator(), "type", "cuda")'
_FALLBACK_TREE = ast.dump(ast.parse(_FALLBACK, mode="eval").body)


def _is_availability_check(test: ast.expr) -> bool:
    """`torch.accelerator.is_available()`, alone or in an `and`: the body
    runs only where there is an accelerator."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_is_availability_check(v) for v in test.values)
    return isinstance(test, ast.Call) and ast.unparse(test.func) == "torch.accelerator.is_available"


def unreadable(rel: str, fixed: str, original: str, limit: int) -> list[str]:
    """What in the fixed file a maintainer would not write (see the module's
    docstring), on the lines the fix changed."""
    old = set(original.splitlines())
    out = [f"{rel}:{i}: {len(line)} columns, over the project's {limit}"
           for i, line in enumerate(fixed.splitlines(), 1)
           if line not in old and len(line) > limit]
    tree = ast.parse(fixed)
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_availability_check(node.test):
            for inner in node.body:
                for sub in ast.walk(inner):
                    if isinstance(sub, ast.Call) and ast.dump(sub) == _FALLBACK_TREE:
                        out.append(f"{rel}:{sub.lineno}: a \"cuda\" fallback for no accelerator "
                                   f"under a check that there is one (line {node.lineno})")
        for body in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")):
            if not isinstance(body, list):
                continue
            for before, stmt in zip(body, body[1:]):
                if (isinstance(stmt, ast.If) and not stmt.orelse
                        and all(ast.dump(s) == ast.dump(before) for s in stmt.body)):
                    out.append(f"{rel}:{stmt.lineno}: a guarded block that only repeats "
                               f"line {before.lineno}")
    return sorted(out)


@pytest.mark.parametrize("name,target,extra", CASES, ids=IDS)
def test_fixed_files_read_as_a_maintainer_would_write_them(name, target, extra):
    want_dir = _want_dir(name, target, extra)
    limit = _line_length(PROJECTS / name)
    found = []
    for rel, p in _files(want_dir).items():
        if rel.endswith(".py"):
            found += unreadable(rel, p.read_text(), (PROJECTS / name / rel).read_text(), limit)
    case = IDS[CASES.index((name, target, extra))]
    assert found == KNOWN_UNREADABLE.get(case, []), (
        "the fixed files read differently from what KNOWN_UNREADABLE says: a fixer change? "
        "Review the fixed files and update the list")


def test_the_readability_check_finds_what_it_names():
    original = "import torch\n\ndef f(seed):\n    torch.manual_seed(seed)\n"
    fixed = ("import torch\n\ndef f(seed):\n    torch.manual_seed(seed)\n"
             "    if torch.accelerator.is_available():\n        torch.manual_seed(seed)\n"
             "    if torch.accelerator.is_available() and seed:\n"
             f"        d = torch.device({_FALLBACK}, 0)\n")
    assert unreadable("m.py", fixed, original, 100) == [
        "m.py:5: a guarded block that only repeats line 4",
        "m.py:8: a \"cuda\" fallback for no accelerator under a check that there is one (line 7)",
    ]
    assert unreadable("m.py", fixed, original, 40) == [
        "m.py:5: a guarded block that only repeats line 4",
        "m.py:7: 49 columns, over the project's 40",
        "m.py:8: 93 columns, over the project's 40",
        "m.py:8: a \"cuda\" fallback for no accelerator under a check that there is one (line 7)",
    ]
    # a line the project already had is not the fix's; a fallback outside a check is right
    # (autocast disables itself where there is no accelerator: AD904's note)
    assert unreadable("m.py", fixed, fixed, 40) == [
        "m.py:5: a guarded block that only repeats line 4",
        "m.py:8: a \"cuda\" fallback for no accelerator under a check that there is one (line 7)"]
    assert unreadable("m.py", f"import torch\nwith torch.autocast({_FALLBACK}):\n    pass\n",
                      "", 100) == []
    assert _line_length(PROJECTS / "trainkit") == 100 and _line_length(PROJECTS / "trainer") == 88
