"""The findings over a git history (anydev._dashboard.history), read from
git's objects: the same counts as a scan of each commit's checkout, each
blob scanned once, tags, and a bounded time on 10,000 commits."""

from __future__ import annotations

import os
import re
import subprocess
import io
import tarfile
import time
from pathlib import Path

import pytest

from anydev import scan
from anydev._dashboard import history, stats

from dashboard_fixture import COMMITS, OPS_CPP, commits, git, make_repo

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    r = make_repo(tmp_path / "proj")
    monkeypatch.chdir(r)
    return r


def checkout_counts(repo: Path, commit: str, where: Path, paths=(".",)) -> dict:
    """The categories of a scan of ``commit``'s files, extracted to ``where``."""
    data = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit],
                          check=True, capture_output=True).stdout
    where.mkdir()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(where, filter="data")
    cwd = os.getcwd()
    os.chdir(where)
    try:
        found = scan.scan_paths(list(paths)).findings
    finally:
        os.chdir(cwd)
    return stats.statistics(found).total.to_dict()


def test_each_commit_counts_as_a_scan_of_its_checkout(repo, tmp_path):
    h = history.walk(["."])
    line = commits(repo)
    assert [p.commit for p in h.points] == line
    assert [p.subject for p in h.points] == [c[1] for c in COMMITS]
    for n, p in enumerate(h.points):
        assert p.counts.to_dict() == checkout_counts(repo, p.commit, tmp_path / f"c{n}"), p.subject
    totals = [p.counts.total for p in h.points]
    assert totals == sorted(totals, reverse=True) and totals[0] > totals[-1]
    # The C++ file's findings go with it in the last commit.
    assert h.points[2].counts.api - h.points[3].counts.api == len(
        scan.scan_source(COMMITS[0][3]["csrc/ops.cpp"], "ops.cpp")[0])


def test_each_blob_is_scanned_once(repo):
    h = history.walk(["."])
    # Commit 1 has 5 sources (train, util, ops.cpp, __init__, run), commit 2
    # changes util, commit 3 train, commit 4 deletes ops.cpp: 7 blobs, and the
    # unchanged files of commits 2, 3 and 4 (4 each) come from the cache.
    assert (h.blobs_scanned, h.blobs_reused) == (7, 12)
    assert h.mode == "commits" and h.commits == 4


def test_a_sample_keeps_the_first_and_the_last_commit(repo):
    h = history.walk(["."], samples=2)
    line = commits(repo)
    assert [p.commit for p in h.points] == [line[0], line[-1]]
    assert history.spread(10, 4) == [0, 3, 6, 9]
    assert history.spread(3, 30) == [0, 1, 2]
    assert history.spread(5, 1) == [4]


def test_a_folder_has_the_history_of_its_own_files(repo):
    h = history.walk(["pkg"])
    assert h.pathspec == ["pkg"]
    assert len(h.points) == 3  # the fourth commit touches csrc/ only
    assert h.points[-1].counts.total == sum(
        1 for f in scan.scan_paths(["pkg"]).findings)


def test_tags(repo):
    h = history.walk(["."], tags=True)
    assert [p.label for p in h.points] == ["v1.0", "v1.1", "HEAD"]
    assert h.mode == "tags" and h.commits == 2
    line = commits(repo)
    assert [p.commit for p in h.points] == [line[0], line[2], line[3]]


def test_no_tags_is_an_error(tmp_path, monkeypatch):
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q")
    (r / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    git(r, "add", "a.py")
    git(r, "commit", "-q", "-m", "one", date="2024-01-01T00:00:00Z")
    monkeypatch.chdir(r)
    with pytest.raises(history.HistoryError, match="no tags"):
        history.walk(["."], tags=True)
    assert history.walk(["."]).points[0].counts.api == 1


def test_not_a_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(history.HistoryError, match="not in a git work tree"):
        history.walk(["."])


def test_rules_paths_and_per_file_ignores_follow_the_scan(repo):
    keep = scan.rule_filter(["AD9"])  # the literals and idioms only
    h = history.walk(["."], keep=keep)
    assert all(p.counts.api == 0 for p in h.points)
    assert (h.points[0].counts.literal, h.points[0].counts.idiom) == (2, 1)
    full = history.walk(["."])
    ops = len(scan.scan_source(OPS_CPP, "ops.cpp")[0])
    h = history.walk(["."], keep_path=lambda p: not p.startswith("csrc"))
    assert full.points[0].counts.total - h.points[0].counts.total == ops
    assert h.points[-1].counts.total == full.points[-1].counts.total  # csrc/ is gone by then
    # util.py's one torch.cuda.synchronize (AD107) of the first commit, fixed in the second
    h = history.walk(["."], drop=lambda path, rule: path == os.path.join("pkg", "util.py")
                     and rule == "AD107")
    assert full.points[0].counts.total - h.points[0].counts.total == 1
    assert full.points[1].counts.total == h.points[1].counts.total


def test_the_excluded_folders_are_the_walkers(repo):
    src = (ROOT / "core" / "scan" / "src" / "walk.cc").read_text()
    body = src[src.index("IsDefaultExcludedDir"):]
    names = set(re.findall(r'"([^"]+)"', body[:body.index("};")]))
    assert names == history.DEFAULT_EXCLUDED_DIRS
    (repo / "node_modules" / "x").mkdir(parents=True)
    (repo / "node_modules" / "x" / "a.py").write_text("import torch\ntorch.cuda.synchronize()\n")
    git(repo, "add", "-f", "node_modules")
    git(repo, "commit", "-q", "-m", "vendored", date="2024-05-01T00:00:00Z")
    h = history.walk(["."])
    assert h.points[-1].counts.total == h.points[-2].counts.total


def _fast_import(repo: Path, n_commits: int, n_files: int) -> None:
    """A history of ``n_commits`` commits, each rewriting one of ``n_files``
    files (a new blob every time), made by git fast-import in one go (each
    commit of the stream follows the one before on its branch)."""
    out = []
    t0 = 1_600_000_000
    for k in range(n_commits):
        legacy = k % 7
        body = ("import torch\n" + f"# change {k}\n"
                + "torch.cuda.synchronize()\n" * legacy).encode()
        msg = f"change {k}".encode()
        out.append(b"commit refs/heads/main\n")
        out.append(f"committer t <t@example.com> {t0 + 60 * k} +0000\n".encode())
        out.append(b"data %d\n%s\n" % (len(msg), msg))
        out.append(f"M 100644 inline src/f{k % n_files}.py\n".encode())
        out.append(b"data %d\n%s\n" % (len(body), body))
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(out),
                   check=True, capture_output=True)
    git(repo, "reset", "-q", "--hard", "main")


def test_ten_thousand_commits_in_bounded_time(tmp_path, monkeypatch):
    r = tmp_path / "big"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    _fast_import(r, 10_000, 50)
    monkeypatch.chdir(r)
    t0 = time.perf_counter()
    h = history.walk(["."], samples=30)
    took = time.perf_counter() - t0
    assert len(h.points) == 30 and h.commits == 10_000
    # Each sample costs the files changed since the one before, at most the
    # tree (50 files); the last point is the work tree's scan.
    assert h.blobs_scanned <= 30 * 50
    assert h.points[-1].counts.total == len(scan.scan_paths(["."]).findings)
    print(f"10,000 commits, 30 samples: {took:.2f} s, {h.blobs_scanned} blobs scanned")
    assert took < 30, took
