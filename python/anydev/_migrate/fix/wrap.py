"""The fixer's rewritten lines wrapped to the project's line length.

A rewrite makes lines longer (``torch.cuda.current_device()`` becomes
``torch.accelerator.current_device_index()``, a ``"cuda"`` becomes the
accelerator's type). Where a line that was within the project's configured
length (``line_length_for``: ruff's ``line-length``, black's, flake8's
``max-line-length``, yapf's ``column_limit``, isort's ``line_length``; 88
where none) goes over it, the line is wrapped as a maintainer (or black)
would: inside the brackets it already has, at a call's arguments, with a
hanging indent of the file's own indentation unit:

    x = some.call(first, torch.accelerator.current_device_index(), last)
    ->
    x = some.call(
        first, torch.accelerator.current_device_index(), last
    )

and, where the arguments do not fit on one line either, one argument a line
with a trailing comma (Note [Wrapping rewritten lines]). A line that was over
the limit already is never reflowed, nor is a line the fixer did not change.

    new = wrap_new_long_lines(old_text, new_text, limit)
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from typing import Optional

from .text import _Text, split_lines

__all__ = ["DEFAULT_LENGTH", "line_length_for", "wrap_new_long_lines", "wrap_file"]

#: black's and ruff's default; flake8's is 79, but a project that left it so
#: and wrote 88-column code is the common case (issue 29: "88 where none").
DEFAULT_LENGTH = 88

#: Folder -> the line length configured there (None: nothing configured).
_dir_cache: dict[str, Optional[int]] = {}


def _from_pyproject(path: str) -> Optional[int]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    if b"line-length" not in raw and b"line_length" not in raw and \
            b"column_limit" not in raw:
        return None
    try:
        from anydev._common.config import loads_toml  # noqa: PLC0415 (only where one is set)

        doc = loads_toml(raw.decode("utf-8"))
    except Exception:  # noqa: BLE001 (a broken pyproject.toml sets nothing here)
        return None
    tool = doc.get("tool") if isinstance(doc, dict) else None
    if not isinstance(tool, dict):
        return None
    for name, key in (("ruff", "line-length"), ("black", "line-length"),
                      ("black", "line_length"), ("yapf", "column_limit"),
                      ("isort", "line_length")):
        sect = tool.get(name)
        v = sect.get(key) if isinstance(sect, dict) else None
        if type(v) is int and v > 0:
            return v
    return None


_RUFF_TOML = re.compile(r"(?m)^\s*line-length\s*=\s*(\d+)")


def _from_ini(path: str) -> Optional[int]:
    import configparser  # noqa: PLC0415 (only where such a file is; test_fix_cost.py)

    cp = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        cp.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return None
    for sect, key in (("flake8", "max-line-length"), ("flake8", "max_line_length"),
                      ("pycodestyle", "max-line-length"), ("pycodestyle", "max_line_length"),
                      ("yapf", "column_limit"), ("isort", "line_length")):
        if cp.has_option(sect, key):
            try:
                v = int(cp.get(sect, key).split("#")[0].split(";")[0].strip())
            except ValueError:
                continue
            if v > 0:
                return v
    return None


def _configured_in(d: str) -> Optional[int]:
    """The line length a file of folder ``d`` gets from ``d``'s own files:
    ruff's files first (ruff.toml, .ruff.toml), then pyproject.toml (ruff,
    black, yapf, isort), then flake8's (setup.cfg, tox.ini, .flake8)."""
    for name in ("ruff.toml", ".ruff.toml"):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            try:
                with open(p, encoding="utf-8", errors="replace") as fh:
                    m = _RUFF_TOML.search(fh.read())
            except OSError:
                m = None
            if m:
                return int(m.group(1))
    p = os.path.join(d, "pyproject.toml")
    if os.path.isfile(p):
        v = _from_pyproject(p)
        if v is not None:
            return v
    for name in (".flake8", "setup.cfg", "tox.ini"):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            v = _from_ini(p)
            if v is not None:
                return v
    return None


def line_length_for(path: str) -> int:
    """The line length configured for the file ``path``: the nearest folder at
    or above it whose configuration sets one (up to the repository's root, the
    folder with ``.git``); DEFAULT_LENGTH where none does or the file is not on
    the disk."""
    d = os.path.dirname(os.path.abspath(path))
    walked: list[str] = []
    found: Optional[int] = None
    while True:
        if d in _dir_cache:
            found = _dir_cache[d]
            break
        walked.append(d)
        found = _configured_in(d)
        if found is not None or os.path.exists(os.path.join(d, ".git")):
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for w in walked:
        _dir_cache[w] = found
    return found if found is not None else DEFAULT_LENGTH


