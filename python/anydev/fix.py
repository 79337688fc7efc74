"""The fixer: rewrites legacy calls that the compat table marks as mechanical.

    from anydev.fix import fix_paths
    result = fix_paths(["src/"], unsafe=False)       # writes the files
    result = fix_paths(["src/"], diff=True)          # writes nothing; result.diff

It works on the scanner's findings (:mod:`anydev.scan`), so it rewrites exactly
what ``anydev scan`` reports, and applies a row's rewrite only when the row's
``fix`` allows it: ``safe`` always, ``unsafe`` with ``unsafe=True``
(``--unsafe-fixes``), ``none`` never.

* A call is rewritten with the row's template (``torch.cuda.amp.autocast(dtype=x)``
  becomes ``torch.amp.autocast("cuda", dtype=x)``): the call's arguments are
  bound to the legacy signature and placed where the template says; a call the
  fixer cannot bind (``*args``, an unknown keyword) is left as it is and the
  reason reported. Without a template the callee is replaced and the arguments
  kept.
* A reference that is not a call (``fn = torch.cuda.empty_cache``) is renamed
  when the row allows it and its replacement needs no extra arguments.
* Python imports are rewritten with their uses: ``from torch.cuda import
  current_device as cd`` loses ``current_device as cd`` once every use of
  ``cd`` is rewritten (the statement goes when it has no name left), and
  ``import torch`` is added when a replacement needs it and the file does not
  bind ``torch`` (an existing ``import torch as th`` is used instead).

Safety: edits are made on the file's text and written back in its own
encoding, with its byte-order mark, line endings and file mode, atomically (a
temporary file renamed over it). A Python file is parsed again before it is
written; if a rewrite would break it, the file is left as it was and the
reason reported. A path that is a symbolic link is never written through.
Running the fixer twice changes nothing the second time.
"""

from __future__ import annotations

import ast
import codecs
import difflib
import io
import os
import re
import stat
import tempfile
import tokenize
from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from . import scan as _scan
from ._compat_table import ROWS_BY_LEGACY, Row

__all__ = ["FileResult", "FixResult", "fix_paths", "fix_source"]

PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


@dataclass
class FileResult:
    path: str
    applied: list[_scan.Finding] = field(default_factory=list)
    skipped: list[tuple[_scan.Finding, str]] = field(default_factory=list)
    error: Optional[str] = None     # the file was left as it was, and why
    changed: bool = False
    diff: str = ""


@dataclass
class FixResult:
    files: list[FileResult] = field(default_factory=list)
    errors: list[_scan.ScanError] = field(default_factory=list)

    @property
    def applied(self) -> int:
        return sum(len(f.applied) for f in self.files if f.error is None)

    @property
    def remaining(self) -> list[tuple[_scan.Finding, str]]:
        out = []
        for f in self.files:
            if f.error is not None:
                out.extend((x, f.error) for x in f.applied)
            out.extend(f.skipped)
        return out

    @property
    def diff(self) -> str:
        return "".join(f.diff for f in self.files)


# --- text handling ---------------------------------------------------------------


class _Text:
    """A file's text with byte <-> text index conversions and its encoding."""

    def __init__(self, data: bytes, language: str):
        self.data = data
        self.bom = b""
        self.encoding = "utf-8"
        body = data
        if data.startswith(codecs.BOM_UTF8):
            self.bom = codecs.BOM_UTF8
            body = data[len(codecs.BOM_UTF8):]
        elif language == "python":
            try:
                self.encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            except SyntaxError:
                self.encoding = "utf-8"
            if self.encoding == "utf-8-sig":
                self.encoding = "utf-8"
        self.body = body
        self.text = body.decode(self.encoding, errors="surrogateescape")
        self.newline = "\r\n" if b"\r\n" in body else ("\r" if b"\r" in body else "\n")
        self._line_starts: Optional[list[int]] = None

    def index_of_byte(self, offset: int) -> int:
        """Text index of a byte offset into the file (the BOM included)."""
        offset -= len(self.bom)
        return len(self.body[:max(0, offset)].decode(self.encoding, errors="surrogateescape"))

    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            for m in re.finditer(r"\r\n|\r|\n", self.text):
                starts.append(m.end())
            self._line_starts = starts
        return self._line_starts

    def index_of_ast(self, lineno: int, col_offset: int) -> int:
        """Text index of an ast position (1-based line, UTF-8 byte column)."""
        start = self.line_starts()[lineno - 1]
        line = self.text[start:]
        prefix = line.encode("utf-8", errors="surrogateescape")[:col_offset]
        return start + len(prefix.decode("utf-8", errors="surrogateescape"))

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.encoding, errors="surrogateescape")


