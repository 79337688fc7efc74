"""The fixer of device literals and idioms (the AD9xx rows of
compat_map/literals.toml): ``"cuda"`` in device positions, the availability
idiom, ``.cuda()``, ``.is_cuda``, ``"nccl"``.

A function is migrated as a unit (Note [Literal units]): in one function (or
one module-level statement, outside the functions in it) the device literals
and idioms and the availability and count checks (``torch.cuda.is_available()``,
``device_count()``, which the API rows rewrite to ``torch.accelerator``) are
rewritten together or not at all. When one of them cannot be rewritten (no
template, a target torch that lacks the replacement, ``--unsafe-fixes`` not
given, a form the fixer cannot read, a ``# noqa`` comment, a check the
half-migrated guard rule refuses), none of the unit is, and each finding of it
says which finding blocked it. Literals in a device's own home (a module,
class or function named for a device), in a version-guarded fallback for an
older PyTorch, or in the arguments of a ``torch.cuda.*`` call that stays keep
their literals without blocking the rest of their unit: the home and the
fallback stay CUDA-specific by design, and a generic check guarding a kept
call is refused by the half-migrated guard rule.

Each row's ``template`` (compat_map/literals.toml) is the device form of its
rewrite; where the code had a string (``device = "cuda" if ... else "cpu"``),
the idiom's rewrite takes its ``.type`` so the value stays a ``str``.

Every literal row is ``fix = "unsafe"``: the rewrite behaves differently on an
accelerator other than CUDA (which is the point) and, for some rows, on a
machine without an accelerator (the row's note and ``anydev rule`` say how;
tools/prove_fixes.py shows it on the real torch build).

The module is used by anydev.fix's Python fixer:

    units = Units(findings, refused, unsafe)      # once per file
    # per pass of the fixer over the file's findings:
    units.start(ctx, an, covered, findings)  # plans; marks the literal spans covered
    units.guard_block(f)           # why a check is left for its unit, or None
    units.finish(ctx, applied, skipped)  # False: a unit fell; run the pass again
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Optional, Sequence

from . import analysis as _analysis
from .edits import _Edit
from .evidence import platform_branch as _platform_branch
from .guards import _GUARD_REPLACEMENTS
from .python_tree import walk as _walk
from .rows import _row_of
from .templates import _spell_template, _with_quote
from .text import _has_comment as _tokens_have_comment

__all__ = ["Units", "is_literal_row", "row_refusal", "ACC", "ACC_TYPE", "IDIOM"]

#: The current accelerator (None where the build has none; torch >= 2.7).
ACC = "torch.accelerator.current_accelerator()"
#: Its device type, "cuda" where the build has none: on a machine without an
#: accelerator the rewritten code does what the "cuda" did (autocast and
#: GradScaler disable themselves with a warning, torch.device("cuda") is made,
#: a tensor placed there raises), where a bare `.type` would raise AttributeError.
ACC_TYPE = 'getattr(torch.accelerator.current_accelerator(), "type", "cuda")'
#: The accelerator's type where the code runs only with an accelerator: the
#: "cuda" fallback would be dead there (Note [No fallback under a check]).
ACC_TYPE_SURE = "torch.accelerator.current_accelerator().type"
#: The key of a fix's `frozen` (the symbols left for their mocks) that says a
#: test of the tree patches an availability check (Note [No fallback under a
#: check]); no symbol is spelled so.
CHECKS_PATCHED = "<a test patches an availability check>"
#: The checks whose patch can make them true on a machine without an accelerator.
PATCHED_CHECKS = frozenset({"torch.cuda.is_available", "torch.cuda.device_count",
                            "torch.cuda.is_initialized"})
#: The idiom's device form (the template of AD905).
IDIOM = 'torch.accelerator.current_accelerator(check_available=True) or torch.device("cpu")'

_CUDA = re.compile(r"cuda(?::(\d+))?")
# Parents in which an expression of any precedence may replace a node as it is.
_LOOSE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.keyword, ast.Expr,
          ast.withitem, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.IfExp, ast.If, ast.While,
          ast.Assert, ast.comprehension, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await,
          ast.FormattedValue, ast.Starred)
# Names of arguments that are device indices by convention (`.cuda(local_rank)`).
_INDEX_WORDS = {"rank", "idx", "index", "id", "ordinal", "gpu", "gpus", "i", "j", "k", "n",
                "num", "ix", "device_id", "dev_id", "gpu_id"}


def is_literal_row(row) -> bool:
    return row is not None and row.status == "literal"


def _guard_row(row) -> bool:
    return row is not None and row.replacement in _GUARD_REPLACEMENTS


def unit_refusals(refused: Sequence[tuple]) -> list[tuple]:
    """The refusals (the target torch's) of the findings that belong to units:
    literals and availability checks; a unit with one of them is left."""
    return [(f, why) for f, why in refused
            if is_literal_row(_row_of(f)) or _guard_row(_row_of(f))]


def row_refusal(row, unsafe: bool) -> Optional[str]:
    """Why a Python literal finding of ``row`` is not rewritten, by its row
    alone (no template, an unsafe fix not asked for), or None: the first
    checks of a unit member's plan, which the fixer also asks before it
    parses a file (Note [Nothing to fix] in anydev._migrate.fix.engine)."""
    if row.language != "python":
        return f"{row.code}: C++ literals are hints; the fixer does not rewrite them"
    if row.fix == "none" or not row.template:
        return f"{row.code} has no mechanical fix; migrate by hand (`anydev rule {row.code}`)"
    if row.fix == "unsafe" and not unsafe:
        return (f"{row.code} changes behaviour on accelerators other than CUDA; apply it "
                f"with --unsafe-fixes (`anydev rule {row.code}`)")
    return None


def _cuda_string(node: ast.AST) -> Optional[tuple[str, Optional[ast.AST], Optional[str]]]:
    """("cuda", None, None) for "cuda", ("cuda", None, "1") for "cuda:1",
    ("cuda", expr, None) for f"cuda:{expr}"; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        m = _CUDA.fullmatch(node.value)
        return ("cuda", None, m.group(1)) if m else None
    if isinstance(node, ast.JoinedStr) and len(node.values) == 2:
        head, val = node.values
        if isinstance(head, ast.Constant) and head.value == "cuda:" and \
                isinstance(val, ast.FormattedValue) and val.conversion == -1 and \
                val.format_spec is None:
            return ("cuda", val.value, None)
    return None


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower())
            if w} | {name.lower()}


