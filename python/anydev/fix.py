"""The fixer: rewrites legacy calls that the compat table marks as mechanical.

    from anydev.fix import fix_paths, fix_source
    result = fix_paths(["src/"], unsafe=False)       # writes the files
    result = fix_paths(["src/"], diff=True)          # writes nothing; result.diff
    new, applied, skipped = fix_source(data, "x.py", findings, unsafe=True)

It works on the scanner's findings (:mod:`anydev.scan`), so it rewrites exactly
what ``anydev scan`` reports, and applies a row's rewrite only when the row's
``fix`` allows it: ``safe`` always, ``unsafe`` with ``unsafe=True``
(``--unsafe-fixes``), ``none`` never. Every finding it does not apply is
returned with the reason.

Calls
    A call is rewritten with the row's template (``torch.cuda.amp.autocast(
    dtype=x)`` becomes ``torch.amp.autocast("cuda", dtype=x)``): the call's
    arguments are bound to the legacy ``signature`` and placed where the
    template says (compat_map/SCHEMA.md). Only the callee and the arguments
    that change are edited, so a multi-line call keeps its layout, comments and
    trailing comma. A call the fixer cannot bind (``*args``/``**kwargs``, an
    unknown keyword, an argument the template has no place for, too many
    positional arguments) is left as it is and the reason reported. Without a
    template the callee is replaced and the arguments kept. Calls nested in the
    arguments of another are rewritten too. Inside an f-string a template's
    string literal takes the quote the f-string leaves free.
References
    A reference that is not a call (``fn = torch.cuda.empty_cache``,
    ``except torch.cuda.OutOfMemoryError``, an annotation, a C++ type) is
    renamed when the row's ``rename`` allows it and, for a row with a
    template, when the template called without arguments is the plain
    replacement (or the row is a class). One followed by an attribute or a
    member (``torch.cuda.Stream.priority_range``, ``CUDAGraph::replay``) is
    left alone: the replacement may not have it. A bare decorator of a
    ``decorator`` row (``@torch.cuda.amp.custom_fwd``) becomes the template
    called without arguments (``@torch.amp.custom_fwd(device_type="cuda")``).
Python imports
    Imports are rewritten with their uses: ``from torch.cuda import
    current_device as cd`` loses ``current_device as cd`` once every use of
    the name ``cd`` in the file was rewritten (the statement goes when it has
    no name left; a block left empty gets ``pass``). A name with a use that
    was not rewritten (an unsafe fix not asked for, a suppression comment, a
    parameter of the same name) keeps its import, and so does a re-export: a
    name listed in ``__all__``, imported and not used in an ``__init__.py``,
    or imported in a class body (a class attribute). A replacement spells the torch package as the code
    around it does: the finding's own first name (``th.cuda.synchronize()``
    becomes ``th.accelerator.synchronize()``), else an ``import torch [as
    X]`` of an enclosing function before it, else the module's; ``import
    torch`` is added after the module's docstring and leading imports only
    when none of those binds it.
C++ classes
    A legacy class is renamed where its replacement can be built from the same
    arguments: ``at::cuda::CUDAGuard g(t.get_device())`` becomes
    ``c10::DeviceGuard g(c10::Device(at::accelerator::getAccelerator(true).value(),
    t.get_device()))`` (a device index, told by its form: an integer literal,
    a cast to an integer type, ``.get_device()``/``.index()``, or a name
    declared with an integer type in the same function), a c10::Device argument
    is kept; declarations, brace initialization, temporaries and
    ``std::make_unique<T>(...)`` are understood. An argument whose type the
    fixer cannot tell, a guard whose arguments are not visible, a constructor
    the replacement lacks and a member of the object that the replacement lacks
    (``g.set_device(d)``, ``graph.capture_begin(pool, mode)``) leave the code
    as it is, with the reason. tests/python/test_fix_cpp_compile.py compiles
    every form against PyTorch's headers.
C++ includes
    The headers a rewrite needs (``<ATen/DeviceAccelerator.h>`` for
    ``at::accelerator::*``, ``<c10/core/DeviceGuard.h>``, ...) are included
    after the file's last ``#include`` outside a conditional block, once, when
    the file does not include them yet; a file without any ``#include`` gets
    none (it relies on what is included before it).
C++ using-declarations
    ``using c10::cuda::current_device;`` is removed from a source file once
    every unqualified use of the name after it was rewritten; in a header it
    is kept (the files that include it may use the name).

Safety: edits are made on the file's text and written back in its own
encoding (the ``coding`` cookie of a Python file), with its byte-order mark,
line endings and file mode (and owner, where allowed), atomically (a temporary
file in the same folder renamed over it). A Python file that is not valid in
its encoding or does not parse (with the running Python) is reported and left
alone, and one is parsed again before it is written: if the rewrite would
break it, it is left as it was and the reason reported. A file is not written
through a symbolic link (the file or a folder between it and the tree it was
found under), nor when it has other hard links, nor when it changed after it
was scanned or read. Running the fixer twice changes nothing the second time.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import difflib
import io
import os
import re
import stat
import sys
import tokenize
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional, Sequence

from . import _config, _fix_analysis, _signature, _versions
from ._files import replace_atomically
from . import scan as _scan
from ._compat_table import ROWS_BY_CODE, ROWS_BY_LEGACY, Row
from ._fix import literals as _fix_literals

__all__ = ["FileResult", "FixResult", "fix_paths", "fix_source", "render_template"]

PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_BREAK_B = re.compile(rb"\r\n|\r|\n")
_HEADERS = (".h", ".hpp", ".hh", ".cuh")


@dataclass
class FileResult:
    path: str
    applied: list[_scan.Finding] = field(default_factory=list)
    skipped: list[tuple[_scan.Finding, str]] = field(default_factory=list)
    error: Optional[str] = None     # the file was left as it was, and why
    io_error: bool = False          # ... because it could not be read or written
    changed: bool = False
    diff: str = ""


@dataclass
class FixResult:
    files: list[FileResult] = field(default_factory=list)
    errors: list[_scan.ScanError] = field(default_factory=list)
    #: the targets the files were fixed for, by where each came from
    targets: dict[str, "_versions.Target"] = field(default_factory=dict)

    @property
    def needs_torch(self) -> Optional[str]:
        """The oldest PyTorch the fixed code runs on: the newest `since` among
        the rewrites applied (None when nothing was rewritten)."""
        best = None
        for fr in self.files:
            if fr.error is not None:
                continue
            for f in fr.applied:
                row = _row_of(f)
                v = _versions.since_of(row) if row is not None else None
                if v is not None and (best is None or v > best):
                    best = v
        return _versions.fmt(best) if best else None

    @property
    def applied(self) -> int:
        return sum(len(f.applied) for f in self.files if f.error is None)

    @property
    def remaining(self) -> list[tuple[_scan.Finding, str]]:
        out: list[tuple[_scan.Finding, str]] = []
        for f in self.files:
            if f.error is not None:
                out.extend((x, f.error) for x in f.applied)
            out.extend(f.skipped)
        return out

    @property
    def diff(self) -> str:
        return "".join(f.diff for f in self.files)


class _FileError(Exception):
    """The file cannot be fixed soundly; it is left as it was."""


# --- text handling ---------------------------------------------------------------


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
                enc, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            except SyntaxError as e:
                if strict:
                    raise _FileError(f"{e.msg if hasattr(e, 'msg') else e}; nothing was changed"
                                     ) from None
                enc = "utf-8"
            self.encoding = "utf-8" if enc == "utf-8-sig" else enc
        self.body = body
        if strict:
            try:
                body.decode(self.encoding)
            except UnicodeDecodeError as e:
                raise _FileError(f"is not valid {self.encoding} (byte {e.start + len(self.bom)}); "
                                 "nothing was changed") from None
        self.text = body.decode(self.encoding, errors="surrogateescape")
        m = _LINE_BREAK.search(self.text)
        self.newline = m.group(0) if m else "\n"
        self.ascii = self.text.isascii()
        self._line_starts: Optional[list[int]] = None
        self._byte_line_starts: Optional[list[int]] = None

    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(self.text)]
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
        starts = self.line_starts()
        start = starts[lineno - 1]
        if self.ascii:
            return start + col_offset
        end = starts[lineno] if lineno < len(starts) else len(self.text)
        prefix = self.text[start:end].encode("utf-8", errors="surrogateescape")[:col_offset]
        return start + len(prefix.decode("utf-8", errors="surrogateescape"))

    def ast_pos(self, index: int) -> tuple[int, int]:
        """The ast position (1-based line, UTF-8 column) of a text index."""
        line = self.line_of(index)
        start = self.line_starts()[line]
        col = index - start if self.ascii else \
            len(self.text[start:index].encode("utf-8", errors="surrogateescape"))
        return line + 1, col

    def span(self, node) -> tuple[int, int]:
        return (self.index_of_ast(node.lineno, node.col_offset),
                self.index_of_ast(node.end_lineno, node.end_col_offset))

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.encoding, errors="surrogateescape")


@dataclass
class _Edit:
    start: int
    end: int
    text: str


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


# --- templates ---------------------------------------------------------------------


def _nesting(text: str) -> Iterator[tuple[int, str, int]]:
    """(index, character, bracket depth after it) of each character of ``text``
    that is not inside a quoted string."""
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        yield i, ch, depth


def _split_template_args(inner: str) -> list[str]:
    items, start = [], 0
    for i, ch, depth in _nesting(inner):
        if ch == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    if inner[start:].strip():
        items.append(inner[start:])
    return [i.strip() for i in items]


def _call_form(template: str) -> Optional[tuple[str, list[str]]]:
    """(callee, argument items) of a template of the form ``name(items)``
    whose last parenthesis closes the first; None for any other template."""
    m = re.match(r"\s*([A-Za-z_][\w.]*(?:\s*::\s*[A-Za-z_]\w*)*|::[A-Za-z_][\w:]*)\s*\(", template)
    if not m or not template.rstrip().endswith(")"):
        return None
    body = template.rstrip()
    open_paren = m.end() - 1
    depth = 0
    for i, ch, depth in _nesting(body[open_paren:]):
        if ch in ")]}" and depth == 0 and open_paren + i != len(body) - 1:
            return None
    if depth != 0:
        return None
    return m.group(1).replace(" ", ""), _split_template_args(body[open_paren + 1:-1])


def _render_items(items: list[str], bound: dict[str, str], all_items: list[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item == "{*}":
            out.extend(all_items)
            continue
        names = PLACEHOLDER.findall(item)
        if any(n != "*" and n not in bound for n in names):
            continue
        if "*" in names and not all_items:
            continue
        out.append(PLACEHOLDER.sub(lambda m: ", ".join(all_items) if m.group(1) == "*"
                                   else bound[m.group(1)], item))
    return out


def render_template(template: str, bound: dict[str, str], all_args: str) -> str:
    """Renders a row's template (compat_map/SCHEMA.md): ``{name}`` is the text
    of the argument bound to ``name``, ``{*}`` all the arguments; an argument
    item whose placeholders are unbound is dropped with its comma."""
    form = _call_form(template)
    if form is None:
        return PLACEHOLDER.sub(lambda m: all_args if m.group(1) == "*" else bound.get(m.group(1), ""),
                               template)
    head, items = form
    all_items = [all_args.strip()] if all_args.strip() else []
    return f"{head}({', '.join(_render_items(items, bound, all_items))})"


def _bare_call(row: Row) -> Optional[str]:
    """The row's template called without arguments, or None without a call-form template."""
    if row.template is None:
        return None
    form = _call_form(row.template)
    if form is None:
        return None
    head, items = form
    return f"{head}({', '.join(_render_items(items, {}, []))})"