@dataclass
class _Edit:
    start: int
    end: int
    text: str


def _apply(text: str, edits: list[_Edit]) -> str:
    out = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:e.start])
        out.append(e.text)
        pos = e.end
    out.append(text[pos:])
    return "".join(out)


# --- templates ---------------------------------------------------------------------


def _split_template_args(inner: str) -> list[str]:
    items, depth, cur, quote = [], 0, "", ""
    for ch in inner:
        if quote:
            cur += ch
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        items.append(cur)
    return [i.strip() for i in items]


def render_template(template: str, bound: dict[str, str], all_args: str) -> str:
    """Renders a row's template (compat_map/SCHEMA.md): ``{name}`` is the text
    of the argument bound to ``name``, ``{*}`` all the arguments; an argument
    item whose placeholders are unbound is dropped with its comma."""
    open_paren = template.find("(")
    if open_paren < 0 or not template.endswith(")"):
        return PLACEHOLDER.sub(lambda m: all_args if m.group(1) == "*" else bound.get(m.group(1), ""),
                               template)
    head, inner = template[:open_paren], template[open_paren + 1:-1]
    items = []
    for item in _split_template_args(inner):
        names = PLACEHOLDER.findall(item)
        if any(n != "*" and n not in bound for n in names):
            continue
        if "{*}" in item and not all_args.strip():
            continue
        items.append(PLACEHOLDER.sub(lambda m: all_args.strip() if m.group(1) == "*"
                                     else bound[m.group(1)], item))
    return f"{head}({', '.join(items)})"


def _python_params(signature: Optional[str]) -> Optional[tuple[list[str], list[str], bool, bool]]:
    """(positional parameter names, keyword-only names, has *args, has **kwargs)."""
    if not signature:
        return None
    try:
        fn = ast.parse(f"def f{signature}: pass").body[0]
    except SyntaxError:
        return None
    a = fn.args  # type: ignore[attr-defined]
    return ([x.arg for x in a.posonlyargs + a.args], [x.arg for x in a.kwonlyargs],
            a.vararg is not None, a.kwarg is not None)


# --- Python -------------------------------------------------------------------------


def _allowed(row: Row, unsafe: bool) -> Optional[str]:
    """None when the row's rewrite may be applied, else why not."""
    if row.status != "deprecated" or row.fix == "none":
        return f"{row.code} has no mechanical fix; migrate by hand ({row.note})"
    if row.fix == "unsafe" and not unsafe:
        return f"{row.code}'s fix changes behaviour; apply it with --unsafe-fixes ({row.note})"
    return None