def _index_like(node: ast.AST, analysis) -> bool:
    """Whether ``node`` is a device index (an int), as ``torch.device(type, i)``
    needs: certainly (an int literal, ``int()``, ``.index``, ...) or by its
    name (``local_rank``, ``gpu_id``, ``i``)."""
    assigned, annotated = analysis.facts(analysis.scope_of(node))
    if _analysis.int_like(node, assigned, annotated, returns_int=analysis.returns_int):
        return True
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(
        node, ast.Attribute) else None
    return name is not None and bool(_words(name) & _INDEX_WORDS)


class _Member:
    """One finding of a unit: what blocks it, or how to build its edits."""

    def __init__(self, f, row, where, start: int, end: int):
        self.f, self.row, self.where = f, row, where
        self.start, self.end = start, end
        self.own: Optional[str] = None    # why this finding itself is not rewritten
        self.kept = False                 # ... and it does not block its unit
        self.build: Optional[Callable[[], list]] = None
        self.span: Optional[tuple[int, int]] = None   # what the rewrite replaces
        self.reported = False
        self.cover: Optional[tuple[int, int]] = None  # the span the guard rule sees as rewritten
        self.make: Optional[Callable[[], str]] = None  # the rewrite's text (Note [Named once])
        self.root: Optional[str] = None
        # the code runs only where there is an accelerator (Note [No fallback under a check])
        self.sure = False

    @property
    def label(self) -> str:
        return f"{self.f.rule} `{self.f.text.splitlines()[0][:50]}` (line {self.f.line})"


class _Unit:
    def __init__(self, key: tuple, name: str):
        self.key, self.name = key, name
        self.members: list[_Member] = []
        self.guards: list = []       # guard findings of the fixer's own loop
        self.refused_guards: list[tuple] = []  # (finding, why) refused before the loop
        self.blocked: Optional[str] = None     # why the unit is left


