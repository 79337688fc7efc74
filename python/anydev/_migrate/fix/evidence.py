"""Positive evidence that an availability or count check may become generic
(Note [Safe on every accelerator]).

``torch.cuda.is_available()`` -> ``torch.accelerator.is_available()`` answers
the same on a CUDA machine and on a machine without an accelerator, and the
opposite on an XPU, MPS or NPU machine: there the code takes the branch it
took only on CUDA before. So the rewrite is safe only when that branch, and
everything the check decides, is shown to be device-generic:

    verdict = Evidence(an, span, covered).check(node)   # None: shown generic
    # else (level, why): level "specific" (CUDA code stays under it: never
    # rewritten) or "unknown" (not shown: only under --unsafe-fixes)

What the check decides is found by climbing from it through the expression
around it (``not``, ``and``/``or``, comparisons of a count, a conditional
expression, a name it is assigned to and that name's uses, a loop over
``range(count)``, a ``skipIf``/``skipUnless`` decorator) to the statement it
steers: the branch taken when it says "available" (the ``else`` branch and the
code after the statement for a negated test; the code after an ``assert``),
the code after a branch that sets a name, and the later branches of an
``if``/``elif`` ladder. That code is generic when everything in it is: the
rewrites of the same fix, PyTorch's generic API (``torch.*`` outside the device
modules), builtins and the standard library, logging, and the functions and
methods of the same module and class whose own code is generic (followed
three calls deep). A device literal (``"cuda"``, ``"nccl"``), a
``torch.cuda.*`` left, ``.cuda()``, ``.is_cuda``, a callee named for a device
(``CUDAExtension``) or a later ``elif`` for another device makes the code
specific; a call the fixer cannot see into, a configured device
(``cfg.MODEL.DEVICE``), a value returned to callers or kept in a public
module-level name leave it unknown.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional, Sequence

from .analysis import DEVICE_WORDS, _dotted, _words, device_token

__all__ = ["Evidence", "platform_branch"]

Verdict = Optional[tuple[str, str]]   # None: shown generic; ("specific"|"unknown", why)

#: Device strings: a device type, with an index, or a device's collective backend.
_DEVICE_STRINGS = frozenset({"cuda", "xpu", "mps", "npu", "hpu", "mlu", "musa", "mtia", "hip",
                             "nccl", "xccl", "hccl", "cncl", "mccl", "rccl"})
#: Builtins that touch no device.
_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "getattr", "hasattr", "hash", "int", "isinstance", "issubclass", "iter", "len",
    "list", "map", "max", "min", "next", "object", "range", "repr", "reversed", "round", "set",
    "setattr", "slice", "sorted", "str", "sum", "tuple", "type", "zip", "id", "callable", "super",
    "vars", "bytes", "chr", "ord", "open"})
#: Calls whose arguments only reach a log or the user (their text is no device choice).
_SINKS = frozenset({"print", "warn", "info", "debug", "warning", "error", "exception",
                    "critical", "log", "print_rank_0", "print_rank_last", "log_rank_0",
                    "log_once", "warning_once", "info_once", "rank_zero_info",
                    "rank_zero_warn", "rank_zero_debug", "logger", "echo", "write"})
#: Standard-library (and NumPy) modules whose calls touch no device.
_STDLIB = frozenset({"os", "sys", "math", "time", "re", "json", "random", "itertools",
                     "functools", "collections", "pathlib", "copy", "typing", "dataclasses",
                     "contextlib", "warnings", "logging", "np", "numpy", "platform", "shutil",
                     "string", "textwrap", "operator", "inspect", "glob", "tempfile", "uuid",
                     "datetime", "pickle", "socket", "struct", "enum", "gc", "threading",
                     "argparse", "abc", "types", "weakref", "hashlib", "io", "errno",
                     "traceback", "signal", "atexit", "queue", "heapq", "bisect"})
#: torch submodules that are a device's own (rule 4): their calls are device-specific.
_TORCH_DEVICE_MODULES = frozenset({"cuda", "xpu", "mps", "npu", "hpu", "mtia", "musa", "mlu",
                                   "backends", "utils.cpp_extension"})
#: Test decorators that skip (skipIf, skipif) or run (skipUnless) a test on a condition.
_SKIP_IF = frozenset({"skipIf", "skipif"})
_SKIP_UNLESS = frozenset({"skipUnless"})
#: Words of a name that holds a configured device or backend (`cfg.MODEL.DEVICE`).
_CONFIG_WORDS = frozenset({"device", "devices", "backend", "accelerator"})
#: The most statements of code after a check followed, and nodes judged per region.
_MAX_STATEMENTS = 200
#: The checks themselves: another one in the code a check decides is judged on its own.
_CHECKS = frozenset({"is_available", "device_count"})
_MAX_NODES = 4000
_MAX_DEPTH = 3          # functions followed into, names followed through
_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _always_exits(body: Sequence[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], _EXITS)


def _worst(a: Verdict, b: Verdict) -> Verdict:
    if a is None:
        return b
    if b is None or a[0] == "specific" or b[0] != "specific":
        return a
    return b


def _device_string(value: str) -> bool:
    head, _, index = value.partition(":")
    return head.lower() in _DEVICE_STRINGS and (not index or index.isdigit())


def _line(node: ast.AST) -> str:
    return str(getattr(node, "lineno", "?"))


class Evidence:
    """The judge of one module's checks (one per pass of the fixer: the
    verdicts of regions and functions are kept, so a module of many checks is
    judged in time linear in its size)."""

    def __init__(self, an, span: Callable[[ast.AST], tuple[int, int]],
                 covered) -> None:
        self.an = an
        self.span = span
        self.covered = covered
        self._functions: dict[int, Verdict] = {}
        self._stmts: dict[tuple[int, int], Verdict] = {}
        self._after: dict[int, Verdict] = {}
        self._suffix: dict[tuple[int, int], Verdict] = {}
        self._defs: Optional[dict[str, list[ast.AST]]] = None
        self._own: tuple[int, int] = (0, 0)
        self._operand_index: dict[int, dict[int, int]] = {}
        self._top_names: Optional[dict[str, list[ast.AST]]] = None

    # -- the check ---------------------------------------------------------------
    def check(self, node: ast.AST) -> Verdict:
        """None when everything the check at ``node`` decides is shown
        generic, else the verdict and why (the first specific reason wins)."""
        self._own = self.span(node)
        return self._enclosing_branch(node) or self._climb(node, 1, 0)

    def _enclosing_branch(self, node: ast.AST) -> Verdict:
        """A branch around the check that is itself for one device or platform
        (`if isinstance(self, CUDAOpBuilder):`, `if TORCH_VERSION == "parrots":`,
        `elif is_mlu_available():`): the check is that branch's own."""
        an = self.an
        child, p = node, an.parent(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                    ast.ClassDef, ast.Module)):
            if isinstance(p, (ast.If, ast.IfExp, ast.While)) and child is not p.test:
                what = _platform_test(p.test, an.root)
                if what is not None:
                    return ("specific", f"it sits in the branch of `{ast.unparse(p.test)[:50]}` "
                                        f"(line {p.lineno}), which is for {what}")
            child, p = p, an.parent(p)
        return None

    def _climb(self, node: ast.AST, pol: int, depth: int) -> Verdict:
        """What a value at ``node`` decides; ``pol`` is +1 when it is true (or
        non-zero) where an accelerator is available, -1 for the reverse, 0
        when either branch may change."""
        an = self.an
        p = an.parent(node)
        if p is None:
            return None
        t = type(p)
        if t is ast.UnaryOp and isinstance(p.op, ast.Not):
            return self._climb(p, -pol, depth)
        if t is ast.UnaryOp:
            return self._climb(p, 0, depth)
        if t is ast.Compare:
            return self._climb(p, _compare_sense(p, node) * pol, depth)
        if t is ast.BoolOp:
            where = self._operand_index.get(id(p))
            if where is None:  # once per expression: n checks in one `and` stay linear
                where = self._operand_index[id(p)] = {id(v): i for i, v in enumerate(p.values)}
            k = where[id(node)]
            runs_when_true = isinstance(p.op, ast.And)
            v: Verdict = None
            if pol == 0 or (pol > 0) == runs_when_true:
                v = self._suffix_of(p, k + 1)
            return _worst(v, self._climb(p, pol, depth))
        if t is ast.IfExp:
            if node is p.test:
                v = self._expr(p.body if pol >= 0 else p.orelse, depth)
                if pol == 0:
                    v = _worst(v, self._expr(p.orelse, depth))
                return _worst(v, self._value(p, depth))
            return self._climb(p, pol, depth)
        if t is ast.If or t is ast.While:
            if node is not p.test:
                return None
            return self._branch(p, pol, depth)
        if t is ast.Assert:
            if node is not p.test:
                return None  # the message
            return self._after_stmt(p, depth)
        if t is ast.Expr:
            return None  # the value is dropped
        if t is ast.Call or t is ast.keyword:
            return self._argument(p, node, pol, depth)
        if t is ast.FormattedValue or t is ast.JoinedStr:
            return self._value(p, depth)
        return self._value_at(p, node, pol, depth)

    def _value(self, node: ast.AST, depth: int) -> Verdict:
        """What a value computed from the check decides where it goes."""
        return self._climb(node, 0, depth)

    def _value_at(self, p: ast.AST, node: ast.AST, pol: int, depth: int) -> Verdict:
        t = type(p)
        if t in (ast.Assign, ast.AnnAssign, ast.NamedExpr):
            targets = p.targets if t is ast.Assign else [p.target]
            if depth >= _MAX_DEPTH:
                return ("unknown", f"its value is passed on too many times to follow (line "
                                   f"{_line(p)})")
            v: Verdict = None
            for target in targets:
                v = _worst(v, self._uses_of(target, p, pol, depth))
            return v
        if t is ast.Return:
            return ("unknown", f"its value is returned (line {_line(p)}) to callers the fixer "
                               "does not follow")
        if t in (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Subscript, ast.BinOp,
                 ast.Starred):
            return self._climb(p, 0, depth)
        if t is ast.For or t is ast.AsyncFor:
            if p.iter is node:
                return self._stmts_verdict(p.body, depth)
            return ("unknown", f"its value is iterated (line {_line(p)})")
        if t is ast.comprehension:
            comp = self.an.parent(p)
            if p.iter is not node or comp is None:
                return ("unknown", f"its value is iterated (line {_line(comp or node)})")
            parts = [comp.key, comp.value] if isinstance(comp, ast.DictComp) else [comp.elt]
            v = None
            for e in parts + list(p.ifs):
                v = _worst(v, self._expr(e, depth))
            return _worst(v, self._value(comp, depth))
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.arguments, ast.Lambda)):
            return ("unknown", f"its value is a default or result of a function (line "
                               f"{_line(p)})")
        return ("unknown", f"the fixer cannot follow where its value goes (`{type(p).__name__}`, "
                           f"line {_line(p)})")

    def _argument(self, p: ast.AST, node: ast.AST, pol: int, depth: int) -> Verdict:
        call = self.an.parent(p) if isinstance(p, ast.keyword) else p
        if not isinstance(call, ast.Call):
            return ("unknown", f"the fixer cannot follow where its value goes (line {_line(p)})")
        name = _dotted(call.func) or ""
        last = name.rsplit(".", 1)[-1]
        if call.func is node:
            return ("unknown", f"its value is called (line {_line(call)})")
        if last in _SINKS or name.startswith(("logging.", "logger.", "log.", "warnings.")):
            return None  # only shown to the user
        if last in _SKIP_IF or last in _SKIP_UNLESS:
            first = call.args[0] if call.args else None
            cond = node if first is node else None
            if cond is None:
                return None  # the reason's text
            # the test runs where skipIf's condition is false / skipUnless's true
            runs = -pol if last in _SKIP_IF else pol
            fn = self._decorated(call)
            if fn is None:
                return ("unknown", f"`{name}` (line {_line(call)}) skips code the fixer cannot "
                                   "find")
            if runs < 0:
                return None  # the test runs only without an accelerator
            if isinstance(fn, ast.ClassDef):  # every test of the class runs
                v: Verdict = None
                for m in fn.body:
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        v = _worst(v, self._function(m, depth))
                        if v is not None and v[0] == "specific":
                            break
                return v
            return self._function(fn, depth)
        if last in ("int", "bool", "min", "max", "abs", "len", "str", "float", "sum", "list",
                    "tuple", "sorted", "set", "any", "all", "enumerate", "zip"):
            return self._climb(call, pol if last in ("int", "bool") else 0, depth)
        if last == "range":
            return self._value(call, depth)
        parts = name.split(".")
        if parts[0] in (self.an.root, "torch") and len(parts) > 1 and \
                parts[1] not in _TORCH_DEVICE_MODULES:
            return self._value(call, depth)  # PyTorch's generic API: its result goes on
        return ("unknown", f"it is passed to `{name or ast.unparse(call.func)[:40]}` (line "
                           f"{_line(call)}), whose use of it the fixer does not follow")

    def _decorated(self, call: ast.Call) -> Optional[ast.AST]:
        p: Optional[ast.AST] = call
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                    ast.ClassDef, ast.stmt)):
            p = self.an.parent(p)
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return p
        return None

    def _uses_of(self, target: ast.AST, stmt: ast.AST, pol: int, depth: int) -> Verdict:
        an = self.an
        exported: Verdict = None
        if isinstance(target, ast.Name):
            scope = an.scope_of(stmt)
            if isinstance(scope, ast.Module) and not target.id.startswith("_"):
                exported = ("unknown", f"it is kept in the module-level name `{target.id}` "
                                       f"(line {_line(stmt)}), which other modules may import")
            uses = an.name_loads(scope, target.id)
            what = target.id
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                target.value.id == "self":
            cls = an._enclosing(stmt, (ast.ClassDef,))
            if cls is None:
                return ("unknown", f"`self.{target.attr}` (line {_line(stmt)}) is outside a class")
            uses = [n for n in an.self_attr_uses(cls, target.attr)
                    if isinstance(n.ctx, ast.Load)]
            what = f"self.{target.attr}"
        else:
            return ("unknown", f"it is stored in `{ast.unparse(target)[:40]}` (line "
                               f"{_line(stmt)}), which the fixer does not follow")
        if len(uses) > 64:
            return ("unknown", f"`{what}` is used too often to follow (line {_line(stmt)})")
        v: Verdict = None
        for u in uses:
            v = _worst(v, self._climb(u, pol, depth + 1))
            if v is not None and v[0] == "specific":
                return v
        return _worst(v, exported)

    # -- branches --------------------------------------------------------------
    def _branch(self, stmt: ast.AST, pol: int, depth: int) -> Verdict:
        """The code an ``if``/``while`` test steers: the branch taken where an
        accelerator is available, the later branches of its ladder, and the
        code after it where a branch changes what that code sees."""
        v: Verdict = None
        if isinstance(stmt, ast.If):
            v = self._ladder(stmt)
            if v is not None:
                return v
        taken = stmt.body if pol > 0 else stmt.orelse
        if pol == 0:
            v = _worst(self._stmts_verdict(stmt.body, depth),
                       self._stmts_verdict(stmt.orelse, depth))
        else:
            v = self._stmts_verdict(taken, depth)
        if v is not None and v[0] == "specific":
            return v
        other = stmt.orelse if pol > 0 else stmt.body
        # the code after it, where the new path reaches it: after the branch taken
        # where an accelerator is available (a negated test, a guard clause whose
        # other branch exits), or seeing what a branch set
        if pol == 0:
            after = not (_always_exits(stmt.body) and _always_exits(stmt.orelse))
        elif pol < 0:
            after = not _always_exits(taken)
        else:
            after = not _always_exits(taken) and (
                _always_exits(other) or _assigns(stmt.body) or _assigns(stmt.orelse))
        if after:
            v = _worst(v, self._after_stmt(stmt, depth))
        return v

    def _ladder(self, stmt: ast.If) -> Verdict:
        """A later ``elif`` of the ladder that tests another device: a generic
        check above it would take that device's machines."""
        nxt = stmt.orelse[0] if len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If) \
            else None
        while nxt is not None:
            dev = _device_test(nxt.test, self.an.root)
            if dev is not None:
                return ("specific", f"an `elif` below (line {nxt.lineno}) handles {dev}: a "
                                    f"generic check above it would send {dev} machines down "
                                    "this branch instead")
            nxt = nxt.orelse[0] if len(nxt.orelse) == 1 and isinstance(nxt.orelse[0], ast.If) \
                else None
        return None

    def _after_stmt(self, stmt: ast.AST, depth: int) -> Verdict:
        """The code that runs after ``stmt``: the rest of its block and of
        the blocks around it, up to its function (bounded)."""
        got = self._after.get(id(stmt))
        if got is not None or id(stmt) in self._after:
            return got
        self._after[id(stmt)] = None   # a cycle adds nothing
        out: list[ast.stmt] = []
        an = self.an
        cur: ast.AST = stmt
        v: Verdict = None
        while True:
            holder = an.parent(cur)
            if holder is None:
                break
            body = an._block_holding(holder, cur)
            if body is not None:
                k = next((j for j, s in enumerate(body) if s is cur), len(body))
                out.extend(body[k + 1:])
            if isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module,
                                   ast.ClassDef, ast.Lambda)):
                break
            if len(out) > _MAX_STATEMENTS:
                break
            cur = holder
        if len(out) > _MAX_STATEMENTS:
            v = ("unknown", f"the code after line {_line(stmt)} runs on too far to follow")
        else:
            v = self._stmts_verdict(out, depth)
        self._after[id(stmt)] = v
        return v

    # -- regions ---------------------------------------------------------------
    def _suffix_of(self, op: ast.BoolOp, k: int) -> Verdict:
        """The verdict of op.values[k:], each suffix judged once (a chain of n
        checks in one expression costs n, not n^2: issue 30)."""
        key = (id(op), k)
        if key in self._suffix:
            return self._suffix[key]
        n = len(op.values)
        acc: Verdict = self._suffix.get((id(op), n))
        self._suffix[(id(op), n)] = acc
        for j in range(n - 1, k - 1, -1):
            if (id(op), j) in self._suffix:
                acc = self._suffix[(id(op), j)]
                continue
            acc = _worst(self._expr(op.values[j], 0), acc)
            self._suffix[(id(op), j)] = acc
        return self._suffix[key]

    def _stmts_verdict(self, stmts: Sequence[ast.AST], depth: int) -> Verdict:
        v: Verdict = None
        for s in stmts:
            key = (id(s), depth)
            got = self._stmts.get(key, ...)
            if got is ...:
                got = self._stmts[key] = self._expr(s, depth)
            v = _worst(v, got)
            if v is not None and v[0] == "specific":
                return v
        return v

    def _covered(self, node: ast.AST) -> bool:
        s, e = self.span(node)
        own = self._own
        return (own[0] <= s and e <= own[1]) or self.covered.contains(s, e)

    def _expr(self, top: ast.AST, depth: int) -> Verdict:
        """Whether everything in ``top`` (a statement or an expression) is
        shown generic, else the first reason it is not."""
        an = self.an
        root = an.root
        todo = [top]
        seen = 0
        v: Verdict = None
        while todo:
            n = todo.pop()
            seen += 1
            if seen > _MAX_NODES:
                return _worst(v, ("unknown", f"the code from line {_line(top)} is too large to "
                                             "judge"))
            t = type(n)
            if t is ast.Constant:
                if isinstance(n.value, str) and _device_string(n.value) and not self._covered(n):
                    return ("specific", f"the device string {n.value!r} (line {_line(n)})")
                continue
            if t is ast.JoinedStr:
                head = n.values[0] if n.values else None
                if isinstance(head, ast.Constant) and isinstance(head.value, str) and \
                        _device_string(head.value.split(":")[0]) and ":" in head.value and \
                        not self._covered(n):
                    return ("specific", f"the device string f\"{head.value}...\" (line "
                                        f"{_line(n)})")
            if t is ast.Attribute:
                if n.attr in ("is_cuda", "is_xpu", "is_mps") and not self._covered(n):
                    return ("specific", f"`.{n.attr}` (line {_line(n)})")
                name = _dotted(n)
                if name is not None:
                    parts = name.split(".")
                    if parts[0] in (root, "torch"):
                        if len(parts) > 1 and parts[1] in _TORCH_DEVICE_MODULES:
                            if len(parts) == 3 and parts[2] in _CHECKS:
                                continue  # another check: judged on its own
                            if not (self._covered(n) or self._covered_above(n)):
                                return ("specific", f"`{name}` (line {_line(n)}), which stays")
                        continue  # a name of torch: nothing below it to judge
                    word = _device_word(n.attr)
                    if word is not None and not self._covered(n):
                        return ("specific", f"`{name}` (line {_line(n)}), named for {word}")
                    if isinstance(n.ctx, ast.Load) and set(_words(n.attr)) & _CONFIG_WORDS \
                            and not self._covered(n):
                        v = _worst(v, ("unknown", f"it reads the configured `{name}` (line "
                                                  f"{_line(n)}), whose value the fixer cannot "
                                                  "see"))
            if t is ast.Name:
                word = _device_word(n.id)
                if word is not None and not self._covered(n):
                    return ("specific", f"`{n.id}` (line {_line(n)}), named for {word}")
                continue
            if t is ast.Call:
                got = self._call(n, depth)
                if got == "sink":
                    continue
                if got is not None:
                    if got[0] == "specific":
                        return got
                    v = _worst(v, got)
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                for a in n.names:
                    mod = a.name if isinstance(n, ast.Import) else (n.module or "")
                    word = device_token(mod.replace(".", "_")) if mod else None
                    if word is not None and not mod.startswith("torch"):
                        return ("specific", f"it imports `{mod}` (line {n.lineno}), named for "
                                            f"{word}")
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue  # defined, not run here
            if isinstance(n, ast.Assert) and n.msg is not None:
                todo.append(n.test)
                continue
            if isinstance(n, ast.Raise):
                continue  # the error and its message
            for name in n._fields:
                c = getattr(n, name, None)
                if isinstance(c, ast.AST):
                    todo.append(c)
                elif type(c) is list:
                    todo.extend(x for x in c if isinstance(x, ast.AST))
        return v

    def _covered_above(self, n: ast.AST) -> bool:
        p = self.an.parent(n)
        while isinstance(p, (ast.Attribute, ast.Call)):
            if self._covered(p):
                return True
            p = self.an.parent(p)
        return False

    def _call(self, call: ast.Call, depth: int):
        """"sink" (its arguments only reach the user), None (the callee is
        generic: its arguments are still judged) or the verdict on it."""
        func = call.func
        name = _dotted(func)
        if self._covered(call) or self._covered(func):
            return None
        if isinstance(func, ast.Attribute):
            word = next((w for w in _words(func.attr) if w in DEVICE_WORDS), None)
            if word is not None:
                return ("specific", f"it calls `.{func.attr}(...)` (line {_line(call)}), named "
                                    f"for {word}")
        if name is None:
            if isinstance(func, ast.Attribute):
                return ("unknown", f"it calls `.{func.attr}(...)` (line {_line(call)}) on a value "
                                   "the fixer cannot see")
            return ("unknown", f"it calls `{ast.unparse(func)[:40]}` (line {_line(call)})")
        parts = name.split(".")
        last = parts[-1]
        if last in _SINKS or parts[0] in ("logging", "logger", "log", "warnings", "_logger",
                                           "LOGGER", "LOG"):
            return "sink"
        word = next((w for w in _words(last) if w in DEVICE_WORDS), None)
        if word is not None:
            return ("specific", f"it calls `{name}` (line {_line(call)}), named for {word}")
        root = self.an.root
        if parts[0] in (root, "torch"):
            if len(parts) == 3 and parts[1] in _TORCH_DEVICE_MODULES and parts[2] in _CHECKS:
                return None  # another check: judged on its own (one run is final)
            if len(parts) > 1 and (parts[1] in _TORCH_DEVICE_MODULES or
                                   ".".join(parts[1:3]) in _TORCH_DEVICE_MODULES):
                return ("specific", f"`{name}` (line {_line(call)}), which stays")
            return None  # PyTorch's generic API
        if len(parts) == 1 and last in _BUILTINS:
            return None
        if parts[0] in _STDLIB and self._not_rebound(parts[0]):
            return None
        if len(parts) == 1:
            fn = self._module_def(last)
            if fn is not None:
                return self._function(fn, depth + 1)
        if len(parts) == 2 and parts[0] == "self":
            cls = self.an._enclosing(call, (ast.ClassDef,))
            if cls is not None:
                fn = next((s for s in cls.body if isinstance(s, (ast.FunctionDef,
                                                                  ast.AsyncFunctionDef))
                           and s.name == last), None)
                if fn is not None:
                    return self._function(fn, depth + 1)
        return ("unknown", f"it calls `{name}` (line {_line(call)}), whose code the fixer "
                           "cannot see from here")

    def _top(self) -> dict[str, list[ast.AST]]:
        """name -> the module-level statements that bind it (imports, defs,
        classes, assignments; into if/try/with blocks), once per module: a
        look-up per call, not a walk of the whole module."""
        if self._top_names is None:
            from .python_tree import _module_statements  # noqa: PLC0415

            top: dict[str, list[ast.AST]] = {}
            for st in _module_statements(self.an.tree.body):
                names: list[str] = []
                if isinstance(st, (ast.Import, ast.ImportFrom)):
                    names = [a.asname or a.name.split(".")[0] for a in st.names]
                elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names = [st.name]
                elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                    names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                elif isinstance(st, (ast.For, ast.With)):
                    names = [n.id for n in ast.walk(st) if isinstance(n, ast.Name) and
                             isinstance(n.ctx, ast.Store)]
                for n in names:
                    top.setdefault(n, []).append(st)
            self._top_names = top
        return self._top_names

    def _not_rebound(self, name: str) -> bool:
        """Whether the module binds ``name`` only by importing that module."""
        for st in self._top().get(name, []):
            if not (isinstance(st, ast.Import) and
                    any((a.asname or a.name.split(".")[0]) == name and
                        a.name.split(".")[0] == name for a in st.names)):
                return False
        return True

    def _module_def(self, name: str) -> Optional[ast.AST]:
        """The module-level function ``name`` when that is the module's only
        module-level binding of the name."""
        binds = self._top().get(name, [])
        if len(binds) != 1:
            return None
        node = binds[0]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                self.an.parent(node) is self.an.tree:
            return node
        return None

    def _function(self, fn: ast.AST, depth: int) -> Verdict:
        if depth > _MAX_DEPTH:
            return ("unknown", f"it calls `{getattr(fn, 'name', '?')}` (line {_line(fn)}) "
                               "through too many calls to follow")
        key = id(fn)
        if key in self._functions:
            return self._functions[key]
        self._functions[key] = None   # a recursive call adds nothing
        v = self._stmts_verdict(fn.body, depth)
        if v is not None and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            v = (v[0], f"{v[1]} in `{fn.name}`")
        self._functions[key] = v
        return v


