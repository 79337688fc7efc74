"""`anydev scan` on Jupyter notebooks (tests/fixtures/notebooks/): their code
cells are scanned as one Python source, IPython syntax left out, and the
findings reported with their cell (anydev/_migrate/notebook.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import run_cli

from anydev import scan
from anydev._migrate import notebook as nb

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "notebooks")


def fixture(name: str) -> str:
    return os.path.join(FIXTURES, name)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A folder with the fixtures' notebooks and a Python file, as the cwd."""
    for name in ("demo.ipynb", "ascii.ipynb", "badcell.ipynb"):
        shutil.copy(fixture(name), tmp_path / name)
    (tmp_path / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_code_cells_are_scanned_as_one_source_with_ipython_syntax_left_out():
    data = open(fixture("demo.ipynb"), "rb").read()
    found, errors = scan.scan_source(data, "demo.ipynb")
    assert errors == []
    got = [(f.cell, f.line, f.column, f.rule, f.text) for f in found]
    # cell 1 is markdown (its `torch.cuda.synchronize()` is prose); cell 3 uses
    # the `torch` cell 2 imported, cell 4 the alias `tc` it bound; cell 4's
    # `%%time` runs Python, cell 5's `%%bash` does not; `torch.cuda.?` and
    # `torch.cuda.is_available??` are IPython's help, never Python; a
    # `# noqa: AD201` holds in a cell as in a file
    assert got == [(3, 4, 7, "AD103", "torch.cuda.current_device"),
                   (4, 2, 1, "AD107", "tc.synchronize"),
                   (6, 2, 1, "AD201", "torch.cuda.empty_cache")]
    assert all(isinstance(f, scan.NotebookFinding) and f.path == "demo.ipynb" for f in found)
    assert scan.location(found[0]) == "demo.ipynb:cell 3:4:7"
    # the offsets are the notebook's source's, where the finding's text is
    source = nb.Notebook.parse(data).source.encode()
    assert all(source[f.start:f.end].decode() == f.text for f in found)


def test_ipython_lines_are_masked_only_where_a_statement_starts():
    masked = nb.Notebook.parse(json.dumps({
        "cells": [{"cell_type": "code", "source": [
            "%time f()\n", "x = (1\n", "     % 2)\n", "s = '''\n", "!not a shell escape\n",
            "'''\n", "r = !ls \\\n", "  -l\n", "a %= 3\n", "b = c != d\n"]}],
        "metadata": {}, "nbformat": 4}).encode()).source
    lines = masked.splitlines()
    assert lines[0].startswith("pass  # anydev-magic")
    assert lines[2] == "     % 2)" and lines[4] == "!not a shell escape"
    # with its continuation line, at the first line's indentation
    assert lines[6].startswith("pass  # anydev-magic") and lines[7].startswith("pass  # anydev")
    assert lines[8] == "a %= 3" and lines[9] == "b = c != d"


def test_cli_reports_notebook_findings_with_their_cell(tree):
    rc, out, err = run_cli("scan", ".", "--target-torch", "2.13")
    assert rc == 1, err
    lines = out.splitlines()
    assert "a.py:2:1: AD107 [*] `torch.cuda.synchronize` is device-specific; use " \
           "`torch.accelerator.synchronize` (torch >= 2.6)" in lines
    assert "demo.ipynb:cell 3:4:7: AD103 [*] `torch.cuda.current_device` is device-specific; " \
           "use `torch.accelerator.current_device_index` (torch >= 2.7)" in lines
    assert "ascii.ipynb:cell 1:3:5: AD103 [*] `torch.cuda.current_device` is device-specific; " \
           "use `torch.accelerator.current_device_index` (torch >= 2.7)" in lines
    # the notebooks' findings follow the other files', ordered by path
    paths = [ln.split(":", 1)[0] for ln in lines if ": AD" in ln]
    assert paths[0] == "a.py" and paths[1:] == sorted(paths[1:])
    assert "4 files scanned" in out or "in 4 files" in out


def test_one_broken_cell_hides_no_finding_of_the_others(tree):
    rc, out, err = run_cli("scan", "badcell.ipynb")
    assert rc == 1
    assert "badcell.ipynb:cell 3:1:1: AD107" in out
    assert "badcell.ipynb:cell 2:2:1" not in out  # after the error, in its cell
    assert "badcell.ipynb: error: cell 2, line 1: unterminated string" in err


def test_json_and_sarif_carry_the_cell(tree):
    rc, out, _err = run_cli("scan", "demo.ipynb", "--format", "json")
    assert rc == 1
    doc = json.loads(out)
    assert [(f["path"], f["cell"], f["line"], f["column"], f["rule"]) for f in doc["findings"]] \
        == [("demo.ipynb", 3, 4, 7, "AD103"), ("demo.ipynb", 4, 2, 1, "AD107"),
            ("demo.ipynb", 6, 2, 1, "AD201")]
    rc, out, _err = run_cli("scan", "demo.ipynb", "a.py", "--format", "json")
    assert [f.get("cell") for f in json.loads(out)["findings"]] == [None, 3, 4, 6]
    rc, out, _err = run_cli("scan", "demo.ipynb", "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert [(r["properties"]["cell"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
            for r in results] == [(3, 4), (4, 2), (6, 2)]
    rc, out, _err = run_cli("scan", "demo.ipynb", "--format", "github")
    assert "::warning file=demo.ipynb,title=AD103::cell 3, line 4, column 7: " in out


def test_an_invalid_notebook_is_an_error_and_the_run_goes_on(tree):
    shutil.copy(fixture("broken.ipynb"), tree / "broken.ipynb")
    rc, out, err = run_cli("scan", ".")
    assert rc == 1
    assert "broken.ipynb:3: error: not a notebook: invalid JSON (line 3, column 1)" in err
    assert "demo.ipynb:cell 3:4:7: AD103" in out and "a.py:2:1: AD107" in out
    rc, out, _err = run_cli("scan", "broken.ipynb", "--format", "json")
    (e,) = json.loads(out)["errors"]
    assert e["path"] == "broken.ipynb" and e["kind"] == "unscanned"
    assert e["message"].startswith("not a notebook: invalid JSON")


def test_a_notebook_of_another_language_is_not_scanned_as_python(tree):
    shutil.copy(fixture("r.ipynb"), tree / "r.ipynb")
    rc, out, err = run_cli("scan", "r.ipynb")
    assert "AD107" not in out
    assert "r.ipynb: error: not a Python notebook (its language is r); skipped" in err


def test_baselines_match_notebook_findings_by_their_cell_line(tree):
    (tree / "badcell.ipynb").unlink()  # its unscanned part would exit 1 on its own
    assert run_cli("scan", ".", "--write-baseline", "base.json")[0] == 0
    assert run_cli("scan", ".", "--baseline", "base.json")[0] == 0
    # a finding added to a cell is new; the old ones stay accepted
    doc = json.loads((tree / "demo.ipynb").read_text())
    doc["cells"][3]["source"].append("\ntorch.cuda.device_count()")
    (tree / "demo.ipynb").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    rc, out, _err = run_cli("scan", ".", "--baseline", "base.json")
    assert rc == 1
    assert [ln.split(": AD")[0] for ln in out.splitlines() if ": AD" in ln] == \
        ["demo.ipynb:cell 4:4:1"]


def test_per_file_ignores_and_excludes_apply_to_notebooks(tree):
    (tree / "pyproject.toml").write_text(
        '[tool.anydev]\nper-file-ignores = { "demo.ipynb" = ["AD1"] }\nexclude = ["ascii.ipynb"]\n')
    rc, out, _err = run_cli("scan", ".")
    assert "demo.ipynb:cell 6:2:1: AD201" in out
    assert "AD103" not in out.replace("a.py", "") and "ascii.ipynb" not in out


def test_gitignore_applies_to_notebooks(tree):
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / ".gitignore").write_text("demo.ipynb\n")
    rc, out, _err = run_cli("scan", ".")
    assert "demo.ipynb" not in out and "ascii.ipynb:cell 1" in out