class Units:
    """The literal units of one file, across the passes of the fixer."""

    def __init__(self, findings: Sequence, refused: Sequence[tuple], unsafe: bool,
                 checks_patched: bool = False):
        self.unsafe = unsafe
        # a test may make a check true without an accelerator: no check is evidence
        self.checks_patched = checks_patched
        self.literals = [f for f in findings if is_literal_row(_row_of(f))
                         and f.kind != "mock"]
        self.refused_literals = [(f, why) for f, why in refused
                                 if is_literal_row(_row_of(f))]
        self.refused_guards = [(f, why) for f, why in refused
                               if _guard_row(_row_of(f)) and f.kind != "mock"]
        self.fallen: dict[tuple, str] = {}   # unit key -> why (sticky across passes)
        self.units: dict[tuple, _Unit] = {}
        self._guard_unit: dict[int, _Unit] = {}
        self.handled: set[int] = set()       # ids of the literal findings (not in the loop)

    @property
    def active(self) -> bool:
        return bool(self.literals or self.refused_literals)

    def owns(self, f) -> bool:
        """Whether the fixer's own loop must leave ``f`` to this module."""
        return id(f) in self.handled

    # -- planning ------------------------------------------------------------
    def _unit_of(self, ctx, where) -> _Unit:
        key, name = _key(where.chain)
        u = self.units.get(key)
        if u is None:
            u = self.units[key] = _Unit(key, name)
        return u

    def start(self, ctx, an, covered, loop_findings: Sequence) -> None:
        """Plans every unit of the file for one pass: groups the findings,
        decides what blocks each unit, and marks the spans of the literals that
        will be rewritten as covered (for the half-migrated guard rule)."""
        self.units, self._guard_unit = {}, {}
        text = ctx.text
        members: list[_Member] = []
        for f, why in [(f, None) for f in self.literals] + self.refused_literals:
            self.handled.add(id(f))
            start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
            where = ctx.locate(start, end)
            m = _Member(f, _row_of(f), where, start, end)
            m.own = why
            m.reported = why is not None  # fix_source reports the target's refusals
            self._unit_of(ctx, where).members.append(m)
            members.append(m)
        if not members:
            return
        for f in loop_findings:
            if f.kind == "mock" or not _guard_row(_row_of(f)):
                continue
            start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
            u = self.units.get(self._key_at(ctx, start, end))
            if u is not None:
                u.guards.append(f)
                self._guard_unit[id(f)] = u
        for f, why in self.refused_guards:
            start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
            u = self.units.get(self._key_at(ctx, start, end))
            if u is not None:
                u.refused_guards.append((f, why))
        suppressed = _suppressed(ctx, self.units)
        for u in self.units.values():
            for m in u.members:
                if m.own is None:
                    self._plan(ctx, an, m)
            u.blocked = self.fallen.get(u.key)
            if u.blocked is None:
                u.blocked = self._blocker(u, suppressed.get(u.key, []))
            if u.blocked is None:
                for m in u.members:
                    if m.own is None and m.span is not None:
                        covered.add(*(m.cover or m.span))

    def _key_at(self, ctx, start: int, end: int) -> tuple:
        return _key(ctx.locate(start, end).chain)[0]

    def _blocker(self, u: _Unit, suppressed: list) -> Optional[str]:
        for m in u.members:
            if m.own is not None and not m.kept:
                return f"{m.label} is left: {m.own}"
        for f, why in u.refused_guards:
            if not _keeps(why):
                return f"{f.rule} `{f.text}` (line {f.line}) is left: {why}"
        for f in suppressed:
            return (f"{f.rule} `{f.text.splitlines()[0][:50]}` (line {f.line}) is suppressed by "
                    "a `# noqa` comment")
        return None

    def _plan(self, ctx, an, m: _Member) -> None:
        """Sets ``m.own`` (and ``m.kept``) or ``m.build`` and ``m.span``."""
        row = m.row
        if row is None:
            m.own = f"{m.f.symbol} is not in the compat table"
            return
        m.own = row_refusal(row, self.unsafe)
        if m.own is not None:
            return
        why = an.old_torch_only(m.where.chain) or an.device_home(m.where.chain) or \
            _platform_branch(an, m.where.chain)
        if why:
            m.own, m.kept = why, True
            return
        why = _in_cuda_call(m, an)
        if why:
            m.own, m.kept = why, True
            return
        root, needs_import = ctx.torch_name(m.f, m.start, m.where)
        why = ctx.rebound(m.f, root, m.where)
        if why:
            m.own = why
            return
        if root is None:
            m.own = "`torch` is bound to something else in this module"
            return
        try:
            plan = _PLANNERS[row.code](ctx, an, m)
        except KeyError:
            m.own = f"{row.code}: no rewrite for this rule"
            return
        if isinstance(plan, str):
            m.own, m.kept = plan, plan.startswith("not a device: ")
            return
        (s, e), make = plan[0], plan[1]
        if len(plan) > 2:
            m.cover = plan[2]

        m.make, m.root = make, root
        m.sure = not self.checks_patched and _accelerator_sure(m.where.chain, an)

        def build(make=make, root=root, needs_import=needs_import, s=s, e=e, m=m):
            new = make()
            new = _spell_template(new, root) or new
            if '"' in new:
                q = ctx.quote_at(s, m.where)
                if q is None:
                    return None
                new = _with_quote(new, q)
            if needs_import:
                ctx.uses_torch = True
            return [_Edit(s, e, new)]

        m.span, m.build = (s, e), build

    def release(self) -> None:
        """Drops the pass's plans (a member's build closure holds the member: a
        reference cycle, which kept the pass's context, analysis and edits alive
        until the cycle collector ran)."""
        for u in self.units.values():
            for m in u.members:
                m.build = None

    # -- the fixer's loop ------------------------------------------------------
    def guard_block(self, f) -> Optional[str]:
        """Why a check is left because its unit is, or None."""
        u = self._guard_unit.get(id(f))
        if u is None or u.blocked is None:
            return None
        return f"migrated with its unit, {u.name}, which is left: {u.blocked}"

    def finish(self, ctx, applied: list, skipped: list) -> bool:
        """Applies the units that migrate and reports every literal finding.
        False when a check of a migrating unit was refused in the loop: that
        unit falls, and the pass must run again."""
        refused_in_loop = {id(f): why for f, why in skipped}
        again = False
        for u in self.units.values():
            if u.blocked is not None:
                continue
            for f in u.guards:
                why = refused_in_loop.get(id(f))
                if why is not None and not _keeps(why):
                    self.fallen[u.key] = f"{f.rule} `{f.text}` (line {f.line}) is left: {why}"
                    again = True
        if again:
            return False
        for u in self.units.values():
            done: list = []
            if u.blocked is None:
                # inner rewrites first: a rewrite renders the ones inside it
                saved = (list(ctx.edits.items), list(ctx.edits._keys), ctx.edits._seq,
                         ctx.uses_torch)
                todo = sorted((m for m in u.members if m.own is None and m.span),
                              key=lambda m: (m.span[1] - m.span[0], m.span[0]))
                named = _name_device_type(ctx, todo)
                for m in todo:
                    built = m.build() if m.build else None
                    if built is not None and named is not None:
                        for b in built:
                            b.text = b.text.replace(named[0], named[1])
                    why = None
                    if built is None:
                        why = ("the rewrite needs a string literal where an f-string leaves "
                               "no quote free")
                    elif ctx.edits.conflicts(built):
                        why = "overlaps another rewrite"
                    if why is not None:
                        ctx.edits.items, ctx.edits._keys, ctx.edits._seq, ctx.uses_torch = saved
                        self.fallen[u.key] = f"{m.label} is left: {why}"
                        return False
                    ctx.edits.add(built)
                    done.append(m)
                if named is not None and named[2] is not None:
                    if ctx.edits.conflicts([named[2]]):
                        ctx.edits.items, ctx.edits._keys, ctx.edits._seq, ctx.uses_torch = saved
                        self.fallen[u.key] = "the name of its device type could not be added"
                        return False
                    ctx.edits.add([named[2]])
            for m in u.members:
                if m.reported:
                    continue
                if m.own is not None:
                    skipped.append((m.f, m.own))
                elif u.blocked is not None:
                    skipped.append((m.f, f"migrated with its unit, {u.name}, which is left: "
                                          f"{u.blocked}"))
            applied.extend(m.f for m in done)
        return True


#: The names a function's device type gets, the first one it does not use.
_TYPE_NAMES = ("device_type", "accelerator_type", "acc_type", "device_type_")