def _renamable(row: Row, unsafe: bool = False) -> bool:
    """Whether a reference that is not a call may become the replacement.

    A row with ``rename = false`` whose template only passes the legacy
    parameters on, in order (``torch.accelerator.synchronize({device})`` for
    ``(device=None)``), is renamed under ``unsafe``: the rename is exact for
    positional calls, but the replacement's parameters are positional-only, so
    a caller that passes ``device=`` by keyword would break."""
    if not row.replacement:
        return False
    if not row.rename:
        if not unsafe or row.template is None or row.language != "python":
            return False
        params = _python_params(row.signature)
        if params is None or params.keyword_only or params.vararg or params.kwarg:
            return False
        passthrough = f"{row.replacement}({', '.join('{' + p + '}' for p in params.positional)})"
        return row.template == passthrough
    if row.template is None or row.kind == "class":
        return True
    return _bare_call(row) == f"{row.replacement}()"


def _python_params(signature: Optional[str]) -> Optional[_signature.Params]:
    """The parameter names of a row's legacy signature, or None without one."""
    if not signature:
        return None
    try:
        return _signature.params(signature)
    except ValueError:
        return None


def _row_of(f: _scan.Finding) -> Optional[Row]:
    return ROWS_BY_CODE.get(f.rule) or ROWS_BY_LEGACY.get(f.symbol)


def _allowed(row: Row, unsafe: bool) -> Optional[str]:
    """None when the row's rewrite may be applied, else why not."""
    if row.status == "literal":  # C++ only: Python literals go by unit (anydev._fix.literals)
        return (f"{row.code}: C++ literals are hints; the fixer does not rewrite them "
                f"(`anydev rule {row.code}` shows the generic spelling)")
    if row.status != "deprecated" or row.fix == "none":
        return f"{row.code} has no mechanical fix; migrate by hand (`anydev rule {row.code}`)"
    if row.fix == "unsafe" and not unsafe:
        return (f"{row.code}'s fix changes behaviour; apply it with --unsafe-fixes "
                f"(`anydev rule {row.code}`)")
    return None


# --- Python -------------------------------------------------------------------------


def _parse_error(e: SyntaxError) -> str:
    where = f"line {e.lineno}: " if e.lineno else ""
    return f"{where}{e.msg}"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_statements(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements that run at module level: into if/try/with/loops (not
    an ``if TYPE_CHECKING:`` branch), not into functions and classes."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _module_statements(node.body)
            yield from _module_statements(node.orelse)
        elif isinstance(node, (ast.For, ast.While, ast.With)):
            yield from _module_statements(node.body)
            yield from _module_statements(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            yield from _module_statements(node.body)  # type: ignore[attr-defined]
            for h in node.handlers:  # type: ignore[attr-defined]
                yield from _module_statements(h.body)
            yield from _module_statements(node.orelse)  # type: ignore[attr-defined]
            yield from _module_statements(node.finalbody)  # type: ignore[attr-defined]


def _torch_root(tree: ast.Module) -> tuple[Optional[str], bool]:
    """(the name that spells the torch package at module level, whether an
    ``import torch`` must be added for it). (None, False) when ``torch`` is
    bound to something else and no ``import torch as X`` exists."""
    plain = False
    alias = None
    other = False
    for node in _module_statements(tree.body):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname is None and (a.name == "torch" or a.name.startswith("torch.")):
                    plain = True
                elif a.name == "torch" and a.asname:
                    if a.asname == "torch":
                        plain = True
                    elif alias is None:
                        alias = a.asname
                elif (a.asname or a.name.split(".")[0]) == "torch":
                    other = True
        elif isinstance(node, ast.ImportFrom):
            if any((a.asname or a.name) == "torch" for a in node.names):
                other = True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other = other or node.name == "torch"
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                other = other or any(isinstance(n, ast.Name) and n.id == "torch" for n in ast.walk(t))
    if plain:
        return "torch", False
    if alias:
        return alias, False
    if other:
        return None, False
    return "torch", True


def _import_insert_point(tree: ast.Module, text: _Text) -> tuple[int, str]:
    """Where a new ``import torch`` goes (after the module docstring,
    ``__future__`` imports and the leading import block; after the leading
    comments of a file that starts with code), and what precedes it there."""
    line = 0
    for i, node in enumerate(tree.body):
        is_doc = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)
        if is_doc or isinstance(node, (ast.Import, ast.ImportFrom)):
            line = node.end_lineno or node.lineno
            continue
        # code on the last line of the block (`import os; x = f()`): before that line
        line = min(line, node.lineno - 1)
        break
    starts = text.line_starts()
    if line == 0:
        # keep a shebang, an encoding cookie and a leading comment block first
        while line < len(starts):
            s = starts[line]
            e = starts[line + 1] if line + 1 < len(starts) else len(text.text)
            if text.text[s:e].strip().startswith("#"):
                line += 1
                continue
            break
    if line < len(starts):
        at = starts[line]
        if at == len(text.text) and text.text and not text.text.endswith(("\n", "\r")):
            return at, text.newline
        return at, ""
    return len(text.text), (text.newline if text.text and not text.text.endswith(("\n", "\r"))
                            else "")


def _alias_spans(text: str, start: int, end: int) -> list[tuple[str, Optional[str], int, int]]:
    """(name, asname, start, end) of each name an import statement at
    text[start:end] lists, as text indices (alias positions from the
    tokenizer, so Python 3.9 gets them too)."""
    src = text[start:end]
    line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(src)]
    out: list[tuple[str, Optional[str], int, int]] = []
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(src, newline=None).readline))
    except (tokenize.TokenError, SyntaxError):
        return out
    idx = lambda pos: start + line_starts[pos[0] - 1] + pos[1]  # noqa: E731
    i = 0
    while i < len(toks) and not (toks[i].type == tokenize.NAME and toks[i].string == "import"):
        i += 1
    i += 1
    cur: Optional[list] = None
    while i < len(toks):
        t = toks[i]
        if t.type == tokenize.NAME and t.string == "as" and cur is not None:
            i += 1
            while i < len(toks) and toks[i].type != tokenize.NAME:
                i += 1
            if i < len(toks):
                cur[1] = toks[i].string
                cur[3] = idx(toks[i].end)
        elif t.type == tokenize.NAME or (t.type == tokenize.OP and t.string in (".", "*")):
            if cur is None:
                cur = [t.string, None, idx(t.start), idx(t.end)]
            else:
                cur[0] += t.string
                cur[3] = idx(t.end)
        elif t.type == tokenize.OP and t.string == ",":
            if cur is not None:
                out.append(tuple(cur))  # type: ignore[arg-type]
            cur = None
        elif t.type in (tokenize.NEWLINE, tokenize.ENDMARKER) or (
                t.type == tokenize.OP and t.string == ";"):
            break
        i += 1
    if cur is not None:
        out.append(tuple(cur))  # type: ignore[arg-type]
    return out


