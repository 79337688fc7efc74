"""A generated repository mixing API calls, device literals and idioms
(tests/gen_literal_repo.py), fixed with ``--unsafe-fixes`` for targets 2.1 and
2.13: its own tests pass on the real torch 2.13 CPU build before and after the
fix, and the 2.1-target output (which needs no newer torch than the project
declares, 1.13) on Debian's torch 1.13 too, where /usr/bin/python3 has it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the generated project's tests need PyTorch")

from anydev._compat import table as _compat_table  # noqa: E402
from anydev._migrate import torch_versions as _versions  # noqa: E402
from anydev.fix import fix_paths  # noqa: E402
from fix_default import newest_default_target  # noqa: F401 (autouse)

ROOT = Path(__file__).resolve().parents[3]
GEN = ROOT / "tests" / "gen_literal_repo.py"
OLD_PYTHON = "/usr/bin/python3"
MODULES = 3


def _env() -> dict:
    # the project's tests need torch only: no PYTHONPATH that could bring another build's
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def _run_tests(repo: Path, python: str = sys.executable) -> subprocess.CompletedProcess:
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"] \
        if python == sys.executable else [python, "run_tests.py"]
    return subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=600, env=_env())


def _old_torch() -> bool:
    if not os.path.exists(OLD_PYTHON):
        return False
    r = subprocess.run([OLD_PYTHON, "-c", "import torch"], capture_output=True, env=_env())
    return r.returncode == 0


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "repo"
    subprocess.run([sys.executable, str(GEN), "--out", str(out), "--modules", str(MODULES)],
                   check=True)
    return out


def _fix(repo: Path, dest: Path, target: str, monkeypatch):
    shutil.copytree(repo, dest)
    monkeypatch.chdir(dest)
    result = fix_paths(["."], unsafe=True, target_torch=target)
    monkeypatch.chdir(ROOT)
    return result


def _family(code: str) -> str:
    row = _compat_table.ROWS_BY_CODE.get(code)
    return "literal" if row is not None and row.status == "literal" else "api"


def test_generated_tests_pass_before(repo):
    r = _run_tests(repo)
    assert r.returncode == 0, r.stdout + r.stderr
    if _old_torch():
        r = _run_tests(repo, OLD_PYTHON)
        assert r.returncode == 0, r.stdout + r.stderr


def test_target_2_13_migrates_the_literals_and_the_tests_pass(repo, tmp_path, monkeypatch):
    result = _fix(repo, tmp_path / "r", "2.13", monkeypatch)
    applied = Counter(_family(f.rule) for fr in result.files for f in fr.applied)
    left = [(f, why) for f, why in result.remaining]
    # per module: the units without an availability check migrate (6 literal/idiom
    # findings, the "cuda" of torch.amp.autocast("cuda", ...), which AD313's template
    # writes, in a further round); each test module patches torch.cuda.is_available
    # (`test_pretend_no_gpu`) while the CUDA backend (a device home) and the `# noqa`
    # unit keep some of its calls, so the patch cannot move and no call of it does:
    # the units with a check stay (Note [Mock targets]); `checks_N(x)` cannot show
    # that its `x` is a tensor (Note [Receivers]), so its `.is_cuda` and
    # `.device.type` stay. The rest is the device home and the `device=` of the
    # user's own config.
    assert applied["literal"] == 4 * MODULES, applied
    assert result.later == MODULES
    for f, why in left:
        assert ("named for cuda" in why or "stays device-specific" in why
                or why.startswith("not a device: ") or "were not rewritten" in why
                or "a test patches torch.cuda.is_available" in why
                or why.startswith("cannot tell that `x")), (f, why)
    # the generic autocast of the unguarded `legacy_amp` falls back to "cuda" without an
    # accelerator, so it disables itself on this CPU-only machine as it did before
    r = _run_tests(tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    text = (tmp_path / "r" / "genpkg" / "mod_0.py").read_text()
    assert "torch.cuda.is_available()" in text.split("def kept_by_noqa_0")[0]
    assert "torch.cuda" not in text.split("def kept_by_noqa_0")[0].replace(
        "torch.cuda.is_available()", "")
    assert 'mock.patch("torch.cuda.is_available"' in \
        (tmp_path / "r" / "tests" / "test_mod_0.py").read_text()
    assert 'x = x.cuda()  # noqa: AD907' in text and "    if torch.cuda.is_available():\n" \
        "        x = x.cuda()  # noqa" in text
    assert result.needs_torch == "2.8"


def test_target_2_1_leaves_the_literals_and_runs_on_torch_1_13(repo, tmp_path, monkeypatch):
    result = _fix(repo, tmp_path / "r", "2.1", monkeypatch)
    for fr in result.files:
        assert not [f for f in fr.applied if _family(f.rule) == "literal"], fr.path
    for f, why in result.remaining:
        if _family(f.rule) == "literal" and "named for cuda" not in why:
            assert "(target 2.1)" in why, (f, why)
    # the API rewrites the target allows are made (torch.cuda.amp.autocast)
    assert any(f.rule == "AD313" for fr in result.files for f in fr.applied)
    needs = result.needs_torch
    assert needs is not None and _versions.parse_version(needs) <= (2, 1)
    r = _run_tests(tmp_path / "r")
    assert r.returncode == 0, r.stdout + r.stderr
    if not _old_torch():
        pytest.skip(f"{OLD_PYTHON} has no torch: the 2.1-target output ran on 2.13 only")
    assert _versions.parse_version(needs) <= (1, 13)  # the project declares torch>=1.13
    r = _run_tests(tmp_path / "r", OLD_PYTHON)
    assert r.returncode == 0, r.stdout + r.stderr