def _name_device_type(ctx, todo: list):
    """(the accelerator-type expression as spelled, the name that replaces
    it, the edit that binds the name or None where the function binds it
    already) for a unit whose rewrites use the expression twice or more, in
    a function (Note [Named once]); None otherwise."""
    users = [m for m in todo if m.make is not None and m.root is not None]
    if not users:
        return None
    fn = next((n for n in reversed(users[0].where.chain)
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return None
    spelled = _spell_template(ACC_TYPE, users[0].root) or ACC_TYPE
    try:
        uses = sum(m.make().count(ACC_TYPE) for m in users)
    except Exception:  # noqa: BLE001 (a plan that cannot render: no name, as before)
        return None
    body = fn.body
    k = 0
    while k < len(body) and (isinstance(body[k], (ast.Global, ast.Nonlocal)) or (
            k == 0 and isinstance(body[k], ast.Expr) and isinstance(body[k].value, ast.Constant)
            and isinstance(body[k].value.value, str))):
        k += 1
    for st in body[k:k + 3]:  # bound already (an earlier run, or a further round)
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                isinstance(st.targets[0], ast.Name) and \
                ctx.text.text[slice(*ctx.text.span(st.value))] == spelled:
            return (spelled, st.targets[0].id, None) if uses else None
    if uses < 2 or k >= len(body):
        return None
    seen = _names_in(fn)
    name = next((n for n in _TYPE_NAMES if n not in seen), None)
    if name is None:
        return None
    first = body[k]
    text = ctx.text
    s = text.span(first)[0]
    line_start = text.line_starts()[text.line_of(s)]
    indent = text.text[line_start:s]
    if indent.strip():
        return None  # the body shares its line with the `def`
    return spelled, name, _Edit(line_start, line_start,
                                f"{indent}{name} = {spelled}{text.newline}")


def _names_in(fn: ast.AST) -> set[str]:
    """Every name a function's code uses or binds, its parameters' and those
    of the functions and lambdas in it included (one walk)."""
    seen: set[str] = set()
    add = seen.add
    Name, arguments = ast.Name, ast.arguments
    for n in _walk(fn):
        t = type(n)
        if t is Name:
            add(n.id)  # type: ignore[attr-defined]
        elif t is arguments:
            for a in [*n.posonlyargs, *n.args, *n.kwonlyargs, n.vararg, n.kwarg]:  # type: ignore[attr-defined]
                if a:
                    add(a.arg)
    return seen


# Note [Named once]
# PyTorch's docs and examples name the device (or its type) once and reuse it:
# `device = torch.accelerator.current_accelerator()`. The literal rewrites of a
# function spelled `getattr(torch.accelerator.current_accelerator(), "type",
# "cuda")` at each use (1,082 times in Megatron-LM), which pushed lines far
# past the project's limit. A function whose rewrites use it twice or more now
# binds it once, first in its body (`device_type = getattr(...)`, a name the
# function does not use), and the rewrites use the name; a later round or run
# finds the binding and reuses it, so one run stays final.


def _key(chain: Sequence[ast.AST]) -> tuple[tuple, str]:
    """The unit of the node at the end of ``chain`` (its innermost function,
    else its module-level statement), by position: the same in every pass,
    each of which parses the file anew; and the unit's name for the reasons."""
    for n in reversed(chain[1:]):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return (n.lineno, n.col_offset), f"`def {n.name}` (line {n.lineno})"
    if len(chain) > 1:
        top = chain[1]
        return (top.lineno, top.col_offset), f"the module-level statement at line {top.lineno}"
    return (0, 0), "the module"


def _keeps(why: str) -> bool:
    """Whether a refusal is one that keeps device-specific code on purpose
    (a device home, a version-guarded fallback) or is about no device: it does
    not block a unit."""
    return (why.startswith("not a device: ") or "a device's own implementation" in why or "version-guarded fallback" in why
            or "fallback (line" in why or why.startswith("kept: ")
            or "an alternative platform's code is left" in why)


def _in_cuda_call(m: _Member, an) -> Optional[str]:
    """Why a literal is an argument of a ``torch.cuda.*`` call that stays
    (a CUDA-only object keeps its device), or None."""
    if m.row.code == "AD911":  # the finding is the torch.cuda call itself
        return None
    chain = m.where.chain
    for k in range(len(chain) - 2, -1, -1):
        n = chain[k]
        if isinstance(n, ast.Call) and chain[k + 1] is not n.func:
            name = _analysis._dotted(n.func) or ""
            parts = name.split(".")
            if len(parts) >= 3 and parts[0] in (an.root, "torch") and parts[1] == "cuda":
                return (f"an argument of `{name}` (line {n.lineno}), a CUDA-only object or call: "
                        "it keeps its CUDA device")
        if isinstance(n, ast.stmt):
            break
    return None


def _suppressed(ctx, units: dict) -> dict[tuple, list]:
    """Literal findings a ``# noqa`` comment suppressed, by unit key (the
    scanner dropped them; the unit must still not migrate around them)."""
    data = ctx.text.data
    if b"noqa" not in data.lower():
        return {}
    from anydev import scan as _scan  # noqa: PLC0415
    keep = _scan.rule_filter(["AD9"], None)
    native, rows = _scan._rules(keep)
    # The findings with those the directives name, and the directives on
    # their lines, as the scanner read them (Note [noqa directives]).
    raw, _errors, lines = _scan._native().scan_source(native, bytes(data), "python", False)
    if lines is None:  # for tokenize to read
        from anydev._migrate import noqa as _noqa  # noqa: PLC0415
        lines = _noqa.directives(data)
    if not lines:
        return {}
    out: dict[tuple, list] = {}
    for t in raw:
        row = rows[t[0]]
        if not keep(row.code):
            continue
        f = _scan._finding(ctx.path, t, row)
        codes = lines.get(f.line)
        if codes is None or not any(row.code.startswith(c) for c in codes):
            continue
        s, e = ctx.text.index_of_byte(f.start), ctx.text.index_of_byte(f.end)
        key = _key(ctx.locate(s, e).chain)[0]
        if key in units:
            out.setdefault(key, []).append(f)
    return out


# --- one planner per row: ((start, end), make) or why not ------------------------


def _node_at(m: _Member, kinds) -> Optional[ast.AST]:
    if m.where.node is not None and isinstance(m.where.node, kinds):
        return m.where.node
    for n in reversed(m.where.chain):
        if isinstance(n, kinds):
            return n
    return None


def _attr_at(m: _Member, attr: str) -> Optional[ast.Attribute]:
    """The ``x.attr`` node whose attribute name is the finding."""
    for n in reversed(m.where.chain):
        if isinstance(n, ast.Attribute) and n.attr == attr:
            return n
    return None


def _parent(m: _Member, node: ast.AST) -> Optional[ast.AST]:
    chain = m.where.chain
    for i in range(len(chain) - 1, 0, -1):
        if chain[i] is node:
            return chain[i - 1]
    return None


def _wrap(new: str, parent: Optional[ast.AST], node: ast.AST) -> str:
    """``new`` in parentheses unless the place of ``node`` takes any expression."""
    if isinstance(parent, _LOOSE) or (isinstance(parent, ast.Call) and parent.func is not node):
        return new
    return f"({new})"


def _type_form(m: _Member, fallback: Optional[str] = "cuda") -> str:
    """The accelerator's type at the member's place: ``.type`` itself where
    the code runs only with an accelerator, else with ``fallback`` for none
    (Note [No fallback under a check])."""
    if m.sure:
        return ACC_TYPE_SURE
    return ACC_TYPE if fallback == "cuda" else f'getattr({ACC}, "type", None)'


def _device_form(m: _Member) -> str:
    """`torch.device("cuda")` rewritten at the member's place: the accelerator
    itself where there surely is one (Note [No fallback under a check])."""
    return ACC if m.sure else f"torch.device({ACC_TYPE})"


def _device_value(ctx, m: _Member, lit: ast.AST, how: tuple, device_form: str
                  ) -> Optional[str]:
    """The generic value of a "cuda" / "cuda:N" / f"cuda:{i}" literal that
    names a device: ``device_form`` for "cuda", else the accelerator's type
    with the index."""
    _, expr, index = how
    if expr is not None:
        return f"torch.device({_type_form(m)}, {ctx.edits.render(*ctx.text.span(expr))})"
    if index is not None:
        return f"torch.device({_type_form(m)}, {index})"
    return device_form


def _plan_device_call(ctx, an, m: _Member):
    """AD901: torch.device("cuda"[, i]) and its "cuda:N", f"cuda:{i}", type= forms."""
    call = _node_at(m, (ast.Call,))
    if call is None:
        return "could not locate the call in the syntax tree"
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "type"),
                                              None)
    how = _cuda_string(arg) if arg is not None else None
    if how is None:
        return "the device argument is not a \"cuda\" literal the fixer can read; rewrite by hand"
    has_index = len(call.args) > 1 or any(k.arg == "index" for k in call.keywords)
    _, expr, index = how
    if (expr is not None or index is not None) and has_index:
        return "an index given twice; rewrite by hand"
    s, e = ctx.text.span(arg)
    is_kw = not call.args
    if expr is None and index is None and not has_index and not is_kw and \
            len(call.args) == 1 and not call.keywords:
        # the whole call: it is the accelerator itself under a check (_device_form)
        cs, ce = ctx.text.span(call)
        if not _has_comment(ctx.text.text[cs:ce]):
            return (cs, ce), lambda: _device_form(m), (s, e)
    if is_kw and (expr is not None or index is not None):
        extra = ctx.edits.render(*ctx.text.span(expr)) if expr is not None else index
        return (s, e), lambda: f"{_type_form(m)}, index={extra}"
    if expr is not None:
        return (s, e), lambda: f"{_type_form(m)}, {ctx.edits.render(*ctx.text.span(expr))}"
    if index is not None:
        return (s, e), lambda: f"{_type_form(m)}, {index}"
    return (s, e), lambda: _type_form(m)


