"""The pytest plugin (issue 32; anydev/_torch/pytest_plugin.py), run as a user
runs it: real pytest sessions in subprocesses on a small fixture project whose
[tool.anydev] names its package, on the real PyTorch. It is off unless asked;
`-p anydev` (the pytest11 entry point's name) or `--anydev` turns it on; it
names the tests that reached legacy calls, writes the runtime report, and with
--anydev-strict fails the tests that reach a call whose line is not in the
baseline. And `import anydev.torch` in a conftest.py reads [tool.anydev]."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from conftest import clean_env

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[3]
LIB = textwrap.dedent("""\
    import torch


    def old():
        return torch.cuda.device_count()
    """)
NEW = textwrap.dedent("""\


    def new():
        return torch.cuda.is_available()
    """)
TESTS = textwrap.dedent("""\
    from mylib import new, old


    def test_old():
        assert old() >= 0


    def test_new():
        assert new() in (True, False)


    def test_clean():
        assert 1 + 1 == 2
    """)


def _entry_point() -> bool:
    return any(ep.name == "anydev" for ep in metadata.entry_points(group="pytest11"))


# `-p anydev` is the installed package's entry point; a source tree that is not
# installed names the module (docs/torch.md).
PLUGIN = "anydev" if _entry_point() else "anydev._torch.pytest_plugin"


@pytest.fixture
def proj(tmp_path):
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text(LIB)
    (tmp_path / "pyproject.toml").write_text('[tool.anydev]\npackages = ["mylib"]\n'
                                             'baseline = "anydev-baseline.json"\n')
    # the accepted legacy code: old() alone, recorded before new() is written
    p = subprocess.run([sys.executable, "-m", "anydev", "scan", "--write-baseline",
                        "anydev-baseline.json", "mylib"], cwd=tmp_path, env=clean_env(),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    (tmp_path / "mylib" / "__init__.py").write_text(LIB + NEW)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_lib.py").write_text(TESTS)
    return tmp_path


def pytest_run(proj: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    # pytest-asyncio (the server tests') is in this venv, not the project's:
    # under -W error its warning about an unset loop scope would fail the run
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "-p", "no:asyncio", "-q", "-rA", *args, "tests"], cwd=proj, env=clean_env(env),
                          capture_output=True, text=True, timeout=300)


def test_off_unless_asked(proj):
    p = pytest_run(proj)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "anydev" not in p.stdout and not (proj / "anydev-report.json").exists()


def test_names_the_tests_and_writes_the_report(proj):
    p = pytest_run(proj, "-p", PLUGIN)
    out = p.stdout
    assert p.returncode == 0, out + p.stderr
    summary = out[out.index("anydev: legacy calls reached"):out.index("short test summary")]
    assert "tests/test_lib.py::test_old: 1 legacy call" in summary
    assert "    mylib/__init__.py:5: AD102 torch.cuda.device_count -> " \
           "torch.accelerator.device_count (1x)" in summary
    assert "tests/test_lib.py::test_new: 1 legacy call" in summary
    assert "mylib/__init__.py:9: AD101 torch.cuda.is_available" in summary
    assert "test_clean" not in summary
    assert "2 tests of 3 reached legacy calls" in summary
    report = json.loads((proj / "anydev-report.json").read_text())
    assert report["format"] == "anydev-report"
    sites = {(os.path.basename(c["file"]), c["line"], c["rule"]) for c in report["calls"]}
    assert {("__init__.py", 5, "AD102"), ("__init__.py", 9, "AD101")} <= sites
    assert f"runtime report: {proj / 'anydev-report.json'}" in out
    # the session's header says what is counted, and in which scope
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", PLUGIN,
                        "tests"], cwd=proj, env=clean_env(), capture_output=True, text=True,
                       timeout=300)
    assert f"anydev: legacy calls counted (observe); scope: {proj / 'pyproject.toml'}: " \
           "[tool.anydev] packages" in p.stdout, p.stdout


def test_strict_fails_the_tests_that_reach_a_call_not_in_the_baseline(proj):
    p = pytest_run(proj, "--anydev-strict", "-p", PLUGIN, "--anydev-report", "r.json")
    out = p.stdout
    assert p.returncode == 1, out + p.stderr
    assert "PASSED tests/test_lib.py::test_old" in out
    assert "PASSED tests/test_lib.py::test_clean" in out
    assert "FAILED tests/test_lib.py::test_new" in out
    assert "anydev: this test reached legacy calls that are not in the baseline " \
           "(--anydev-strict):" in out
    assert "  mylib/__init__.py:9: AD101 torch.cuda.is_available -> " \
           "torch.accelerator.is_available" in out
    assert (proj / "r.json").exists()
    # once the baseline accepts it, the suite passes
    subprocess.run([sys.executable, "-m", "anydev", "scan", "--write-baseline",
                    "anydev-baseline.json", "mylib"], cwd=proj, env=clean_env(), check=True,
                   capture_output=True, timeout=60)
    assert pytest_run(proj, "--anydev-strict", "-p", PLUGIN).returncode == 0
    # a missing baseline is a usage error, not a pass
    p = pytest_run(proj, "--anydev-strict", "-p", PLUGIN, "--anydev-baseline", "nope.json")
    assert p.returncode == 4 and "the baseline nope.json does not exist" in p.stderr


def test_on_from_the_configuration_and_off_by_option(proj):
    (proj / "pyproject.toml").write_text('[tool.anydev]\npackages = ["mylib"]\n'
                                         'baseline = "anydev-baseline.json"\n'
                                         'pytest-strict = true\npytest-report = "out/r.json"\n')
    (proj / "out").mkdir()
    p = pytest_run(proj, "-p", PLUGIN)
    assert p.returncode == 1 and "FAILED tests/test_lib.py::test_new" in p.stdout
    assert (proj / "out" / "r.json").exists()
    p = pytest_run(proj, "-p", PLUGIN, "--no-anydev")
    assert p.returncode == 0 and "anydev: legacy" not in p.stdout
    # a bad value: a usage error when asked by option, a warning (plugin off) when not
    (proj / "pyproject.toml").write_text('[tool.anydev]\npytest = "yes"\n')
    p = pytest_run(proj, "--anydev", "-p", PLUGIN)
    assert p.returncode == 4 and "`pytest` must be true or false" in p.stderr
    p = pytest_run(proj, "-p", "no:" + PLUGIN) if PLUGIN == "anydev" else pytest_run(proj)
    assert p.returncode == 0


@pytest.mark.skipif(not _entry_point(), reason="anydev is not installed with its metadata "
                                               "(running from the source tree)")
def test_the_entry_point_loads_it_with_autoload_off(proj):
    p = pytest_run(proj, "--anydev")
    assert p.returncode == 0 and "2 tests of 3 reached legacy calls" in p.stdout
    p = pytest_run(proj, "-p", "anydev", env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert p.returncode == 0 and "2 tests of 3 reached legacy calls" in p.stdout
    eps = [ep for ep in metadata.entry_points(group="pytest11") if ep.name == "anydev"]
    assert eps[0].value == "anydev._torch.pytest_plugin"


def test_the_entry_point_is_declared():
    import tomllib

    doc = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert doc["project"]["entry-points"]["pytest11"] == {"anydev": "anydev._torch.pytest_plugin"}


def test_loading_the_plugin_imports_neither_torch_nor_the_runtime():
    code = ("import sys, anydev._torch.pytest_plugin; "
            "print(sorted(m for m in ('torch', 'anydev._C', 'anydev._torch.adapter') "
            "if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], env=clean_env(), capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stderr


def test_import_anydev_torch_in_a_conftest_reads_tool_anydev(proj):
    # issue 32: pytest's __main__ is no project's, and the scope from the
    # conftest's project was ignored: no in-scope call warned
    (proj / "tests" / "conftest.py").write_text("import anydev.torch  # noqa: F401\n")
    p = pytest_run(proj, "-W", "error::UserWarning")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "LegacyAPIWarning" in p.stdout and "torch.cuda.device_count" in p.stdout
    # without packages or paths there is a warning that says so
    (proj / "pyproject.toml").write_text("[tool.anydev]\n")
    p = pytest_run(proj)
    assert "no [tool.anydev] packages or paths found" in p.stdout + p.stderr