# --- wrapping -------------------------------------------------------------------------

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")", "]", "}"}
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)
_SKIP_TYPES = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENDMARKER, tokenize.COMMENT}


class _Tok:
    __slots__ = ("s", "e", "text", "op")

    def __init__(self, s: int, e: int, text: str, op: bool):
        self.s, self.e, self.text, self.op = s, e, text, op


def _width(line: str) -> int:
    return len(line)


class _Line:
    """One physical line's code tokens (atoms: an f-string is one) and comment."""

    def __init__(self, text: str, toks: list[_Tok], comment: Optional[str], start_depth: int):
        self.text = text
        self.toks = toks
        self.comment = comment
        #: how many brackets of earlier lines are open where the line starts
        self.start_depth = start_depth
        #: the line starts inside a bracket of an earlier line and closes none of it
        self.inside = start_depth > 0 and _top(toks, 0, len(toks), ()) is not None
        self.memo: dict[tuple, "_Fit"] = {}


def _pairs(toks: list[_Tok]) -> Optional[list[tuple[int, int, int]]]:
    """(open index, close index, depth) of the brackets that open and close
    among ``toks``; None where they cross brackets of other lines in a way
    that a split cannot keep (an unmatched closer after an opener)."""
    stack: list[int] = []
    out = []
    for i, t in enumerate(toks):
        if not t.op:
            continue
        if t.text in _OPEN:
            stack.append(i)
        elif t.text in _CLOSE:
            if stack:
                o = stack.pop()
                if _OPEN[toks[o].text] != t.text:
                    return None
                out.append((o, i, len(stack)))
    return out


def _top(toks: list[_Tok], lo: int, hi: int, words: tuple[str, ...]) -> Optional[list[int]]:
    """The indices of the tokens of toks[lo:hi] outside any bracket whose text
    is one of ``words`` (operators: ",", "="; keywords: "or", "and"); None
    where the brackets of the range do not balance, or where a split there
    would change meaning or read badly (a `lambda`'s parameters, a
    comprehension's `for`)."""
    depth = 0
    out = []
    params = False  # in a `lambda`'s parameters (their commas are not the range's)
    for i in range(lo, hi):
        t = toks[i]
        if t.op and t.text in _OPEN:
            depth += 1
        elif t.op and t.text in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0:
            if params:
                params = not (t.op and t.text == ":")
            elif not t.op and t.text == "lambda":
                params = True
            elif t.text in words:
                out.append(i)
            elif not t.op and t.text in ("for", "async"):
                return None
    if depth != 0:
        return None
    return out


def _clauses(toks: list[_Tok], lo: int, hi: int) -> Optional[list[int]]:
    """Where the clauses of a comprehension in toks[lo:hi] start (its `for`s,
    `async for`s and the `if`s after the first `for`, outside any bracket);
    None where it has none or its brackets do not balance."""
    depth, out, seen_for, params = 0, [], False, False
    for i in range(lo, hi):
        t = toks[i]
        if t.op and t.text in _OPEN:
            depth += 1
        elif t.op and t.text in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and not t.op:
            if params:
                continue
            if t.text == "lambda":
                params = True
            elif t.text == "for":
                if not (out and out[-1] == i - 1 and toks[i - 1].text == "async"):
                    out.append(i)
                seen_for = True
            elif t.text == "async" and i + 1 < hi and toks[i + 1].text == "for":
                out.append(i)
            elif t.text == "if" and seen_for:
                out.append(i)
        elif depth == 0 and params and t.op and t.text == ":":
            params = False
    if depth != 0 or not out or out[0] == lo:
        return None
    return out


def _src(line: _Line, lo: int, hi: int) -> str:
    """The text of tokens lo..hi-1 as the line has it."""
    return line.text[line.toks[lo].s:line.toks[hi - 1].e]


#: A split's penalties (Note [Wrapping rewritten lines]): its body is one token
#: after an operator (`a or torch.device(\n"cpu"\n)`); code other than a
#: trailer follows its closing bracket (`f(\nx\n) or g()`); new parentheses
#: around an assignment's value.
_TRIVIAL, _HEAVY_TAIL, _NEW_PARENS = 2, 2, 1

_Fit = Optional[tuple[int, list[str]]]