def _fstring_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, quote) of every f-string literal, nested ones included."""
    line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
    idx = lambda pos: line_starts[pos[0] - 1] + pos[1]  # noqa: E731
    out: list[tuple[int, int, str]] = []
    stack: list[tuple[int, str]] = []
    fstart = getattr(tokenize, "FSTRING_START", None)
    fend = getattr(tokenize, "FSTRING_END", None)
    try:
        for t in tokenize.generate_tokens(io.StringIO(text, newline=None).readline):
            if fstart is not None and t.type == fstart:
                quote = t.string.lstrip("rRfFbBuUtT")
                stack.append((idx(t.start), quote))
            elif fend is not None and t.type == fend and stack:
                s, quote = stack.pop()
                out.append((s, idx(t.end), quote))
            elif t.type == tokenize.STRING:
                prefix = re.match(r"[A-Za-z]*", t.string).group(0)  # type: ignore[union-attr]
                if "f" in prefix.lower():
                    body = t.string[len(prefix):]
                    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
                    out.append((idx(t.start), idx(t.end), quote))
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


_BODIES = ("body", "orelse", "finalbody")


def _start_of(node: ast.AST) -> tuple[int, int]:
    start = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    for d in getattr(node, "decorator_list", ()):  # a def starts at its first decorator
        start = min(start, (d.lineno, d.col_offset))
    return start


def _chain(tree: ast.AST, start: tuple[int, int], end: tuple[int, int]) -> list[ast.AST]:
    """The nodes from ``tree`` down to the node whose position is exactly
    [start, end] (ast coordinates: line, UTF-8 column), or to the deepest one
    that contains it: a descent into the nodes that contain it (with
    backtracking, as parts of an f-string share its position before Python
    3.12), not a walk of the whole tree."""
    best: list[ast.AST] = [tree]
    stack: list[list[ast.AST]] = [[tree]]
    while stack:
        chain = stack.pop()
        node = chain[-1]
        if node is not tree and (node.lineno, node.col_offset, node.end_lineno,  # type: ignore[attr-defined]
                                 node.end_col_offset) == (*start, *end):  # type: ignore[attr-defined]
            return chain
        if len(chain) > len(best):
            best = chain
        todo = _candidates(node, start)
        inside = []
        while todo:
            child = todo.pop()
            if getattr(child, "end_lineno", None) is None:  # arguments, withitem, comprehension
                todo.extend(ast.iter_child_nodes(child))
                continue
            if _start_of(child) <= start and \
                    (child.end_lineno, child.end_col_offset) >= end:  # type: ignore[attr-defined]
                inside.append(chain + [child])
        stack.extend(inside)
    return best


_STMT_LISTS = ("body", "orelse", "finalbody", "handlers")
_starts_cache: "dict[int, tuple[list, list[tuple[int, int]]]]" = {}


def _candidates(node: ast.AST, start: tuple[int, int]) -> list[ast.AST]:
    """The children of ``node`` that may contain a position: all of them, but
    of a long statement list only the statement that starts last at or before
    it (statements do not overlap), found by bisection, so locating n findings
    in a module of n statements costs n log n, not n^2 (Note [Locating findings])."""
    out: list[ast.AST] = []
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            if len(value) > 16 and name in _STMT_LISTS:
                cached = _starts_cache.get(id(value))
                if cached is None or cached[0] is not value:
                    cached = (value, [_start_of(x) for x in value])
                    _starts_cache[id(value)] = cached
                k = bisect.bisect_right(cached[1], start) - 1
                if k >= 0:
                    out.append(value[k])
            else:
                out.extend(x for x in value if isinstance(x, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


# Note [Locating findings]
# A file with 600k findings used to spend 96% of `anydev fix` in _chain, which
# looked at every statement of the module for every finding. Statement lists
# are sorted by position and their members do not overlap, so one bisection
# per level finds the only statement that can hold a finding. The cache of
# start positions is keyed by the list's id and checked by identity, so a
# later tree that reuses an id cannot read a stale entry.


def _block_of(stmt: ast.AST, holder: ast.AST) -> Optional[list]:
    """The statement list of ``holder`` that holds ``stmt`` (None for the
    module's, which may be left empty)."""
    if isinstance(holder, ast.Module):
        return None
    for name in _BODIES:
        body = getattr(holder, name, None)
        if isinstance(body, list) and any(x is stmt for x in body):
            return body
    return None


class _Located:
    """A finding's node in the syntax tree, and what is around it."""

    def __init__(self, chain: list[ast.AST], exact: bool):
        self.chain = chain
        self.node = chain[-1] if exact else None
        self.parent = chain[-2] if exact and len(chain) > 1 else None

    @property
    def call(self) -> Optional[ast.Call]:
        p = self.parent
        return p if isinstance(p, ast.Call) and p.func is self.node else None

    @property
    def is_attribute_base(self) -> bool:
        p = self.parent
        return isinstance(p, ast.Attribute) and p.value is self.node

    @property
    def is_decorator(self) -> bool:
        p = self.parent
        return isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
            any(d is self.node for d in p.decorator_list)

    @property
    def in_fstring(self) -> bool:
        return any(isinstance(n, ast.JoinedStr) for n in self.chain)


class _PyContext:
    def __init__(self, text: _Text, tree: ast.Module, path: str):
        self.text = text
        self.tree = tree
        self.path = path
        self.edits = _Edits(text.text)
        self.exported = _dunder_all(tree)
        self.root, self.needs_import = _torch_root(tree)
        self.uses_torch = False
        self.analysis: Optional[_fix_analysis.PyAnalysis] = None
        self._fstrings: Optional[list[tuple[int, int, str]]] = None
        self._name_uses: Optional[dict[str, int]] = None

    def locate(self, start: int, end: int) -> _Located:
        s, e = self.text.ast_pos(start), self.text.ast_pos(end)
        chain = _chain(self.tree, s, e)
        last = chain[-1]
        exact = getattr(last, "lineno", None) is not None and \
            (last.lineno, last.col_offset, last.end_lineno, last.end_col_offset) == (*s, *e)  # type: ignore[attr-defined]
        return _Located(chain, exact)

    @property
    def name_uses(self) -> dict[str, int]:
        """How often each name is used (loaded, stored, deleted, declared
        global) in the module: one walk, for the import decisions."""
        if self._name_uses is None:
            uses: dict[str, int] = {}
            Name, Global, Nonlocal = ast.Name, ast.Global, ast.Nonlocal
            for node in ast.walk(self.tree):
                t = type(node)
                if t is Name:
                    uses[node.id] = uses.get(node.id, 0) + 1  # type: ignore[attr-defined]
                elif t is Global or t is Nonlocal:
                    for n in node.names:  # type: ignore[attr-defined]
                        uses[n] = uses.get(n, 0) + 1
            self._name_uses = uses
        return self._name_uses

    def torch_name(self, f: _scan.Finding, start: int, where: _Located) -> tuple[Optional[str], bool]:
        """The name that spells the torch package where ``f`` is, and whether
        the module must import torch for it: the finding's own first name when
        that is the package (``th`` in ``th.cuda.synchronize``), else a
        package import of an enclosing function before it, else the module's."""
        written = re.sub(r"\s+", "", f.text)
        head, _, tail = written.partition(".")
        if tail and f.symbol.startswith("torch.") and tail == f.symbol[len("torch."):]:
            return head, False
        for fn in reversed(where.chain):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [n for st in _module_statements(fn.body) if isinstance(st, ast.Import)
                         and self.text.span(st)[1] <= start for n in _torch_names(st)]
                if names:
                    return names[-1], False
        return self.root, self.needs_import

    @staticmethod
    def spelled(name: str, root: Optional[str]) -> Optional[str]:
        """A replacement's name with the torch package spelled ``root``."""
        if name == "torch" or name.startswith("torch."):
            if root is None:
                return None
            return root + name[len("torch"):]
        return name

    def quote_at(self, index: int, where: _Located) -> Optional[str]:
        """The quote a string literal at ``index`` may use: '"' outside
        f-strings, else one that no enclosing f-string uses (None if none)."""
        if not where.in_fstring:
            return '"'
        if self._fstrings is None:
            self._fstrings = _fstring_spans(self.text.text)
        taken = {q for s, e, q in self._fstrings if s < index < e and len(q) == 1}
        for q in ('"', "'"):
            if q not in taken:
                return q
        return None


def _torch_names(node: ast.Import) -> list[str]:
    """The names an import statement binds to the torch package."""
    out = []
    for a in node.names:
        if a.asname is None and (a.name == "torch" or a.name.startswith("torch.")):
            out.append("torch")
        elif a.name == "torch" and a.asname:
            out.append(a.asname)
    return out


def _dunder_all(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        value = None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            value = node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) \
                and node.target.id == "__all__":
            value = node.value
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            fn = node.value.func
            if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) \
                    and fn.value.id == "__all__" and node.value.args:
                value = node.value.args[0]
        if value is not None:
            for n in ast.walk(value):
                if isinstance(n, ast.Constant) and isinstance(n.value, str):
                    names.add(n.value)
    return names


def _spell_template(template: str, root: Optional[str]) -> Optional[str]:
    """The template with the torch package spelled ``root`` (None when it
    needs torch and there is no name for it)."""
    pattern = re.compile(r"(?<![\w.])torch(?=\s*\.)")
    if not pattern.search(template) or root == "torch":
        return template
    return None if root is None else pattern.sub(root, template)


def _with_quote(template: str, quote: str) -> str:
    return template.replace('"', "'") if quote == "'" else template


def _py_call(ctx: _PyContext, node: ast.Call, row: Row, root: Optional[str], where: _Located
             ) -> tuple[Optional[str], list[_Edit]]:
    """The edits that rewrite one call, or why it is left alone."""
    text = ctx.text
    f_start, f_end = text.span(node.func)
    c_start, c_end = text.span(node)
    if row.template is None:  # the arguments stay as they are, *args and **kwargs too
        name = ctx.spelled(row.replacement, root)
        if name is None:
            return "`torch` is bound to something else in this module", []
        return None, [_Edit(f_start, f_end, name)]
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return ("a call with *args or **kwargs cannot be bound to the legacy signature; "
                "rewrite by hand"), []
    params = _python_params(row.signature)
    if params is None:
        return f"{row.code}: the row's signature cannot be read", []
    positional, kwonly, has_kwargs = params.positional, params.keyword_only, params.kwarg is not None
    items: list[tuple[int, int, Optional[str], ast.expr]] = []
    bound: dict[str, str] = {}
    for i, a in enumerate(node.args):
        if i >= len(positional):
            return (f"more positional arguments than {row.legacy}{row.signature} takes; "
                    "rewrite by hand"), []
        s, e = text.span(a)
        items.append((s, e, None, a))
        bound[positional[i]] = ctx.edits.render(s, e)
    for k in node.keywords:
        if k.arg in bound:
            return f"argument `{k.arg}` given twice; rewrite by hand", []
        if k.arg not in positional and k.arg not in kwonly:
            if has_kwargs:
                return (f"keyword `{k.arg}` goes to the **kwargs of {row.legacy}{row.signature}, "
                        "which the template has no place for; rewrite by hand"), []
            return (f"keyword `{k.arg}` is not a parameter of {row.legacy}{row.signature}; "
                    "rewrite by hand"), []
        s, _ = text.span(k)
        vs, ve = text.span(k.value)
        items.append((s, ve, k.arg, k.value))
        bound[k.arg] = ctx.edits.render(vs, ve)  # type: ignore[index]
    items.sort(key=lambda t: t[0])
    used = set(PLACEHOLDER.findall(row.template))
    if "*" not in used:
        lost = [n for n in bound if n not in used]
        if lost:
            return (f"the template has no place for argument(s) {', '.join(lost)}; "
                    "rewrite by hand"), []
    template = _spell_template(row.template, root)
    if template is None:
        return "`torch` is bound to something else in this module", []
    if '"' in template:
        quote = ctx.quote_at(c_start, where)
        if quote is None:
            return "the rewrite needs a string literal where an f-string leaves no quote free", []
        template = _with_quote(template, quote)
    O = [(s, e) for s, e, _, _ in items]
    O_norm = []
    for _, _, kw, v in items:
        value = ctx.edits.render(*text.span(v))
        O_norm.append(value if kw is None else f"{kw}={value}")
    form = _call_form(template)
    if form is None:  # a template that is not a call: the whole call is replaced
        new = render_template(template, bound, ", ".join(O_norm))
        if "#" in text.text[f_end:c_end] and _has_comment(text.text[f_end:c_end]):
            return "the call has comments among its arguments; rewrite by hand", []
        return None, [_Edit(c_start, c_end, new)]
    head, t_items = form
    R = _render_items(t_items, bound, O_norm)
    open_idx = _open_paren(text.text, f_end)
    close_idx = c_end - 1
    edits = [_Edit(f_start, f_end, head)] if text.text[f_start:f_end] != head else []
    edits += _arg_edits(text.text, O, O_norm, R, open_idx, close_idx, text.newline)
    return None, edits


