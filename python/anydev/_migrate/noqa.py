"""``# noqa`` comments, as ruff reads them, for the scanner's Python findings.

A finding of a Python file is dropped when the line where it starts has a
comment ``# noqa`` (every rule) or ``# noqa: AD101, AD2`` (these codes or code
prefixes; codes of other tools, ``E501``, are ignored). ``# NOQA`` and
``#noqa:AD101`` are the same; the directive may follow other text in the
comment (``# type: ignore  # noqa: AD101``). ``# noqa:`` without a valid code
suppresses nothing. C/C++ files use ``// anydev: ignore[...]`` (native).

The scanner reads the line directives itself and drops the findings they
name (Note [noqa directives] in core/scan/src/scan_source.cc, which reads them
as this module does). This module is the reference it is tested against
(tests/python/scan/test_noqa_native.py) and reads them where the scanner leaves
them to Python: a file with a lexing error, another encoding than UTF-8, a
lone '\r', a tab in an indent, or a noqa comment in an f-string's field.

A comment ``# anydev: noqa`` alone on its line, anywhere in a Python file,
exempts the whole file (ruff's ``# ruff: noqa``; ``anydev`` in lower, upper or
title case, ``noqa`` in any); ``# anydev: noqa: AD1,
AD601`` exempts it from these codes or prefixes only. After code on the same
line it is no file-level directive (and no line directive either). The
scanner does not read these: anydev.scan looks for them in the Python files
with findings that contain the bytes ``nydev`` (Note [File-level noqa]).

Where this module reads a file, its comments are found with :mod:`tokenize`
(so ``"# noqa"`` in a string is not a directive), once per file, and each
finding is then a dictionary lookup; the cost is linear in the size of those
files.
"""

from __future__ import annotations

import io
import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs the command's start-up
    from typing import Callable, Iterable, Optional

_DIRECTIVE = (r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[,\s]+[A-Za-z]+[0-9]+)*)"
              r"|(?P<colon>:))?")
ALL = ("",)  # every code starts with ""
_compiled: list = []


_FILE_DIRECTIVE = (r"#\s*anydev:\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]*(?:[,\s]+[A-Za-z]+[0-9]*)*)"
                   r"|(?P<colon>:))?\s*$")
_file_compiled: list = []


def _file_regex():
    if not _file_compiled:
        _file_compiled.append(re.compile(_FILE_DIRECTIVE, re.IGNORECASE))
    return _file_compiled[0]


def _regex():
    # compiled on first use: most scans never meet a noqa comment
    if not _compiled:
        _compiled.append(re.compile(_DIRECTIVE, re.IGNORECASE))
    return _compiled[0]


def _has_noqa(data: bytes) -> bool:
    # bytes.lower() is ASCII-only, as (?i) is on bytes, and ten times faster
    # than a case-insensitive search over a file without the directive.
    return b"noqa" in data or b"NOQA" in data or b"noqa" in data.lower()


def _comments(data: bytes):
    """The comments of a Python file that mention noqa (tokenize's tokens),
    up to a tokenizing error."""
    import tokenize

    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            if tok.type == tokenize.COMMENT and "noqa" in tok.string.lower():
                yield tok
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, ValueError):
        return


def _own_line(tok) -> bool:
    return tok.line[:tok.start[1]].strip() == ""


def file_exemption(data: bytes) -> Optional[tuple[str, ...]]:
    """The code prefixes a file-level ``# anydev: noqa`` exempts the file from
    (``ALL`` for a bare one), or None when the file has none."""
    if b"nydev" not in data and b"NYDEV" not in data:  # anydev, Anydev, ANYDEV
        return None
    out: Optional[tuple[str, ...]] = None
    for tok in _comments(data):
        if not _own_line(tok):
            continue
        m = _file_regex().match(tok.string)
        if m is None or m.group("colon"):
            continue  # `# anydev: noqa:` names no code: exempts nothing
        if not m.group("codes"):
            return ALL
        codes = tuple(c.upper() for c in re.split(r"[,\s]+", m.group("codes")) if c)
        out = codes if out is None else out + codes
    return out


def spans(data: bytes) -> list[tuple[int, int, int, tuple[str, ...]]]:
    """Each line ``# noqa`` directive that names codes: (line, first column,
    end column (1-based, exclusive, in code points, of the directive from its
    ``#`` to its last code), codes as written). For ``AD001`` (unused noqa)."""
    out = []
    for tok in _comments(data):
        if _file_regex().match(tok.string):
            continue  # a file-level directive
        row, col = tok.start
        for m in _regex().finditer(tok.string):
            if m.group("codes"):
                codes = tuple(c.upper() for c in re.split(r"[,\s]+", m.group("codes")) if c)
                out.append((row, col + m.start() + 1, col + m.end() + 1, codes))
    return out


def directives(data: bytes) -> dict[int, tuple[str, ...]]:
    """Line -> the code prefixes its ``# noqa`` comment suppresses (``ALL``
    for a bare one). Stops at a tokenizing error (the lines before it count).
    A file-level ``# anydev: noqa`` is no line's directive."""
    import tokenize

    out: dict[int, tuple[str, ...]] = {}
    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            if tok.type != tokenize.COMMENT or "noqa" not in tok.string.lower():
                continue
            if _file_regex().match(tok.string):
                continue
            codes = _parse(tok.string)
            if codes is not None:
                line = tok.start[0]
                out[line] = ALL if codes == ALL or out.get(line) == ALL else \
                    out.get(line, ()) + codes
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, ValueError):
        pass
    return out


def _parse(comment: str) -> Optional[tuple[str, ...]]:
    codes: list[str] = []
    found = False
    for m in _regex().finditer(comment):
        if m.group("codes"):
            codes += [c.upper() for c in re.split(r"[,\s]+", m.group("codes")) if c]
            found = True
        elif not m.group("colon"):
            return ALL  # a bare `# noqa`
    return tuple(codes) if found else None


def filter_findings(findings: list, read: Callable[[str], Optional[bytes]]) -> list:
    """The findings without those a ``# noqa`` comment suppresses. ``read``
    returns a file's bytes (None: unreadable, nothing is dropped)."""
    if not findings:
        return findings
    out = []
    cache: dict[str, tuple[dict[int, tuple[str, ...]], Optional[tuple[str, ...]]]] = {}
    dropped = False
    for f in findings:
        if f.language != "python":
            out.append(f)
            continue
        got = cache.get(f.path)
        if got is None:
            data = read(f.path)
            got = cache[f.path] = ((directives(data), file_exemption(data))
                                   if data and _has_noqa(data) else ({}, None))
        d, whole = got
        if whole is not None and any(f.rule.startswith(c) for c in whole):
            dropped = True
            continue
        codes = d.get(f.line) if d else None
        if codes is not None and any(f.rule.startswith(c) for c in codes):
            dropped = True
            continue
        out.append(f)
    return out if dropped else findings


def read_file(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def codes_of(comment: str) -> Optional[Iterable[str]]:
    """For tests: the codes a comment's directive names (ALL: every code)."""
    return _parse(comment)