def _heavy_tail(toks: list[_Tok], c: int, hi: int) -> bool:
    """Whether code other than closing brackets, `,`, `:`, and trailers
    (`.name`, `(...)`, `[...]`) follows the bracket closed at ``c``."""
    i = c + 1
    while i < hi:
        t = toks[i]
        if t.op and t.text in _CLOSE or t.text in (",", ":", ";"):
            i += 1
        elif t.text == "." and i + 1 < hi and not toks[i + 1].op:
            i += 2
        elif t.op and t.text in _OPEN:
            depth, i = 1, i + 1
            while i < hi and depth:
                if toks[i].op and toks[i].text in _OPEN:
                    depth += 1
                elif toks[i].op and toks[i].text in _CLOSE:
                    depth -= 1
                i += 1
        else:
            return True
    return False


_OPERATORS = frozenset({"or", "and", "not", "if", "else", "in", "is", "+", "-", "*", "/", "//",
                        "%", "|", "&", "^", "==", "!=", "<", ">", "<=", ">=", "@", "**", "<<",
                        ">>"})


def _heavy_head(toks: list[_Tok], lo: int, o: int) -> bool:
    """Whether an operator stands outside any bracket before the bracket
    opened at ``o`` (`x = a or torch.device(`): split there, its one-token
    contents read as a stray line."""
    depth = 0
    for t in toks[lo:o]:
        if t.op and t.text in _OPEN:
            depth += 1
        elif t.op and t.text in _CLOSE:
            depth -= 1
        elif depth == 0 and t.text in _OPERATORS:
            return True
    return False


def _best(line: _Line, lo: int, hi: int, indent: str, unit: str, limit: int,
          prefix: str, suffix: str, depth: int) -> _Fit:
    """(penalty, lines) for ``prefix + tokens lo..hi-1 + suffix`` at
    ``indent`` within ``limit``: the line itself where it fits, else the
    least penalized split at one of the range's outermost bracket pairs
    (the last one first on a tie); None where none fits."""
    whole = indent + prefix + _src(line, lo, hi) + suffix
    if _width(whole) <= limit:
        return 0, [whole]
    if depth > 5 or hi <= lo:
        return None
    key = (lo, hi, indent, prefix, suffix, depth)
    if key not in line.memo:  # a range is tried from several splits around it
        line.memo[key] = _best_split(line, lo, hi, indent, unit, limit, prefix, suffix, depth)
    return line.memo[key]


def _best_split(line: _Line, lo: int, hi: int, indent: str, unit: str, limit: int,
                prefix: str, suffix: str, depth: int) -> _Fit:
    pairs = _pairs(line.toks[lo:hi])
    if not pairs:
        return None
    top = min(d for _, _, d in pairs)
    best: _Fit = None
    for o, c in sorted(((o + lo, c + lo) for o, c, d in pairs if d == top and c > o + 1),
                       key=lambda oc: -oc[1]):
        head = indent + prefix + line.text[line.toks[lo].s:line.toks[o].e]
        tail = indent + line.text[line.toks[c].s:line.toks[hi - 1].e] + suffix
        if _width(head) > limit or _width(tail) > limit:
            continue
        body = _body(line, o + 1, c, indent + unit, unit, limit, depth + 1)
        if body is None:
            continue
        pen = body[0] + (_TRIVIAL if c == o + 2 and _heavy_head(line.toks, lo, o) else 0) + \
            (_HEAVY_TAIL if _heavy_tail(line.toks, c, hi) else 0)
        got = (pen, [head, *body[1], tail])
        if best is None or (got[0], len(got[1])) < (best[0], len(best[1])):
            best = got
    return best


def _body(line: _Line, lo: int, hi: int, indent: str, unit: str, limit: int,
          depth: int) -> _Fit:
    """(penalty, lines) for the contents of a bracket at ``indent``: on one
    line; else one item a line with a trailing comma (at its top-level
    commas), one clause a line (a comprehension's), or one operand a line
    (at its top-level `or`, `and`, or a conditional expression's `if` and
    `else`, the keyword first, as black writes them); else split inside
    (_best)."""
    one = indent + _src(line, lo, hi)
    if _width(one) <= limit:
        return 0, [one]
    commas = _top(line.toks, lo, hi, (",",))
    if commas:
        out, pen, start = [], 0, lo
        for k in commas + [hi]:
            if k > start:
                got = _best(line, start, k, indent, unit, limit, "", ",", depth + 1)
                if got is None:
                    return None
                pen += got[0]
                out.extend(got[1])
            start = k + 1
        return pen, out
    if commas is None:
        parts = _clauses(line.toks, lo, hi)
        if parts is None:
            return None
        out, pen, start = [], 0, lo
        for k in parts + [hi]:
            got = _best(line, start, k, indent, unit, limit, "", "", depth + 1)
            if got is None:
                return None
            pen += got[0]
            out.extend(got[1])
            start = k
        return pen, out
    ops = _top(line.toks, lo, hi, ("or",)) or _top(line.toks, lo, hi, ("and",)) or \
        _top(line.toks, lo, hi, ("if", "else"))
    if ops:
        out, pen, start, word = [], 0, lo, ""
        for k in ops + [hi]:
            got = _best(line, start, k, indent, unit, limit, word, "", depth + 1)
            if got is None or k == start:
                return None
            pen += got[0]
            out.extend(got[1])
            if k < hi:
                word = line.toks[k].text + " "
            start = k + 1
        return pen, out
    return _best(line, lo, hi, indent, unit, limit, "", "", depth)


