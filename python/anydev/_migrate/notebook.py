"""Jupyter notebooks (nbformat 4) for the migration tools: the code cells of
a notebook as one Python source, what ``anydev scan`` scans and ``anydev
fix`` fixes, positions in that source mapped back to cells, and fixed cells
written back into the file with every byte outside them kept.

    nb = Notebook.parse(data)           # NotebookError: not a notebook, and why
    nb.source                           # the code cells, one Python source
    nb.locate(line)                     # (cell, line in the cell) of a line of it
    new = nb.rewrite(fixed_source)      # the file's bytes with the changed cells

Note [Notebook source]: the cells of a notebook share one namespace (``import
torch as th`` in cell 1, ``th.cuda.synchronize()`` in cell 3), so they are
scanned and fixed as one source, as ruff does: each code cell's text,
followed by a line of its own (``# anydev-cell-end``, a comment: it changes
no statement, indentation or bracket), which the fixed source is split at
again. IPython's own syntax is not Python and is never given to the scanner
or the fixer: a line magic (``%matplotlib inline``), a shell escape (``!pip
install x``, ``files = !ls``), a help line (``obj?``, ``?obj``) and its
continuation lines (a trailing ``\\``) become ``pass`` at the same
indentation, with a numbered comment that finds the line again in the fixed
source to put the original back; a cell whose first line is a cell magic is
left out, unless the magic runs its body as Python (``%%time``,
``%%timeit``, ``%%capture``, ``%%prun``), whose first line alone is masked.
Only ``"cell_type": "code"`` cells are read; markdown and raw cells, outputs,
metadata and attachments are never looked at.

Note [Notebook bytes]: the file is rewritten by replacing only the JSON
values of the ``source`` of the changed cells, found by their offsets in the
file's text, so its indentation, key order, trailing newline and every other
cell stay byte for byte as they were. A changed cell keeps its form: a string
stays a string, a list of lines a list of lines laid out as the original list
was (the same whitespace before each item and before the ``]``), each line
that did not change keeps its original JSON text, and a new line is written
with the file's escaping (``\\u00e9`` where the file escapes non-ASCII
characters, as ``json.dump(ensure_ascii=True)`` writes; the character itself
where it holds them raw, as nbformat and Jupyter write).

Cells are numbered from 1 in the order of the notebook's ``cells`` list,
markdown cells counted, so ``cell 3`` is ``cells[2]`` (the number a reader
counts in Jupyter and VS Code).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional

EXTENSIONS = (".ipynb",)

#: The end of each cell in Notebook.source (Note [Notebook source]).
CELL_END = "# anydev-cell-end"
_MAGIC_MARK = "# anydev-magic "

#: Cell magics whose body IPython runs as Python.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


def is_notebook(path: str) -> bool:
    """Whether ``path`` names a Jupyter notebook (by its extension)."""
    return path.lower().endswith(EXTENSIONS)


class NotebookError(ValueError):
    """The file is not a notebook anydev can read; ``line`` is the line of the
    file where it went wrong, when known."""

    def __init__(self, message: str, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.line = line


class Cell:
    """A code cell as Notebook.source holds it."""

    __slots__ = ("index", "text", "first", "lines", "span", "items", "masked", "newline")

    def __init__(self, index: int, text: str, span: tuple, items: Optional[list]) -> None:
        self.index = index  # in the notebook's cells list (its number is index + 1)
        self.text = text  # the cell's source as written
        self.first = 0  # the line of Notebook.source where it starts (1-based)
        self.lines = 0  # its lines there, CELL_END not counted
        self.span = span  # (start, end) of its "source" value in the file's text
        self.items = items  # the raw JSON strings of a list source; None for a string
        self.masked: dict = {}  # mark number -> the original line (with its end)
        self.newline = False  # a "\n" was added after its last line

    @property
    def number(self) -> int:
        return self.index + 1


class Notebook:
    """A notebook's code cells (see the module docstring)."""

    def __init__(self, text: str, bom: str, cells: list, source: str, skipped: list) -> None:
        self.text = text  # the file as text, without its BOM
        self.bom = bom
        self.cells = cells  # the code cells in the source, in order
        self.source = source
        self.skipped = skipped  # (cell number, why) of code cells left out
        self._starts = [c.first for c in cells]

    @classmethod
    def parse(cls, data: bytes) -> "Notebook":
        """Reads a notebook's bytes; NotebookError when they are not valid
        UTF-8 JSON, not nbformat 4, or not a Python notebook."""
        import json

        bom = ""
        if data.startswith(b"\xef\xbb\xbf"):
            bom, data = "\ufeff", data[3:]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            raise NotebookError(f"not a notebook: invalid UTF-8 at byte {e.start}", line) from None
        try:
            doc = json.loads(text)
        except RecursionError:
            raise NotebookError("not a notebook: its JSON is nested too deeply") from None
        except ValueError as e:
            line = getattr(e, "lineno", None)
            msg = getattr(e, "msg", str(e))
            col = getattr(e, "colno", None)
            where = f" (line {line}, column {col})" if line else ""
            raise NotebookError(f"not a notebook: invalid JSON{where}: {msg}", line) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
            raise NotebookError("not a notebook: no `cells` list at the top of its JSON")
        major = doc.get("nbformat")
        if major != 4:
            raise NotebookError(f"not an nbformat 4 notebook (nbformat {major!r})")
        language = _language(doc.get("metadata"))
        if language not in (None, "python"):
            raise NotebookError(f"not a Python notebook (its language is {language})")
        spans = _source_spans(text)
        cells: list = []
        skipped: list = []
        for i, c in enumerate(doc["cells"]):
            if not isinstance(c, dict) or c.get("cell_type") != "code":
                continue
            src = c.get("source", "")
            if isinstance(src, list) and all(isinstance(s, str) for s in src):
                value = "".join(src)
            elif isinstance(src, str):
                value = src
            else:
                raise NotebookError(f"cell {i + 1}: `source` is neither a string nor a list "
                                    "of strings")
            span = spans.get(i)
            if span is None:  # pragma: no cover - json and the span scanner disagree
                raise NotebookError(f"cell {i + 1}: its `source` could not be located")
            items = _list_items(text, span) if isinstance(src, list) else None
            cells.append(Cell(i, value, span, items))
        return cls._build(text, bom, cells, skipped)

    @classmethod
    def _build(cls, text: str, bom: str, cells: list, skipped: list,
               leave_out: frozenset = frozenset()) -> "Notebook":
        out: list = []
        kept: list = []
        line = 1
        mark = 0
        for c in cells:
            if c.index in leave_out:
                continue
            c = Cell(c.index, c.text, c.span, c.items)
            masked, mark, why = _mask(c.text, mark)
            if why is not None:
                skipped.append((c.number, why))
                continue
            c.masked = masked[1]
            body = masked[0]
            c.newline = bool(body) and not body.endswith("\n")
            if c.newline:
                body += "\n"
            c.first = line
            c.lines = body.count("\n")
            line += c.lines + 1
            out.append(body)
            out.append(CELL_END + "\n")
            kept.append(c)
        return cls(text, bom, kept, "".join(out), skipped)

    def without(self, numbers) -> "Notebook":
        """The same notebook with the cells numbered ``numbers`` left out of
        its source (a cell that does not lex or parse: the others are still
        scanned and fixed)."""
        leave = frozenset(n - 1 for n in numbers)
        return Notebook._build(self.text, self.bom, self.cells, list(self.skipped), leave)

    def locate(self, line: int) -> Optional[tuple]:
        """The (cell, line in it, 1-based) of a line of ``source``; None for a
        cell's end line."""
        from bisect import bisect_right

        k = bisect_right(self._starts, line) - 1
        if k < 0:
            return None
        c = self.cells[k]
        n = line - c.first + 1
        return (c, n) if n <= c.lines else None

    def cell_of(self, line: int) -> Optional[Cell]:
        got = self.locate(line)
        return got[0] if got else None

    def file_line(self, cell: int, line: int) -> Optional[int]:
        """The line of the notebook file (1-based) that holds line ``line`` of
        code cell number ``cell``: the line of the JSON string that holds it
        in a list source, the source's own line where it is one string; None
        where the notebook has no such code cell. The ratchet (--diff-base)
        asks it, since git's lines are the file's."""
        import json

        for c in self.cells:
            if c.number == cell:
                break
        else:
            return None
        at = c.span[0]
        if c.items:
            seen = 0
            for a, b in c.items:
                try:
                    seen += json.loads(self.text[c.span[0] + a:c.span[0] + b]).count("\n")
                except ValueError:  # pragma: no cover - parse() read the same strings
                    break
                at = c.span[0] + a
                if seen >= line:
                    break
        return self.text.count("\n", 0, at) + 1

    def split(self, source: str) -> list:
        """The text of each cell in a fixed ``source`` (in self.cells' order),
        the masked lines put back; ValueError when its cell ends moved."""
        bodies: list = []
        cur: list = []
        end = CELL_END + "\n"
        for ln in _split_lines(source):
            if ln == end:
                bodies.append("".join(cur))
                cur = []
            else:
                cur.append(ln)
        if len(bodies) != len(self.cells) or cur:
            raise ValueError("the fixed source no longer has one end line per cell")
        out = []
        for c, body in zip(self.cells, bodies):
            if c.masked:
                body = _unmask(body, c.masked)
            if c.newline and body.endswith("\n"):
                body = body[:-1]
            out.append(body)
        return out

    def rewrite(self, source: str) -> bytes:
        """The file's bytes with each cell's source replaced by its text in a
        fixed ``source``, everything else as it was (Note [Notebook bytes])."""
        import json

        texts = self.split(source)
        ascii_only = _escapes_non_ascii(self.text)
        text = self.text
        changed = [(c, t) for c, t in zip(self.cells, texts) if t != c.text]
        for c, new in sorted(changed, key=lambda ct: -ct[0].span[0]):
            a, b = c.span
            raw = _encode_source(text[a:b], new, c.items, ascii_only)
            text = text[:a] + raw + text[b:]
        doc = json.loads(text)  # the rewrite is checked: its cells read back as fixed
        for c, t in changed:
            src = doc["cells"][c.index]["source"]
            if ("".join(src) if isinstance(src, list) else src) != t:  # pragma: no cover
                raise ValueError(f"cell {c.number} did not read back as written")
        return (self.bom + text).encode("utf-8")


