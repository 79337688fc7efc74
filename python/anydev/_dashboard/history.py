"""The findings over a repository's history, for the page's progress plot.

    h = history.walk(["src"], samples=30)           # 30 commits of the first-parent line
    h = history.walk(["src"], tags=True)            # every tag (sampled down to 30), then HEAD
    for p in h.points:
        print(p.date, p.label, p.counts.api, p.counts.literal, p.counts.idiom)

Nothing is checked out. Each sampled commit's tree is listed (``git ls-tree
-r -l``, the paths scanned only), and the content of each source file is read
from git's object store (``git cat-file --batch``) and scanned in memory
(:func:`anydev.scan.scan_source`), as the scanner would scan it on disk.
Note [Blobs scanned once]: a file unchanged between two commits is the same
blob (the same object name), so its findings are taken from the one scan of
that blob; a commit costs the blobs it changed, and a history of 10,000
commits costs one tree's scan plus what changed between the samples
(tests/python/dashboard/test_history.py holds it to that).

Which commits: ``samples`` commits of the first-parent line of ``HEAD`` that
changed the scanned paths, spread evenly over that line, the oldest and the
newest always among them (the newest is the state of the paths at ``HEAD``);
or, with ``tags``, the tagged commits, in the order of their commit dates
(sampled down to ``samples`` the same way), then ``HEAD`` when it is not
tagged. The scan of a commit follows the scan of the work tree: the same
rules (``select``/``ignore``), the same folders left out (the walker's
default list, core/scan/src/walk.cc), ``exclude`` and per-file ignores
through the predicates the caller gives, the same size limit. Symbolic links
and submodules are not followed.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Sequence

from anydev import scan as _scan
from anydev._compat.table import ROWS_BY_CODE

from .stats import Counts, category_of

__all__ = ["History", "HistoryError", "Point", "walk"]

#: The folders the scanner's walk never enters (IsDefaultExcludedDir in
#: core/scan/src/walk.cc; tests/python/dashboard/test_history.py compares).
DEFAULT_EXCLUDED_DIRS = frozenset({
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
    ".svn", ".tox", ".venv", "__pypackages__", "__pycache__", "_build", "buck-out", "dist",
    "node_modules", "site-packages", "venv"})

#: The most blobs read by one `git cat-file --batch` (their bytes are held at once).
_BATCH = 2000


class HistoryError(Exception):
    """The history cannot be read (not a git repository, git missing, no tags)."""


@dataclass
class Point:
    """The findings at one commit."""

    commit: str
    date: int            # committer date, seconds since the epoch
    subject: str
    label: str           # the tag, or the short commit name
    counts: Counts = field(default_factory=Counts)
    files: int = 0       # source files at that commit (scanned or taken from the cache)


@dataclass
class History:
    points: list[Point]
    mode: str            # "commits" or "tags"
    commits: int         # commits (or tags) the sample was drawn from
    blobs_scanned: int   # distinct blobs read and scanned
    blobs_reused: int    # files whose findings came from a blob scanned before
    seconds: float
    pathspec: list[str]


def _git(top: str, args: Sequence[str], data: Optional[bytes] = None) -> bytes:
    try:
        r = subprocess.run(["git", "-C", top, *args], input=data, capture_output=True)
    except OSError as e:
        raise HistoryError(f"cannot run git: {e.strerror or e}") from None
    if r.returncode != 0:
        err = r.stderr.decode("utf-8", "replace").strip().splitlines()
        raise HistoryError(f"git {args[0]} failed: {err[-1] if err else r.returncode}")
    return r.stdout


def _top(start: str) -> str:
    try:
        r = subprocess.run(["git", "-C", start, "rev-parse", "--show-toplevel"],
                           capture_output=True)
    except OSError as e:
        raise HistoryError(f"cannot run git: {e.strerror or e}") from None
    if r.returncode != 0:
        raise HistoryError(f"{start} is not in a git work tree (--history reads its commits)")
    return r.stdout.decode("utf-8", "surrogateescape").rstrip("\n")


def _pathspec(paths: Sequence[str], top: str) -> list[str]:
    real_top = os.path.realpath(top)
    out = []
    for p in paths:
        real = os.path.realpath(p)
        if real == real_top:
            return ["."]
        if not real.startswith(real_top + os.sep):
            raise HistoryError(f"{p} is outside the git work tree {top}")
        out.append(os.path.relpath(real, real_top).replace(os.sep, "/"))
    return out or ["."]


def spread(n: int, k: int) -> list[int]:
    """``k`` indices of ``range(n)`` spread evenly, the first and the last
    among them (all of them when ``k >= n``)."""
    if k >= n:
        return list(range(n))
    if k <= 1:
        return [n - 1]
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def _commits(top: str, pathspec: list[str], samples: int) -> tuple[list[tuple], int]:
    """(sampled (commit, date, subject, label), oldest first; commits on the line)."""
    out = _git(top, ["log", "--first-parent", "--format=%H%x1f%ct%x1f%s%x1e", "HEAD",
                     "--", *pathspec])
    line = []
    for rec in out.decode("utf-8", "replace").split("\x1e"):
        rec = rec.strip("\n")
        if rec:
            h, ct, subject = rec.split("\x1f", 2)
            line.append((h, int(ct), subject, h[:10]))
    line.reverse()
    if not line:
        raise HistoryError(f"no commit of HEAD's history touches {' '.join(pathspec)}")
    return [line[i] for i in spread(len(line), samples)], len(line)


def _tags(top: str, samples: int) -> tuple[list[tuple], int]:
    out = _git(top, ["for-each-ref", "--format=%(refname:short)%1f%(objecttype)%1f"
                     "%(objectname)%1f%(*objecttype)%1f%(*objectname)", "refs/tags"])
    tagged: dict[str, str] = {}
    for rec in out.decode("utf-8", "replace").splitlines():
        name, typ, obj, ptyp, pobj = rec.split("\x1f")
        commit = obj if typ == "commit" else (pobj if ptyp == "commit" else None)
        if commit is not None:  # a tag of a tree or a blob has no history
            tagged.setdefault(commit, name)
    if not tagged:
        raise HistoryError("the repository has no tags of commits (--history-tags)")
    head = _git(top, ["rev-parse", "HEAD"]).decode().strip()
    # The commits on stdin: a repository may have more tags than a command line holds.
    shown = _git(top, ["log", "--no-walk=unsorted", "--stdin", "--format=%H%x1f%ct%x1f%s"],
                 "\n".join([*tagged, head]).encode() + b"\n")
    line: dict[str, tuple] = {}
    for rec in shown.decode("utf-8", "replace").splitlines():
        h, ct, subject = rec.split("\x1f", 2)
        line[h] = (h, int(ct), subject, tagged.get(h, "HEAD"))
    tags = sorted((line[c] for c in tagged), key=lambda t: (t[1], t[3]))
    picked = [tags[i] for i in spread(len(tags), samples)]
    if head not in tagged:
        picked.append(line[head])
    return picked, len(tags)


def _tree(top: str, commit: str, pathspec: list[str]) -> list[tuple[str, str, int]]:
    """(blob, path relative to the top, size) of the source files of ``commit``."""
    out = _git(top, ["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--", *pathspec])
    files = []
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, raw = rec.partition(b"\t")
        mode, typ, obj, size = meta.split()
        if typ != b"blob" or mode == b"120000":  # a submodule, a symbolic link
            continue
        path = raw.decode("utf-8", "surrogateescape")
        if _scan.language_of(path) is None:
            continue
        if any(part in DEFAULT_EXCLUDED_DIRS for part in path.split("/")[:-1]):
            continue
        files.append((obj.decode(), path, int(size)))
    return files


def _read_blobs(top: str, blobs: list[str]) -> Iterable[tuple[str, bytes]]:
    for at in range(0, len(blobs), _BATCH):
        part = blobs[at:at + _BATCH]
        out = _git(top, ["cat-file", "--batch"], ("\n".join(part) + "\n").encode())
        pos = 0
        for name in part:
            nl = out.index(b"\n", pos)
            header = out[pos:nl].split()
            if len(header) != 3 or header[1] != b"blob":
                raise HistoryError(f"git cat-file: {name} is not a blob")
            size = int(header[2])
            yield name, out[nl + 1:nl + 1 + size]
            pos = nl + 1 + size + 1


def walk(paths: Sequence[str], *, samples: int = 30, tags: bool = False,
         keep: Optional[Callable[[str], bool]] = None,
         keep_path: Optional[Callable[[str], bool]] = None,
         drop: Optional[Callable[[str, str], bool]] = None,
         max_file_size: int = 20 << 20) -> History:
    """The findings of ``paths`` (in the current git work tree) at sampled
    commits (see the module docstring). ``keep``: the rules, a predicate on
    codes (:func:`anydev.scan.rule_filter`'s; default: the scanner's default
    rules). ``keep_path``: whether a file
    (its path relative to the current folder, as the work tree's scan shows
    it) is scanned at all; ``drop(path, rule)``: whether a finding is left
    out (per-file ignores). HistoryError says why the history cannot be read."""
    if samples < 1:
        raise ValueError("samples must be >= 1")
    t0 = time.perf_counter()
    paths = list(paths) or ["."]
    top = _top(os.path.dirname(os.path.abspath(paths[0])) if os.path.isfile(paths[0])
               else paths[0])
    pathspec = _pathspec(paths, top)
    picked, total = _tags(top, samples) if tags else _commits(top, pathspec, samples)
    # With a rule predicate every rule is scanned for (the opt-in ones too)
    # and the predicate keeps its own.
    select = ["ALL"] if keep is not None else None
    cwd = os.getcwd()
    shown: dict[str, str] = {}   # path relative to the top -> as the work tree's scan shows it
    # (blob, language) -> the rule codes of its findings
    found: dict[tuple[str, Optional[str]], list[str]] = {}
    reused = 0
    points = []
    for commit, date, subject, label in picked:
        files = []
        for blob, path, size in _tree(top, commit, pathspec):
            rel = shown.get(path)
            if rel is None:
                full = os.path.join(top, path)
                rel = shown[path] = os.path.relpath(full, cwd) if \
                    full.startswith(cwd + os.sep) else full
            if keep_path is not None and not keep_path(rel):
                continue
            if size > max_file_size:
                continue  # the scan of the work tree skips it too (and says so)
            files.append((blob, path, rel))
        todo = {}
        for blob, path, rel in files:
            key = (blob, _scan.language_of(path))
            if key in found or key in todo:
                reused += key in found
                continue
            todo[key] = path
        if todo:
            wanted = sorted({b for b, _ in todo})
            data = dict(_read_blobs(top, wanted))
            for (blob, language), path in todo.items():
                findings, _errors = _scan.scan_source(data[blob], path, language=language,
                                                      select=select)
                found[(blob, language)] = [f.rule for f in findings
                                           if keep is None or keep(f.rule)]
        counts = Counts()
        for blob, path, rel in files:
            for code in found[(blob, _scan.language_of(path))]:
                if drop is not None and drop(rel, code):
                    continue
                row = ROWS_BY_CODE.get(code)
                counts.add(category_of(row), row.fix if row is not None else "none")
        points.append(Point(commit, date, subject, label, counts, len(files)))
    return History(points, "tags" if tags else "commits", total, len(found), reused,
                   time.perf_counter() - t0, pathspec)