def test_stdin_takes_a_notebook(tree, monkeypatch):
    import io
    import sys

    data = (tree / "demo.ipynb").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    rc, out, _err = run_cli("scan", "-", "--stdin-filename", "nb/demo.ipynb")
    assert rc == 1
    assert "nb/demo.ipynb:cell 3:4:7: AD103" in out


def test_the_walk_gives_notebooks_apart_from_the_sources(tree):
    native = scan._native()
    names, errors, _ignored, notebooks = native.walk_files([b"."], [], True, notebooks=True)
    assert sorted(os.path.basename(n) for n in notebooks) == [
        b"ascii.ipynb", b"badcell.ipynb", b"demo.ipynb"]
    assert [os.path.basename(n) for n in names] == [b"a.py"]
    # without asking, as before: three items, no notebook anywhere
    assert native.walk_files([b"."], [], True)[0] == names
    # a notebook named on its own is given too, not refused as "not a source"
    _n, errors, _i, notebooks = native.walk_files([b"demo.ipynb"], [], True, notebooks=True)
    assert notebooks == [b"demo.ipynb"] and errors == []
    # the library's default is unchanged: scan_paths reads no notebook unless asked
    assert {f.path for f in scan.scan_paths(["."]).findings} == {"a.py"}
    assert "demo.ipynb" in {f.path for f in scan.scan_paths(["."], notebooks=True).findings}
