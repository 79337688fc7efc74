"""Rewrites of Python API calls and references: a call's arguments
bound to the row's legacy signature and placed where the template says, a
reference renamed where the row allows it, decorators; the driver of a Python
file (anydev._migrate.fix.imports then removes the imports its rewrites made unused)."""

from __future__ import annotations

import ast
import re
import sys
from typing import Optional, Sequence

from anydev import scan as _scan
from anydev._compat.table import Row
from . import analysis
from . import literals as _literals
from .edits import _Edit, _Edits, _arg_edits
from .evidence import Evidence
from .guards import _GUARD_REPLACEMENTS, _refusal
from .imports import (
    _dunder_all, _fix_python_imports, _import_insert_point, _torch_names, _torch_root)
from .python_tree import (
    _Located, _chain, _chain_to, _changed_statements, _fstring_spans, _module_statements,
    _parse_error, _starts_cache, _token_safe_rename)
from .rows import _allowed, _python_params, _renamable, _row_of
from .templates import (
    _bare_call, _call_form, _render_items, _spell_template, _with_quote,
    render_template, unplaced_arguments)
from .text import _FileError, _has_comment, _Text


#: About how many descents (python_tree._chain) one walk of a module costs: a
#: file with more findings than this is walked once first (PyAnalysis.index)
#: and its findings are located by a look-up; an import finding needs the walk
#: anyway (the uses of each name).
_DESCENTS_PER_WALK = 8


class _PyContext:
    def __init__(self, text: _Text, tree: ast.Module, path: str):
        self.text = text
        self.tree = tree
        self.path = path
        self.edits = _Edits(text.text)
        self.exported = _dunder_all(tree)
        self.root, self.needs_import = _torch_root(tree)
        self.uses_torch = False
        self.analysis: Optional[analysis.PyAnalysis] = None
        self._fstrings: Optional[list[tuple[int, int, str]]] = None
        self._name_uses: Optional[dict[str, int]] = None
        #: id(function) -> (the function, [(end, torch names)] of its imports): torch_name
        self._fn_imports: dict[int, tuple[ast.AST, list[tuple[int, list[str]]]]] = {}
        self._scopes: dict = {}  # analysis.local_rebinding's memo

    def locate(self, start: int, end: int) -> _Located:
        s, e = self.text.ast_pos(start), self.text.ast_pos(end)
        if self.analysis is not None and self.analysis.indexed:
            chain = _chain_to(self.tree, self.analysis, s, e)
            if chain is not None:
                return _Located(chain, True)
        chain = _chain(self.tree, s, e)
        last = chain[-1]
        exact = getattr(last, "lineno", None) is not None and \
            (last.lineno, last.col_offset, last.end_lineno, last.end_col_offset) == (*s, *e)  # type: ignore[attr-defined]
        return _Located(chain, exact)

    @property
    def name_uses(self) -> dict[str, int]:
        """How often each name is used (loaded, stored, deleted, declared
        global) in the module, for the import decisions."""
        if self.analysis is not None:
            return self.analysis.name_uses()
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
        written = "".join(f.text.split())  # without blanks (`torch . cuda`)
        head, _, tail = written.partition(".")
        if tail and f.symbol.startswith("torch.") and tail == f.symbol[len("torch."):]:
            return head, False
        for fn in reversed(where.chain):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                imports = self._fn_imports.get(id(fn))
                if imports is None or imports[0] is not fn:
                    imports = self._fn_imports[id(fn)] = (fn, [
                        (self.text.span(st)[1], names) for st in _module_statements(fn.body)
                        if isinstance(st, ast.Import) for names in (_torch_names(st),) if names])
                names = [n for end, ns in imports[1] if end <= start for n in ns]
                if names:
                    return names[-1], False
        return self.root, self.needs_import

    def rebound(self, f: _scan.Finding, root: Optional[str], where: _Located) -> Optional[str]:
        """Why the names the rewrite of ``f`` relies on (the package it spells
        torch with, the finding's own first name) are something else where it
        is: a function, lambda or comprehension around it binds them itself."""
        head = "".join(f.text.split()).split(".")[0]
        for name in (root, head) if root != head else (root,):
            if name:
                why = analysis.local_rebinding(where.chain, name, self._scopes)
                if why:
                    return why
        return None

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
        return None, [_rename(ctx, f_start, f_end, node.func, name, where)]
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
    lost = unplaced_arguments(row.template, bound)
    if lost:
        return lost, []
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
    edits = [_rename(ctx, f_start, f_end, node.func, head, where)] \
        if text.text[f_start:f_end] != head else []
    edits += _arg_edits(text.text, O, O_norm, R, open_idx, close_idx, text.newline)
    return None, edits