def _wrap_line(line: _Line, unit: str, limit: int) -> Optional[list[str]]:
    """The wrapped form of one physical line, or None where it cannot be
    wrapped inside its own brackets (or in new ones around an assignment's
    or a return's value)."""
    toks = line.toks
    if not toks:
        return None
    indent = line.text[:len(line.text) - len(line.text.lstrip(" \t"))]
    rest = line.text[toks[-1].e:].rstrip()   # a backslash continuation
    suffix = "  " + line.comment if line.comment is not None else \
        " " + rest.strip() if rest else ""
    n = len(toks)
    if line.inside:
        # a run of items inside a bracket of earlier lines: one item a line
        commas = _top(toks, 0, n, (",",))
        if commas:
            out: list[str] = []
            start = 0
            for k in commas + [n]:
                if k > start:
                    got = _best(line, start, k, indent, unit, limit, "",
                                "," if k < n else "", 1)
                    if got is None:
                        return None
                    out.extend(got[1])
                start = k + 1
            out[-1] += suffix
            return out if _width(out[-1]) <= limit else None
    cands = []
    got = _best(line, 0, n, indent, unit, limit, "", suffix, 0)
    if got is not None:
        cands.append(got)
    if not line.start_depth:
        value = _value_range(toks)
        if value is not None:
            a, b = value
            head = indent + line.text[toks[0].s:toks[a - 1].e] + " ("
            after = line.text[toks[b].s:toks[n - 1].e] if b < n else ""
            if after and not after.startswith((",", ":")):
                after = " " + after
            tail = indent + ")" + after + suffix
            body = _body(line, a, b, indent + unit, unit, limit, 1)
            if body is not None and _width(head) <= limit and _width(tail) <= limit:
                cands.append((body[0] + _NEW_PARENS, [head, *body[1], tail]))
    if not cands:
        return None
    return min(cands, key=lambda pl: (pl[0], len(pl[1])))[1]


_ASSIGN_OPS = frozenset({"=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=",
                         "^=", ">>=", "<<="})


def _value_range(toks: list[_Tok]) -> Optional[tuple[int, int]]:
    """The token range [a, b) of a statement's expression that new parentheses
    may hold: after `return`, after the one top-level assignment operator, an
    `assert`'s test (before its message), an `if`/`elif`/`while`'s condition;
    None for any other line, and for an expression that is one bracket
    already (that bracket is split instead)."""
    n = len(toks)
    first = toks[0].text if not toks[0].op else ""
    end = n
    if first == "return":
        start = 1
    elif first == "assert":
        start = 1
        commas = _top(toks, 0, n, (",",))
        if commas is None or len(commas) > 1:
            return None
        end = commas[0] if commas else n
    elif first in ("if", "elif", "while"):
        if not (toks[-1].op and toks[-1].text == ":"):
            return None
        start, end = 1, n - 1
    else:
        ops = _top(toks, 0, n, tuple(_ASSIGN_OPS))
        if not ops or len(ops) != 1 or toks[ops[0]].text not in _ASSIGN_OPS:
            return None
        start = ops[0] + 1
    if start >= end or (not toks[start].op and toks[start].text in ("yield", "lambda")):
        return None
    if toks[start].op and toks[start].text in _OPEN:
        pairs = _pairs(toks[start:end])
        if pairs and any(o == 0 and c == end - start - 1 for o, c, _ in pairs):
            return None
    if _top(toks, start, end, ()) is None and _clauses(toks, start, end) is None:
        return None
    return start, end