def _torch_alias(tree: ast.Module) -> Optional[str]:
    """The name the module binds to the torch package at module level, if any."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch" and a.asname:
                    return a.asname
                if a.name == "torch" or (a.name.startswith("torch.") and a.asname is None):
                    return "torch"
    return None


def _import_insert_point(tree: ast.Module, text: _Text) -> int:
    """Text index after the module docstring, __future__ imports and the
    leading import block: where a new ``import torch`` goes."""
    line = 0
    for i, node in enumerate(tree.body):
        is_doc = i == 0 and isinstance(node, ast.Expr) and isinstance(
            getattr(node, "value", None), ast.Constant) and isinstance(node.value.value, str)
        if is_doc or isinstance(node, (ast.Import, ast.ImportFrom)):
            line = node.end_lineno or node.lineno
            continue
        break
    starts = text.line_starts()
    return starts[line] if line < len(starts) else len(text.text)


def _fix_python(text: _Text, findings: list[_scan.Finding], unsafe: bool, path: str
                ) -> tuple[str, list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    try:
        tree = ast.parse(text.text, filename=path)
    except SyntaxError as e:
        raise _FileError(f"does not parse before fixing (line {e.lineno}: {e.msg}); "
                         "nothing was changed") from None
    calls: dict[tuple[int, int], ast.Call] = {}
    froms: dict[int, tuple[ast.ImportFrom, ast.alias]] = {}
    parents: dict[int, list[ast.stmt]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            calls[(text.index_of_ast(f.lineno, f.col_offset),
                   text.index_of_ast(f.end_lineno, f.end_col_offset))] = node  # type: ignore[arg-type]
        for body_name in ("body", "orelse", "finalbody", "handlers"):
            body = getattr(node, body_name, None)
            if isinstance(body, list):
                for stmt in body:
                    parents[id(stmt)] = body
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                froms[id(a)] = (node, a)
    alias = _torch_alias(tree)
    torch_root = alias or "torch"
    needs_torch_import = False

    def spelled(name: str) -> str:
        nonlocal needs_torch_import
        if name.startswith("torch.") or name == "torch":
            if alias is None:
                needs_torch_import = True
            return torch_root + name[len("torch"):]
        return name

    edits: list[_Edit] = []
    applied: list[_scan.Finding] = []
    skipped: list[tuple[_scan.Finding, str]] = []
    fixed_roots: dict[str, bool] = {}  # local name -> every use fixed so far
    imports: list[_scan.Finding] = []

    for f in findings:
        row = ROWS_BY_LEGACY.get(f.symbol)
        root = f.text.split(".")[0]
        if f.kind == "import":
            imports.append(f)
            continue
        why = None if row is None else _allowed(row, unsafe)
        if row is None:
            why = f"{f.symbol} is not in the compat table"
        if why is None:
            start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
            if f.kind == "call":
                node = calls.get((start, end))
                if node is None:
                    why = "could not locate the call in the syntax tree"
                else:
                    why, new = _rewrite_call(text, node, row, spelled)  # type: ignore[arg-type]
                    if why is None:
                        call_start = text.index_of_ast(node.lineno, node.col_offset)
                        call_end = text.index_of_ast(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
                        edits.append(_Edit(call_start, call_end, new))
            else:  # a reference
                if row.template is not None or not row.rename or not row.replacement:
                    why = (f"{row.code}: the replacement {row.replacement or '(none)'} takes "
                           "different arguments; rewrite this reference by hand")
                else:
                    edits.append(_Edit(start, end, spelled(row.replacement)))
        if why is None:
            applied.append(f)
            fixed_roots.setdefault(root, True)
        else:
            skipped.append((f, why))
            fixed_roots[root] = False

    # Imports go with their uses.
    removals: dict[int, list[ast.alias]] = {}
    stmt_of: dict[int, ast.ImportFrom] = {}
    for f in imports:
        start = text.index_of_byte(f.start)
        match = None
        for node_alias in froms.values():
            node, a = node_alias
            a_start = text.index_of_ast(a.lineno, a.col_offset) if hasattr(a, "lineno") else None
            if a_start == start:
                match = node_alias
                break
        if match is None:
            skipped.append((f, "could not locate the import in the syntax tree"))
            continue
        node, a = match
        local = a.asname or a.name
        if fixed_roots.get(local) is True or local not in fixed_roots:
            # every use was rewritten (or there is none): the name can go
            removals.setdefault(id(node), []).append(a)
            stmt_of[id(node)] = node
            applied.append(f)
        else:
            skipped.append((f, f"kept: some uses of `{local}` could not be rewritten"))
    for key, gone in removals.items():
        node = stmt_of[key]
        keep = [a for a in node.names if a not in gone]
        s = text.index_of_ast(node.lineno, node.col_offset)
        e = text.index_of_ast(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
        if keep:
            names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in keep)
            module = "." * node.level + (node.module or "")
            edits.append(_Edit(s, e, f"from {module} import {names}"))
        else:
            siblings = parents.get(id(node), [])
            if len(siblings) == 1:
                edits.append(_Edit(s, e, "pass"))
            else:
                # the whole line, with its line break
                line_end = text.text.find("\n", e)
                line_start = text.text.rfind("\n", 0, s) + 1
                if text.text[line_start:s].strip() == "" and (
                        line_end < 0 or text.text[e:line_end].strip() in ("", "\r")):
                    edits.append(_Edit(line_start, len(text.text) if line_end < 0 else line_end + 1, ""))
                else:
                    edits.append(_Edit(s, e, "pass"))
    if needs_torch_import and edits:
        at = _import_insert_point(tree, text)
        edits.append(_Edit(at, at, "import torch" + text.newline))
    new = _apply(text.text, edits) if edits else text.text
    return new, applied, skipped


def _rewrite_call(text: _Text, node: ast.Call, row: Row, spelled) -> tuple[Optional[str], str]:
    seg = lambda n: text.text[text.index_of_ast(n.lineno, n.col_offset):  # noqa: E731
                              text.index_of_ast(n.end_lineno, n.end_col_offset)]
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return "a call with *args or **kwargs cannot be bound to the legacy signature", ""
    if row.template is None:
        func = node.func
        f_start = text.index_of_ast(func.lineno, func.col_offset)
        f_end = text.index_of_ast(func.end_lineno, func.end_col_offset)  # type: ignore[arg-type]
        c_start = text.index_of_ast(node.lineno, node.col_offset)
        c_end = text.index_of_ast(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
        whole = text.text[c_start:c_end]
        rel = f_start - c_start
        return None, whole[:rel] + spelled(row.replacement) + whole[rel + (f_end - f_start):]
    params = _python_params(row.signature)
    if params is None:
        return f"{row.code}: the row's signature cannot be read", ""
    positional, kwonly, has_var, has_kw = params
    bound: dict[str, str] = {}
    for i, a in enumerate(node.args):
        if i >= len(positional):
            return f"more positional arguments than {row.legacy}{row.signature} takes", ""
        bound[positional[i]] = seg(a)
    for k in node.keywords:
        if k.arg in bound:
            return f"argument `{k.arg}` given twice", ""
        if k.arg not in positional and k.arg not in kwonly:
            return (f"keyword `{k.arg}` is not a parameter of {row.legacy}{row.signature}; "
                    "rewrite by hand"), ""
        bound[k.arg] = seg(k.value)
    used = set(PLACEHOLDER.findall(row.template))
    if "*" not in used:
        lost = [n for n in bound if n not in used]
        if lost:
            return (f"the template has no place for argument(s) {', '.join(lost)}; "
                    "rewrite by hand"), ""
    c_end = text.index_of_ast(node.end_lineno, node.end_col_offset)  # type: ignore[arg-type]
    f_end = text.index_of_ast(node.func.end_lineno, node.func.end_col_offset)  # type: ignore[arg-type]
    call_text = text.text[f_end:c_end].strip()
    all_args = call_text[1:-1] if call_text.startswith("(") and call_text.endswith(")") else ""
    rendered = render_template(row.template, bound, all_args)
    return None, spelled(rendered) if rendered.startswith("torch") else rendered


# --- C++ -------------------------------------------------------------------------------


def _split_cpp_args(inner: str) -> list[str]:
    items, depth, cur, quote, i = [], 0, "", "", 0
    while i < len(inner):
        ch = inner[i]
        if quote:
            cur += ch
            if ch == "\\" and i + 1 < len(inner):
                cur += inner[i + 1]
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            cur += ch
        elif ch in "([{":
            depth += 1
            cur += ch
        elif ch in ")]}":
            depth -= 1
            cur += ch
        elif ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    if cur.strip():
        items.append(cur.strip())
    return items


def _cpp_param_names(signature: Optional[str]) -> list[str]:
    if not signature:
        return []
    names = []
    for p in _split_cpp_args(signature.strip()[1:-1] if signature.strip().startswith("(") else signature):
        p = p.split("=")[0].strip()
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", p)
        if m:
            names.append(m.group(1))
    return names


def _fix_cpp(text: _Text, findings: list[_scan.Finding], unsafe: bool
             ) -> tuple[str, list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    edits: list[_Edit] = []
    applied: list[_scan.Finding] = []
    skipped: list[tuple[_scan.Finding, str]] = []
    for f in findings:
        row = ROWS_BY_LEGACY.get(f.symbol)
        why = f"{f.symbol} is not in the compat table" if row is None else _allowed(row, unsafe)
        if why is None and f.kind == "import":
            why = "using-declarations are left for the build to report once their uses are gone"
        if why is None:
            start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
            if f.kind == "call" and f.call_end is not None and row.template is not None:
                call_end = text.index_of_byte(f.call_end)
                paren = text.text.find("(", end, call_end)
                inner = text.text[paren + 1:call_end - 1] if paren >= 0 else ""
                args = _split_cpp_args(inner)
                names = _cpp_param_names(row.signature)
                if len(args) > len(names):
                    why = f"more arguments than {row.legacy}{row.signature or '()'} takes"
                else:
                    bound = dict(zip(names, args))
                    edits.append(_Edit(start, call_end, render_template(row.template, bound, inner)))
            elif row.template is not None:
                why = (f"{row.code}: the replacement takes different arguments; rewrite this "
                       "reference by hand")
            elif not row.replacement:
                why = f"{row.code} has no replacement"
            else:
                edits.append(_Edit(start, end, row.replacement))
        if why is None:
            applied.append(f)
        else:
            skipped.append((f, why))
    return (_apply(text.text, edits) if edits else text.text), applied, skipped


# --- driver ----------------------------------------------------------------------------


class _FileError(Exception):
    pass


def fix_source(data: bytes, path: str, findings: Sequence[_scan.Finding], *, unsafe: bool = False
               ) -> tuple[bytes, list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    """Returns the fixed bytes of one file, with the findings applied and the
    ones skipped (and why). Raises ValueError when the file cannot be fixed
    soundly (the fixed Python would not parse, the file does not parse)."""
    language = _scan.language_of(path) or (findings[0].language if findings else "python")
    text = _Text(data, language)
    try:
        if language == "python":
            new, applied, skipped = _fix_python(text, list(findings), unsafe, path)
        else:
            new, applied, skipped = _fix_cpp(text, list(findings), unsafe)
    except _FileError as e:
        raise ValueError(str(e)) from None
    if new == text.text:
        return data, applied, skipped
    if language == "python":
        try:
            compile(new, path, "exec", dont_inherit=True)
        except SyntaxError as e:
            raise ValueError(f"the fixed file would not parse (line {e.lineno}: {e.msg}); "
                             "it was left as it was") from None
    return text.encode(new), applied, skipped


def _write_atomic(path: str, data: bytes) -> None:
    st = os.stat(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".anydev-fix-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def fix_paths(paths: Sequence[str], *, unsafe: bool = False, diff: bool = False,
              select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None,
              exclude: Sequence[str] = (), jobs: Optional[int] = None,
              respect_gitignore: bool = True,
              scanned: Optional[_scan.ScanResult] = None) -> FixResult:
    """Scans ``paths`` (or takes the findings of ``scanned``) and applies the
    fixes; with ``diff=True`` writes nothing and returns a unified diff
    instead."""
    if scanned is None:
        scanned = _scan.scan_paths(paths, select=select, ignore=ignore, exclude=exclude,
                                   jobs=jobs, respect_gitignore=respect_gitignore)
    result = FixResult(errors=list(scanned.errors))
    by_file: dict[str, list[_scan.Finding]] = {}
    for f in scanned.findings:
        by_file.setdefault(f.path, []).append(f)
    for path, findings in by_file.items():
        fr = FileResult(path)
        result.files.append(fr)
        if os.path.islink(path):
            fr.error = "is a symbolic link; not written through"
            fr.skipped = [(f, fr.error) for f in findings]
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read()
            new, fr.applied, fr.skipped = fix_source(data, path, findings, unsafe=unsafe)
        except (OSError, ValueError) as e:
            fr.error = str(e)
            fr.skipped = [(f, fr.error) for f in findings]
            continue
        if new == data:
            continue
        fr.changed = True
        if diff:
            text_old = _Text(data, findings[0].language).text
            text_new = _Text(new, findings[0].language).text
            fr.diff = "".join(difflib.unified_diff(
                text_old.splitlines(keepends=True), text_new.splitlines(keepends=True),
                fromfile=f"a/{path}", tofile=f"b/{path}"))
        else:
            try:
                _write_atomic(path, new)
            except OSError as e:
                fr.error = f"could not write: {e.strerror or e}"
                fr.changed = False
    return result
