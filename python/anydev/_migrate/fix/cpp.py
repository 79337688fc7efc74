"""Rewrites of C++ calls and references (templates bound to the legacy
signature's parameters), the driver of a C++ file: classes are
anydev._migrate.fix.cpp_classes, includes and using-declarations anydev._migrate.fix.cpp_includes."""

from __future__ import annotations

import re
from typing import Optional

from anydev import scan as _scan
from anydev._compat.table import Row
from .cpp_classes import _CPP_CLASSES, _cpp_class_edits, _cpp_construction
from .cpp_includes import _cpp_include_edits, _fix_cpp_usings
from .cpp_lex import _cpp_code_mask, _cpp_items, _cpp_param_names
from .edits import _Edit, _Edits, _arg_edits
from .rows import _allowed, _renamable, _row_of
from .templates import _call_form, _render_items, render_template, unplaced_arguments
from .text import _Text


def _fix_cpp(text: _Text, findings: list[_scan.Finding], unsafe: bool, path: str
             ) -> tuple[str, list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    edits = _Edits(text.text)
    mask = _cpp_code_mask(text.text)
    applied: list[_scan.Finding] = []
    skipped: list[tuple[_scan.Finding, str]] = []
    usings: list[_scan.Finding] = []
    work = []
    for f in findings:
        start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
        call_end = text.index_of_byte(f.call_end) if f.call_end is not None else None
        extent = (call_end or end) - start
        row = _row_of(f)
        if f.kind != "import" and row is not None and row.kind == "class" and \
                row.replacement in _CPP_CLASSES:
            # a constructor's arguments are rewritten with the class name:
            # after the rewrites inside them
            cons = _cpp_construction(text.text, mask, start, end)
            if cons is not None and cons[2] >= 0:
                extent = cons[2] + 1 - start
        work.append((extent, start, end, call_end, f))
    work.sort(key=lambda w: (w[0], w[1]))
    for _, start, end, call_end, f in work:
        row = _row_of(f)
        why = f"{f.symbol} is not in the compat table" if row is None else _allowed(row, unsafe)
        if why is None and f.kind == "import":
            usings.append(f)
            continue
        new: list[_Edit] = []
        if why is None:
            assert row is not None
            if row.kind == "class" and row.replacement in _CPP_CLASSES and _renamable(row) and \
                    not re.match(r"\s*::", text.text[end:end + 64]):
                why, new = _cpp_class_edits(text.text, mask, edits, start, end, row)
            elif f.kind == "call" and call_end is not None and row.template is not None:
                why, new = _cpp_call(text.text, edits, start, end, call_end, row, text.newline)
            elif f.kind != "call" and re.match(r"\s*::", text.text[end:end + 64]):
                why = (f"a member of `{f.text}` is used, which {row.replacement or 'the replacement'} "
                       "may not have; rewrite by hand")
            elif f.kind != "call" and not _renamable(row):
                why = (f"{row.code}: a reference that is not a call cannot carry the arguments "
                       f"{row.replacement or 'the replacement'} needs; rewrite it by hand")
            elif not row.replacement:
                why = f"{row.code} has no replacement"
            else:
                new = [_Edit(start, end, row.replacement)]
        if why is None and edits.conflicts(new):
            why = "overlaps another rewrite; run the fixer again"
        if why is None:
            edits.add(new)
            applied.append(f)
        else:
            skipped.append((f, why))
    if usings:
        _fix_cpp_usings(text, edits, usings, applied, skipped, path)
    edits.add(_comment_alignment(text, edits, mask))
    edits.add(_cpp_include_edits(text, edits, mask))
    return edits.apply(), applied, skipped


def _comment_alignment(text: _Text, edits: _Edits, mask: str) -> list[_Edit]:
    """Edits of the blanks before a trailing `//` comment that keep it in its
    column where the rewrites on its line changed the code's length (Note
    [Aligned comments]): the blanks grow or shrink; where the code grew past
    the column, the column of the whole aligned run moves right."""
    by_line: dict[int, int] = {}
    for e in list(edits.items):
        first, last = text.line_of(e.start), text.line_of(max(e.start, e.end - 1))
        if first != last or "\n" in e.text or "\r" in e.text:
            continue
        by_line[first] = by_line.get(first, 0) + len(e.text) - (e.end - e.start)
    out: list[_Edit] = []
    moved: set[int] = set()  # the lines of the runs moved whole
    for line, delta in sorted(by_line.items()):
        if not delta or line in moved:
            continue
        got = _trailing(text, mask, line, edits)
        if got is None:
            continue
        pad_start, k = got
        pad = k - pad_start
        col = k - text.line_starts()[line]
        if not any(_comment_column(text, mask, n) == col for n in (line - 1, line + 1)):
            continue  # no neighbour in that column: a style's gap (`x;  // y`), not alignment
        run = _aligned_run(text, mask, line, col)
        pads = {n: _trailing(text, mask, n, edits) for n in run}
        if any(v is None for v in pads.values()):
            continue  # tabs, one blank or an edit in the blanks of a line of the run
        # the blanks a line needs before the column: two where the run always had
        # two or more (Google's style), else one
        gap = min(2, min(v[1] - v[0] for v in pads.values()))  # type: ignore[index]
        if pad - delta >= gap:
            out.append(_Edit(pad_start, k, " " * (pad - delta)))
            continue
        # the code grew past the column: the run moves to where every line fits
        ends = {n: v[0] - text.line_starts()[n] + by_line.get(n, 0)  # type: ignore[index]
                for n, v in pads.items()}
        new_col = max(ends.values()) + gap
        for n, (ps, kk) in pads.items():  # type: ignore[misc]
            want = new_col - ends[n]
            if want != kk - ps:
                out.append(_Edit(ps, kk, " " * want))
        moved.update(run)
    return out


def _trailing(text: _Text, mask: str, line: int, edits: _Edits) -> Optional[tuple[int, int]]:
    """(start of the blanks, start of the `//`) of the line's trailing comment,
    where the blanks are two or more spaces no edit touches; else None."""
    start = text.line_starts()[line]
    end = text.line_end(line, with_break=False)
    k = text.text.find("//", start, end)
    while k >= 0 and mask[k] == text.text[k]:  # a `//` inside code (a string's): not it
        k = text.text.find("//", k + 2, end)
    if k < 0 or mask[start:k].strip() == "":
        return None
    pad_start = k
    while pad_start > start and text.text[pad_start - 1] in " \t":
        pad_start -= 1
    pad = text.text[pad_start:k]
    if "\t" in pad or len(pad) < 1 or any(e.start < k and e.end > pad_start
                                           for e in edits.items):
        return None
    if len(pad) < 2 and not any(e.start < pad_start and e.end > start for e in edits.items
                                if text.line_of(e.start) == line):
        return None  # one blank on a line no rewrite touches: not aligned
    return pad_start, k


def _aligned_run(text: _Text, mask: str, line: int, col: int) -> list[int]:
    """The consecutive lines around ``line`` whose trailing comments start in
    column ``col``."""
    lo = line
    while _comment_column(text, mask, lo - 1) == col:
        lo -= 1
    hi = line
    while _comment_column(text, mask, hi + 1) == col:
        hi += 1
    return list(range(lo, hi + 1))


def _comment_column(text: _Text, mask: str, line: int) -> int:
    """The column of the trailing `//` comment of ``line`` (-1 if none)."""
    if line < 0 or line >= len(text.line_starts()):
        return -1
    start = text.line_starts()[line]
    end = text.line_end(line, with_break=False)
    k = text.text.find("//", start, end)
    while k >= 0 and mask[k] == text.text[k]:
        k = text.text.find("//", k + 2, end)
    if k < 0 or mask[start:k].strip() == "":
        return -1
    return k - start


# Note [Aligned comments]
# C++ code often aligns its trailing comments in a column (`CUDAGuard g(d);    //
# the device`). A rewrite that lengthens the code pushed the comment right of the
# column, one that shortens it pulled it left. The blanks before the comment now
# absorb the change where the comment shares its column with the comment of the
# line above or below (two blanks alone are a style's gap, `x;  // y`, kept as
# they are). Where the code grew past the column, the whole run of lines aligned
# in that column moves right, to the longest line's end plus two blanks (one
# where a line of the run had only one), as clang-format's AlignTrailingComments
# lays them out: the other lines of the run change only in their blanks.

def _cpp_call(text: str, edits: _Edits, start: int, end: int, call_end: int, row: Row,
              newline: str) -> tuple[Optional[str], list[_Edit]]:
    assert row.template is not None
    open_idx = text.find("(", end, call_end)
    close_idx = call_end - 1
    if open_idx < 0:
        return "could not locate the call's arguments", []
    items, has_comment = _cpp_items(text, open_idx, close_idx)
    names = _cpp_param_names(row.signature)
    if names is None:
        if items:
            return f"{row.code}: the legacy call has overloads; rewrite by hand", []
        names = []
    if len(items) > len(names):
        return f"more arguments than {row.legacy}{row.signature or '()'} takes; rewrite by hand", []
    O_norm = [edits.render(s, e) for s, e in items]
    bound = dict(zip(names, O_norm))
    lost = unplaced_arguments(row.template, bound)
    if lost:
        return lost, []
    form = _call_form(row.template)
    if form is None:
        if has_comment:
            return "the call has comments among its arguments; rewrite by hand", []
        return None, [_Edit(start, call_end, render_template(row.template, bound, ", ".join(O_norm)))]
    head, t_items = form
    R = _render_items(t_items, bound, O_norm)
    if R != O_norm and has_comment:
        return "the call has comments among its arguments; rewrite by hand", []
    out = [_Edit(start, end, head)] if text[start:end] != head else []
    return None, out + _arg_edits(text, items, O_norm, R, open_idx, close_idx, newline)
