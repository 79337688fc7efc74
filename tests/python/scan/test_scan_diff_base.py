"""The ratchet on new code (issue 32): `anydev scan --diff-base REV` reports the
findings on lines added or changed since the merge base of REV and HEAD, on a
real git repository with history (branches, a rename, an untracked file),
with clear errors outside a repository or for an unknown revision; and the
pre-commit hooks `anydev-scan-new(-system)` of .pre-commit-hooks.yaml, run by
the real pre-commit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_env, run_cli

ROOT = Path(__file__).resolve().parents[3]

if shutil.which("git") is None:  # pragma: no cover
    pytest.skip("git is not installed", allow_module_level=True)

OLD = "import torch\n\n\ndef step():\n    torch.cuda.synchronize()\n    return 1\n"


def git(cwd: Path, *args: str) -> str:
    env = clean_env({"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                     "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
                     "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"})
    p = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, (args, p.stderr)
    return p.stdout


def found(*argv: str) -> list[tuple[str, int, str]]:
    rc, out, err = run_cli("scan", "--format", "json", *argv)
    assert rc in (0, 1), err
    return [(f["path"], f["line"], f["rule"]) for f in json.loads(out)["findings"]]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """main: two commits of legacy code; the branch `feature` from the first,
    with a commit of its own; main then moves on."""
    monkeypatch.chdir(tmp_path)
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "train.py").write_text(OLD)
    (tmp_path / "util.py").write_text("import torch\nx = torch.cuda.device_count()\n")
    (tmp_path / "ops.cu").write_text("auto s = at::cuda::getCurrentCUDAStream();\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "legacy code")
    git(tmp_path, "checkout", "-qb", "feature")
    (tmp_path / "train.py").write_text(OLD + "\n\ndef more():\n    torch.cuda.empty_cache()\n")
    git(tmp_path, "commit", "-qam", "feature work")
    git(tmp_path, "checkout", "-q", "main")
    (tmp_path / "util.py").write_text("import torch\nx = torch.cuda.device_count()\n"
                                      "y = torch.cuda.current_device()\n")
    git(tmp_path, "commit", "-qam", "main moves on")
    git(tmp_path, "checkout", "-q", "feature")
    return tmp_path


def test_only_lines_since_the_merge_base(repo):
    assert len(found()) == 4  # without --diff-base: every finding
    # the branch's own commit: its new function; main's later commit is not the branch's
    assert found("--diff-base", "main") == [("train.py", 10, "AD201")]
    # uncommitted, staged and unstaged changes count; a changed line too
    (repo / "train.py").write_text(OLD.replace("torch.cuda.synchronize()",
                                               "torch.cuda.synchronize()  # changed") +
                                   "\n\ndef more():\n    torch.cuda.empty_cache()\n")
    (repo / "ops.cu").write_text("auto s = at::cuda::getCurrentCUDAStream();\n"
                                 "auto t = at::cuda::getCurrentCUDAStream();\n")
    git(repo, "add", "ops.cu")
    assert found("--diff-base", "main") == [("ops.cu", 2, "AD625"), ("train.py", 5, "AD107"),
                                            ("train.py", 10, "AD201")]
    assert found("--diff-base", "HEAD") == [("ops.cu", 2, "AD625"), ("train.py", 5, "AD107")]
    # a revision by hash, and by a relative name
    head = git(repo, "rev-parse", "HEAD~1").strip()
    assert ("train.py", 10, "AD201") in found("--diff-base", head)


def test_renames_are_followed_and_untracked_files_are_new(repo):
    git(repo, "mv", "util.py", "helpers.py")  # moved unchanged: nothing new
    assert found("--diff-base", "HEAD") == []
    (repo / "helpers.py").write_text((repo / "helpers.py").read_text() +
                                     "z = torch.cuda.current_device()\n")
    assert found("--diff-base", "HEAD") == [("helpers.py", 3, "AD103")]
    (repo / "new.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    assert ("new.py", 2, "AD107") in found("--diff-base", "HEAD")
    # an ignored file is not new code
    (repo / ".gitignore").write_text("gen/\n")
    (repo / "gen").mkdir()
    (repo / "gen" / "g.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    assert ("gen/g.py", 2, "AD107") not in found("--diff-base", "HEAD", "--no-gitignore")


def test_the_ratchet_exits_0_on_old_code_and_keeps_other_options(repo):
    rc, out, _ = run_cli("scan", "--diff-base", "HEAD")
    assert rc == 0 and "No legacy references found" in out
    (repo / "train.py").write_text(OLD + "x = torch.cuda.current_device()\n")
    rc, out, _ = run_cli("scan", "--diff-base", "HEAD", "--format", "github")
    assert rc == 1 and out.startswith("::warning file=train.py,line=7,")
    rc, out, _ = run_cli("scan", "--diff-base", "HEAD", "--statistics", "--format", "json")
    assert json.loads(out)["findings"] == 1
    rc, out, _ = run_cli("scan", "--diff-base", "HEAD", "--select", "AD2")
    assert rc == 0
    # a path inside the repository from another folder
    (repo / "sub").mkdir()
    os.chdir(repo / "sub")
    assert found("--diff-base", "HEAD", "..") == [("../train.py", 7, "AD103")]


def _notebook(*cells: list[str]) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                                  "outputs": [], "source": c} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"


def test_notebook_cells_are_under_the_ratchet_too(repo):
    """git's lines are the notebook file's: a cell's line is new where the JSON
    line that holds it is, in a list source or a one-string source."""
    (repo / "explore.ipynb").write_text(_notebook(["import torch\n", "x = 1\n"],
                                                  "torch.cuda.empty_cache()"))
    git(repo, "add", "explore.ipynb")
    git(repo, "commit", "-qm", "a notebook")
    assert found("--diff-base", "HEAD") == []
    (repo / "explore.ipynb").write_text(_notebook(
        ["import torch\n", "x = 1\n", "torch.cuda.synchronize()\n"],
        "torch.cuda.empty_cache()", ["import torch\n", "torch.cuda.current_device()"]))
    rc, out, err = run_cli("scan", "--format", "json", "--diff-base", "HEAD")
    got = [(f["path"], f.get("cell"), f["line"], f["rule"]) for f in json.loads(out)["findings"]]
    assert got == [("explore.ipynb", 1, 3, "AD107"), ("explore.ipynb", 3, 2, "AD103")], got
    assert rc == 1


def test_errors(repo, tmp_path_factory):
    rc, out, err = run_cli("scan", "--diff-base", "nosuchbranch")
    assert rc == 2 and out == ""
    assert "--diff-base nosuchbranch: unknown revision" in err
    rc, _, err = run_cli("scan", "--diff-base", "--all")
    assert rc == 2 and "--diff-base" in err
    rc, _, err = run_cli("scan", "--diff-base", "HEAD", "--write-baseline", "b.json")
    assert rc == 2 and "does not go with --diff-base" in err
    outside = tmp_path_factory.mktemp("outside")
    (outside / "x.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    rc, _, err = run_cli("scan", "--diff-base", "HEAD", str(outside / "x.py"))
    assert rc == 2 and f"{outside / 'x.py'} is outside the git work tree" in err
    os.chdir(outside)
    rc, _, err = run_cli("scan", "--diff-base", "main")
    assert rc == 2 and "is not in a git work tree" in err
    # a repository without a commit
    git(outside, "init", "-q")
    rc, _, err = run_cli("scan", "--diff-base", "HEAD")
    assert rc == 2 and "HEAD has no commit yet" in err
    # unrelated histories have no merge base
    os.chdir(repo)
    git(repo, "checkout", "-q", "--orphan", "lonely")
    git(repo, "commit", "-qm", "unrelated")
    rc, _, err = run_cli("scan", "--diff-base", "main")
    assert rc == 2 and "no common ancestor" in err


def test_stdin_needs_its_name(repo):
    rc, _, err = run_cli("scan", "--diff-base", "HEAD", "-")
    assert rc == 2 and "needs --stdin-filename" in err


def _pre_commit() -> list[str]:
    exe = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    if not os.path.exists(exe):
        pytest.skip("pre-commit is not installed (tools/requirements-dev.txt)")
    return [exe]


def test_the_pre_commit_hook_fails_on_new_lines_only(repo, tmp_path_factory):
    pre_commit = _pre_commit()
    home = tmp_path_factory.mktemp("pre-commit-home")
    # the installed anydev on PATH, as the -system hook runs it
    bindir = Path(sys.executable).parent
    env = clean_env({"PRE_COMMIT_HOME": str(home), "PATH": f"{bindir}{os.pathsep}"
                     f"{os.environ.get('PATH', '')}", "GIT_CONFIG_GLOBAL": os.devnull,
                     "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                     "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", home / "hooks.yaml")
    # a repository of the hooks as they are in this checkout (try-repo takes a
    # repository: the hook file is all it reads of it for a system hook)
    hooks = tmp_path_factory.mktemp("hooks")
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", hooks / ".pre-commit-hooks.yaml")
    git(hooks, "init", "-q")
    git(hooks, "add", "-A")
    git(hooks, "commit", "-qm", "hooks")

    def run_hook() -> subprocess.CompletedProcess:
        return subprocess.run([*pre_commit, "try-repo", str(hooks), "anydev-scan-new-system"],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=300)

    # a staged change that adds no legacy call, in a file that has old ones: passes
    (repo / "train.py").write_text(OLD + "# a comment\n")
    git(repo, "add", "train.py")
    p = run_hook()
    assert p.returncode == 0, p.stdout + p.stderr
    # a staged new legacy call fails it, and only that one is named
    (repo / "train.py").write_text(OLD + "x = torch.cuda.current_device()\n")
    git(repo, "add", "train.py")
    # an unstaged one is not the commit's (pre-commit stashes it)
    (repo / "util.py").write_text((repo / "util.py").read_text() +
                                  "z = torch.cuda.current_device()\n")
    p = run_hook()
    assert p.returncode == 1, p.stdout + p.stderr
    assert "train.py:7:5: AD103" in p.stdout and "train.py:5" not in p.stdout
    assert "util.py" not in p.stdout
    assert (repo / "util.py").read_text().endswith("z = torch.cuda.current_device()\n")


def test_new_line_ranges_of_a_buffer_are_a_diff_no_larger_than_a_whole_one():
    """The editor server's lines (changed_lines.new_line_ranges trims the
    lines before and after the edits before it diffs), over random edits:
    the lines it calls old are old lines in their order (a valid diff), no
    more lines are new than a diff of the whole texts says, and where every
    line is distinct the two agree."""
    import random
    from difflib import SequenceMatcher

    from anydev._migrate.changed_lines import WHOLE, covers, new_line_ranges

    def whole(old: bytes, new: bytes) -> set:
        a, b = old.splitlines(), new.splitlines()
        return {j + 1 for tag, _i1, _i2, j1, j2 in
                SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
                if tag in ("replace", "insert") for j in range(j1, j2)}

    def subsequence(kept: list, old: list) -> bool:
        it = iter(old)
        return all(any(x == y for y in it) for x in kept)

    r = random.Random(32)
    for distinct in (True, False):
        # repeated lines make matches ambiguous
        base = [f"line {k if distinct else k % 7}\n".encode() for k in range(200)]
        for k in range(200):
            lines = list(base)
            for e in range(r.randint(1, 5)):
                i = r.randrange(len(lines) + 1)
                op = r.random()
                if op < 0.4:
                    lines.insert(i, f"new {k} {e}\n".encode())
                elif op < 0.7 and i < len(lines):
                    del lines[i]
                elif i < len(lines):
                    lines[i] = f"changed {k} {e}\n".encode() if distinct else b"line 3\n"
            old, new = b"".join(base), b"".join(lines)
            got = {n for first, last in new_line_ranges(old, new)
                   for n in range(first, last + 1)}
            kept = [ln for n, ln in enumerate(new.splitlines(), 1) if n not in got]
            assert subsequence(kept, old.splitlines()), k
            assert len(got) <= len(whole(old, new)), k
            if distinct:
                assert got == whole(old, new), k
    assert new_line_ranges(None, b"x\n") is WHOLE and covers(WHOLE, 7)
    assert new_line_ranges(b"a\nb\n", b"a\nb\n") == []
    assert new_line_ranges(b"a\nb\n", b"a\nc\nb\n") == [(2, 2)]