def _rename(ctx: _PyContext, start: int, end: int, node: ast.AST, name: str, where: _Located
            ) -> _Edit:
    """The edit that puts ``name`` in place of ``node`` (text[start:end]),
    marked proven when it cannot break the statement (Note [Checking the rewrite])."""
    return _Edit(start, end, name, _token_safe_rename(ctx.text.text, start, end, node, name,
                                                      where))


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


def _fix_python(text: _Text, findings: list[_scan.Finding], unsafe: bool, path: str,
                refused: Sequence[tuple[_scan.Finding, str]] = (),
                tree: Optional[ast.Module] = None, checks_patched: bool = False,
                parsed: Optional[list] = None
                ) -> tuple[str, list[_scan.Finding], list[tuple[_scan.Finding, str]],
                           Optional[list[str]]]:
    """The fixed text, the findings applied and skipped, and the fixed top-level
    statements to parse again (None: the whole text; Note [Checking the rewrite]).
    ``refused``: the target's refusals of literals and checks (their units stay).
    ``tree``: the syntax tree of ``text.text`` where the caller has it (the
    check of the round before, Note [Rounds]); else the text is parsed here,
    and the (text, tree) pair added to ``parsed`` where given (the wrap reads
    the file's tree: Note [Parsing what the rewrite changed] in wrap.py).
    ``checks_patched``: a test of the tree patches an availability check
    (Note [No fallback under a check])."""
    if tree is None:
        tree = parse_module(text.text, path)
        if parsed is not None:
            parsed.append((text.text, tree))
    # device literals and idioms move with their function (Note [Literal units]):
    # a pass in which a unit falls runs again without it, on the same tree (no pass
    # changes it: the rewrites are edits of the text)
    units = _literals.Units(findings, refused, unsafe, checks_patched)
    shared: dict = {}  # what the passes share: the analysis of the tree (no pass changes it)
    for _ in range(len(findings) + 2):  # each pass that fails leaves one more unit
        try:
            done = _fix_python_pass(text, tree, findings, unsafe, path, units, shared)
        finally:
            units.release()  # its plans' closures: freed now, not by the cycle collector
        if done is not None:
            return done
    raise AssertionError("the literal units did not settle")  # pragma: no cover


def _needs_guard(row: Row) -> bool:
    """Whether the row's note says its replacement raises where no accelerator
    is available while the legacy call did not (the memory calls): the call
    must be guarded (Note [Guarded calls])."""
    return "Unsafe: where no accelerator is available" in row.note


_AVAILABILITY = ("is_available", "device_count")


def _guarded(where: _Located, node: ast.AST) -> bool:
    """Whether ``node`` runs only where an accelerator (or CUDA) is available:
    in the body of an ``if``/conditional expression whose test checks it
    (not negated), or after an ``assert`` of it in the same block."""
    chain = where.chain
    for k in range(len(chain) - 1, 0, -1):
        p, child = chain[k - 1], chain[k]
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            return False
        if isinstance(p, (ast.If, ast.IfExp, ast.While)) and child is not p.test:
            in_body = child is p.body if isinstance(p, ast.IfExp) else \
                any(child is x for x in p.body)
            if in_body and _checks_availability(p.test):
                return True
        body = getattr(p, "body", None)
        if isinstance(body, list) and any(child is x for x in body):
            for x in body:
                if x is child:
                    break
                if isinstance(x, ast.Assert) and _checks_availability(x.test):
                    return True
    return False


def _checks_availability(test: ast.AST) -> bool:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_checks_availability(v) for v in test.values)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.ops[0], (ast.Gt, ast.GtE, ast.NotEq)):
        test = test.left
    return isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and \
        test.func.attr in _AVAILABILITY


def _guard_edits(ctx: _PyContext, node: ast.AST, where: _Located, root: Optional[str]
                 ) -> tuple[Optional[str], list[_Edit]]:
    """The guard a call that must be guarded gets (Note [Guarded calls]): none
    where it is guarded already; an ``if <torch>.accelerator.is_available():``
    around it where it is a statement of its own lines; else why not."""
    if _guarded(where, node):
        return None, []
    stmt = ctx.analysis.parent(node) if ctx.analysis is not None else None
    if not (isinstance(stmt, ast.Expr) and stmt.value is node) or root is None:
        return ("its replacement raises where no accelerator is available, where the legacy "
                "call did not, so the call must be guarded (`if torch.accelerator."
                "is_available():`), and its value is used here; guard it by hand"), []
    text = ctx.text
    s, e = text.span(stmt)
    starts = text.line_starts()
    first = text.line_of(s)
    line_start = starts[first]
    indent = text.text[line_start:s]
    end_line = text.line_of(max(s, e - 1))
    rest = text.text[e:text.line_end(end_line, with_break=False)]
    if indent.strip() or (rest.strip() and not rest.strip().startswith("#")):
        return ("its replacement raises where no accelerator is available, so the call must "
                "be guarded, and it shares its line with other code; guard it by hand"), []
    unit = "\t" if "\t" in indent else "    "
    out = [_Edit(line_start, line_start,
                 f"{indent}if {root}.accelerator.is_available():{text.newline}{unit}")]
    for ln in range(first + 1, end_line + 1):
        out.append(_Edit(starts[ln], starts[ln], unit))
    return None, out


