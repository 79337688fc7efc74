"""Suppressions (issue 32): a file-level `# anydev: noqa` (and `# anydev: noqa:
AD1xx`) on its own line, AD001 (unused `# noqa: ADxxx`, as ruff's RUF100),
and `# noqa: AD103` surviving the real ruff (from PyPI) with `lint.external =
["AD"]` in ruff's configuration, as docs/configuration.md says."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import run_cli

SRC = textwrap.dedent("""\
    import torch
    torch.cuda.synchronize()
    x = torch.cuda.current_device()
    """)


def rules(*argv: str) -> list[tuple[str, int, str]]:
    rc, out, err = run_cli("scan", "--format", "json", *argv)
    assert rc in (0, 1), err
    return [(f["path"], f["line"], f["rule"]) for f in json.loads(out)["findings"]]


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("directive, left", [
    ("# anydev: noqa", []),
    ("# ANYDEV: NOQA", []),
    ("#anydev:noqa", []),
    ("# anydev: noqa: AD107", [3]),
    ("# anydev: noqa: AD1", []),
    ("# anydev: noqa: AD2, AD103", [2]),
    ("    # anydev: noqa", []),              # indented, still alone on its line
    ("x = 1  # anydev: noqa", [2, 3]),       # after code: no directive
    ("# anydev: noqa:", [2, 3]),             # names no code: exempts nothing
    ("# anydev: noqa is what we use", [2, 3]),
    ('s = "# anydev: noqa"', [2, 3]),        # in a string
])
def test_file_level_noqa(project, directive, left):
    (project / "m.py").write_text(SRC + directive + "\n")
    assert [line for _p, line, _r in rules()] == left
    # the same through stdin and the fixer's rescans (scan_source)
    from anydev import scan

    found, _ = scan.scan_source((SRC + directive + "\n").encode(), "m.py")
    assert [f.line for f in found] == left


def test_file_level_noqa_in_a_tree_and_its_cost(project, monkeypatch):
    # Note [File-level noqa]: the scanner sends a file with findings whose bytes
    # mention anydev to Python's reading; no other file is read again (each Python
    # file with findings was)
    from anydev._migrate import noqa as _noqa

    (project / "a.py").write_text("# anydev: noqa\n" + SRC)
    (project / "b.py").write_text(SRC)
    (project / "c.py").write_text("import torch\n")
    (project / "d.py").write_text("# ANYDEV: NOQA\n" + SRC)
    (project / "e.py").write_text("# see anydev's docs\n" + SRC)
    read = []
    real = _noqa.read_file
    monkeypatch.setattr(_noqa, "read_file", lambda p: read.append(p) or real(p))
    assert {p for p, _l, _r in rules()} == {"b.py", "e.py"}
    assert sorted(read) == ["a.py", "d.py", "e.py"]


def test_unused_noqa_is_ad001(project):
    (project / "m.py").write_text(textwrap.dedent("""\
        import torch
        torch.cuda.synchronize()  # noqa: AD107
        x = torch.accelerator.current_device_index()  # noqa: AD103
        y = torch.cuda.current_device()  # noqa: AD107, E501
        z = 1  # noqa: E501
        w = 2  # noqa
        v = 3  # type: ignore  # noqa: AD9
        torch.cuda.empty_cache()  # noqa: AD2, AD107
        """))
    # opt-in: off by default
    assert rules() == [("m.py", 4, "AD103")]
    got = rules("--extend-select", "AD001")
    assert got == [("m.py", 3, "AD001"), ("m.py", 4, "AD103"), ("m.py", 4, "AD001"),
                   ("m.py", 7, "AD001"), ("m.py", 8, "AD001")]
    rc, out, _ = run_cli("scan", "--extend-select", "AD001", "m.py")
    assert "m.py:3:47: AD001 Unused `noqa` directive (unused: `AD103`); remove it" in out
    assert "m.py:4:34: AD001 Unused `noqa` directive (unused: `AD107`); remove the code" in out
    assert "m.py:8:27: AD001 Unused `noqa` directive (unused: `AD107`); remove the code" in out
    # a code whose rules are all off here cannot be told used: not reported
    assert ("m.py", 8, "AD001") not in rules("--select", "AD001,AD2")
    assert ("m.py", 3, "AD001") not in rules("--select", "AD001,AD2")
    # the configuration, per-file-ignores and the baseline apply to it as to any rule
    (project / "pyproject.toml").write_text('[tool.anydev]\nextend-select = ["AD001"]\n'
                                            'per-file-ignores = { "m.py" = ["AD001"] }\n')
    assert rules() == [("m.py", 4, "AD103")]
    (project / "pyproject.toml").write_text('[tool.anydev]\nextend-select = ["AD001"]\n')
    assert run_cli("scan", "--write-baseline", "b.json")[0] == 0
    assert rules("--baseline", "b.json") == []
    # its JSON record, and no edits: it has no automatic fix
    rc, out, _ = run_cli("scan", "--format", "json", "--show-fixes")
    rec = next(f for f in json.loads(out)["findings"] if f["rule"] == "AD001")
    assert rec["kind"] == "directive" and rec["symbol"] == "noqa" and rec["edits"] is None
    # the fixer leaves it to the user
    rc, _, err = run_cli("fix", "--diff")
    assert "AD001" not in err


def test_unused_noqa_of_a_file_without_findings(project):
    (project / "clean.py").write_text("import torch\nx = 1  # noqa: AD107\n")
    assert rules("--extend-select", "AD001") == [("clean.py", 2, "AD001")]
    (project / "other.toml").write_text("")
    assert rules("--extend-select", "AD001", "--config", "other.toml") == [
        ("clean.py", 2, "AD001")]


def _ruff() -> str:
    exe = shutil.which("ruff") or str(__import__("pathlib").Path(sys.executable).parent / "ruff")
    try:
        subprocess.run([exe, "--version"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("ruff is not installed (tools/requirements-dev.txt)")
    return exe


def test_noqa_survives_ruff_with_lint_external(project):
    ruff = _ruff()
    src = textwrap.dedent("""\
        import torch
        x = torch.cuda.current_device()  # noqa: F401, AD103
        torch.cuda.synchronize()  # noqa: AD107
        """)

    def ruff_fix() -> str:
        # RUF100 (unused-noqa) removes the unused F401, and the directive with
        # it; RUF102 (invalid-rule-code) removes the codes ruff does not know
        p = subprocess.run([ruff, "check", "--fix", "--select", "RUF100,RUF102", "--no-cache",
                            "m.py"], capture_output=True, text=True, timeout=60)
        assert p.returncode in (0, 1), p.stderr
        return (project / "m.py").read_text()

    # without it, ruff takes anydev's codes for invalid or unused ones
    (project / "m.py").write_text(src)
    (project / "ruff.toml").write_text("")
    assert "noqa" not in ruff_fix()
    assert rules() == [("m.py", 2, "AD103"), ("m.py", 3, "AD107")]  # the findings are back
    # with lint.external, ruff keeps them (and still removes its own unused F401)
    (project / "m.py").write_text(src)
    (project / "ruff.toml").write_text('[lint]\nexternal = ["AD"]\n')
    fixed = ruff_fix()
    assert "current_device()  # noqa: AD103\n" in fixed
    assert "torch.cuda.synchronize()  # noqa: AD107\n" in fixed
    assert rules() == [] and rules("--extend-select", "AD001") == []
    # the same in pyproject.toml's [tool.ruff.lint]
    (project / "m.py").write_text(src)
    (project / "ruff.toml").unlink()
    (project / "pyproject.toml").write_text('[tool.ruff.lint]\nexternal = ["AD"]\n')
    assert "# noqa: AD107" in ruff_fix() and rules() == []
