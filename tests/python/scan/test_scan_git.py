"""Inside a git work tree, files git tracks are scanned even where an ignore
rule matches them (as `git grep` does), and the summary counts what the
ignore rules skipped."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from anydev import scan
from conftest import run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

CODE = "import torch\ntorch.cuda.synchronize()\n"


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t",
                    *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    (r / "build").mkdir(parents=True)
    (r / "src").mkdir()
    _git(r, "init", "-q")
    (r / ".gitignore").write_text("build/\n*_gen.py\n")
    (r / "build" / "tracked.py").write_text(CODE)
    (r / "build" / "untracked.py").write_text(CODE)
    (r / "src" / "a_gen.py").write_text(CODE)        # ignored, tracked
    (r / "src" / "b_gen.py").write_text(CODE)        # ignored, untracked
    (r / "src" / "c.py").write_text(CODE)
    (r / "src" / "notes.txt").write_text("not a source\n")
    _git(r, "add", ".gitignore", "src/c.py")
    _git(r, "add", "-f", "build/tracked.py", "src/a_gen.py")
    _git(r, "commit", "-qm", "init")
    return r


def test_tracked_files_are_scanned_despite_ignore_rules(repo, monkeypatch):
    monkeypatch.chdir(repo)
    result = scan.scan_paths(["."])
    assert sorted({f.path for f in result.findings}) == ["build/tracked.py", "src/a_gen.py",
                                                          "src/c.py"]
    assert result.files == 3
    assert result.tracked == 2
    assert result.ignored == 3   # the folder build/ (once), src/a_gen.py and src/b_gen.py


def test_a_subfolder_of_the_work_tree(repo, monkeypatch):
    monkeypatch.chdir(repo)
    result = scan.scan_paths(["src"])
    assert sorted({f.path for f in result.findings}) == ["src/a_gen.py", "src/c.py"]
    assert (result.ignored, result.tracked) == (2, 1)


def test_without_gitignore_everything_is_scanned_and_nothing_counted(repo, monkeypatch):
    monkeypatch.chdir(repo)
    result = scan.scan_paths(["."], respect_gitignore=False)
    assert result.files == 5 and (result.ignored, result.tracked) == (0, 0)


def test_excludes_still_apply_to_tracked_files(repo, monkeypatch):
    monkeypatch.chdir(repo)
    result = scan.scan_paths(["."], exclude=["build/"])
    assert sorted({f.path for f in result.findings}) == ["src/a_gen.py", "src/c.py"]


def test_outside_a_work_tree_only_the_rules_count(tmp_path, monkeypatch):
    (tmp_path / ".gitignore").write_text("x.py\n")
    (tmp_path / "x.py").write_text(CODE)
    (tmp_path / "y.py").write_text(CODE)
    monkeypatch.chdir(tmp_path)
    result = scan.scan_paths(["."])
    assert [f.path for f in result.findings] == ["y.py"]
    assert (result.ignored, result.tracked) == (1, 0)


def test_the_summary_counts_what_a_walk_skipped_while_it_was_scanned(tmp_path, monkeypatch):
    """One path outside git: the tree is scanned as it is walked (Note [Scan
    ahead]), and the walk's count of what it skipped, known at its end, is
    in the summary at the end of the report."""
    (tmp_path / ".gitignore").write_text("x.py\ngen/\n")
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "z.py").write_text(CODE)
    (tmp_path / "x.py").write_text(CODE)
    (tmp_path / "y.py").write_text(CODE)
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run_cli("scan", ".")
    assert rc == 1 and out.splitlines()[0].startswith("y.py:")
    assert out.splitlines()[-1] == ("Ignore rules skipped 2 source files or folders "
                                    "(--no-gitignore scans everything).")
    rc, out, _ = run_cli("scan", "-q", ".")
    assert rc == 1 and "Ignore rules" not in out


def test_text_summary_says_what_ignore_rules_skipped(repo, monkeypatch):
    monkeypatch.chdir(repo)
    rc, out, _ = run_cli("scan", ".")
    assert rc == 1
    assert out.splitlines()[-1] == ("Ignore rules skipped 3 source files or folders, of which 2 "
                                    "files that git tracks were scanned anyway (--no-gitignore "
                                    "scans everything).")
    rc, out, _ = run_cli("scan", "--no-gitignore", ".")
    assert "Ignore rules" not in out