def _assigns(stmts: Sequence[ast.AST]) -> bool:
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr)):
                return True
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                return True
    return False


def platform_branch(an, chain) -> Optional[str]:
    """Why a finding at the end of ``chain`` sits in a branch for another
    platform than CUDA (`if TORCH_VERSION == "parrots":`, `if IS_NPU:`), where
    `torch.cuda` may be that platform's own: left as it is; or None."""
    for k in range(len(chain) - 1, 0, -1):
        p, child = chain[k - 1], chain[k]
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        if isinstance(p, (ast.If, ast.IfExp, ast.While)) and child is not p.test:
            what = _platform_test(p.test, an.root)
            if what is not None and what not in ("cuda", "nccl") and \
                    not what.startswith("cuda:"):
                return (f"in the branch of `{ast.unparse(p.test)[:50]}` (line {p.lineno}), which "
                        f"is for {what}: an alternative platform's code is left as it is")
    return None


#: Other frameworks and platforms a branch may be for (mmcv's `parrots`).
_PLATFORMS = frozenset({"parrots", "dipu", "camb", "ascend", "habana", "ipu", "neuron",
                        "torch_npu", "torch_musa", "torch_mlu"})


def _device_word(name: str) -> Optional[str]:
    return next((w for w in _words(name) if w in DEVICE_WORDS or w in _PLATFORMS), None)


