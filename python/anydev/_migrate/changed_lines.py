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

__all__ = ["ChangedLines", "DiffBaseError", "changed_since"]

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
        ranges = self.files[key]
        if ranges is WHOLE:
            return True
        last = line if end_line is None or end_line < line else end_line
        from bisect import bisect_right

        i = bisect_right(ranges, (last, float("inf"))) - 1
        return i >= 0 and ranges[i][1] >= line

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


def changed_since(rev: str, cwd: str = ".") -> ChangedLines:
    """The lines added or changed since the merge base of ``rev`` and HEAD
    (see the module docstring), in the work tree that holds ``cwd``."""
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