def _plan_device_arg(ctx, an, m: _Member):
    """AD902/AD903: a "cuda" device argument (device=, map_location=, .to(...))."""
    lit = _node_at(m, (ast.Constant, ast.JoinedStr))
    how = _cuda_string(lit) if lit is not None else None
    if how is None:
        return "the literal is not a \"cuda\" device the fixer can read; rewrite by hand"
    why = _not_a_device_call(m, lit, an)
    if why:
        return why
    s, e = ctx.text.span(lit)
    return (s, e), lambda: _device_value(ctx, m, lit, how, ACC) or ACC


#: Callees whose `device=` keyword is a value of the user's own, not a torch device
#: (the scanner reports `device="cuda"` of any call).
_NOT_DEVICE_CALLEES = {"SimpleNamespace", "Namespace", "dict", "namedtuple", "add_argument",
                       "set_defaults", "partial", "setdefault", "update", "environ", "format",
                       "OrderedDict", "defaultdict", "Config", "EasyDict", "OmegaConf.create"}
_NOT_DEVICE_MODULES = {"types", "argparse", "collections", "functools", "json", "os", "dataclasses",
                       "logging", "omegaconf", "easydict", "yaml", "configparser"}


def _not_a_device_call(m: _Member, lit: ast.AST, an) -> Optional[str]:
    """Why the call whose `device=` keyword holds ``lit`` takes no torch device
    (``types.SimpleNamespace(device="cuda")``, ``dict(device="cuda")``), or None."""
    parent = _parent(m, lit)
    call = _parent(m, parent) if isinstance(parent, ast.keyword) else None
    if not isinstance(call, ast.Call) or parent.arg != "device":
        return None
    name = _analysis._dotted(call.func) or ""
    parts = name.split(".")
    bound = {what for what, _, _ in an.bindings().get(parts[0], [])} if parts[0] else set()
    if parts[-1] in _NOT_DEVICE_CALLEES or parts[0] in _NOT_DEVICE_MODULES or \
            any(b.split(".")[0] in _NOT_DEVICE_MODULES for b in bound):
        return (f"not a device: `device=` of `{name}` is a value of the code's own (a "
                "configuration), not a torch device; left as it is")
    return None


def _plan_amp(ctx, an, m: _Member):
    """AD904: "cuda" as autocast's / GradScaler's device type."""
    lit = _node_at(m, (ast.Constant,))
    if lit is None or lit.value != "cuda":
        return "the device type is not the literal \"cuda\"; rewrite by hand"
    return ctx.text.span(lit), lambda: _type_form(m)


def _values_are_strings(node: ast.IfExp) -> bool:
    return all(isinstance(v, (ast.Constant, ast.JoinedStr)) for v in (node.body, node.orelse))


def _plan_idiom(ctx, an, m: _Member):
    """AD905: "cuda" if <available> else "cpu" (in torch.device(...) or not)."""
    node = m.where.node
    if node is None:
        return "could not locate the expression in the syntax tree"
    inner = node.args[0] if isinstance(node, ast.Call) and node.args else node
    if not isinstance(inner, ast.IfExp):
        return "the idiom's expression is not a conditional expression; rewrite by hand"
    string_form = not isinstance(node, ast.Call) and _values_are_strings(inner)
    s, e = ctx.text.span(node)
    if _has_comment(ctx.text.text[s:e]):
        return "the idiom has comments inside it; rewrite by hand"
    parts = _idiom_test(inner.test)
    if parts is None:
        return ("the condition has operands besides the availability check that the "
                "rewrite cannot keep; rewrite by hand")
    sense, extras = parts
    cpu = inner.orelse if sense > 0 else inner.body
    parent = m.where.parent
    if not extras:
        new = f"({IDIOM}).type" if string_form else _wrap(IDIOM, parent, node)
        return (s, e), lambda: new

    def make():  # `"cuda" if X and C else "cpu"`: X stays (Note [Operands kept])
        cond = _render_operands(ctx, extras)
        cpu_src = ctx.edits.render(*ctx.text.span(cpu))
        if string_form:
            return f"(({IDIOM}).type if {cond} else {cpu_src})"
        return f"(({IDIOM}) if {cond} else torch.device({cpu_src}))"

    return (s, e), make