def _has_comment(src: str) -> bool:
    try:
        for t in tokenize.generate_tokens(io.StringIO(src, newline=None).readline):
            if t.type == tokenize.COMMENT:
                return True
    except (tokenize.TokenError, SyntaxError):
        return "#" in src
    return False


def _open_paren(text: str, pos: int) -> int:
    """Index of the call's "(" at or after ``pos`` (past spaces, comments and
    line continuations)."""
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch == "(":
            return pos
        if ch == "#":
            while pos < n and text[pos] not in "\r\n":
                pos += 1
            continue
        pos += 1
    return pos


#: Replacements of availability and count checks: they are rewritten only when the
#: code they guard is generic too (Note [Half-migrated guards]).
_GUARD_REPLACEMENTS = ("torch.accelerator.is_available", "torch.accelerator.device_count")
#: Legacy context managers whose replacement, torch.accelerator.device_index, takes an int.
_INDEX_ONLY = ("torch.accelerator.device_index",)


def _legacy_device(row: Row) -> str:
    """"cuda" or "xpu": the device a legacy row belongs to."""
    return "xpu" if ".xpu" in row.legacy or "::xpu" in row.legacy else "cuda"


def _refusal(an: _fix_analysis.PyAnalysis, f: _scan.Finding, row: Row,
             where: "_Located", node: Optional[ast.Call]) -> Optional[str]:
    """Why the code around a finding forbids its rewrite, or None (see
    anydev._fix_analysis)."""
    why = an.old_torch_only(where.chain) or an.device_home(where.chain)
    if why:
        return why
    head = re.sub(r"\s+", "", f.text).split(".")[0]
    why = an.other_binding(head, f.symbol)
    if why:
        return why
    if node is not None and row.kind == "class" and row.replacement in \
            _fix_analysis.CUDA_ONLY_MEMBERS:
        why = an.cuda_only_use(node, row.replacement, row.legacy.rsplit(".", 1)[0])
        if why:
            return why
    if node is not None and row.replacement in _INDEX_ONLY and \
            (row.template or "").startswith("torch.accelerator.device_index({"):
        arg = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "device"), None)
        if arg is not None:
            assigned, annotated = an.facts(an.scope_of(node))
            if not _fix_analysis.int_like(arg, assigned, annotated, returns_int=an.returns_int):
                return (f"cannot tell that `{ast.unparse(arg)}` is an int: "
                        f"{row.replacement} takes only an int or None (a torch.device or "
                        "'cuda:1' must become its index by hand)")
    return None


# Note [Half-migrated guards]
# `torch.device("cuda" if torch.cuda.is_available() else "cpu")` rewritten to
# torch.accelerator.is_available() sends an XPU or MPS machine down the "cuda"
# branch, where it fails. So an availability or count check is rewritten last,
# after every other finding of the file was decided, and only when the
# expression around it and the code it guards (the `if` body, the rest of the
# block after a guard clause, the uses of a name it is assigned to) hold no
# device literal, `.cuda()`, `.is_cuda` or `torch.cuda.*` that the same fix
# leaves (anydev._fix_analysis.PyAnalysis.guarded_cuda_code).


def _fix_python(text: _Text, findings: list[_scan.Finding], unsafe: bool, path: str,
                refused: Sequence[tuple[_scan.Finding, str]] = ()
                ) -> tuple[str, list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    # device literals and idioms move with their function (Note [Literal units]):
    # a pass whose unit falls runs again without it
    units = _fix_literals.Units(findings, refused, unsafe)
    for _ in range(len(findings) + 2):  # each pass that fails leaves one more unit
        done = _fix_python_pass(text, findings, unsafe, path, units)
        if done is not None:
            return done
    raise AssertionError("the literal units did not settle")  # pragma: no cover


def _fix_python_pass(text: _Text, findings: list[_scan.Finding], unsafe: bool, path: str,
                     units: "_fix_literals.Units"
                     ) -> Optional[tuple[str, list[_scan.Finding], list[tuple[_scan.Finding, str]]]]:
    version = f"Python {sys.version_info.major}.{sys.version_info.minor}"
    try:
        tree = ast.parse(text.text, filename=path)
    except SyntaxError as e:
        raise _FileError(f"does not parse with {version} ({_parse_error(e)}); "
                         "nothing was changed") from None
    except ValueError as e:  # NUL bytes
        raise _FileError(f"does not parse ({e}); nothing was changed") from None
    ctx = _PyContext(text, tree, path)
    an = ctx.analysis = _fix_analysis.PyAnalysis(tree, path, ctx.root)
    applied: list[_scan.Finding] = []
    skipped: list[tuple[_scan.Finding, str]] = []
    import_findings: list[_scan.Finding] = []
    work: list[tuple[int, int, _scan.Finding, _Located, Optional[ast.Call]]] = []

    covered = _fix_analysis.Covered()  # text spans of the rewrites applied
    if units.active:
        units.start(ctx, an, covered, findings)
    for f in findings:
        if f.kind == "import":
            import_findings.append(f)
            continue
        if units.owns(f):
            continue
        start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
        where = ctx.locate(start, end)
        node = where.call if f.kind == "call" else None
        if node is not None:
            c_start, c_end = text.span(node)
            work.append((c_end - c_start, c_start, f, where, node))
        else:
            work.append((end - start, start, f, where, None))
    # inner rewrites first: an outer call builds its arguments from their results;
    # availability and count checks after everything else (Note [Half-migrated guards])
    def is_guard(f: _scan.Finding) -> bool:
        row = _row_of(f)
        return row is not None and row.replacement in _GUARD_REPLACEMENTS

    work.sort(key=lambda w: (is_guard(w[2]), w[0], w[1]))
    fixed_text: list[str] = []
    for _, _, f, where, node in work:
        row = _row_of(f)
        why = f"{f.symbol} is not in the compat table" if row is None else _allowed(row, unsafe)
        if why is None and row is not None:
            why = _refusal(an, f, row, where, node)
            if why is None and units.active:
                why = units.guard_block(f)
            if why is None and row.replacement in _GUARD_REPLACEMENTS:
                anchor = node if node is not None else where.node
                if anchor is not None:
                    why = an.guarded_cuda_code(anchor, _legacy_device(row),
                                               covered, text.span)
        edits: list[_Edit] = []
        start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
        root, needs_import = ctx.torch_name(f, start, where)
        if why is None:
            assert row is not None
            if f.kind == "call":
                if node is None:
                    why = "could not locate the call in the syntax tree"
                else:
                    why, edits = _py_call(ctx, node, row, root, where)
            elif where.node is None:
                why = "could not locate the reference in the syntax tree"
            elif where.is_decorator and row.kind == "decorator" and _bare_call(row) is not None:
                quote = ctx.quote_at(start, where)
                template = _spell_template(row.template or "", root)
                name = None if template is None else \
                    _bare_call(row._replace(template=_with_quote(template, quote or '"')))
                if name is None:
                    why = "`torch` is bound to something else in this module"
                else:
                    edits = [_Edit(start, end, name)]
            elif where.is_attribute_base:
                why = (f"an attribute of `{f.text}` is used, which {row.replacement or 'the replacement'} "
                       "may not have; rewrite by hand")
            elif not _renamable(row, unsafe) and _renamable(row, True):
                why = (f"{row.code}: renaming a reference changes how keyword arguments bind "
                       f"({row.replacement} takes them positionally); apply it with --unsafe-fixes")
            elif not _renamable(row, unsafe):
                why = (f"{row.code}: a reference that is not a call cannot carry the arguments "
                       f"{row.replacement or 'the replacement'} needs; rewrite it by hand")
            else:
                name = ctx.spelled(row.replacement, root)
                if name is None:
                    why = "`torch` is bound to something else in this module"
                else:
                    edits = [_Edit(start, end, name)]
        if why is None and ctx.edits.conflicts(edits):
            why = "overlaps another rewrite; run the fixer again"
        if why is None:
            ctx.edits.add(edits)
            covered.add(*(text.span(node) if node is not None else (start, end)))
            if needs_import and any(re.match(rf"{re.escape(root or '')}\b", e.text) for e in edits):
                ctx.uses_torch = True
            applied.append(f)
            fixed_text.append(f.text.split(".")[0].strip())
        else:
            skipped.append((f, why))

    if units.active and not units.finish(ctx, applied, skipped):
        return None
    _fix_python_imports(ctx, import_findings, fixed_text, unsafe, applied, skipped)
    if ctx.uses_torch:
        at, before = _import_insert_point(tree, text)
        ctx.edits.add([_Edit(at, at, before + "import torch" + text.newline)])
    return ctx.edits.apply(), applied, skipped


def _fix_python_imports(ctx: _PyContext, findings: list[_scan.Finding], fixed_roots: list[str],
                        unsafe: bool, applied: list[_scan.Finding],
                        skipped: list[tuple[_scan.Finding, str]]) -> None:
    text = ctx.text
    fixed_count: dict[str, int] = {}
    for r in fixed_roots:
        fixed_count[r] = fixed_count.get(r, 0) + 1
    is_init = os.path.basename(ctx.path) == "__init__.py"
    # statement -> aliases to remove
    removals: dict[int, tuple[ast.AST, list[tuple[str, Optional[str], int, int]]]] = {}
    spans_of: dict[int, list[tuple[str, Optional[str], int, int]]] = {}
    parents: dict[int, Optional[list]] = {}
    for f in findings:
        start = text.index_of_byte(f.start)
        chain = ctx.locate(start, text.index_of_byte(f.end)).chain
        k = max((i for i, n in enumerate(chain) if isinstance(n, (ast.Import, ast.ImportFrom))),
                default=-1)
        stmt = chain[k] if k >= 0 else None
        if stmt is not None and id(stmt) not in parents:
            parents[id(stmt)] = _block_of(stmt, chain[k - 1])
        if stmt is None:
            skipped.append((f, "could not locate the import in the syntax tree"))
            continue
        spans = spans_of.get(id(stmt))
        if spans is None:
            spans = spans_of[id(stmt)] = _alias_spans(text.text, *text.span(stmt))
        alias = next((a for a in spans if a[2] == start), None)
        if alias is None:
            skipped.append((f, "could not locate the import in the syntax tree"))
            continue
        name, asname, _, _ = alias
        row = _row_of(f)
        an = ctx.analysis
        guarded = an.old_torch_only(chain) or an.device_home(chain) if an is not None else None
        if guarded:
            skipped.append((f, guarded))
            continue
        if isinstance(chain[k - 1], ast.ClassDef):
            skipped.append((f, "kept: an import in a class body is also an attribute of the class; "
                               "rewrite by hand"))
            continue
        if isinstance(stmt, ast.Import) and asname is None:
            why = _allowed(row, unsafe) if row else None
            skipped.append((f, why or f"kept: `import {name}` also binds `torch`"))
            continue
        local = asname or name
        uses = ctx.name_uses.get(local, 0) + (1 if local in ctx.exported else 0)
        fixed = fixed_count.get(local, 0)
        why = None
        if uses == 0:
            if local in ctx.exported or is_init:
                why = f"kept: `{local}` is re-exported ({'__all__' if local in ctx.exported else '__init__.py'}); rewrite by hand"
            elif row is None:
                why = f"{f.symbol} is not in the compat table"
            else:
                # unused at module level, so it is there for the modules that import it
                # from this one (a function's own unused import can go)
                # (nor does a stub's: PEP 484 re-exports only `import X as X` forms)
                local_scope = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                                  for n in chain[:k]) or \
                    (ctx.path.endswith(".pyi") and asname != name)
                why = _allowed(row, unsafe) or (None if local_scope else (
                    f"kept: `{local}` is not used in this module, so other modules may import it "
                    "from here; rewrite by hand"))
        elif fixed < uses:
            left = uses - fixed
            why = (f"kept: {left} use(s) of `{local}` were not rewritten"
                   + (" (listed in __all__)" if local in ctx.exported else ""))
        if why is not None:
            skipped.append((f, why))
            continue
        removals.setdefault(id(stmt), (stmt, []))[1].append(alias)
        applied.append(f)

    # how many statements of each block go, so that a block is never left empty
    gone_in: dict[int, int] = {}
    for key, (stmt, gone) in removals.items():
        if len(gone) == len(spans_of[key]):
            parent = parents.get(id(stmt))
            if parent is not None:
                gone_in[id(parent)] = gone_in.get(id(parent), 0) + 1
    passed: set[int] = set()
    for key, (stmt, gone) in removals.items():
        spans = spans_of[key]
        s, e = text.span(stmt)
        if len(gone) < len(spans):
            O = [(a[2], a[3]) for a in spans]
            names = [a[0] + (f" as {a[1]}" if a[1] else "") for a in spans]
            keep = [n for a, n in zip(spans, names) if a not in gone]
            open_idx = text.text.find("(", s, e)
            close_idx = text.text.rfind(")", s, e)
            if open_idx < 0:
                open_idx, close_idx = O[0][0] - 1, e
            ctx.edits.add(_arg_edits(text.text, O, names, keep, open_idx, close_idx, text.newline))
            continue
        parent = parents.get(id(stmt))
        if parent is not None and gone_in.get(id(parent)) == len(parent) and id(parent) not in passed:
            passed.add(id(parent))
            ctx.edits.add([_Edit(s, e, "pass")])
            continue
        _remove_statement(text, ctx.edits, s, e)