def _lines_of(text: str, rows: set[int], tree: ast.Module
              ) -> tuple[dict[int, _Line], str]:
    """The code tokens of the physical lines ``rows`` (1-based) of ``text``
    (whose syntax tree is ``tree``) and the file's indentation unit; a row
    that a multi-line token (a string) touches, or that lies within one, is
    left out. Only the statements that hold the rows are tokenized (their
    headers, for a compound statement's header line): Python's tokenizer
    over a whole large file cost more than the rest of the wrap."""
    lines = split_lines(text)
    got: dict[int, list[_Tok]] = {r: [] for r in rows}
    comments: dict[int, str] = {}
    bad: set[int] = set()
    start_depth: dict[int, int] = {}
    spans: dict[tuple[int, int], list[int]] = {}
    for r in rows:
        spans.setdefault(_statement_lines(tree, r), []).append(r)
    for (first, last), rs in spans.items():
        if not (1 <= first <= min(rs) and max(rs) <= last <= len(lines)):
            bad.update(rs)
            continue
        snippet = "".join(lines[first - 1:last])
        try:
            toks = list(tokenize.generate_tokens(io.StringIO(snippet).readline))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            bad.update(rs)
            continue
        _take_tokens(toks, first - 1, got, comments, bad, start_depth)
    out = {}
    for r in rows:
        if r in bad or r > len(lines):
            continue
        out[r] = _Line(lines[r - 1].rstrip("\r\n"), got[r], comments.get(r),
                       start_depth.get(r, 0))
    return out, _indent_unit_of(lines)


def _statement_lines(tree: ast.Module, row: int) -> tuple[int, int]:
    """The lines (1-based, inclusive) of the innermost statement that holds
    ``row``: its header alone where ``row`` is in a compound statement's
    header (decorators included)."""
    node: ast.AST = tree
    for name, i in _path_to(tree, row):
        node = getattr(node, name)[i]
    if node is tree:
        return row, row
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt) and \
            row < body[0].lineno:
        return first, max(row, body[0].lineno - 1)
    return first, node.end_lineno


def _take_tokens(toks: list, offset: int, got: dict, comments: dict, bad: set,
                 start_depth: dict) -> None:
    """Records the tokens of a statement's lines (its rows ``offset`` + the
    tokens' rows): each wanted row's code tokens (an f-string as one), its
    comment, the brackets open where it starts; rows of multi-line tokens are bad."""
    fdepth = 0
    fstart: Optional[tuple[int, int]] = None
    depth = 0
    for t in toks:
        sr, sc = t.start
        er, ec = t.end
        sr += offset
        er += offset
        if sr in got and sr not in start_depth:
            start_depth[sr] = depth
        if t.type == tokenize.OP and not fdepth:
            if t.string in _OPEN:
                depth += 1
            elif t.string in _CLOSE:
                depth -= 1
        if t.type == _FSTRING_START:
            if fdepth == 0:
                fstart = (sr, sc)
            fdepth += 1
            continue
        if fdepth:
            if t.type == _FSTRING_END:
                fdepth -= 1
                if fdepth == 0 and fstart is not None:
                    if fstart[0] != er:
                        bad.update(range(fstart[0], er + 1))
                    elif er in got:
                        got[er].append(_Tok(fstart[1], ec, "f-string", False))
            continue
        if t.type in _SKIP_TYPES:
            if t.type == tokenize.COMMENT and sr in got:
                comments[sr] = t.string
            continue
        if sr != er:
            bad.update(range(sr, er + 1))
            continue
        if sr in got:
            got[sr].append(_Tok(sc, ec, t.string, t.type == tokenize.OP))


def _indent_unit_of(lines: list[str]) -> str:
    """The file's indentation step: the commonest increase after a line that
    ends with ":" ("    " by default)."""
    counts: dict[str, int] = {}
    prev: Optional[str] = None
    colon = False
    for ln in lines:
        st = ln.strip()
        if not st or st[0] == "#":
            continue
        ind = ln[:len(ln) - len(ln.lstrip(" \t"))]
        if colon and prev is not None and len(ind) > len(prev) and ind.startswith(prev):
            step = ind[len(prev):]
            counts[step] = counts.get(step, 0) + 1
        prev, colon = ind, st.endswith(":")
    if not counts:
        return "    "
    return max(counts.items(), key=lambda kv: (kv[1], kv[0] == "    "))[0]