def _platform_test(test: ast.AST, root: str) -> Optional[str]:
    """The device or platform a branch's test is for, or None: a name named for
    one (`CUDAOpBuilder`, `IS_NPU`), a string naming one (`== "parrots"`), a
    device module's check (`torch.xpu.is_available()`)."""
    inner: set[int] = set()  # the `torch.cuda` of `torch.cuda.X`: judged as the whole name
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute):
            inner.add(id(n.value))
        if id(n) in inner:
            continue
        if isinstance(n, ast.Name):
            word = _device_word(n.id)
            if word is not None:
                return word
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            v = n.value.lower()
            if v in _PLATFORMS or v in DEVICE_WORDS or _device_string(v):
                return v
        elif isinstance(n, ast.Attribute):
            name = _dotted(n) or ""
            parts = name.split(".")
            if parts[0] not in (root, "torch"):
                word = _device_word(n.attr)
                if word is not None:
                    return word
            elif len(parts) > 1 and parts[1] in DEVICE_WORDS and not (
                    len(parts) == 3 and parts[2] in _CHECKS):
                # (an availability check is judged on its own: a branch under
                # `if torch.cuda.is_available():` is the accelerator's once that
                # check is rewritten, so counting it here would make a second run
                # rewrite what the first left; the same for torch.xpu's)
                return parts[1]
    return None