def _plan_idiom_statement(ctx, an, m: _Member):
    """AD906: if <available>: X = "cuda" else: X = "cpu"."""
    node = m.where.node
    if not isinstance(node, ast.If) or len(node.body) != 1 or len(node.orelse) != 1:
        return "the statement is not a two-branch assignment the fixer can read; rewrite by hand"
    a, b = node.body[0], node.orelse[0]
    if not (isinstance(a, ast.Assign) and isinstance(b, ast.Assign) and len(a.targets) == 1
            and len(b.targets) == 1):
        return "the branches are not single assignments; rewrite by hand"
    s, e = ctx.text.span(node)
    if _has_comment(ctx.text.text[s:e]):
        return "the statement has comments inside it; rewrite by hand"
    strings = all(isinstance(x.value, (ast.Constant, ast.JoinedStr)) for x in (a, b))
    target = ctx.text.text[slice(*ctx.text.span(a.targets[0]))]
    parts = _idiom_test(node.test)
    if parts is None:
        return ("the condition has operands besides the availability check that the "
                "rewrite cannot keep; rewrite by hand")
    sense, extras = parts
    value = f"({IDIOM}).type" if strings else IDIOM
    if not extras:
        return (s, e), lambda: f"{target} = {value}"
    cpu = b if sense > 0 else a

    def make():
        cond = _render_operands(ctx, extras)
        cpu_src = ctx.edits.render(*ctx.text.span(cpu.value))
        return f"{target} = {value} if {cond} else {cpu_src}"

    return (s, e), make


def _sure_check(node: ast.AST, roots: tuple) -> int:
    """_is_check's answer for checks of CUDA or of the accelerator only
    (`torch.cuda.is_available()`, `torch.accelerator.device_count() > 0`): +1
    where true means there is an accelerator, -1 where false means it; 0 for
    anything else (another device's check says nothing of the accelerator)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr in ("is_available", "device_count"):
            owner = _analysis._dotted(n.func.value) or ""
            if owner.split(".")[0] not in roots or owner.split(".")[1:] not in (["cuda"],
                                                                                ["accelerator"]):
                return 0
    return _is_check(node)


def _implies(test: ast.AST, roots: tuple, sense: int) -> bool:
    """Whether ``test`` being truthy (``sense`` +1) or falsy (-1) means that
    there is an accelerator: the check, its negation, or a check `and`-ed
    (truthy) or a negated check `or`-ed (falsy) with anything."""
    got = _sure_check(test, roots)
    if got:
        return got == sense
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And) and sense > 0 or \
                isinstance(test.op, ast.Or) and sense < 0:
            return any(_implies(v, roots, sense) for v in test.values)
    return False


def _ends(body: list) -> bool:
    """Whether a block never falls through to the statement after it."""
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))


def _accelerator_sure(chain: Sequence[ast.AST], an) -> bool:
    """Whether the node at the end of ``chain`` runs only where there is an
    accelerator (Note [No fallback under a check]): it is in the body of an
    `if` (or a conditional expression, or an `and` after the operand) on a
    CUDA or accelerator check, in the `else` of its negation, or after an
    `if not <check>:` that returns or raises, in its block or an enclosing
    one."""
    roots = (an.root, "torch")
    for k in range(len(chain) - 1):
        n, child = chain[k], chain[k + 1]
        if isinstance(n, (ast.If, ast.IfExp)):
            if child is n.body or (isinstance(n.body, list) and
                                   any(x is child for x in n.body)):
                if _implies(n.test, roots, 1):
                    return True
            elif child is n.orelse or (isinstance(n.orelse, list) and
                                       any(x is child for x in n.orelse)):
                if _implies(n.test, roots, -1):
                    return True
        elif isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And):
            for v in n.values:
                if v is child:
                    break
                if _implies(v, roots, 1):
                    return True
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if not isinstance(block, list):
                continue
            for st in block:
                if st is child:
                    break
                if isinstance(st, ast.If) and _ends(st.body) and \
                        _implies(st.test, roots, -1) and \
                        (not st.orelse or _ends(st.orelse)):
                    return True
    return False


# Note [No fallback under a check]
# `getattr(torch.accelerator.current_accelerator(), "type", "cuda")` keeps what
# "cuda" did on a machine without an accelerator. Where the code runs only when
# a CUDA or accelerator check said there is one (`if torch.cuda.is_available():`,
# an `if not ...: raise` before it), current_accelerator() is not None (CUDA
# available means the build's accelerator is CUDA) and the fallback is dead code
# a reviewer asks to drop: the rewrites write
# `torch.accelerator.current_accelerator().type` there, and the accelerator
# itself for `torch.device("cuda")` (the same value: current_accelerator() is a
# device without an index; torch/csrc/DeviceAccelerator.cpp returns the
# accelerator's DeviceType as a Device). A
# check of another device (`torch.xpu.is_available()`) says nothing of the
# accelerator and is no evidence; neither is an `assert` (`python -O` drops it,
# and autocast would raise AttributeError where it turned itself off). A test
# that patches `torch.cuda.is_available` (a scanned mock target anywhere in the
# fixed tree, or in the file fixed alone) can make a check true on a machine
# without one: the fallback then lives, and every rewrite of the run keeps it.
# tests/python/fix/test_fix_literals.py runs both forms on the CPU build and on
# sim.


def _is_check(node: ast.AST) -> int:
    """+1 for an availability check true where an accelerator is available
    (`torch.cuda.is_available()`, `torch.cuda.device_count() > 0`), -1 for
    its negation, 0 for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return -_is_check(node.operand)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        k = node.comparators[0]
        if isinstance(k, ast.Constant) and type(k.value) is int and \
                _is_check(node.left) == 1 and \
                ((isinstance(node.ops[0], (ast.Gt, ast.NotEq)) and k.value == 0) or
                 (isinstance(node.ops[0], ast.GtE) and k.value == 1)):
            return 1
        return 0
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in ("is_available", "device_count") and not node.args:
        return 1
    return 0


