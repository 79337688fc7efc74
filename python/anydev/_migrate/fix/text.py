"""A file's text for the fixer: its encoding (a Python file's coding cookie),
byte-order mark and line breaks, and the conversions between byte offsets (the
scanner's), text indices (the edits') and ast positions (line, UTF-8 column)."""

from __future__ import annotations

import bisect
import codecs
import io
import itertools
import re
import tokenize
from typing import Optional



_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_BREAK_B = re.compile(rb"\r\n|\r|\n")
#: What str.splitlines breaks at besides \r\n, \r and \n: a text without them
#: is split by it, in C, exactly as _LINE_BREAK splits it.
_OTHER_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` with their breaks (\r\n, \r or \n only)."""
    if not (("\x0b" in text or "\x0c" in text or "\x1c" in text or "\x1d" in text or
             "\x1e" in text) if text.isascii() else _OTHER_BREAKS.search(text)):
        # (an ASCII text can hold only these five of them: a look for each
        # character, in C, instead of the expression's test of every character)
        return text.splitlines(keepends=True)
    out, pos = [], 0
    for m in _LINE_BREAK.finditer(text):
        out.append(text[pos:m.end()])
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


class _FileError(Exception):
    """The file cannot be fixed soundly; it is left as it was."""




def _plain_utf8(data: bytes) -> Optional[str]:
    """What tokenize.detect_encoding answers for ``data`` when its first two
    lines (as its readline splits them, at b"\\n") have no coding cookie and
    are valid UTF-8: "utf-8-sig" after a byte-order mark, else "utf-8"; None
    otherwise (detect_encoding must then read them: a cookie, or an error).
    Without the word "coding" no cookie can match, and lines that decode
    cannot make it raise; so no BytesIO, readline and regular expressions per file."""
    end = data.find(b"\n")
    if end >= 0:
        end = data.find(b"\n", end + 1)
    head = data if end < 0 else data[:end + 1]
    if b"coding" in head:
        return None
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8"


class _Text:
    """A file's text with byte <-> text index conversions and its encoding."""

    def __init__(self, data: bytes, language: str, strict: bool = False):
        self.data = data
        self.bom = b""
        self.encoding = "utf-8"
        body = data
        if data.startswith(codecs.BOM_UTF8):
            self.bom = codecs.BOM_UTF8
            body = data[len(codecs.BOM_UTF8):]
        if language == "python":
            try:
                enc = _plain_utf8(data) or tokenize.detect_encoding(io.BytesIO(data).readline)[0]
            except SyntaxError as e:
                if strict:
                    raise _FileError(f"{e.msg if hasattr(e, 'msg') else e}; nothing was changed"
                                     ) from None
                enc = "utf-8"
            self.encoding = "utf-8" if enc == "utf-8-sig" else enc
        self.body = body
        if strict:  # a strict decode that succeeds is the surrogateescape one
            try:
                self.text = body.decode(self.encoding)
            except UnicodeDecodeError as e:
                raise _FileError(f"is not valid {self.encoding} (byte {e.start + len(self.bom)}); "
                                 "nothing was changed") from None
        else:
            self.text = body.decode(self.encoding, errors="surrogateescape")
        m = _LINE_BREAK.search(self.text)
        self.newline = m.group(0) if m else "\n"
        self.ascii = self.text.isascii()
        self._line_starts: Optional[list[int]] = None
        self._byte_line_starts: Optional[list[int]] = None

    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0, *itertools.accumulate(map(len, split_lines(self.text)))]
            if len(starts) > 1 and self.text[-1] not in "\r\n":
                starts.pop()  # the last line has no break: no line starts after it
            self._line_starts = starts
        return self._line_starts

    def line_of(self, index: int) -> int:
        """0-based line of a text index."""
        return bisect.bisect_right(self.line_starts(), index) - 1

    def line_end(self, line: int, with_break: bool) -> int:
        """Text index of the end of a 0-based line, before or after its line break."""
        starts = self.line_starts()
        if line + 1 < len(starts):
            end = starts[line + 1]
            if with_break:
                return end
            seg = self.text[starts[line]:end]
            return end - (len(seg) - len(seg.rstrip("\r\n")))
        return len(self.text)

    def index_of_byte(self, offset: int) -> int:
        """Text index of a byte offset into the file (the BOM included)."""
        offset = max(0, offset - len(self.bom))
        if self.ascii:
            return offset
        if self._byte_line_starts is None:
            self._byte_line_starts = [0] + [m.end() for m in _LINE_BREAK_B.finditer(self.body)]
        bstarts, tstarts = self._byte_line_starts, self.line_starts()
        if len(bstarts) != len(tstarts):  # pragma: no cover - encodings whose breaks are not ASCII
            return len(self.body[:offset].decode(self.encoding, errors="surrogateescape"))
        k = bisect.bisect_right(bstarts, offset) - 1
        return tstarts[k] + len(self.body[bstarts[k]:offset].decode(
            self.encoding, errors="surrogateescape"))

    def index_of_ast(self, lineno: int, col_offset: int) -> int:
        """Text index of an ast position (1-based line, UTF-8 byte column)."""
        starts = self._line_starts or self.line_starts()
        start = starts[lineno - 1]
        if self.ascii:
            return start + col_offset
        end = starts[lineno] if lineno < len(starts) else len(self.text)
        prefix = self.text[start:end].encode("utf-8", errors="surrogateescape")[:col_offset]
        return start + len(prefix.decode("utf-8", errors="surrogateescape"))

    def ast_pos(self, index: int) -> tuple[int, int]:
        """The ast position (1-based line, UTF-8 column) of a text index."""
        starts = self._line_starts or self.line_starts()
        line = bisect.bisect_right(starts, index) - 1
        start = starts[line]
        col = index - start if self.ascii else \
            len(self.text[start:index].encode("utf-8", errors="surrogateescape"))
        return line + 1, col

    def span(self, node) -> tuple[int, int]:
        if self.ascii:
            starts = self._line_starts or self.line_starts()
            return (starts[node.lineno - 1] + node.col_offset,
                    starts[node.end_lineno - 1] + node.end_col_offset)
        return (self.index_of_ast(node.lineno, node.col_offset),
                self.index_of_ast(node.end_lineno, node.end_col_offset))

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.encoding, errors="surrogateescape")


def _has_comment(src: str) -> bool:
    try:
        for t in tokenize.generate_tokens(io.StringIO(src, newline=None).readline):
            if t.type == tokenize.COMMENT:
                return True
    except (tokenize.TokenError, SyntaxError):
        return "#" in src
    return False