def _compare_sense(cmp: ast.Compare, node: ast.AST) -> int:
    """+1 when the comparison is true only where the value is non-zero (a
    count above k), -1 when only where it is zero, 0 when it cannot say."""
    if len(cmp.ops) != 1:
        return 0
    op = cmp.ops[0]
    left = cmp.left is node
    other = cmp.comparators[0] if left else cmp.left
    if not (isinstance(other, ast.Constant) and type(other.value) in (int, bool)):
        if isinstance(op, (ast.Is, ast.Eq)) and isinstance(other, ast.Constant) and \
                other.value is True:
            return 1
        return 0
    k = int(other.value)
    if not left:  # k OP value: mirror the operator
        op = {ast.Lt: ast.Gt(), ast.Gt: ast.Lt(), ast.LtE: ast.GtE(),
              ast.GtE: ast.LtE()}.get(type(op), op)
    if isinstance(op, ast.Gt):
        return 1 if k >= 0 else 0
    if isinstance(op, ast.GtE):
        return 1 if k >= 1 else 0
    if isinstance(op, (ast.NotEq, ast.IsNot)):
        return 1 if k == 0 else 0
    if isinstance(op, (ast.Eq, ast.Is)):
        return -1 if k == 0 else (1 if k > 0 else 0)
    if isinstance(op, ast.Lt):
        return -1 if k <= 1 else 0
    if isinstance(op, ast.LtE):
        return -1 if k == 0 else 0
    return 0