def _made_long(old_lines: list[str], new_lines: list[str], limit: int) -> list[int]:
    """The 0-based indices of the new lines over ``limit`` that a rewrite made
    so: changed or added lines whose old counterpart was within the limit (a
    block of lines replaced by as many is matched line by line; any other
    block's old lines must all have been within it)."""
    long_new = [i for i, ln in enumerate(new_lines) if _width(ln) > limit]
    if not long_new:
        return []
    old_set = set(old_lines)
    if all(new_lines[i] in old_set for i in long_new):
        return []
    if max(map(_width, old_lines), default=0) <= limit:
        # no old line was over the limit: whatever the lines' alignment, a long
        # new line is no old line (it would be over the limit), so it was changed
        # or added, and what it replaced was within the limit; the alignment
        # (difflib, most of the wrap's cost on a large file) decides nothing
        return long_new
    import difflib  # noqa: PLC0415 (only for a file with a line to wrap; test_fix_cost.py)

    want = set(long_new)
    out = []
    sm = difflib.SequenceMatcher(None, old_lines, new_lines)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal" or tag == "delete":
            continue
        for j in range(j1, j2):
            if j not in want:
                continue
            if tag == "replace" and i2 - i1 == j2 - j1:
                was_ok = _width(old_lines[i1 + j - j1]) <= limit
            else:
                was_ok = all(_width(x) <= limit for x in old_lines[i1:i2])
            if was_ok:
                out.append(j)
    return out


def wrap_new_long_lines(old: str, new: str, limit: int, tree: Optional[ast.Module] = None,
                        old_tree: Optional[ast.Module] = None) -> str:
    """``new`` (the fixer's rewrite of ``old``, a Python file that parses) with
    each line that the rewrite took over ``limit`` wrapped inside its own
    brackets, where that fits; the rest as it is. The result has the same
    syntax tree as ``new`` (checked), or is ``new`` itself. ``tree``: the
    syntax tree of ``new`` where the caller has it; else, with ``old_tree``
    (``old``'s), only the top-level statements that the rewrite changed are
    parsed where that shows the lines' statements (Note [Parsing what the
    rewrite changed]), else the whole of ``new``."""
    if new == old or limit <= 0:
        return new
    new_with = split_lines(new)
    new_lines = [ln.rstrip("\r\n") for ln in new_with]
    old_lines = [ln.rstrip("\r\n") for ln in split_lines(old)]
    todo = _made_long(old_lines, new_lines, limit)
    if not todo:
        return new
    whole = tree is not None
    if tree is None and old_tree is not None:
        tree = _changed_region(split_lines(old), new_with, old_tree, [j + 1 for j in todo])
    if tree is None:
        try:
            tree = ast.parse(new)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return new
        whole = True
    lines, unit = _lines_of(new, {j + 1 for j in todo}, tree)
    m = re.search(r"\r\n|\r|\n", new)
    nl = m.group(0) if m else "\n"
    rows = []
    out = list(new_with)
    for j in todo:
        line = lines.get(j + 1)
        if line is None:
            continue
        got = _wrap_line(line, unit, limit)
        if not got or len(got) < 2:
            continue
        brk = new_with[j][len(new_lines[j]):]
        out[j] = nl.join(got) + brk
        rows.append(j + 1)
    if not rows:
        return new
    result = "".join(out)
    try:
        # the statements that hold the wrapped lines, parsed alone, else the file
        same = _same_statements(tree, out, rows)
        if not same:
            same = _same_tree(tree if whole else ast.parse(new), result, rows)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        same = False
    return result if same else new


def _changed_region(old_with: list[str], new_with: list[str], old_tree: ast.Module,
                    rows: list[int]) -> Optional[ast.Module]:
    """A module of the top-level statements of ``new_with`` (lines with their
    breaks) between the last statement boundary of ``old_tree`` before the
    first changed line and the first after the last, parsed alone with their
    own line numbers; None where that is not shown to be the whole file's
    parse of them, or a row (1-based) lies outside (Note [Parsing what the
    rewrite changed])."""
    n_old, n_new = len(old_with), len(new_with)
    p = 0
    while p < n_old and p < n_new and old_with[p] == new_with[p]:
        p += 1
    q = 0
    while q < n_old - p and q < n_new - p and old_with[n_old - 1 - q] == new_with[n_new - 1 - q]:
        q += 1
    # the lines (1-based) where a top-level statement starts a line of its own
    starts, prev_end = [], 0
    for st in old_tree.body:
        first = min([st.lineno] + [d.lineno for d in getattr(st, "decorator_list", ())])
        if first > prev_end:
            starts.append(first)
        prev_end = max(prev_end, st.end_lineno or st.lineno)
    start = max([ln for ln in starts if ln <= p + 1], default=1)
    after = [ln for ln in starts if ln > n_old - q and ln > start]
    stop = min(after) + n_new - n_old if after else n_new + 1  # new's line past the region
    if not rows or min(rows) < start or max(rows) >= stop:
        return None
    try:
        return ast.parse("\n" * (start - 1) + "".join(new_with[start - 1:stop - 1]))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


