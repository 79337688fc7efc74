"""Python imports: the imports a rewrite made unused are removed (a
name is kept while a use of it was not rewritten, or when it is re-exported),
and ``import torch`` is added where a replacement needs it; how the module
spells the torch package."""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from typing import TYPE_CHECKING, Optional

from anydev import scan as _scan
from .edits import _Edit, _Edits, _arg_edits
from .python_tree import _block_of, _module_statements, walk
from .rows import _allowed, _row_of
from .text import _LINE_BREAK, _Text

if TYPE_CHECKING:  # the fixer's context; python_api imports this module
    from .python_api import _PyContext


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
                other = other or any(isinstance(n, ast.Name) and n.id == "torch" for n in walk(t))
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


def _alias_spans_of(text: _Text, stmt: ast.AST) -> list[tuple[str, Optional[str], int, int]]:
    """:func:`_alias_spans` of an import statement, from the positions of its
    aliases where the syntax tree has them (Python 3.10 on) and its text is
    ASCII (the tree's names are NFKC-normalized, the text's are not)."""
    start, end = text.span(stmt)
    names = stmt.names  # type: ignore[attr-defined]
    if names and getattr(names[0], "end_col_offset", None) is not None and \
            text.text[start:end].isascii():
        return [(a.name, a.asname, text.index_of_ast(a.lineno, a.col_offset),
                 text.index_of_ast(a.end_lineno, a.end_col_offset)) for a in names]
    return _alias_spans(text.text, start, end)


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
            for n in walk(value):
                if isinstance(n, ast.Constant) and isinstance(n.value, str):
                    names.add(n.value)
    return names


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
            spans = spans_of[id(stmt)] = _alias_spans_of(text, stmt)
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
            owner = ctx.analysis.parent(stmt) if ctx.analysis is not None else None
            if _dead_try(owner, parent):
                # `try:` whose body is left empty raises nothing: its handlers are
                # dead, and the statement goes whole, not as `try: pass`
                ts, te = text.span(owner)
                holder = ctx.analysis.parent(owner)
                block = _block_of(owner, holder) if holder is not None else None
                if block is not None and len(block) == 1:
                    ctx.edits.add([_Edit(ts, te, "pass")])
                else:
                    _remove_statement(text, ctx.edits, ts, te)
                for other, _ in removals.values():
                    if other is not stmt and parents.get(id(other)) is parent:
                        passed.add(id(other))
                continue
            ctx.edits.add([_Edit(s, e, "pass")])
            continue
        if parent is not None and id(parent) in passed and \
                _dead_try(ctx.analysis.parent(stmt) if ctx.analysis is not None else None,
                          parent):
            continue  # inside the try statement removed whole
        _remove_statement(text, ctx.edits, s, e)


def _dead_try(owner, block) -> bool:
    """Whether ``block`` is the body of a ``try`` with no ``else``/``finally``."""
    return isinstance(owner, ast.Try) and owner.body is block and not owner.orelse and \
        not owner.finalbody


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
