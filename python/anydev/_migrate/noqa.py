"""``# noqa`` comments, as ruff reads them, for the scanner's Python findings.

A finding of a Python file is dropped when the line where it starts has a
comment ``# noqa`` (every rule) or ``# noqa: AD101, AD2`` (these codes or code
prefixes; codes of other tools, ``E501``, are ignored). ``# NOQA`` and
``#noqa:AD101`` are the same; the directive may follow other text in the
comment (``# type: ignore  # noqa: AD101``). ``# noqa:`` without a valid code
suppresses nothing. C/C++ files use ``// anydev: ignore[...]`` (native).

The scanner reads the directives itself and drops the findings they name
(Note [noqa directives] in core/scan/src/scan_source.cc, which reads them as
this module does). This module is the reference it is tested against
(tests/python/scan/test_noqa_native.py) and reads them where the scanner leaves
them to Python: a file with a lexing error, another encoding than UTF-8, a
lone '\r', a tab in an indent, or a noqa comment in an f-string's field.
Its comments are found with :mod:`tokenize` (so ``"# noqa"`` in a string is
not a directive), once per file, and each finding is then a dictionary
lookup; the cost is linear in the size of those files.
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


def _regex():
    # compiled on first use: most scans never meet a noqa comment
    if not _compiled:
        _compiled.append(re.compile(_DIRECTIVE, re.IGNORECASE))
    return _compiled[0]


def _has_noqa(data: bytes) -> bool:
    # bytes.lower() is ASCII-only, as (?i) is on bytes, and ten times faster
    # than a case-insensitive search over a file without the directive.
    return b"noqa" in data or b"NOQA" in data or b"noqa" in data.lower()


def directives(data: bytes) -> dict[int, tuple[str, ...]]:
    """Line -> the code prefixes its ``# noqa`` comment suppresses (``ALL``
    for a bare one). Stops at a tokenizing error (the lines before it count)."""
    import tokenize

    out: dict[int, tuple[str, ...]] = {}
    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            if tok.type != tokenize.COMMENT or "noqa" not in tok.string.lower():
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
    cache: dict[str, dict[int, tuple[str, ...]]] = {}
    dropped = False
    for f in findings:
        if f.language != "python":
            out.append(f)
            continue
        d = cache.get(f.path)
        if d is None:
            data = read(f.path)
            d = cache[f.path] = directives(data) if data and _has_noqa(data) else {}
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