# Note [Parsing what the rewrite changed]
# The wrap reads the statements that hold the long lines (their lines, to
# tokenize; the statement, to check the wrap against), and parsing the whole
# fixed file for them was a tenth of `anydev fix --target-torch 2.13
# --unsafe-fixes` of Megatron-LM. The fixed text differs from the file's
# (whose tree the fixer has) in the lines between a common first part and a
# common last part; the top-level statement of the file that holds the first
# changed line starts a line that the fixed text has too, with the same text
# before it, so the fixed text's tokens there begin a statement as well; the
# first top-level statement that lies wholly in the common last part ends the
# region. The region's lines, parsed alone (after as many empty lines as come
# before it, so that its nodes have the file's positions), give the whole
# file's statements there when they parse: a region that parses leaves no
# bracket or string open at its end, so the text after it is read as before.
# Where the region does not parse, or a row lies outside it, the whole fixed
# text is parsed (the fixer's text always parses: its rounds and the collapse
# check that); where the statements alone do not show the wrap keeps the tree
# (Note [Checking the wrap]), the whole text is parsed for _same_tree.


def _path_to(tree: ast.AST, row: int) -> list[tuple[str, int]]:
    """(field, index) steps from the module to the innermost statement (or
    handler) whose lines hold ``row`` (1-based)."""
    path: list[tuple[str, int]] = []
    node = tree
    while True:
        step = None
        for name, value in ast.iter_fields(node):
            if not isinstance(value, list):
                continue
            for i, child in enumerate(value):
                if not isinstance(child, (ast.stmt, ast.excepthandler)):
                    break
                first = min([child.lineno] + [d.lineno for d in
                                              getattr(child, "decorator_list", ())])
                if first <= row <= child.end_lineno:
                    step = (name, i, child)
                    break
            if step:
                break
        if step is None:
            return path
        path.append(step[:2])
        node = step[2]


def _follow(tree: ast.AST, other: ast.AST, path: list) -> Optional[tuple[ast.AST, ast.AST]]:
    """The nodes ``path`` leads to in both trees, where every list on the way
    has as many items in both; None where it does not."""
    a, b = tree, other
    for name, i in path:
        la, lb = getattr(a, name, None), getattr(b, name, None)
        if not isinstance(la, list) or not isinstance(lb, list) or len(la) != len(lb):
            return None
        a, b = la[i], lb[i]
    return a, b


def _same_statements(a: ast.Module, out: list[str], rows: list[int]) -> bool:
    """Whether the wrapped text (``out``: the lines of the text whose tree is
    ``a``, each wrapped row (1-based) ``rows`` replaced by its lines) is shown
    to have the same syntax tree by parsing only the innermost statement that
    holds each wrapped row: True where each such statement's lines parse alone
    (under an ``if 1:`` where indented) to one statement equal to its own
    (ast.dump, positions aside); False where that shows nothing (an ``elif``
    or ``except`` line, a second statement on its lines, a parse error): the
    caller then checks the whole file (_same_tree). Note [Checking the wrap]."""
    seen: set = set()
    for row in rows:
        node: ast.AST = a
        for name, i in _path_to(a, row):
            node = getattr(node, name)[i]
        if node is a or id(node) in seen:
            if node is a:
                return False
            continue
        seen.add(id(node))
        if not isinstance(node, ast.stmt):
            return False  # an except handler's line: not a statement of its own
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
        piece = "".join(out[first - 1:node.end_lineno])
        indented = node.col_offset > 0
        try:
            got = ast.parse("if 1:\n" + piece if indented else piece)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        body = got.body
        if indented:
            if len(body) != 1 or type(body[0]) is not ast.If or body[0].orelse:
                return False
            body = body[0].body
        if len(body) != 1 or ast.dump(body[0]) != ast.dump(node):
            return False
    return bool(seen)


# Note [Checking the wrap]
# The wrapped text must have the syntax tree of the text before the wrap
# (Note [Wrapping rewritten lines]); parsing the whole wrapped file was half
# the wrap's cost on Megatron-LM under --unsafe-fixes (363 files). Only the
# wrapped lines changed, and each lies inside brackets of its statement; so
# where the lines of each statement that holds a wrapped line parse alone to
# one statement equal to the one the file had (all of it, its body included,
# positions aside), the file parses to the same tree: the text before and
# after those lines is the same, and the lines begin and end outside any
# bracket or string (one whole statement, nothing else on them). Where the
# piece does not show it (an `elif` or `except` line, which is no statement
# alone, another statement on the same line, any parse error), the whole
# file is parsed and compared as before (_same_tree), so the answer is the one
# the whole file's check gives, the cost only lower.


