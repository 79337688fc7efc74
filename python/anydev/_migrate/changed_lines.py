"""The lines added or changed since a git revision: what ``anydev scan
--diff-base REV`` reports on, so that CI fails on new legacy references
only (a ratchet on new code; torchtitan's CI checks the added lines alone).

    changed = changed_since("origin/main")          # DiffBaseError: not a repo, unknown REV
    changed.covers("src/train.py", 41, 41)          # a finding on an added or changed line?

The base is the merge base of REV and HEAD (``git merge-base``), as
``git diff REV...`` takes it: the commits REV gained since the branch
started are not the branch's. The changes are what ``git diff <base>``
gives, the work tree against that commit (staged and unstaged changes
alike), with renames followed (``-M``: a file moved unchanged has no new
line, one moved and edited has the edited ones), and every untracked file
that no ignore rule matches counts as new, all of it (``git ls-files
--others --exclude-standard``). ``git diff -U0`` gives each hunk's new
lines exactly (``@@ -a,b +c,d @@``: lines c to c+d-1 of the new file).

Paths are compared by their real path, so a finding shown as ``../x.py``
or through a symbolic link to a folder still finds its file.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional, Sequence

__all__ = ["BaseVersions", "ChangedLines", "DiffBaseError", "changed_since", "merge_base",
           "new_line_ranges"]

#: A whole file is new (untracked, or added since the base).
WHOLE = None


class DiffBaseError(Exception):
    """``--diff-base`` cannot be honoured: not in a git work tree, git
    missing, an unknown revision, no merge base. The message says which."""


class ChangedLines:
    """The new lines of each changed file: ``files`` maps a file's real path
    to a sorted list of (first, last) line ranges, or :data:`WHOLE`."""

    def __init__(self, toplevel: str, base: str, rev: str,
                 files: dict[str, Optional[list[tuple[int, int]]]]) -> None:
        self.toplevel, self.base, self.rev, self.files = toplevel, base, rev, files
        self._real: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"ChangedLines({self.rev!r} at {self.base[:12]}, {len(self.files)} files)"

    def _key(self, path: str) -> str:
        key = self._real.get(path)
        if key is None:
            key = self._real[path] = os.path.realpath(path)
        return key

    def has_file(self, path: str) -> bool:
        """Whether the file has any new line."""
        return self._key(path) in self.files

    def covers(self, path: str, line: int, end_line: Optional[int] = None) -> bool:
        """Whether any line from ``line`` to ``end_line`` (inclusive; default
        ``line``) of the file is new."""
        key = self._key(path)
        if key not in self.files:
            return False
        return covers(self.files[key], line, end_line)

    def outside(self, path: str) -> bool:
        """Whether ``path`` lies outside the work tree."""
        real = self._key(path)
        top = self.toplevel.rstrip(os.sep) + os.sep
        return real != self.toplevel and not real.startswith(top)


def _git(args: Sequence[str], cwd: str) -> tuple[int, bytes, str]:
    import subprocess

    env = dict(os.environ)
    env.pop("GIT_EXTERNAL_DIFF", None)
    env["LC_ALL"] = "C"  # git's messages as the errors below expect them
    try:
        p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, env=env, timeout=300,
                           check=False)
    except FileNotFoundError:
        raise DiffBaseError("--diff-base needs git, and git is not on PATH") from None
    except (OSError, subprocess.SubprocessError) as e:
        raise DiffBaseError(f"--diff-base: cannot run git: {e}") from None
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace").strip()


def merge_base(rev: str, cwd: str = ".") -> tuple[str, str]:
    """(the work tree's top folder, the merge base of ``rev`` and HEAD) for
    the work tree that holds ``cwd``; DiffBaseError says what is missing."""
    cwd = os.path.abspath(cwd)
    rc, out, err = _git(["rev-parse", "--show-toplevel"], cwd)
    if rc != 0:
        raise DiffBaseError(f"--diff-base {rev}: {cwd} is not in a git work tree "
                            f"(git: {err.splitlines()[-1] if err else 'rev-parse failed'})")
    toplevel = os.path.realpath(out.decode("utf-8", "surrogateescape").strip())
    if rev.startswith("-"):
        raise DiffBaseError(f"--diff-base {rev}: not a revision")
    rc, out, err = _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], toplevel)
    if rc != 0:
        raise DiffBaseError(f"--diff-base {rev}: HEAD has no commit yet, so there is no merge "
                            f"base; scan without --diff-base")
    rc, out, err = _git(["rev-parse", "--verify", "--quiet", "--end-of-options",
                         f"{rev}^{{commit}}"], toplevel)
    if rc != 0:
        raise DiffBaseError(f"--diff-base {rev}: unknown revision (not a commit, branch or tag "
                            f"of this repository; `git fetch` it first?)")
    target = out.decode().strip()
    rc, out, err = _git(["merge-base", target, "HEAD"], toplevel)
    if rc != 0:
        raise DiffBaseError(f"--diff-base {rev}: {rev} and HEAD have no common ancestor "
                            f"(git merge-base found none)")
    base = out.decode().strip()
    return toplevel, base


def changed_since(rev: str, cwd: str = ".") -> ChangedLines:
    """The lines added or changed since the merge base of ``rev`` and HEAD
    (see the module docstring), in the work tree that holds ``cwd``."""
    toplevel, base = merge_base(rev, cwd)
    rc, out, err = _git(["-c", "core.quotePath=true", "diff", "--no-color", "--no-ext-diff",
                         "--no-textconv", "--ignore-submodules", "-U0", "-M",
                         "--src-prefix=a/", "--dst-prefix=b/", base, "--"], toplevel)
    if rc != 0:
        raise DiffBaseError(f"--diff-base {rev}: git diff failed: {err}")
    files = _parse_diff(out, toplevel)
    rc, out, err = _git(["ls-files", "-z", "--others", "--exclude-standard"], toplevel)
    if rc != 0:
        raise DiffBaseError(f"--diff-base {rev}: git ls-files failed: {err}")
    for raw in out.split(b"\0"):
        if raw:
            files[os.path.realpath(os.path.join(toplevel, os.fsdecode(raw)))] = WHOLE
    return ChangedLines(toplevel, base, rev, files)


def _path_of(field: bytes) -> Optional[bytes]:
    """The path of a ``+++ b/...`` line's field: git's quoted form
    (``"b/caf\\303\\251.py"``) read back; None for /dev/null."""
    if field == b"/dev/null":
        return None
    if field.startswith(b'"'):
        from anydev.scan import unquote_path

        raw = unquote_path(field.decode("ascii", "surrogateescape"))
        if raw is None:
            return None
        field = raw
    return field[2:] if field.startswith(b"b/") else field


def _parse_diff(out: bytes, toplevel: str) -> dict[str, Optional[list[tuple[int, int]]]]:
    """The new lines of each file of a ``git diff -U0`` output."""
    files: dict[str, Optional[list[tuple[int, int]]]] = {}
    current: Optional[list[tuple[int, int]]] = None
    new_file = False
    for line in out.split(b"\n"):
        if line.startswith(b"diff --git "):
            current, new_file = None, False
        elif line.startswith(b"new file mode"):
            new_file = True
        elif line.startswith(b"+++ "):
            rel = _path_of(line[4:].rstrip(b"\t"))
            if rel is None:
                current = None
                continue
            key = os.path.realpath(os.path.join(toplevel, os.fsdecode(rel)))
            if new_file:
                files[key] = WHOLE
                current = None
            else:
                current = files.setdefault(key, [])
        elif line.startswith(b"@@ ") and current is not None:
            # @@ -a[,b] +c[,d] @@
            plus = line.split(b" ")[2]
            start, _, count = plus[1:].partition(b",")
            n = int(count) if count else 1
            if n:
                current.append((int(start), int(start) + n - 1))
    for ranges in files.values():
        if ranges:
            ranges.sort()
    return files


# --- a buffer against the base (the editor server) -------------------------------------


class BaseVersions:
    """The merge base's version of the files of one work tree, for text that
    is not on disk yet (an editor's buffer): ``text(path)`` is the file's
    bytes at the base, followed through a rename since (``git diff -M``),
    or None where the file is new since the base. Read once a file."""

    def __init__(self, rev: str, cwd: str) -> None:
        self.rev = rev
        self.toplevel, self.base = merge_base(rev, cwd)
        self._texts: dict[str, Optional[bytes]] = {}
        self._renamed: Optional[dict[str, str]] = None

    def _renames(self) -> dict[str, str]:
        """Real path now -> the path at the base (relative to the top)."""
        if self._renamed is None:
            self._renamed = {}
            rc, out, _err = _git(["diff", "--no-color", "--no-ext-diff", "--name-status", "-z",
                                  "-M", self.base, "--"], self.toplevel)
            fields = out.split(b"\0") if rc == 0 else []
            i = 0
            while i < len(fields) and fields[i]:
                status = fields[i]
                if status[:1] in (b"R", b"C") and i + 2 < len(fields):
                    old, new = os.fsdecode(fields[i + 1]), os.fsdecode(fields[i + 2])
                    self._renamed[os.path.realpath(os.path.join(self.toplevel, new))] = old
                    i += 3
                else:
                    i += 2
        return self._renamed

    def text(self, path: str) -> Optional[bytes]:
        real = os.path.realpath(path)
        if real in self._texts:
            return self._texts[real]
        got: Optional[bytes] = None
        top = self.toplevel.rstrip(os.sep) + os.sep
        if real.startswith(top):
            rel = self._renames().get(real) or os.path.relpath(real, self.toplevel)
            rc, out, _err = _git(["cat-file", "blob", f"{self.base}:{rel.replace(os.sep, '/')}"],
                                 self.toplevel)
            got = out if rc == 0 else None
        self._texts[real] = got
        return got


def new_line_ranges(old: Optional[bytes], new: bytes) -> Optional[list[tuple[int, int]]]:
    """The (first, last) lines of ``new`` (1-based) that are not lines of
    ``old`` as a diff matches them (:data:`WHOLE` where there is no old
    text): what ``git diff -U0`` would call added or changed (Note [A
    buffer's new lines])."""
    if old is None:
        return WHOLE
    a, b = old.splitlines(), new.splitlines()
    new_lines: list[int] = []
    _diff(a, 0, len(a), b, 0, len(b), new_lines, 0)
    ranges: list[tuple[int, int]] = []
    for n in sorted(new_lines):
        if ranges and ranges[-1][1] == n:
            ranges[-1] = (ranges[-1][0], n + 1)
        else:
            ranges.append((n + 1, n + 1))
    return ranges


# Note [A buffer's new lines]: the editor server diffs the buffer against
# the file at the base on every change, so the diff must cost little on a
# file of thousands of lines whose edits are spread over it. It is patience
# diff's: the lines before and after the edits are matched first; then the
# lines that occur once in each side anchor the match (the longest run of
# them in the same order on both sides), and the gaps between anchors are
# diffed the same way; a gap with no such line goes to difflib (small by
# then). difflib alone on the whole text took 771 ms for 30 edits of a
# 5,000-line file whose lines repeat (a training script's template
# functions), this 2.5 ms. Its answer is a valid diff, and on the random
# edits of tests/python/scan/test_scan_diff_base.py no larger than difflib's.
_DEPTH = 32


def _diff(a: list, a0: int, a1: int, b: list, b0: int, b1: int, out: list, depth: int) -> None:
    """Appends to ``out`` the indices of b[b0:b1] that a diff against
    a[a0:a1] calls new."""
    while a0 < a1 and b0 < b1 and a[a0] == b[b0]:
        a0, b0 = a0 + 1, b0 + 1
    while a0 < a1 and b0 < b1 and a[a1 - 1] == b[b1 - 1]:
        a1, b1 = a1 - 1, b1 - 1
    if b0 == b1:
        return
    if a0 == a1:
        out.extend(range(b0, b1))
        return
    anchors = _unique_anchors(a, a0, a1, b, b0, b1) if depth < _DEPTH else []
    if not anchors:
        from difflib import SequenceMatcher

        for tag, _i1, _i2, j1, j2 in SequenceMatcher(None, a[a0:a1], b[b0:b1],
                                                     autojunk=False).get_opcodes():
            if tag in ("replace", "insert"):
                out.extend(range(b0 + j1, b0 + j2))
        return
    pa, pb = a0, b0
    for i, j in anchors:
        _diff(a, pa, i, b, pb, j, out, depth + 1)
        pa, pb = i + 1, j + 1
    _diff(a, pa, a1, b, pb, b1, out, depth + 1)


def _unique_anchors(a: list, a0: int, a1: int, b: list, b0: int, b1: int) -> list:
    """The (i, j) pairs of lines that occur once in a[a0:a1] and once in
    b[b0:b1], the longest chain of them increasing on both sides."""
    count: dict = {}
    for i in range(a0, a1):
        c = count.get(a[i])
        count[a[i]] = (1, i) if c is None else (2, -1)
    seen: dict = {}
    for j in range(b0, b1):
        line = b[j]
        c = count.get(line)
        if c is not None and c[0] == 1:
            seen[line] = -1 if line in seen else j
    pairs = sorted((count[line][1], j) for line, j in seen.items() if j >= 0)
    if not pairs:
        return []
    # the longest increasing run of j (patience sorting)
    from bisect import bisect_left

    tails: list = []  # the j of the last pair of the best chain of each length
    tail_at: list = []  # its index in pairs
    back = [-1] * len(pairs)
    for k, (_i, j) in enumerate(pairs):
        n = bisect_left(tails, j)
        if n == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[n] = j
            tail_at[n] = k
        back[k] = tail_at[n - 1] if n else -1
    chain = []
    k = tail_at[-1]
    while k != -1:
        chain.append(pairs[k])
        k = back[k]
    chain.reverse()
    return chain


def covers(ranges: Optional[list[tuple[int, int]]], line: int,
           end_line: Optional[int] = None) -> bool:
    """Whether a line from ``line`` to ``end_line`` lies in ``ranges``
    (sorted; :data:`WHOLE`: every line)."""
    if ranges is WHOLE:
        return True
    last = line if end_line is None or end_line < line else end_line
    from bisect import bisect_right

    i = bisect_right(ranges, (last, float("inf"))) - 1
    return i >= 0 and ranges[i][1] >= line