def _language(meta) -> Optional[str]:
    """The notebook's language by its metadata (lower case), or None when it
    does not say."""
    if not isinstance(meta, dict):
        return None
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        v = meta.get(key)
        if isinstance(v, dict) and isinstance(v.get(field), str) and v[field]:
            return v[field].strip().lower()
    return None


# --- IPython syntax (Note [Notebook source]) -------------------------------------


def _split_lines(text: str) -> list:
    """The lines of ``text`` with their ends ("\\n" only, as Jupyter splits)."""
    lines = text.split("\n")
    out = [ln + "\n" for ln in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _is_magic(line: str) -> bool:
    """Whether a line that starts a statement is IPython syntax rather than
    Python: a line magic, a shell escape, help, or an assignment from one."""
    s = line.strip()
    if not s:
        return False
    if s[0] in "%!?":
        return True
    if s.endswith("?") and not any(ch in s for ch in "#'\""):
        return True  # obj? / obj??
    # `files = !ls`, `t = %time f()`: names (and subscripts) assigned from one
    eq = s.find("=")
    if eq > 0 and s[eq + 1:eq + 2] != "=":
        left, right = s[:eq].rstrip(), s[eq + 1:].lstrip()
        if right[:1] in ("!", "%") and left and \
                all(ch.isalnum() or ch in "_., []()*\t" for ch in left) and \
                left[-1] not in "!<>=%+-*/&|^@":
            return True
    return False


class _Lexer:
    """Just enough of Python's lexer to tell whether a line starts a
    statement: not inside brackets, a string or a backslash continuation
    (IPython looks for its syntax only there)."""

    __slots__ = ("depth", "quote", "continued")

    def __init__(self) -> None:
        self.depth = 0
        self.quote = ""  # the quote of the string open at the line's end, or ""
        self.continued = False

    def at_start(self) -> bool:
        return self.depth == 0 and not self.quote and not self.continued

    def feed(self, line: str) -> None:
        body = line.rstrip("\r\n")
        i, n = 0, len(body)
        self.continued = False
        comment = False
        while i < n:
            c = body[i]
            if self.quote:
                if c == "\\":
                    i += 2
                    continue
                if body.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = ""
                    continue
                i += 1
                continue
            if c == "#":
                comment = True
                break
            if c in "\"'":
                q = body[i:i + 3] if body[i:i + 3] in ('"""', "'''") else c
                self.quote = q
                i += len(q)
                continue
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            i += 1
        if self.quote in ("'", '"'):
            self.continued = body.endswith("\\")
            if not self.continued:
                self.quote = ""  # an unterminated one-line string ends with its line
        elif not self.quote:
            self.continued = body.endswith("\\") and not comment


def _mask(text: str, mark: int) -> tuple:
    """((masked text, {mark: original line}), next mark, None), or (None,
    mark, why) for a cell left out."""
    lines = _split_lines(text)
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    masked: dict = {}
    skip_first = False
    if first is not None and lines[first].lstrip().startswith("%%"):
        name = lines[first].lstrip()[2:].split(None, 1)
        name = name[0] if name else ""
        if name not in PYTHON_CELL_MAGICS:
            return None, mark, f"a `%%{name}` cell (not Python)"
        skip_first = True
    out = []
    lexer = _Lexer()
    cont = False  # the line continues a masked one
    indent = ""
    for i, ln in enumerate(lines):
        cell_magic = skip_first and i == first
        if cont or cell_magic or (lexer.at_start() and _is_magic(ln)):
            body = ln.rstrip("\r\n")
            if not cont:  # a continuation line takes its first line's indentation
                indent = "" if cell_magic else ln[:len(ln) - len(ln.lstrip(" \t"))]
            cont = body.endswith("\\")
            masked[mark] = ln
            out.append(f"{indent}pass  {_MAGIC_MARK}{mark}{ln[len(body):]}")
            mark += 1
        else:
            cont = False
            lexer.feed(ln)
            out.append(ln)
    return ("".join(out), masked), mark, None


def _unmask(body: str, masked: dict) -> str:
    """``body`` with each masked line (found by its mark, wherever a fix moved
    it) back as it was; ValueError when a mark is missing."""
    lines = body.split("\n")
    found = 0
    for k, ln in enumerate(lines):
        at = ln.find(_MAGIC_MARK)
        if at < 0 or not ln.lstrip().startswith("pass  "):
            continue
        digits = ln[at + len(_MAGIC_MARK):].rstrip("\r")
        if digits.isdigit() and int(digits) in masked:
            lines[k] = masked[int(digits)].rstrip("\n")
            found += 1
    if found != len(masked):
        raise ValueError("a masked IPython line went missing in the fixed source")
    return "\n".join(lines)


# --- the file's JSON (Note [Notebook bytes]) ----------------------------------------


_WS = " \t\n\r"


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _skip_string(text: str, i: int) -> int:
    """The offset just past the JSON string that starts at ``i`` (a ``"``)."""
    i += 1
    while True:
        q = text.find('"', i)
        if q < 0:  # pragma: no cover - json.loads accepted the text
            raise NotebookError("not a notebook: an unterminated string")
        k = q - 1
        while text[k] == "\\":
            k -= 1
        if (q - 1 - k) % 2 == 0:
            return q + 1
        i = q + 1


def _skip_value(text: str, i: int) -> int:
    """The offset just past the JSON value at ``i``."""
    c = text[i]
    if c == '"':
        return _skip_string(text, i)
    if c in "[{":
        depth = 0
        n = len(text)
        while i < n:
            c = text[i]
            if c == '"':
                i = _skip_string(text, i)
                continue
            if c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise NotebookError("not a notebook: an unclosed bracket")  # pragma: no cover
    n = len(text)
    while i < n and text[i] not in ",]}" + _WS:
        i += 1
    return i


def _members(text: str, i: int):
    """(key, value start, value end) of the object at ``i``."""
    import json

    i = _skip_ws(text, i + 1)
    if text[i] == "}":
        return
    while True:
        end = _skip_string(text, i)
        key = json.loads(text[i:end])
        i = _skip_ws(text, end)
        i = _skip_ws(text, i + 1)  # the ':'
        v_end = _skip_value(text, i)
        yield key, i, v_end
        i = _skip_ws(text, v_end)
        if text[i] == "}":
            return
        i = _skip_ws(text, i + 1)  # the ','


def _elements(text: str, i: int):
    """(start, end) of each element of the array at ``i``."""
    i = _skip_ws(text, i + 1)
    if text[i] == "]":
        return
    while True:
        end = _skip_value(text, i)
        yield i, end
        i = _skip_ws(text, end)
        if text[i] == "]":
            return
        i = _skip_ws(text, i + 1)


def _source_spans(text: str) -> dict:
    """Cell index -> the (start, end) of its ``source`` value in ``text``
    (the last, where a key is repeated, as json.loads takes it)."""
    top = _skip_ws(text, 0)
    cells = None
    for key, a, _b in _members(text, top):
        if key == "cells":
            cells = a
    spans: dict = {}
    if cells is None or text[cells] != "[":  # pragma: no cover - checked before
        return spans
    for k, (a, _b) in enumerate(_elements(text, cells)):
        if text[a] != "{":
            continue
        for key, va, vb in _members(text, a):
            if key == "source":
                spans[k] = (va, vb)
    return spans


def _list_items(text: str, span: tuple) -> list:
    """The (start, end) of each string of a list source, relative to the
    source's own text."""
    return [(a - span[0], b - span[0]) for a, b in _elements(text, span[0])]


def _escapes_non_ascii(text: str) -> bool:
    """Whether the file writes non-ASCII characters as \\u escapes (it holds
    none raw, and an escape of one): json.dump's ensure_ascii=True."""
    if not text.isascii():
        return False
    import re

    return re.search(r"(?<!\\)(?:\\\\)*\\u(?!00[0-7])[0-9a-fA-F]{4}", text) is not None


def _encode_source(old_raw: str, new: str, items: Optional[list], ascii_only: bool) -> str:
    """The JSON text of a cell's new source, in the form and layout of
    ``old_raw`` (its items' spans in ``items``; Note [Notebook bytes])."""
    import json

    def dumps(s: str) -> str:
        return json.dumps(s, ensure_ascii=ascii_only)

    if items is None:
        return dumps(new)
    reuse: dict = {}
    for a, b in items:
        reuse.setdefault(json.loads(old_raw[a:b]), old_raw[a:b])
    lines = _split_lines(new)
    if not lines:
        return "[]"
    # the layout: the whitespace after "[", between two items and before "]"
    if items:
        lead = old_raw[1:items[0][0]]
        trail = old_raw[items[-1][1]:-1]
        sep = old_raw[items[0][1]:items[1][0]] if len(items) > 1 else \
            "," + (lead if "\n" in lead else " ")
    else:
        lead = trail = ""
        sep = ", "
    return "[" + lead + sep.join(reuse.get(ln) or dumps(ln) for ln in lines) + trail + "]"
