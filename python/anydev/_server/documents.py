"""The documents an editor has open: their text as the client changes it
(full and incremental sync), positions converted between the client's
encoding and the scanner's columns, and notebooks with their cells.

A position is (line, character) with lines split at ``\\n``, ``\\r\\n`` and
``\\r`` (the LSP's line ends) and characters counted in the encoding agreed
at initialize: UTF-16 code units (the LSP default), UTF-8 bytes or UTF-32
code points (the scanner's own columns). A position past the end of its
line is the line's end, one past the last line is the end of the text (as
the LSP says a client may send them); a range whose end is before its start
is an error of the change (InvalidParams), never a crash.
"""

from __future__ import annotations

import re
from typing import Optional

_LINE_END = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list:
    """The lines of ``text`` with their ends; the last is "" when the text
    ends with a line end (so a text has len(lines) - 1 line ends)."""
    out = []
    at = 0
    for m in _LINE_END.finditer(text):
        out.append(text[at:m.end()])
        at = m.end()
    out.append(text[at:])
    return out


def _body(line: str) -> str:
    """A line without its end."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


class Encoding:
    """Conversions between str indexes of a line and the client's characters."""

    def __init__(self, name: str) -> None:
        if name not in ("utf-8", "utf-16", "utf-32"):
            raise ValueError(f"unknown position encoding {name!r}")
        self.name = name

    def index(self, line: str, character: int) -> int:
        """The str index of the client's ``character`` in ``line`` (its end
        when past it)."""
        body = _body(line)
        if character <= 0:
            return 0
        if self.name == "utf-32" or body.isascii():
            return min(character, len(body))
        units = 0
        for i, ch in enumerate(body):
            units += self._width(ch)
            if units > character:
                return i
            if units == character:
                return i + 1
        return len(body)

    def character(self, line: str, index: int) -> int:
        """The client's character of the str index ``index`` of ``line``."""
        if self.name == "utf-32" or index <= 0:
            return max(index, 0)
        head = line[:index]
        if head.isascii():
            return len(head)
        if self.name == "utf-16":
            return len(head) + sum(1 for ch in head if ord(ch) > 0xFFFF)
        return len(head.encode("utf-8", "surrogatepass"))

    def _width(self, ch: str) -> int:
        o = ord(ch)
        if self.name == "utf-16":
            return 2 if o > 0xFFFF else 1
        return 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4


class ChangeError(ValueError):
    """A change the document cannot take (a range that is not one)."""


class TextDocument:
    """An open text document (or a notebook's cell): its URI, language,
    version and lines."""

    def __init__(self, uri: str, language: str, version: int, text: str) -> None:
        self.uri = uri
        self.language = language or ""
        self.version = version
        self.lines = split_lines(text)
        self._text: Optional[str] = text

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "".join(self.lines)
        return self._text

    def set_text(self, text: str) -> None:
        self.lines = split_lines(text)
        self._text = text

    def apply(self, change: dict, enc: Encoding) -> None:
        """Applies one TextDocumentContentChangeEvent (a whole text, or a
        range and its new text)."""
        if not isinstance(change, dict) or not isinstance(change.get("text"), str):
            raise ChangeError("a change needs a `text` string")
        rng = change.get("range")
        if rng is None:
            self.set_text(change["text"])
            return
        (l1, c1), (l2, c2) = _position(rng, "start"), _position(rng, "end")
        if (l2, c2) < (l1, c1):
            raise ChangeError(f"a range that ends ({l2}:{c2}) before it starts ({l1}:{c1})")
        lines = self.lines
        last = len(lines) - 1
        if l1 > last:
            l1, c1 = last, 1 << 62
        if l2 > last:
            l2, c2 = last, 1 << 62
        i1 = enc.index(lines[l1], c1)
        i2 = enc.index(lines[l2], c2)
        if l1 == l2 and i2 < i1:  # pragma: no cover - positions are ordered
            i2 = i1
        new = split_lines(lines[l1][:i1] + change["text"] + lines[l2][i2:])
        if l2 < last:
            new.pop()  # it ends with lines[l2]'s line end: lines[l2 + 1] goes on
        lines[l1:l2 + 1] = new
        # a "\r" before the change and a "\n" after it are one line end now:
        # the lines around the change are split again
        lo, hi = max(l1 - 1, 0), min(l1 + len(new) + 1, len(lines))
        again = split_lines("".join(lines[lo:hi]))
        if hi < len(lines):
            again.pop()
        lines[lo:hi] = again
        self._text = None

    def position(self, line: int, column: int, enc: Encoding) -> dict:
        """The LSP position of a 1-based line and code-point column."""
        k = min(max(line - 1, 0), len(self.lines) - 1)
        return {"line": k, "character": enc.character(self.lines[k], max(column - 1, 0))}

    def end(self, enc: Encoding) -> dict:
        """The position just past the text."""
        k = len(self.lines) - 1
        return {"line": k, "character": enc.character(self.lines[k], len(self.lines[k]))}


def _position(rng: dict, key: str) -> tuple:
    p = rng.get(key) if isinstance(rng, dict) else None
    if not isinstance(p, dict):
        raise ChangeError(f"a range needs a `{key}` position")
    line, ch = p.get("line"), p.get("character")
    if not isinstance(line, int) or not isinstance(ch, int) or isinstance(line, bool) or \
            isinstance(ch, bool) or line < 0 or ch < 0:
        raise ChangeError(f"a position needs a `line` and a `character` >= 0, not {p!r}")
    return line, ch


class Notebook:
    """An open notebook document: its URI, type, version and cells (in
    order: (kind, cell document URI)); the cells' text documents are kept
    with the other documents, by their URIs."""

    def __init__(self, uri: str, notebook_type: str, version: int, cells: list) -> None:
        self.uri = uri
        self.notebook_type = notebook_type
        self.version = version
        self.cells = cells  # [[kind (1 markup, 2 code), cell URI]]