def _has_check(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
               n.func.attr in ("is_available", "device_count") for n in ast.walk(node))


def _idiom_test(test: ast.AST) -> Optional[tuple[int, list]]:
    """(+1 or -1, the other operands) of an idiom's condition: the check alone
    or negated, or the check `and` operands that check nothing else (kept:
    Note [Operands kept]); None for a condition whose other operands the
    rewrite cannot keep (an `or`, a negated check among others, two checks)."""
    sense = _is_check(test)
    if sense:
        return sense, []
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        checks = [v for v in test.values if _is_check(v)]
        others = [v for v in test.values if not _is_check(v)]
        if len(checks) == 1 and _is_check(checks[0]) == 1 and \
                not any(_has_check(v) for v in others):
            return 1, others
    return None


def _render_operands(ctx, operands: list) -> str:
    out = []
    for v in operands:
        src = ctx.edits.render(*ctx.text.span(v))
        if isinstance(v, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)):
            src = f"({src})"
        out.append(src)
    return " and ".join(out)


# Note [Operands kept]
# pytorch/examples wrote `torch.device("cuda" if args.backend == "gpu" and
# torch.cuda.is_available() else "cpu")`, and the idiom's rewrite to
# `torch.accelerator.current_accelerator(check_available=True) or
# torch.device("cpu")` dropped `args.backend == "gpu"`: a user who asked for
# the CPU got the accelerator. The operands `and`-ed with the check stay as a
# condition of their own (`IDIOM if args.backend == "gpu" else
# torch.device("cpu")`); a condition the rewrite cannot keep whole (an `or`, a
# negated check among other operands) is left. tests/python/fix/
# test_fix_evidence.py checks over generated conditions that no operand is lost.


def _plan_cuda_method(ctx, an, m: _Member):
    """AD907: x.cuda([device][, non_blocking]) -> x.to(torch.device(type[, device])[, ...])."""
    attr = _attr_at(m, "cuda")
    call = _parent(m, attr) if attr is not None else None
    if attr is None or not isinstance(call, ast.Call) or call.func is not attr:
        return "`.cuda` is not called here; rewrite by hand"
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return "a call with *args or **kwargs; rewrite by hand"
    device = call.args[0] if call.args else None
    nb = call.args[1] if len(call.args) > 1 else None
    if len(call.args) > 2:
        return "more positional arguments than .cuda(device, non_blocking) takes; rewrite by hand"
    for k in call.keywords:
        if k.arg == "device" and device is None:
            device = k.value
        elif k.arg == "non_blocking" and nb is None:
            nb = k.value
        else:
            return f"keyword `{k.arg}` of .cuda(...) has no place in .to(...); rewrite by hand"
    if device is not None and not (isinstance(device, ast.Constant) and device.value is None) \
            and not _index_like(device, an):
        return (f"cannot tell that `{ast.unparse(device)}` is a device index (torch.device(type, "
                "i) takes an int); rewrite by hand")
    s = m.start
    e = ctx.text.span(call)[1]
    if _has_comment(ctx.text.text[s:e]):
        return "the call has comments among its arguments; rewrite by hand"
    cover = ctx.text.span(call)

    def make():
        dev = "" if device is None or (isinstance(device, ast.Constant) and device.value is None) \
            else ", " + ctx.edits.render(*ctx.text.span(device))
        out = f"to(torch.device({_type_form(m)}{dev})" if dev else f"to({_device_form(m)}"
        if nb is not None:
            out += f", non_blocking={ctx.edits.render(*ctx.text.span(nb))}"
        return out + ")"

    return (s, e), make, cover