def _device_test(test: ast.AST, root: str) -> Optional[str]:
    """The device another branch's test checks for (`torch.xpu.is_available()`,
    `torch.backends.mps.is_available()`, `is_npu_available()`, `hasattr(torch,
    "xpu")`), or None."""
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute):
            name = _dotted(n) or ""
            parts = name.split(".")
            if parts[0] in (root, "torch") and len(parts) > 1:
                for p in parts[1:3]:
                    if p in DEVICE_WORDS and p != "cuda":
                        return p
        if isinstance(n, ast.Call):
            name = _dotted(n.func) or ""
            last = name.rsplit(".", 1)[-1]
            if last == "hasattr" and len(n.args) == 2 and isinstance(n.args[1], ast.Constant) \
                    and isinstance(n.args[1].value, str) and n.args[1].value in DEVICE_WORDS \
                    and n.args[1].value != "cuda":
                return n.args[1].value
            word = next((w for w in _words(last) if w in DEVICE_WORDS and w != "cuda"), None)
            if word is not None:
                return word
        if isinstance(n, ast.Name):
            word = next((w for w in _words(n.id) if w in DEVICE_WORDS and w != "cuda"), None)
            if word is not None and any(w in ("available", "has", "is", "use") for w in
                                        _words(n.id)):
                return word
    return None


# Note [Safe on every accelerator]
# "Safe" used to mean: a CPU-only machine and a CUDA machine see the same. But
# the migration is for the third machine, an XPU, MPS or NPU one, where
# torch.cuda.is_available() was False and torch.accelerator.is_available() is
# True: the code takes the branch only CUDA took before. Looking for a "cuda"
# literal next to the check proved nothing: detectron2's model_zoo left its
# device None where the check said "available", and the config's default,
# "cuda", built the model; mmcv's setup.py built its CUDA extension under the
# check before the branches for MLU and MPS. So a check is rewritten as safe
# only when the code it decides is shown generic, by what that code is: the
# rewrites of the same fix, PyTorch's generic API, builtins and the standard
# library, logging, and the module's own functions whose code is generic. What
# the fixer cannot see into (a call of another module, a configured device, a
# value returned) is "unknown": --unsafe-fixes applies it, and the finding says
# why. What stays device-specific under it is never rewritten.
