"""`anydev fix` on whole fixture projects, as a maintainer runs it: the project's
own tests pass on the real PyTorch before the fix and after it, for each target
torch, and the fixed tree is exactly the expected one.

tests/fixtures/projects/NAME/ is a project (a pyproject.toml declaring its
torch, a package under src/, its own tests/); tests/fixtures/projects/
NAME.fixed/TARGET/ holds each file the fix changes, as it must be after
`anydev fix [--target-torch TARGET] .` ("declared": no option, the target
comes from the pyproject.toml). Regenerate after a deliberate change with
ANYDEV_UPDATE_FIXTURES=1 and review the diff.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fix_default import newest_default_target  # noqa: F401 (autouse)

pytest.importorskip("torch")

PROJECTS = Path(__file__).resolve().parents[2] / "fixtures" / "projects"
UPDATE = os.environ.get("ANYDEV_UPDATE_FIXTURES") == "1"
#: (project, target, extra fix options)
CASES = [
    ("trainer", "declared", []),
    ("trainer", "2.6", []),
    ("trainer", "2.13", []),
]


def _run_project_tests(root: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root / "src"), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-W", "ignore::DeprecationWarning", "-W", "ignore::FutureWarning",
                           "tests"], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300)


def _fix(root: Path, target: str, extra: list[str]) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "anydev", "fix", ".", *extra]
    if target != "declared":
        args += ["--target-torch", target]
    return subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=300)


def _files(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def tests_before():
    """The projects' own tests pass on the unfixed code (once per project)."""
    done = {}
    for name in {c[0] for c in CASES}:
        r = _run_project_tests(PROJECTS / name)
        done[name] = r
    return done


@pytest.mark.parametrize("name,target,extra", CASES,
                         ids=["trainer-declared", "trainer-2.6", "trainer-2.13"])
def test_fixed_project_keeps_passing_its_tests(tmp_path, tests_before, name, target, extra):
    before = tests_before[name]
    assert before.returncode == 0, f"{name}'s own tests fail before the fix:\n{before.stdout}"
    root = tmp_path / name
    shutil.copytree(PROJECTS / name, root, ignore=shutil.ignore_patterns("__pycache__"))
    fixed = _fix(root, target, extra)
    assert fixed.returncode in (0, 1), fixed.stderr
    assert "Traceback" not in fixed.stderr
    want_dir = PROJECTS / f"{name}.fixed" / target
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
    want = {rel: p for rel, p in _files(want_dir).items() if rel != "fix.stderr"}
    assert sorted(changed) == sorted(want), "the fix changed other files than expected"
    for rel, p in want.items():
        assert now[rel].read_bytes() == p.read_bytes(), f"{rel} differs from {p}"
    assert fixed.stderr.replace(str(root), "PROJECT") == (want_dir / "fix.stderr").read_text()
    after = _run_project_tests(root)
    assert after.returncode == 0, f"{name}'s own tests fail after the fix:\n{after.stdout}"
    # running it again changes nothing
    again = _fix(root, target, extra)
    assert _files(root).keys() == now.keys()
    assert all(now[rel].read_bytes() == p.read_bytes() for rel, p in _files(root).items()), \
        again.stderr