def _remove_statement(text: _Text, edits: _Edits, s: int, e: int) -> None:
    first, last = text.line_of(s), text.line_of(max(s, e - 1))
    line_start = text.line_starts()[first]
    before = text.text[line_start:s]
    rest_end = text.line_end(last, with_break=False)
    after = text.text[e:rest_end]
    tail = after.strip().lstrip(";").strip()
    if before.strip() == "" and (tail == "" or tail.startswith("#")):
        edits.add([_Edit(line_start, text.line_end(last, with_break=True), "")])
        return
    m = re.match(r"[ \t]*;[ \t]*", after)
    if m and tail and not tail.startswith("#"):
        edits.add([_Edit(s, e + m.end(), "")])
        return
    m = re.search(r";[ \t]*$", before)
    if m:
        edits.add([_Edit(line_start + m.start(), e, "")])
        return
    edits.add([_Edit(s, e, "pass")])


# --- C++ -------------------------------------------------------------------------------


def _cpp_items(text: str, open_idx: int, close_idx: int) -> tuple[list[tuple[int, int]], bool]:
    """Spans of the top-level comma-separated items between the parentheses
    (without the comments around them), and whether there is a comment
    among them."""
    items: list[tuple[int, int]] = []
    comments: list[tuple[int, int]] = []
    depth, i, item_start = 0, open_idx + 1, open_idx + 1

    def push(s: int, e: int) -> None:
        seg = list(text[s:e])
        for cs, ce in comments:
            for k in range(max(cs, s), min(ce, e)):
                seg[k - s] = " "
        code = "".join(seg)
        ls = len(code) - len(code.lstrip())
        rs = len(code.rstrip())
        if rs > ls:
            items.append((s + ls, s + rs))

    while i < close_idx:
        ch = text[i]
        if ch in "\"'":
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i - 1:i + 20]) if ch == '"' and i > 0 and \
                text[i - 1] == "R" else None
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                i = close_idx if end < 0 else end + len(m.group(1)) + 2
                continue
            j = i + 1
            while j < close_idx and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if text.startswith("//", i):
            j = i
            while j < close_idx and text[j] not in "\r\n":
                j += 1
            comments.append((i, j))
            i = j
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            j = close_idx if end < 0 else end + 2
            comments.append((i, j))
            i = j
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            push(item_start, i)
            item_start = i + 1
        i += 1
    push(item_start, close_idx)
    return items, bool(comments)


def _cpp_param_names(signature: Optional[str]) -> Optional[list[str]]:
    """Parameter names of a C++ signature; None when it lists overloads."""
    if not signature:
        return []
    sig = signature.strip()
    if re.search(r"\)\s*/\s*\(", sig):
        return None
    inner = sig[1:-1] if sig.startswith("(") and sig.endswith(")") else sig
    names = []
    for s, e in _cpp_items("(" + inner + ")", 0, len(inner) + 1)[0]:
        p = ("(" + inner + ")")[s:e].split("=")[0].strip()
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", p)
        if m:
            names.append(m.group(1))
    return names


def _cpp_code_mask(text: str) -> str:
    """The text with comments and string and character literals blanked
    (line breaks kept), so that a search finds code only."""
    out = list(text)
    i, n = 0, len(text)

    def blank(s: int, e: int) -> None:
        for k in range(s, min(e, n)):
            if out[k] not in "\r\n":
                out[k] = " "

    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            j = i
            while j < n and text[j] not in "\r\n":
                j += 2 if text[j] == "\\" and j + 1 < n else 1
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif ch == '"' and i > 0 and text[i - 1] == "R" and re.match(r'"[^()\\ ]{0,16}\(', text[i:i + 20]):
            delim = re.match(r'"([^()\\ ]{0,16})\(', text[i:]).group(1)  # type: ignore[union-attr]
            j = text.find(")" + delim + '"', i)
            j = n if j < 0 else j + len(delim) + 2
            blank(i, j)
            i = j
        elif ch in "\"'" and not (ch == "'" and i > 0 and text[i - 1].isalnum()):
            j = i + 1
            while j < n and text[j] != ch and text[j] not in "\r\n":
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


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
    edits.add(_cpp_include_edits(text, edits, mask))
    return edits.apply(), applied, skipped


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
    used = set(PLACEHOLDER.findall(row.template))
    if "*" not in used:
        lost = [n for n in bound if n not in used]
        if lost:
            return (f"the template has no place for argument(s) {', '.join(lost)}; "
                    "rewrite by hand"), []
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


def _fix_cpp_usings(text: _Text, edits: _Edits, usings: list[_scan.Finding],
                    applied: list[_scan.Finding], skipped: list[tuple[_scan.Finding, str]],
                    path: str) -> None:
    mask = _cpp_code_mask(text.text)
    applied_at = [(text.index_of_byte(f.start), f.text.strip()) for f in applied if f.kind != "import"]
    for f in usings:
        start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
        line_start = text.line_starts()[text.line_of(start)]
        m1 = re.search(r"\busing\s+(?:::\s*)?$", text.text[line_start:start])
        m2 = re.match(r"\s*;", text.text[end:])
        if not m1 or not m2:
            skipped.append((f, "could not locate the using-declaration"))
            continue
        if path.lower().endswith(_HEADERS):
            skipped.append((f, "kept: a using-declaration in a header may serve the files that "
                               "include it; remove it by hand once they are migrated"))
            continue
        s, e = line_start + m1.start(), end + m2.end()
        name = re.split(r"\s*::\s*", f.text.strip())[-1]
        uses = 0
        for m in re.compile(rf"\b{re.escape(name)}\b").finditer(mask, e):
            if mask[max(e, m.start() - 64):m.start()].rstrip().endswith(("::", ".", "->")):
                continue  # a member, or qualified: not the using-declaration's name
            uses += 1
        fixed = sum(1 for at, t in applied_at if at >= e and t == name)
        if fixed < uses:
            skipped.append((f, f"kept: {uses - fixed} use(s) of `{name}` after it were not rewritten"))
            continue
        if edits.conflicts([_Edit(s, e, "")]):
            skipped.append((f, "overlaps another rewrite; run the fixer again"))
            continue
        _remove_cpp_statement(text, edits, s, e)
        applied.append(f)


def _remove_cpp_statement(text: _Text, edits: _Edits, s: int, e: int) -> None:
    first, last = text.line_of(s), text.line_of(max(s, e - 1))
    line_start = text.line_starts()[first]
    after = text.text[e:text.line_end(last, with_break=False)]
    if text.text[line_start:s].strip() == "" and (after.strip() == "" or after.strip().startswith("//")):
        edits.add([_Edit(line_start, text.line_end(last, with_break=True), "")])
    else:
        m = re.match(r"[ \t]*", after)
        edits.add([_Edit(s, e + (m.end() if m else 0), "")])


# C++ classes a row's replacement may be: what their constructors take (an
# argument kind, see _cpp_arg_kind; "index" is accepted where "device" is, as
# c10::Device(<current accelerator>, index)), how many arguments, the members
# a legacy object's uses may call, and the header that declares them. Facts
# from PyTorch's c10/core/DeviceGuard.h, c10/core/StreamGuard.h,
# c10/core/Stream.h and ATen/accelerator/Graph.h (torch 2.13); each template
# and form is compiled against them by tests/python/test_fix_cpp_compile.py.
@dataclass(frozen=True)
class _CppClass:
    header: str
    arities: tuple[int, ...]            # constructor argument counts it has
    kinds: Optional[frozenset[str]]     # argument kinds it takes; None: any
    members: frozenset[str]


