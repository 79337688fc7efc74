"""`anydev fix` on Jupyter notebooks (tests/fixtures/notebooks/): the code
cells fixed as one Python source and written back with every byte outside
the changed cells kept (anydev/_migrate/notebook.py, Note [Notebook bytes])."""

from __future__ import annotations

import difflib
import json
import os
import shutil

import pytest

from conftest import run_cli
from fix_default import newest_default_target  # noqa: F401 (autouse)

from anydev import scan
from anydev._migrate import check
from anydev._migrate import notebook as nb

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "notebooks")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    for name in os.listdir(FIXTURES):
        shutil.copy(os.path.join(FIXTURES, name), tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def changed_lines(old: bytes, new: bytes) -> list[str]:
    return [ln for ln in difflib.unified_diff(old.decode().splitlines(), new.decode().splitlines(),
                                               lineterm="", n=0)
            if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def test_fix_rewrites_only_the_changed_cells_lines(tree):
    before = (tree / "demo.ipynb").read_bytes()
    rc, _out, err = run_cli("fix", "demo.ipynb")
    assert rc == 1, err  # AD201 is unsafe: left without --unsafe-fixes
    after = (tree / "demo.ipynb").read_bytes()
    assert changed_lines(before, after) == [
        '-    "print(torch.cuda.current_device())"',
        '+    "print(torch.accelerator.current_device_index())"',
        '-    "tc.synchronize()\\n",',
        '+    "torch.accelerator.synchronize()\\n",',
    ]
    assert "demo.ipynb: fixed 2" in err
    assert "demo.ipynb:cell 6:2:1: AD201 torch.cuda.empty_cache: not fixed: " in err
    # the rest is the same JSON, outputs, metadata and IPython lines included
    old, new = json.loads(before), json.loads(after)
    for a, b in zip(old["cells"], new["cells"]):
        assert {k: v for k, v in a.items() if k != "source"} == \
               {k: v for k, v in b.items() if k != "source"}
    assert new["cells"][1]["source"] == old["cells"][1]["source"]
    assert after.endswith(b"}\n") and "démo".encode() in after
    # and it is fixed: a second run changes nothing, a scan finds what is left
    rc, _out, err = run_cli("fix", "demo.ipynb")
    assert (tree / "demo.ipynb").read_bytes() == after
    rc, out, _err = run_cli("scan", "demo.ipynb")
    assert [ln.split(": AD")[0] for ln in out.splitlines() if ": AD" in ln] == \
        ["demo.ipynb:cell 6:2:1"]


def test_unsafe_fixes_and_the_diff(tree):
    before = (tree / "demo.ipynb").read_bytes()
    rc, out, _err = run_cli("fix", "demo.ipynb", "--unsafe-fixes", "--diff")
    assert rc == 1 and (tree / "demo.ipynb").read_bytes() == before
    # empty_cache must be guarded (Note in its row): the fixer writes the guard
    assert '+    "if torch.accelerator.is_available():\\n",\n' \
           '+    "    torch.accelerator.empty_cache()\\n",' in out
    assert out.startswith("--- a/demo.ipynb\n+++ b/demo.ipynb\n")
    assert run_cli("fix", "demo.ipynb", "--unsafe-fixes")[0] == 0
    assert run_cli("scan", "demo.ipynb")[0] == 0


def test_the_file_keeps_its_escaping_layout_and_missing_trailing_newline(tree):
    before = (tree / "ascii.ipynb").read_bytes()
    assert run_cli("fix", "ascii.ipynb")[0] == 0
    after = (tree / "ascii.ipynb").read_bytes()
    assert changed_lines(before, after) == [
        '-      "source": "import torch\\n# caf\\u00e9\\nd = torch.cuda.current_device()",',
        '+      "source": "import torch\\n# caf\\u00e9\\nd = torch.accelerator.current_device_index()",',
    ]
    assert after.isascii() and not after.endswith(b"\n")


def test_a_cell_that_does_not_parse_is_left_and_the_others_fixed(tree):
    rc, _out, err = run_cli("fix", "badcell.ipynb")
    assert rc == 1
    doc = json.loads((tree / "badcell.ipynb").read_text())
    assert doc["cells"][2]["source"] == ["torch.accelerator.synchronize()"]
    assert doc["cells"][1]["source"] == ["s = 'unterminated\n", "torch.cuda.synchronize()"]


def test_an_import_removed_and_torch_imported_across_cells():
    data = json.dumps({"cells": [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["%load_ext autoreload\n", "from torch.cuda import current_device"]},
        {"cell_type": "markdown", "metadata": {}, "source": ["text"]},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": ["for i in range(2):\n", "    !echo $i\n", "    print(current_device())"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1).encode()
    found, _ = scan.scan_source(data, "x.ipynb")
    new, applied, skipped = check.fix_notebook(data, "x.ipynb", found)
    assert len(applied) == 2 and skipped == []
    cells = json.loads(new)["cells"]
    assert "".join(cells[0]["source"]) == "import torch\n%load_ext autoreload"
    assert "".join(cells[2]["source"]) == \
        "for i in range(2):\n    !echo $i\n    print(torch.accelerator.current_device_index())"
    assert cells[1] == {"cell_type": "markdown", "metadata": {}, "source": ["text"]}


def test_an_invalid_notebook_is_not_fixed_and_the_run_goes_on(tree):
    rc, _out, err = run_cli("fix", ".")
    assert "broken.ipynb:3: error: not a notebook: invalid JSON" in err
    assert json.loads((tree / "ascii.ipynb").read_text())["cells"][0]["source"].endswith(
        "torch.accelerator.current_device_index()")


def test_keep_globs_refuse_a_notebook(tree):
    (tree / "pyproject.toml").write_text('[tool.anydev]\nkeep = ["ascii.ipynb"]\n')
    before = (tree / "ascii.ipynb").read_bytes()
    rc, _out, err = run_cli("fix", "ascii.ipynb")
    assert rc == 1 and (tree / "ascii.ipynb").read_bytes() == before
    assert 'kept: ascii.ipynb matches `keep = ["ascii.ipynb"]`' in err


def test_fix_reads_a_notebook_from_stdin(tree, monkeypatch, capfdbinary):
    import io
    import sys

    data = (tree / "ascii.ipynb").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out))
    from anydev._cli import main as cli

    rc = cli.main(["fix", "-", "--stdin-filename", "ascii.ipynb"])
    sys.stdout.flush()
    assert rc == 0
    assert b"torch.accelerator.current_device_index()" in out.getvalue()


def test_rewrite_keeps_a_list_sources_layout_and_unchanged_lines():
    text = ('{"cells": [{"cell_type": "code", "source": ["a = 1\\n",   "b = 2\\n",\n'
            '  "c = 3"]}], "metadata": {}, "nbformat": 4}')
    book = nb.Notebook.parse(text.encode())
    new = book.rewrite(book.source.replace("b = 2", "b = 20\nb2 = 0"))
    assert new.decode() == ('{"cells": [{"cell_type": "code", "source": ["a = 1\\n",   '
                            '"b = 20\\n",   "b2 = 0\\n",   "c = 3"]}], "metadata": {}, '
                            '"nbformat": 4}')
    assert book.rewrite(book.source) == text.encode()
