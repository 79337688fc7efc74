"""Edits of one file's text: a sorted set of non-overlapping replacements
(an outer rewrite may absorb the ones inside it), and the edits that turn one
argument list into another while keeping its layout (Python and C++ alike)."""

from __future__ import annotations

import bisect
import re
from typing import Optional, Sequence



class _Edit:
    """One replacement: text[start:end] becomes ``text``. Equal to another
    with the same span and text (``proven`` is not compared). A plain class,
    not a dataclass: importing dataclasses (and with it inspect) was a fifth
    of what `anydev fix` of one file imports."""

    __slots__ = ("start", "end", "text", "proven")

    def __init__(self, start: int, end: int, text: str, proven: bool = False):
        self.start, self.end, self.text = start, end, text
        #: the edit is a dotted name put in place of one (python_tree._token_safe_rename):
        #: the statement it falls in needs no parse again (Note [Checking the rewrite])
        self.proven = proven

    def __repr__(self) -> str:
        return (f"_Edit(start={self.start!r}, end={self.end!r}, text={self.text!r}, "
                f"proven={self.proven!r})")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return (self.start, self.end, self.text) == \
                (other.start, other.end, other.text)  # type: ignore[attr-defined]
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a dataclass with eq, not frozen


class _Edits:
    """Non-overlapping edits of one text, kept in order. An edit may absorb
    the edits inside its span (an outer call rewritten around an inner one):
    the text it puts there was built with :meth:`render`, which applies them."""

    def __init__(self, text: str):
        self.text = text
        self.items: list[_Edit] = []   # by (start, end, order of addition)
        self._keys: list[tuple[int, int, int]] = []
        self._seq = 0

    def _inside(self, start: int, end: int) -> tuple[int, int]:
        """The index range of the edits inside [start, end]."""
        lo = bisect.bisect_left(self._keys, (start, start, -1))
        hi = lo
        while hi < len(self.items) and self.items[hi].start <= end and self.items[hi].end <= end:
            hi += 1
        return lo, hi

    def render(self, start: int, end: int) -> str:
        """text[start:end] with the edits inside it applied."""
        lo, hi = self._inside(start, end)
        out, pos = [], start
        for e in self.items[lo:hi]:
            out.append(self.text[pos:e.start])
            out.append(e.text)
            pos = e.end
        out.append(self.text[pos:end])
        return "".join(out)

    def conflicts(self, batch: Sequence[_Edit]) -> bool:
        """Whether an edit of the batch would cross an existing one (an
        existing edit inside a new one is absorbed, not a conflict)."""
        for b in batch:
            i = bisect.bisect_left(self._keys, (b.start, b.start, -1))
            if i > 0 and self.items[i - 1].end > b.start:
                return True  # one that starts before b and reaches into it
            while i < len(self.items) and self.items[i].start < b.end:
                if self.items[i].end > b.end:
                    return True
                i += 1
        return False

    def add(self, batch: Sequence[_Edit]) -> None:
        for b in batch:
            if b.start < b.end:
                lo, hi = self._inside(b.start, b.end)
                del self.items[lo:hi], self._keys[lo:hi]
        for b in batch:
            key = (b.start, b.end, self._seq)
            self._seq += 1
            i = bisect.bisect_right(self._keys, key)
            self.items.insert(i, b)
            self._keys.insert(i, key)

    def apply(self) -> str:
        return self.render(0, len(self.text)) if self.items else self.text


def _line_start(text: str, index: int) -> int:
    return max(text.rfind("\n", 0, index), text.rfind("\r", 0, index)) + 1


def _line_rest_end(text: str, index: int) -> int:
    m = re.compile(r"\r\n|\r|\n").search(text, index)
    return m.start() if m else len(text)


def _arg_edits(text: str, O: list[tuple[int, int]], O_norm: list[str], R: list[str],
               open_idx: int, close_idx: int, newline: str) -> list[_Edit]:
    """Edits that turn the argument items ``O`` (spans, normalized texts
    ``O_norm``) of a call whose parentheses are at ``open_idx``/``close_idx``
    into the items ``R``, touching only the items that change and keeping a
    one-item-per-line layout."""
    if R == O_norm:
        return []
    if not O:
        if text[open_idx + 1:close_idx].strip() == "":
            return [_Edit(open_idx + 1, close_idx, ", ".join(R))]
        return [_Edit(open_idx + 1, open_idx + 1, ", ".join(R))]
    if not R:
        return [_Edit(open_idx + 1, close_idx, "")]

    def own_line(i: int) -> Optional[str]:
        """The indentation of item i when it starts its line, else None."""
        ls = _line_start(text, O[i][0])
        before = text[ls:O[i][0]]
        return before if ls > open_idx and before.strip() == "" else None

    def insert_before(i: int, extra: list[str]) -> _Edit:
        indent = own_line(i)
        if indent is not None:
            return _Edit(O[i][0], O[i][0], "".join(x + "," + newline + indent for x in extra))
        return _Edit(O[i][0], O[i][0], ", ".join(extra) + ", ")

    def insert_after(i: int, extra: list[str]) -> _Edit:
        indent = own_line(i)
        if indent is not None:
            return _Edit(O[i][1], O[i][1], "".join("," + newline + indent + x for x in extra))
        return _Edit(O[i][1], O[i][1], ", " + ", ".join(extra))

    def delete(d1: int, d2: int) -> _Edit:
        end = O[d2 - 1][1]
        m = re.match(r"[ \t]*,", text[end:])
        end_c = end + m.end() if m else end
        rest = text[end_c:_line_rest_end(text, end_c)].strip()
        if own_line(d1) is not None and (rest == "" or rest.startswith(("#", "//"))):
            stop = _line_rest_end(text, end_c)
            m2 = re.compile(r"\r\n|\r|\n").match(text, stop)
            return _Edit(_line_start(text, O[d1][0]), m2.end() if m2 else stop, "")
        if d2 < len(O):
            return _Edit(O[d1][0], O[d2][0], "")
        return _Edit(O[d1 - 1][1], end, "")

    import difflib  # noqa: PLC0415 (only where arguments change: not at start-up)

    edits: list[_Edit] = []
    sm = difflib.SequenceMatcher(None, O_norm, R, autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        n = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(n):
            edits.append(_Edit(O[i1 + k][0], O[i1 + k][1], R[j1 + k]))
        extra = R[j1 + n:j2]
        if extra:
            if n:
                edits.append(insert_after(i1 + n - 1, extra))
            elif i1 < len(O):
                edits.append(insert_before(i1, extra))
            else:
                edits.append(insert_after(len(O) - 1, extra))
        d1, d2 = i1 + n, i2
        if d1 < d2:
            if d1 == 0 and d2 == len(O):
                return [_Edit(open_idx + 1, close_idx, ", ".join(R))]
            edits.append(delete(d1, d2))
    return edits