_CPP_CLASSES = {
    "c10::DeviceGuard": _CppClass(
        "c10/core/DeviceGuard.h", (1,), frozenset({"device"}),
        frozenset({"reset_device", "set_index", "original_device", "current_device"})),
    "c10::OptionalDeviceGuard": _CppClass(
        "c10/core/DeviceGuard.h", (0, 1), frozenset({"device", "optional_device", "nullopt"}),
        frozenset({"reset_device", "original_device", "current_device"})),
    # original_stream()/current_stream() give c10::Stream where the CUDA
    # guards give CUDAStream: a use of them may need the CUDA type.
    "c10::StreamGuard": _CppClass(
        "c10/core/StreamGuard.h", (1,), None,
        frozenset({"reset_stream", "original_device", "current_device"})),
    "c10::OptionalStreamGuard": _CppClass(
        "c10/core/StreamGuard.h", (0, 1), None, frozenset({"reset_stream", "reset"})),
    "c10::Stream": _CppClass(
        "c10/core/Stream.h", (1,), None,
        frozenset({"device", "device_type", "device_index", "id", "native_handle", "wait",
                   "query", "synchronize", "is_capturing", "hash", "pack3", "unpack3"})),
    "at::accelerator::Graph": _CppClass(
        "ATen/accelerator/Graph.h", (0, 1), None,
        frozenset({"capture_begin", "capture_end", "instantiate", "replay", "reset", "pool",
                   "enable_debug_mode", "debug_dump"})),
}

# Headers that declare what a rewrite may insert, by the name's prefix
# (the longest that matches wins).
_CPP_HEADERS = (
    ("at::accelerator::Graph", "ATen/accelerator/Graph.h"),
    ("at::accelerator::", "ATen/DeviceAccelerator.h"),
    ("c10::OptionalDeviceGuard", "c10/core/DeviceGuard.h"),
    ("c10::DeviceGuard", "c10/core/DeviceGuard.h"),
    ("c10::OptionalStreamGuard", "c10/core/StreamGuard.h"),
    ("c10::MultiStreamGuard", "c10/core/StreamGuard.h"),
    ("c10::StreamGuard", "c10/core/StreamGuard.h"),
    ("c10::Stream", "c10/core/Stream.h"),
    ("c10::Event", "c10/core/Event.h"),
    ("c10::getDeviceAllocator", "c10/core/CachingDeviceAllocator.h"),
)
_CPP_HEADER_NAMES = re.compile("|".join(re.escape(p) + (r"\b" if not p.endswith("::") else "")
                                        for p, _ in _CPP_HEADERS))

_CPP_ACCELERATOR_DEVICE = "c10::Device(at::accelerator::getAccelerator(true).value(), {})"

_CPP_INT = (r"(?:(?:c10|at)::DeviceIndex|DeviceIndex|(?:std::)?u?int(?:8|16|32|64)_t|"
            r"(?:signed\s+|unsigned\s+)?(?:char|short|int|long(?:\s+long)?)|unsigned|size_t)")
_CPP_DEVICE = r"(?:(?:c10|at|torch)::)?Device"
_CPP_OPTIONAL = r"(?:(?:std|c10)::)?optional\s*<\s*{}\s*>"
# Declared types of a name, by kind.
_CPP_DECL_TYPES = (
    ("optional_device", _CPP_OPTIONAL.format(_CPP_DEVICE)),
    ("optional_index", _CPP_OPTIONAL.format(r"(?:(?:c10|at)::)?DeviceIndex")),
    ("device", _CPP_DEVICE),
    ("index", _CPP_INT),
)
_CPP_INDEX_CALLS = re.compile(
    r"(?:(?:c10|at)::(?:cuda|xpu)::current_device|at::accelerator::getDeviceIndex)\s*\(\s*\)")


def _cpp_strip_parens(expr: str) -> str:
    expr = expr.strip()
    while expr.startswith("(") and expr.endswith(")"):
        depth = 0
        for k, ch in enumerate(expr):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k < len(expr) - 1:
                return expr
        expr = expr[1:-1].strip()
    return expr


def _cpp_top_level_operator(expr: str) -> bool:
    """Whether the expression has an operator outside brackets (other than
    scope, member access and a template's angle brackets)."""
    depth = 0
    s = re.sub(r"::|->|\.|<[\w:\s,*&]*>", " ", expr)
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and ch in "+-*/%?:<>=&|^!~,":
            return True
    return False


def _cpp_arg_kind(expr: str, mask: str, at: int) -> Optional[str]:
    """The kind of a constructor argument: "device" (a c10::Device),
    "index" (an integer), "optional_device", "optional_index", "nullopt",
    or None when the fixer cannot tell. A plain name takes the type of its
    declarations in the file (every one of them must agree)."""
    e = _cpp_strip_parens(expr)
    if re.fullmatch(r"-?\s*\d+[uUlL]*", e):
        return "index"
    m = re.fullmatch(r"\(\s*" + _CPP_INT + r"\s*\)\s*(.+)", e, re.S) or \
        re.fullmatch(r"static_cast\s*<\s*" + _CPP_INT + r"\s*>\s*\((.*)\)", e, re.S)
    if m:
        return "index"
    if re.fullmatch(r"(?:std|c10)::nullopt", e):
        return "nullopt"
    if _cpp_top_level_operator(e):
        return None
    if _CPP_INDEX_CALLS.fullmatch(e) or re.search(
            r"(?:\.|->)\s*(?:get_device|index|device_index)\s*\(\s*\)$", e):
        return "index"
    if re.fullmatch(_CPP_DEVICE + r"\s*[({].*[)}]", e, re.S) or \
            re.search(r"(?:\.|->)\s*device\s*\(\s*\)$", e):
        return "device"
    if re.fullmatch(r"(?:(?:at|c10)::)?device_of\s*\(.*\)", e, re.S):
        return "optional_device"
    if re.fullmatch(r"[A-Za-z_]\w*", e):
        region = _cpp_function_start(mask, at)
        if region < 0:
            return None
        kinds = set()
        for kind, ty in _CPP_DECL_TYPES:
            pat = re.compile(r"(?<![\w:.>])" + ty + r"\s*(?:const\s*)?&?\s*\b" + re.escape(e)
                             + r"\s*(?=[,;=)({\[])")
            if pat.search(mask, region, at):
                kinds.add(kind)
        if len(kinds) == 1:
            return kinds.pop()
    return None


def _cpp_function_start(mask: str, at: int) -> int:
    """The start of the parameter list of the function whose body holds
    mask[at] (the innermost brace block that follows a `)`), or -1 (at file
    or namespace scope, in a macro's body)."""
    line = mask.rfind("\n", 0, at) + 1
    if re.match(r"[ \t]*#", mask[line:at]) or mask[max(0, line - 2):line].startswith("\\"):
        return -1  # a macro's body: its parameters have no type
    depth = 0
    for k in range(at - 1, -1, -1):
        ch = mask[k]
        if ch == "}":
            depth += 1
        elif ch == "{":
            if depth:
                depth -= 1
                continue
            m = re.search(r"\)\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?"
                          r"(?:->\s*[\w:<>]+\s*)?$", mask[max(0, k - 200):k])
            if m:
                close = max(0, k - 200) + m.start()
                d2 = 0
                for j in range(close, -1, -1):
                    d2 += mask[j] == ")"
                    d2 -= mask[j] == "("
                    if d2 == 0:
                        return j
                return -1
    return -1


def _cpp_construction(text: str, mask: str, start: int, end: int
                      ) -> Optional[tuple[Optional[str], int, int]]:
    """For a class name at text[start:end] that constructs an object, the
    variable's name (None for a temporary) and the span of the constructor's
    parentheses or braces (open, close); (name, -1, -1) for a declaration
    without arguments; (name, -2, -2) for a variable whose object is not
    constructed here (a parameter, a reference or pointer, `= expr`, a
    range-for variable). None when the name is used some other way."""
    v = re.compile(r"\s*(?:(?:[&*]\s*)+)?([A-Za-z_]\w*)\s*(?:[,)=\[]|:(?!:))").match(mask, end)
    if v and v.group(1) not in ("const", "final", "override", "noexcept"):
        return (v.group(1), -2, -2)
    if re.match(r"\s*[&*]", mask[end:end + 16]):
        m = re.compile(r"\s*(?:[&*]\s*)+([A-Za-z_]\w*)\s*[;({]").match(mask, end)
        return (m.group(1), -2, -2) if m else None
    m = re.compile(r"\s*([A-Za-z_]\w*)?\s*([({;])").match(mask, end)
    if m is None:
        m2 = re.compile(r"\s*>\s*\(").match(mask, end)
        before = mask[max(0, start - 64):start]
        if m2 and re.search(r"\bstd\s*::\s*make_(?:unique|shared)\s*<\s*$", before):
            open_idx = m2.end() - 1
            close = _cpp_close(mask, open_idx)
            return None if close < 0 else (None, open_idx, close)
        return None
    name, bracket = m.group(1), m.group(2)
    if name in ("const", "final", "override", "noexcept"):
        return None
    if bracket == ";":
        return (name, -1, -1) if name else None
    open_idx = m.end() - 1
    close = _cpp_close(mask, open_idx)
    if close < 0:
        return None
    if bracket == "(" and (not name or re.match(r"\s*(?:\{|const\b|noexcept\b|override\b|->)",
                                                mask[close + 1:close + 64])):
        if not name or not mask[open_idx + 1:close].strip():
            return None if name else (None, open_idx, close)
        return None  # a function's definition: the name is its return type
    return (name, open_idx, close)