def _same_tree(a: ast.Module, result: str, rows: list[int]) -> bool:
    """Whether ``result`` (the text whose tree is ``a``, with the physical
    lines ``rows`` wrapped) has the same syntax tree: the statements that hold the wrapped lines are
    compared whole (ast.dump, positions aside), and every statement list on
    the way to them must have as many statements in both (the text outside
    the wrapped lines is the same; a bracket left open would change them).
    Comparing these alone, not the module, keeps a large file's check cheap."""
    b = ast.parse(result)
    if len(a.body) != len(b.body):
        return False
    seen = set()
    for row in rows:
        path = tuple(_path_to(a, row))
        if path in seen:
            continue
        seen.add(path)
        got = _follow(a, b, list(path))
        if got is None or _dump_at(got[0]) != _dump_at(got[1]):
            return False
    return True


_BODIES = ("body", "orelse", "finalbody", "handlers")  # (a match's cases are dumped whole)


def _dump_at(node: ast.AST) -> str:
    """ast.dump of a statement, without the statements of a compound one
    (they are the same text, and compared where they hold a wrapped line)."""
    if not any(isinstance(getattr(node, f, None), list) for f in _BODIES):
        return ast.dump(node)
    parts = [type(node).__name__]
    for name, value in ast.iter_fields(node):
        if name in _BODIES and isinstance(value, list):
            parts.append(f"{name}:{len(value)}")
        elif isinstance(value, ast.AST):
            parts.append(f"{name}={ast.dump(value)}")
        elif isinstance(value, list):
            parts.append(f"{name}=" + ",".join(ast.dump(v) if isinstance(v, ast.AST) else
                                                repr(v) for v in value))
        else:
            parts.append(f"{name}={value!r}")
    return "|".join(parts)


def wrap_file(old: bytes, new: bytes, path: str, parsed: Optional[list] = None) -> bytes:
    """The fixed bytes ``new`` of the Python file ``path`` (``old`` before the
    fix) with the lines the fix took over the line length configured for
    ``path`` wrapped (wrap_new_long_lines). ``parsed``: (text, syntax tree)
    pairs of the file's parses so far (the tree of ``new``'s text is taken
    from them where it is there)."""
    if new == old:
        return new
    limit = line_length_for(path)
    if not any(len(ln) > limit for ln in new.splitlines()):
        return new  # (bytes: a line over the limit in characters is over it in bytes)
    a, b = _Text(old, "python"), _Text(new, "python")
    tree = old_tree = None
    for text, t in reversed(parsed or ()):
        if tree is None and text == b.text:
            tree = t
        if old_tree is None and text == a.text:
            old_tree = t
    got = wrap_new_long_lines(a.text, b.text, limit, tree, old_tree)
    return new if got == b.text else b.encode(got)


# Note [Wrapping rewritten lines]
# On Megatron-LM (100 columns, ruff and black), `--target-torch 2.13
# --unsafe-fixes` took 1,286 lines over the limit, and a reviewer asks for
# each to be wrapped before the pull request is read. The wrap is black's
# "right hand split" in small. The candidates: each of the line's outermost
# bracket pairs whose head (up to the opening bracket) and tail (from the
# closing one, with the line's comment) fit, its contents on one line one
# indentation unit deeper (the file's commonest step), else one item a line
# with a trailing comma (black's "magic trailing comma", which keeps the
# layout under black and ruff format), one comprehension clause a line, or
# one operand a line at a top-level `or`, `and` or conditional expression
# (keyword first), each part wrapped the same way where it is still too
# long; and, for an assignment's or `return`'s value, an `assert`'s test or
# an `if`/`elif`/`while` condition, the same in new parentheses. The least
# penalized candidate wins, then the one of fewest lines, then the last pair
# (black's preference): a one-token body after an operator (`a or
# torch.device(\n"cpu"\n)`) and code after the closing bracket (`f(\n...\n)
# or g()`) are penalized, new parentheses a little. A line that is a run of
# items inside a bracket opened on an earlier line (one argument a line) is
# split at its commas, at its own indentation. A line inside a multi-line
# string is never touched, strings are never split, and a split at the
# commas of a `lambda`'s parameters is never made. The wrapped text must give
# the same syntax tree (ast.dump, positions aside) as the unwrapped one, else
# the file keeps the long lines: wrapping never changes what the code does.
# A line that was over the limit before the rewrite is left as the rewrite
# made it (the project accepted it; reflowing it is a diff of the
# formatter's, not the migration's), and so is every line the fixer did not
# change. A second run changes nothing: it has no rewrite, so no line of its
# own to wrap. The length is the nearest configuration's (a subfolder may set
# its own: flash-attention's tests/pyproject.toml says 100 where the root
# sets nothing, 88).