# Note [Guarded calls]
# torch.cuda.empty_cache() and the memory queries do nothing (or answer 0) on a
# machine without a GPU; their torch.accelerator replacements raise there. A
# large training library's checkpoint loading called empty_cache() on CPU, and
# after an unguarded rewrite every Trainer.fit failed on CPU. So a row whose note
# says so is rewritten only where the call runs under an availability check, or
# where it is a statement of its own, which gets
# `if torch.accelerator.is_available():` around it; a call whose value is used
# is left with the reason.


def _guard_verdict(verdict, unsafe: bool) -> Optional[str]:
    """Why an availability or count check is left, from what the code it
    decides was shown to be (Note [Safe on every accelerator]), or None."""
    if verdict is None:
        return None
    level, reason = verdict
    if level == "specific":
        return ("on an accelerator other than CUDA the generic check says \"available\" and "
                f"runs code that stays device-specific: {reason}; migrate both together")
    if unsafe:
        return None
    return ("unsafe: not shown to be right on an accelerator other than CUDA, where the "
            f"generic check says \"available\": {reason}; --unsafe-fixes applies it")


def parse_module(source: str, path: str) -> ast.Module:
    """The syntax tree of a Python file that must parse (_FileError if not)."""
    version = f"Python {sys.version_info.major}.{sys.version_info.minor}"
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as e:
        raise _FileError(f"does not parse with {version} ({_parse_error(e)}); "
                         "nothing was changed") from None
    except ValueError as e:  # NUL bytes
        raise _FileError(f"does not parse ({e}); nothing was changed") from None


def _fix_python_pass(text: _Text, tree: ast.Module, findings: list[_scan.Finding], unsafe: bool,
                     path: str, units: "_literals.Units", shared: Optional[dict] = None
                     ) -> Optional[tuple[str, list[_scan.Finding], list[tuple[_scan.Finding, str]],
                                         Optional[list[str]]]]:
    """One pass over a file's findings. ``shared``: what the passes of one
    tree share (its analysis and the names each scope binds: the rewrites are
    edits of the text, so the tree and what it says stay as they were)."""
    if shared is None:
        shared = {}
    if not shared:
        _starts_cache.clear()  # one module's statement lists at a time
    ctx = _PyContext(text, tree, path)
    an = shared.get("analysis")
    if an is None:
        # the findings' lines: node_at answers for the nodes there (Note [One walk])
        lines = {text.ast_pos(text.index_of_byte(f.start))[0] for f in findings}
        an = shared["analysis"] = analysis.PyAnalysis(tree, path, ctx.root, lines)
    ctx.analysis = an
    ctx._scopes = shared.setdefault("scopes", {})
    if len(findings) > _DESCENTS_PER_WALK or any(f.kind == "import" for f in findings):
        an.index()  # the findings are then located by a look-up, not a descent each
    applied: list[_scan.Finding] = []
    skipped: list[tuple[_scan.Finding, str]] = []
    import_findings: list[_scan.Finding] = []
    work: list[tuple[int, int, _scan.Finding, _Located, Optional[ast.Call]]] = []

    covered = analysis.Covered()  # text spans of the rewrites applied
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
    judge: Optional[Evidence] = None
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
                    if judge is None:  # after every other rewrite (they sort first)
                        judge = Evidence(an, text.span, covered)
                    why = _guard_verdict(judge.check(anchor), unsafe)
        edits: list[_Edit] = []
        start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
        root, needs_import = ctx.torch_name(f, start, where)
        if why is None:
            why = ctx.rebound(f, root, where)
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
            elif _needs_guard(row):
                why = (f"{row.code}: its replacement raises where no accelerator is available, "
                       "where the legacy call did not, so each call must be guarded, which a "
                       "reference cannot carry; rewrite it by hand")
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
                    edits = [_rename(ctx, start, end, where.node, name, where)]
        if why is None and row is not None and node is not None and _needs_guard(row):
            why, more = _guard_edits(ctx, node, where, root)
            edits = edits + more
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
    pieces = _changed_statements(tree, text.line_starts(), len(text.text), ctx.edits)
    return ctx.edits.apply(), applied, skipped, pieces