def _cpp_close(mask: str, open_idx: int) -> int:
    """The index of the bracket that closes mask[open_idx], or -1."""
    depth = 0
    for k in range(open_idx, len(mask)):
        ch = mask[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return k
        elif ch == ";" and depth <= 1 and mask[open_idx] == "(":
            return -1
    return -1


def _cpp_class_edits(text: str, mask: str, edits: _Edits, start: int, end: int, row: Row
                     ) -> tuple[Optional[str], list[_Edit]]:
    """The rewrite of a reference to a legacy class whose replacement is one of
    _CPP_CLASSES: the name, and an index argument wrapped in a c10::Device
    where the replacement takes only a Device. Refuses (with the reason) a
    form whose rewrite would not compile: arguments of a kind the replacement
    does not take or that the fixer cannot tell, and members of the object
    that the replacement lacks."""
    spec = _CPP_CLASSES[row.replacement]
    new = row.replacement
    cons = _cpp_construction(text, mask, start, end)
    if cons is None:
        if spec.kinds is not None and 0 not in spec.arities:
            return (f"{row.code}: the arguments that construct this {row.legacy} are not "
                    f"visible here, so the fixer cannot tell whether {new} can take them "
                    "(Device or index?); rewrite by hand"), []
        return None, [_Edit(start, end, new)]
    name, open_idx, close = cons
    out = [_Edit(start, end, new)]
    items = _cpp_items(text, open_idx, close)[0] if open_idx >= 0 else []
    if open_idx == -2:
        if spec.kinds is not None and 0 not in spec.arities:
            return (f"{row.code}: the arguments that construct `{name}` are not visible here, "
                    f"so the fixer cannot tell whether {new} can take them (Device or "
                    "index?); rewrite by hand"), []
    elif len(items) not in spec.arities:
        return (f"{row.code}: {new} has no constructor of {len(items)} argument(s); "
                "rewrite by hand"), []
    if spec.kinds is not None and items:
        s, e = items[0]
        kind = _cpp_arg_kind(text[s:e], mask, start)
        arg = text[s:e].strip()
        if kind is None:
            return (f"{row.code}: cannot tell the type of `{arg}` (a c10::Device or a device "
                    f"index?), and {new} takes only a c10::Device; rewrite by hand"), []
        if kind == "index" and "device" in spec.kinds:
            out.append(_Edit(s, e, _CPP_ACCELERATOR_DEVICE.format(edits.render(s, e))))
        elif kind not in spec.kinds:
            return (f"{row.code}: {new} takes no {kind.replace('_', ' ')} argument "
                    f"(`{arg}`); rewrite by hand"), []
    if name:
        scope = mask[end:_cpp_block_end(mask, start)]
        lacking = sorted(set(_cpp_member_uses(scope, name)) - spec.members)
        if lacking:
            return (f"{row.code}: `{name}` is used with {', '.join(lacking)}, which {new} "
                    "does not have; rewrite by hand"), []
        if row.replacement == "at::accelerator::Graph":
            for m in re.finditer(rf"\b{re.escape(name)}\s*(?:\.|->)\s*capture_begin\s*\(", scope):
                c = _cpp_close(mask, end + m.end() - 1)
                if c < 0 or len(_cpp_items(text, end + m.end() - 1, c)[0]) > 1:
                    return (f"{row.code}: `{name}.capture_begin` is given a capture mode, and "
                            f"{new} takes an at::GraphCaptureMode, not a "
                            "cudaStreamCaptureMode; rewrite by hand"), []
    return None, out


def _cpp_block_end(mask: str, at: int) -> int:
    """The end of the innermost brace block around mask[at] (the class body
    for a member), or of the file."""
    depth = 0
    for k in range(at - 1, -1, -1):
        ch = mask[k]
        if ch == "}":
            depth += 1
        elif ch == "{":
            if depth == 0:
                close = _cpp_close(mask, k)
                return len(mask) if close < 0 else close
            depth -= 1
    return len(mask)


def _cpp_member_uses(mask: str, name: str) -> list[str]:
    """The members called or read through a variable in the text."""
    return [m.group(1) for m in re.finditer(
        rf"(?<![\w.>:]){re.escape(name)}\s*(?:\.|->)\s*([A-Za-z_]\w*)", mask)]


def _cpp_include_edits(text: _Text, edits: _Edits, mask: str) -> list[_Edit]:
    """#include lines for the headers that the inserted replacements need and
    the file does not include yet, after its last #include (the last one
    outside a conditional block other than a header guard), once each, in
    name order. A file without any #include gets none: it relies on the
    files included before it."""
    need: list[str] = []
    for e in edits.items:
        for m in _CPP_HEADER_NAMES.finditer(e.text):
            header = next(h for p, h in _CPP_HEADERS if m.group(0) == p)
            if header not in need:
                need.append(header)
    if not need:
        return []
    have = set(re.findall(r"(?m)^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]", mask))
    need = sorted(h for h in need if h not in have)
    if not need:
        return []
    depth, best = 0, None   # (depth, index after the line)
    for m in re.finditer(r"(?m)^[ \t]*#[ \t]*(if|ifdef|ifndef|endif|include)\b.*$", mask):
        d = m.group(1)
        if d.startswith("if"):
            depth += 1
        elif d == "endif":
            depth -= 1
        elif best is None or depth <= best[0]:
            best = (depth, text.line_end(text.line_of(m.start()), with_break=True))
    lines = "".join(f"#include <{h}>{text.newline}" for h in need)
    if best is None:
        return []  # it includes nothing: it relies on what is included before it
    at = best[1]
    if at == len(text.text) and not text.text.endswith(("\n", "\r")):
        lines = text.newline + lines.rstrip("\r\n")
    return [_Edit(at, at, lines)]


# --- driver ----------------------------------------------------------------------------


def _parses(source: str, path: str) -> Optional[SyntaxError]:
    try:
        compile(source, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as e:
        return e
    except ValueError as e:
        return SyntaxError(str(e))
    return None


def _check_findings(text: _Text, findings: Sequence[_scan.Finding]) -> None:
    for f in findings:
        raw = text.data[f.start:f.end]
        if raw.decode("utf-8", errors="replace") == f.text:
            continue
        if text.text[text.index_of_byte(f.start):text.index_of_byte(f.end)] == f.text:
            continue
        raise _FileError(f"changed since it was scanned (line {f.line} is not `{f.text}`); "
                         "nothing was changed")


def _target_refusals(findings: Sequence[_scan.Finding], target: Optional[_versions.Target],
                     path: str, keep: Sequence[str]
                     ) -> tuple[list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    """The findings the language fixers may consider, and those the target
    torch or a `keep` glob rules out (with why)."""
    rel = path.replace(os.sep, "/")
    kept_by = next((g for g in keep if _config.Glob(g, "").match(rel)), None)
    todo: list[_scan.Finding] = []
    out: list[tuple[_scan.Finding, str]] = []
    for f in findings:
        row = _row_of(f)
        if kept_by is not None:
            out.append((f, f"kept: {rel} matches `keep = [\"{kept_by}\"]` of [tool.anydev]"))
            continue
        if f.kind == "mock":
            out.append((f, "a mock target: rewritten with the code it patches by `anydev fix` on "
                           "the whole tree (fix_paths), not file by file"))
            continue
        why = None
        if row is not None and row.status in ("deprecated", "literal") and row.fix != "none":
            why = _versions.needs(row, target or _versions.DEFAULT)
        if why is not None:
            out.append((f, why))
        else:
            todo.append(f)
    return todo, out


def fix_source(data: bytes, path: str, findings: Sequence[_scan.Finding], *, unsafe: bool = False,
               target_torch: "Optional[str | _versions.Target]" = None, keep: Sequence[str] = ()
               ) -> tuple[bytes, list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    """Returns the fixed bytes of one file, with the findings applied and the
    ones skipped (and why). ``findings`` are the scanner's for exactly these
    bytes. ``target_torch`` is the oldest PyTorch the fixed code must run on
    ("2.1"; default: the newest release the table knows): a rewrite whose
    replacement is newer is not applied. ``keep``: gitignore-style globs of
    files that are a device's own implementation (never rewritten). Raises
    ValueError when the file cannot be fixed soundly (it does not parse, is
    not valid in its encoding, the fixed Python would not parse, the findings
    are not this file's) or ``target_torch`` is not a version."""
    if not findings:
        return data, [], []
    if isinstance(target_torch, str):
        target_torch = _versions.resolve_target(target_torch)
    language = _scan.language_of(path) or findings[0].language
    try:
        text = _Text(data, language, strict=language == "python")
        _check_findings(text, findings)
        todo, refused = _target_refusals(findings, target_torch, path, keep)
        if not todo:
            applied, skipped = [], refused
            skipped.sort(key=lambda s: s[0].start)
            return data, applied, skipped
        if language == "python":
            # the unit rule needs the literals the target ruled out, to leave their units
            units_refused = [r for r in refused if _fix_literals.is_literal_row(_row_of(r[0]))
                             or (_row_of(r[0]) is not None
                                 and _row_of(r[0]).replacement in _GUARD_REPLACEMENTS)]
            new, applied, skipped = _fix_python(text, todo, unsafe, path, units_refused)
        else:
            new, applied, skipped = _fix_cpp(text, todo, unsafe, path)
        skipped += refused
        applied.sort(key=lambda f: f.start)
        skipped.sort(key=lambda s: s[0].start)
        if new == text.text:
            return data, applied, skipped
        if language == "python":
            # the original parsed (_fix_python); the rewrite must too
            err = _parses(new, path)
            if err is not None:
                raise _FileError(f"the fixed file would not parse ({_parse_error(err)}); "
                                 "it was left as it was")
        return text.encode(new), applied, skipped
    except _FileError as e:
        raise ValueError(str(e)) from None


def _split_lines(text: str) -> list[str]:
    out, pos = [], 0
    for m in _LINE_BREAK.finditer(text):
        out.append(text[pos:m.end()])
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def unified_diff(path: str, old: str, new: str) -> str:
    """A unified diff of two texts of ``path`` (``a/path``, ``b/path``), with
    git's marker for a last line without a line break."""
    name_a, name_b = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
    out = []
    for i, line in enumerate(difflib.unified_diff(_split_lines(old), _split_lines(new),
                                                  fromfile=name_a, tofile=name_b)):
        if i >= 2 and not line.startswith("@@") and not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def _link_on_path(path: str, roots: Sequence[str]) -> Optional[str]:
    """The first symbolic link on ``path`` below the tree it was found in
    (the current directory, or the PATH argument that holds it), if any."""
    p = os.path.abspath(path)
    cwd = os.getcwd()
    if p.startswith(cwd.rstrip(os.sep) + os.sep):
        stop = cwd
    else:
        stop = os.path.dirname(p)
        for r in sorted((os.path.abspath(r) for r in roots), key=len, reverse=True):
            if p == r or p.startswith(r.rstrip(os.sep) + os.sep):
                stop = os.path.dirname(r)
                break
    cur = p
    while cur != stop and len(cur) > len(stop):
        if os.path.islink(cur):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    return None


def _write_atomic(path: str, data: bytes, st: os.stat_result) -> None:
    """Replaces ``path`` with ``data``, keeping its mode and owner (``st``)."""
    replace_atomically(path, [data], mode=stat.S_IMODE(st.st_mode), owner=(st.st_uid, st.st_gid),
                       prefix=".anydev-fix-")


def fix_paths(paths: Sequence[str], *, unsafe: bool = False, diff: bool = False,
              select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None,
              exclude: Sequence[str] = (), jobs: Optional[int] = None,
              respect_gitignore: bool = True,
              scanned: Optional[_scan.ScanResult] = None,
              target_torch: Optional[str] = None, keep: Sequence[str] = ()) -> FixResult:
    """Scans ``paths`` (or takes the findings of ``scanned``) and applies the
    fixes; with ``diff=True`` writes nothing and returns a unified diff
    instead. Rule selection, excludes and .gitignore apply as for
    :func:`anydev.scan.scan_paths`.

    ``target_torch``: the oldest PyTorch the fixed code must keep running on
    ("2.1"); by default each file's project says it (the lower bound of
    ``torch`` in its pyproject.toml, setup.cfg, setup.py or requirements*.txt,
    or ``[tool.anydev] target-torch``), else the newest release the table
    knows. ``keep``: gitignore-style globs (relative to the current
    directory) of files never rewritten. Mock targets of the rewritten calls
    (``mock.patch("torch.cuda.set_device")``) move with them when every call
    of that symbol in the fixed tree was rewritten (Note [Mock targets])."""
    if isinstance(paths, str):
        paths = [paths]
    explicit = _versions.resolve_target(target_torch) if target_torch is not None else None
    if scanned is None:
        scanned = _scan.scan_paths(paths, select=select, ignore=ignore, exclude=exclude,
                                   jobs=jobs, respect_gitignore=respect_gitignore)
    result = FixResult(errors=list(scanned.errors))
    by_file: dict[str, list[_scan.Finding]] = {}
    for f in scanned.findings:
        by_file.setdefault(f.path, []).append(f)
    projects = _versions.ProjectTargets()
    seen: dict[tuple[int, int], str] = {}
    pending: list[tuple[FileResult, bytes, bytes, os.stat_result, list[_scan.Finding],
                        Optional[_versions.Target]]] = []
    for path, findings in by_file.items():
        fr = FileResult(path)
        result.files.append(fr)

        def refuse(why: str, io_error: bool = False) -> None:
            fr.error, fr.io_error = why, io_error
            fr.applied, fr.skipped = [], [(f, why) for f in findings]

        link = _link_on_path(path, paths)
        if link is not None:
            what = "is a symbolic link" if os.path.abspath(link) == os.path.abspath(path) else \
                f"is reached through the symbolic link {os.path.relpath(link)}"
            refuse(f"{what}; not written through")
            continue
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = fh.read()
        except OSError as e:
            refuse(f"cannot read: {e.strerror or e}", io_error=True)
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen and _same_file_now(seen[key], path, key):
            refuse(f"is the same file as {seen[key]}; fixed there")
            continue
        seen[key] = path
        target = explicit or projects.for_file(path) or _versions.DEFAULT
        result.targets.setdefault(target.source, target)
        try:
            new, fr.applied, fr.skipped = fix_source(data, path, findings, unsafe=unsafe,
                                                     target_torch=target, keep=keep)
        except ValueError as e:
            refuse(str(e))
            continue
        except Exception as e:  # a bug of the fixer must not stop the run nor touch the file
            refuse(f"internal error of the fixer ({type(e).__name__}: {e}); the file was left "
                   "as it was; please report it")
            continue
        pending.append((fr, data, new, st, findings, target))

    try:
        _move_mock_targets(pending)
    except Exception as e:  # a bug here must not stop the run: the mocks stay as they are
        for fr, *_ in pending:
            fr.skipped = [(f, why if f.kind != "mock" else
                           f"internal error of the fixer ({type(e).__name__}: {e}); the mock "
                           "target was left as it was; please report it")
                          for f, why in fr.skipped]

    for fr, data, new, st, findings, _target in pending:
        path = fr.path
        if fr.error is not None or new == data:
            continue
        if not diff and st.st_nlink > 1:
            fr.error = (f"has {st.st_nlink - 1} other hard link(s), which an atomic rewrite would "
                        "split; not written")
            fr.skipped = [(f, fr.error) for f in findings]
            fr.applied = []
            continue
        fr.changed = True
        if diff:
            lang = _scan.language_of(path) or findings[0].language
            fr.diff = unified_diff(path, _Text(data, lang).text, _Text(new, lang).text)
            continue
        try:
            now = os.stat(path, follow_symlinks=False)
            if (now.st_ino, now.st_size, now.st_mtime_ns) != (st.st_ino, st.st_size, st.st_mtime_ns):
                fr.changed = False
                fr.error = "changed while it was being fixed; not written"
                fr.applied, fr.skipped = [], [(f, fr.error) for f in findings]
                continue
            _write_atomic(path, new, st)
        except OSError as e:
            fr.changed = False
            fr.error = f"could not write: {e.strerror or e}; it was left as it was"
            fr.io_error = True
    return result


def _same_file_now(first: str, path: str, key: tuple[int, int]) -> bool:
    """Whether ``path`` and ``first`` (read earlier with the same device and
    inode) are still one file: another process replacing ``first`` frees its
    inode, which a file read later may get (concurrent ``anydev fix`` runs)."""
    try:
        a, b = os.stat(first), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == key == (b.st_dev, b.st_ino)


# Note [Mock targets]
# A test that patches `mock.patch("torch.cuda.set_device")` intercepts the code it
# tests only while that code calls torch.cuda.set_device. Once the fixer rewrites
# the call, the patch must name the replacement, or the test silently stops
# intercepting it. So the decision is taken over the whole fixed tree: a mock
# target of a symbol moves to the replacement when at least one call of the
# symbol was rewritten and none was left; otherwise it stays, with the reason.


def _move_mock_targets(pending: list) -> None:
    rewritten: dict[str, int] = {}
    left: dict[str, int] = {}
    mocks = []
    for item in pending:
        fr = item[0]
        for f in fr.applied:
            if f.kind != "import":
                rewritten[f.symbol] = rewritten.get(f.symbol, 0) + 1
        for f, why in fr.skipped:
            if f.kind == "mock":
                mocks.append((item, f))
            elif f.kind != "import":
                left[f.symbol] = left.get(f.symbol, 0) + 1
    plans: dict[int, dict[int, Optional[str]]] = {}
    reasons: dict[tuple[int, int], str] = {}
    for item, f in mocks:
        row = _row_of(f)
        n_done, n_left = rewritten.get(f.symbol, 0), left.get(f.symbol, 0)
        why = None
        if row is None or not row.replacement or row.fix == "none":
            why = f"{f.symbol} has no replacement to patch instead"
        elif n_done == 0 and n_left == 0:
            why = (f"no call of {f.symbol} is in the fixed tree: the code this patches is "
                   "elsewhere; move the target with it by hand")
        elif n_left and not n_done:
            why = (f"kept: the {n_left} call(s) of {f.symbol} in the fixed tree were not "
                   "rewritten, so the patch still intercepts them")
        elif n_left:
            why = (f"{n_left} call(s) of {f.symbol} in the fixed tree were not rewritten, "
                   f"{n_done} were: the patch must keep intercepting both; rewrite by hand")
        if why is None:
            plans.setdefault(id(item), {})[f.start] = row.replacement
        else:
            reasons[(id(item), f.start)] = why
    for k, item in enumerate(pending):
        fr, data, new, st, findings, target = item
        mine = [(f, why) for f, why in fr.skipped if f.kind == "mock"]
        if not mine:
            continue
        plan = plans.get(id(item), {})
        if plan:
            try:
                new2, applied = _rewrite_mocks(new, fr.path, plan)
            except ValueError as e:
                plan, new2, applied = {}, new, []
                for f, _ in mine:
                    reasons[(id(item), f.start)] = str(e)
            pending[k] = (fr, data, new2, st, findings, target)
            done = {f.start for f, _ in mine if f.start in applied}
            fr.applied += [f for f, _ in mine if f.start in done]
            fr.applied.sort(key=lambda f: f.start)
        else:
            done = set()
        fr.skipped = [(f, why) for f, why in fr.skipped if f.kind != "mock"] + [
            (f, reasons.get((id(item), f.start), "could not rewrite the mock target"))
            for f, _ in mine if f.start not in done]
        fr.skipped.sort(key=lambda s: s[0].start)


_MOCK_STRING = re.compile(r"""^(?P<q>[rRuU]?(?:'|"))(?P<name>[\w.]+)(?P=q)$""")
_MOCK_OBJECT = re.compile(r"""^(?P<mod>[\w.]+)(?P<sep>\s*,\s*)(?P<q>['"])(?P<attr>\w+)(?P=q)$""")


def _rewrite_mocks(data: bytes, path: str, plan: dict[int, str]) -> tuple[bytes, set[int]]:
    """Rewrites the mock targets at the byte offsets of ``plan`` (offset of the
    finding in the *original* file -> replacement). The file was already fixed
    for its other findings, so the mocks are found again by a fresh scan of the
    fixed bytes, in order."""
    findings, _ = _scan.scan_source(data, path)
    mocks = sorted((f for f in findings if f.kind == "mock"), key=lambda f: f.start)
    originals = sorted(plan)
    if len(mocks) < len(originals):
        raise ValueError("could not find the mock targets again after the rewrite")
    text = _Text(data, "python")
    edits = _Edits(text.text)
    applied: set[int] = set()
    # the mocks of the fixed file are the original ones, in the same order
    for orig, f in zip(originals, [m for m in mocks][:len(originals)]):
        rep = plan[orig]
        s, e = text.index_of_byte(f.start), text.index_of_byte(f.end)
        src = text.text[s:e]
        m = _MOCK_STRING.match(src)
        if m:
            new = f"{m.group('q')}{rep}{m.group('q')[-1]}"
        else:
            m2 = _MOCK_OBJECT.match(src)
            if not m2 or "." not in rep:
                continue
            mod, attr = rep.rsplit(".", 1)
            root = m2.group("mod").split(".")[0]
            mod = root + mod[len("torch"):] if mod.startswith("torch") else mod
            new = f"{mod}{m2.group('sep')}{m2.group('q')}{attr}{m2.group('q')}"
        edits.add([_Edit(s, e, new)])
        applied.add(orig)
    return text.encode(edits.apply()), applied