#: Tensor methods that return a tensor (evidence that their result is one).
_TENSOR_METHODS = frozenset({
    "to", "cuda", "cpu", "float", "half", "double", "bfloat16", "int", "long", "bool",
    "detach", "clone", "contiguous", "view", "reshape", "transpose", "permute", "squeeze",
    "unsqueeze", "flatten", "expand", "repeat", "narrow", "chunk", "split", "sum", "mean",
    "abs", "add", "mul", "sub", "div", "matmul", "t", "type_as", "view_as", "pin_memory",
    "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "requires_grad_"})
#: Attributes that are tensors on any module or tensor (parameters, gradients).
_TENSOR_ATTRS = frozenset({"weight", "bias", "grad", "data", "running_mean", "running_var"})
#: Calls over a module whose items are tensors.
_TENSOR_ITERS = frozenset({"parameters", "buffers"})


def _tensor_like(node: ast.AST, an, depth: int = 0) -> bool:
    """Evidence that ``node`` is a tensor (Note [Receivers]): a torch.* call
    (outside the device modules), a tensor method's result on a tensor, a
    parameter or gradient attribute, a name annotated `Tensor` or assigned only
    such values in its function, a loop variable over `.parameters()`, an
    item or arithmetic of a tensor."""
    if depth > 6:
        return False
    if isinstance(node, ast.Call):
        name = _analysis._dotted(node.func) or ""
        parts = name.split(".")
        if parts[0] in (an.root, "torch") and len(parts) > 1 and \
                parts[1] not in _analysis.DEVICE_WORDS and parts[1] not in ("nn", "device",
                                                                            "Stream", "Event"):
            return True
        if isinstance(node.func, ast.Attribute) and node.func.attr in _TENSOR_METHODS:
            return _tensor_like(node.func.value, an, depth + 1)
        return False
    if isinstance(node, ast.Attribute):
        return node.attr in _TENSOR_ATTRS
    if isinstance(node, ast.Subscript):
        return _tensor_like(node.value, an, depth + 1)
    if isinstance(node, ast.BinOp):
        return _tensor_like(node.left, an, depth + 1) or _tensor_like(node.right, an, depth + 1)
    if isinstance(node, ast.Name):
        scope = an.scope_of(node)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = scope.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                if arg.arg == node.id:
                    ann = _analysis._dotted(arg.annotation) if arg.annotation is not None \
                        else None
                    return ann in ("torch.Tensor", "Tensor", "nn.Parameter",
                                   "torch.nn.Parameter")
        for n in ast.walk(scope) if depth == 0 else ():
            if isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.target, ast.Name) \
                    and n.target.id == node.id and isinstance(n.iter, ast.Call) and \
                    isinstance(n.iter.func, ast.Attribute) and n.iter.func.attr in _TENSOR_ITERS:
                return True
        assigned, annotated = an.facts(scope)
        if annotated.get(node.id) in ("torch.Tensor", "Tensor"):
            return True
        values = assigned.get(node.id)
        return bool(values) and all(_tensor_like(v, an, depth + 1) for v in values)
    return False


def _device_like(node: ast.AST, an, depth: int = 0) -> bool:
    """Evidence that ``node`` is a torch.device: ``t.device`` of a tensor,
    ``torch.device(...)``, a name annotated or assigned only such values."""
    if depth > 6:
        return False
    if isinstance(node, ast.Attribute) and node.attr == "device":
        return _tensor_like(node.value, an)
    if isinstance(node, ast.Call):
        return (_analysis._dotted(node.func) or "") in (f"{an.root}.device", "torch.device")
    if isinstance(node, ast.Name):
        scope = an.scope_of(node)
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = scope.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                if arg.arg == node.id:
                    ann = _analysis._dotted(arg.annotation) if arg.annotation is not None \
                        else None
                    return ann in ("torch.device",)
        assigned, annotated = an.facts(scope)
        if annotated.get(node.id) == "torch.device":
            return True
        values = assigned.get(node.id)
        return bool(values) and all(_device_like(v, an, depth + 1) for v in values)
    return False


# Note [Receivers]
# `x.is_cuda` and `x.device.type == "cuda"` are rewritten as a tensor's and a
# torch.device's, so the receiver must be shown to be one: an object's own
# `is_cuda` flag (a config, a kernel wrapper) or a device *description* (a
# dataclass with a `type` field) would otherwise be compared with the
# accelerator's type and change meaning. What the fixer cannot show to be a
# tensor or a device is left, with the reason.


def _plan_is_cuda(ctx, an, m: _Member):
    """AD908: x.is_cuda -> x.device.type == <the accelerator's type>."""
    attr = _attr_at(m, "is_cuda")
    if attr is None or not isinstance(attr.ctx, ast.Load):
        return "could not locate `.is_cuda` in the syntax tree"
    if not _tensor_like(attr.value, an):
        return (f"cannot tell that `{ast.unparse(attr.value)[:40]}` is a tensor (an object's own "
                "`is_cuda` flag would be rewritten as a tensor's); rewrite by hand")
    parent = _parent(m, attr)
    if isinstance(parent, ast.Call) and parent.func is attr:
        return "`.is_cuda` is called here (not the tensor attribute); rewrite by hand"
    s, e = ctx.text.span(attr)

    def make():
        obj = ctx.edits.render(*ctx.text.span(attr.value))
        new = f"{obj}.device.type == {_type_form(m, None)}"
        if isinstance(parent, _LOOSE + (ast.BoolOp,)) or \
                (isinstance(parent, ast.Call) and parent.func is not attr) or \
                (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            return new
        return f"({new})"

    return (s, e), make, (s, e)


def _plan_type_compare(ctx, an, m: _Member):
    """AD909: x.device.type == "cuda" -> ... == <the accelerator's type>."""
    lit = _node_at(m, (ast.Constant,))
    if lit is None or lit.value != "cuda":
        return "the compared value is not the literal \"cuda\"; rewrite by hand"
    cmp = _parent(m, lit)
    other = None
    if isinstance(cmp, ast.Compare) and len(cmp.ops) == 1:
        other = cmp.left if cmp.comparators[0] is lit else cmp.comparators[0]
    if not (isinstance(other, ast.Attribute) and other.attr == "type" and
            _device_like(other.value, an)):
        what = ast.unparse(other.value)[:40] if isinstance(other, ast.Attribute) else "it"
        return (f"cannot tell that `{what}` is a torch.device (a device *description* of the "
                "code's own would be compared with the accelerator's type); rewrite by hand")
    return ctx.text.span(lit), lambda: _type_form(m, None)


def _plan_nccl(ctx, an, m: _Member):
    """AD910: "nccl" -> the default backend of the available accelerator (else the CPU's)."""
    lit = _node_at(m, (ast.Constant,))
    if lit is None or lit.value != "nccl":
        return "the backend is not the literal \"nccl\"; rewrite by hand"
    return ctx.text.span(lit), lambda: (
        "torch.distributed.get_default_backend_for_device("
        "torch.accelerator.current_accelerator(check_available=True) or \"cpu\")")


def _plan_device_module(ctx, an, m: _Member):
    """AD911: torch.cuda.NAME -> torch.get_device_module().NAME."""
    written = "".join(m.f.text.split())  # without blanks
    parts = written.split(".")
    if len(parts) != 3 or parts[1] != "cuda":
        return "not spelled `torch.cuda.NAME`; rewrite by hand"
    return (m.start, m.end), lambda: f"torch.get_device_module().{parts[2]}"


def _has_comment(src: str) -> bool:
    return "#" in src and _tokens_have_comment(src)


_PLANNERS = {
    "AD901": _plan_device_call,
    "AD902": _plan_device_arg,
    "AD903": _plan_device_arg,
    "AD904": _plan_amp,
    "AD905": _plan_idiom,
    "AD906": _plan_idiom_statement,
    "AD907": _plan_cuda_method,
    "AD908": _plan_is_cuda,
    "AD909": _plan_type_compare,
    "AD910": _plan_nccl,
    "AD911": _plan_device_module,
}


# Note [Literal units]
# A reviewer of a migration points at `"cuda:0" if torch.accelerator.is_available()
# else "cpu"`: half-migrated code that sends an XPU machine down the CUDA path. The
# half-migrated guard rule (anydev._analysis.PyAnalysis.guarded_cuda_code)
# keeps a check CUDA's while the code it guards stays CUDA's; this module adds the
# other direction: the literals of a function move only with its checks, so a
# function ends either as it was or generic throughout. The unit is the function
# (the innermost `def`), not the guarded region, because `device = "cuda"` set in
# one statement and `.to(device)` in another are one decision. A check of the unit
# that the guard rule refuses in the fixer's loop makes the unit fall after the
# loop; the pass then runs again with that unit left (units only fall, so this
# ends, and usually after one pass).
