"""`anydev fix` over two names of one file (a hard link): the file is fixed
once, through its first name, and the second name's findings are that file's,
not "left to migrate by hand" (issue 30)."""

from __future__ import annotations

import os

from conftest import run_cli


def test_a_hard_link_is_fixed_once_and_nothing_is_left(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    os.link(tmp_path / "a.py", tmp_path / "b.py")
    rc, _, err = run_cli("fix", "--target-torch", "2.13", ".")
    assert rc == 0, err  # was 1: b.py's finding counted as left to migrate by hand
    assert "fixed 1 finding(s) in 1 file(s); 0 left to migrate by hand" in err, err
    text = "import torch\ntorch.accelerator.synchronize()\n"
    assert (tmp_path / "a.py").read_text() == text == (tmp_path / "b.py").read_text()
    assert os.stat(tmp_path / "a.py").st_ino == os.stat(tmp_path / "b.py").st_ino
    rc, _, err = run_cli("fix", "--target-torch", "2.13", ".")
    assert rc == 0 and "fixed 0 finding(s)" in err, err
