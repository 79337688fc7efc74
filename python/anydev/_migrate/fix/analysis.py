"""What the fixer must know about the code around a finding before it may
rewrite it (anydev._migrate.fix.guards and anydev._migrate.fix.python_api ask; this module only reads
the syntax tree).

Each check answers None (no objection) or the reason the finding is left:

Version guards (:meth:`PyAnalysis.old_torch_only`)
    Code that runs only on an older PyTorch is a fallback and stays as it is:
    the other branch of an ``if``/conditional expression whose condition
    checks the torch version (``_TORCH_GREATER_EQUAL_2_4``, ``not
    TORCH_LT_2``, ``is_torch_version(">=", "2.4")``, ``torch.__version__ >=
    "2.4"``, ``version.parse(torch.__version__) < Version("2.1")``,
    ``hasattr(torch, "accelerator")``), the statements after ``if NEW: return
    ...``, and an ``except ImportError``/``ModuleNotFoundError``/
    ``AttributeError`` handler. ``and``/``or``/``not`` combine as logic says:
    a branch is a fallback only when taking it implies the old torch.
Device homes (:meth:`PyAnalysis.device_home`)
    A module, class or function named for a device (``cuda_accelerator.py``,
    ``class CUDAAccelerator``, ``def is_cuda_available``, a ``backends/cuda/``
    folder) is that device's own implementation: rule 4 keeps it. (The files that
    ``[tool.anydev] keep`` globs name are left whole by anydev.fix before this.)
Bindings (:meth:`PyAnalysis.other_binding`)
    A name the finding starts with that the module also binds to something
    that is not torch (``if HAS_MUSA: from torch_musa.core.amp import
    autocast`` / ``else: from torch.cuda.amp import autocast``) could be
    either at run time: not rewritten.
CUDA-only objects (:meth:`PyAnalysis.cuda_only_use`)
    A ``torch.cuda.Stream``/``Event``/``CUDAGraph`` bound to a name (in its
    function) or to ``self.x`` (in its class) that is later used with what
    only the CUDA class has (``.cuda_stream``, ``torch.cuda.graph(g)``,
    ``g.capture_begin(pool)``) keeps its CUDA class.
Integers (:func:`int_like`)
    ``torch.accelerator.device_index`` takes only an int or None, so
    ``torch.cuda.device(x)`` is rewritten only when ``x`` is one.
Guards
    Whether an availability or count check may become generic is decided by
    anydev._migrate.fix.evidence (positive evidence, Note [Safe on every
    accelerator]); :meth:`PyAnalysis.guarded_cuda_code` is the older, narrower
    look for CUDA literals next to a check, kept for callers that ask it.
Local bindings (:func:`local_rebinding`)
    A function, lambda or comprehension that binds the package name the
    rewrite spells torch with (``t = time.perf_counter()``, a parameter named
    ``torch``) makes the rewrite call something else: not rewritten.
"""

from __future__ import annotations

import ast
import bisect
import functools
import os
import re
from typing import Optional, Sequence

from .python_tree import _LEAVES, walk

__all__ = ["PyAnalysis", "device_token", "int_like", "version_sense"]

#: Words that name a device (or a device's vendor library) in an identifier.
DEVICE_WORDS = frozenset({
    "cuda", "cudnn", "cublas", "nccl", "nvml", "nvidia", "xpu", "hip", "rocm", "mps", "npu",
    "musa", "mlu", "hpu"})
# Not "gpu": `num_gpus`, `train_gpu.py` name a kind of hardware, not one vendor's API.

_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
#: The nodes with a branch or a statement list (body, orelse, finalbody,
#: handlers): the only holders at which a version guard can take effect.
_BLOCK_TYPES = frozenset(t for t in vars(ast).values() if isinstance(t, type) and
                         issubclass(t, ast.AST) and {"body", "orelse", "finalbody",
                                                     "handlers"} & set(t._fields))
#: What the statement lists (body, orelse, finalbody, handlers) hold.
_LISTED = (ast.stmt, ast.excepthandler)
_FALLBACK_ERRORS = {"ImportError", "ModuleNotFoundError", "AttributeError"}


_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b)|[A-Z]?[a-z]+|[A-Z]+|\d+")


@functools.lru_cache(maxsize=4096)
def _words(name: str) -> tuple[str, ...]:
    """The words of an identifier or file name: snake_case, CamelCase, digits split."""
    out: list[str] = []
    for part in _NOT_ALNUM.split(name):
        out += [w.lower() for w in _WORD.findall(part)]
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def device_token(name: str) -> Optional[str]:
    """The device word an identifier or file name is named for, if any."""
    for w in _words(name):
        if w in DEVICE_WORDS:
            return w
    return None


def _dotted(node: ast.AST) -> Optional[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


# --- version conditions ------------------------------------------------------------

_NEW_WORDS = {"greater", "ge", "gte", "gt", "geq", "newer", "least", "atleast", "after", "since",
              "min", "has"}
_OLD_WORDS = {"less", "lt", "le", "lte", "older", "below", "before", "pre", "legacy", "old"}


def _mentions_torch_version(node: ast.AST) -> bool:
    for n in walk(node):
        if isinstance(n, ast.Attribute) and n.attr == "__version__":
            return True
        if isinstance(n, ast.Name) and "torch" in n.id.lower() and "version" in n.id.lower():
            return True
        if isinstance(n, ast.Attribute) and "version" in n.attr.lower() and \
                "torch" in (_dotted(n) or "").lower():
            return True
    return False


def version_sense(test: ast.AST) -> int:
    """+1 when the condition is true on newer PyTorch (and false on older), -1
    for the reverse, 0 when it is no torch-version check anyone can read."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return -version_sense(test.operand)
    if isinstance(test, (ast.Name, ast.Attribute)):
        name = test.id if isinstance(test, ast.Name) else test.attr
        words = _words(name)
        if "torch" not in words and "pt" not in words and "th" not in words:
            return 0
        if any(w in _OLD_WORDS for w in words):
            return -1
        if any(w in _NEW_WORDS for w in words) or ("at" in words and "least" in words):
            return 1
        return 0
    if isinstance(test, ast.Call):
        fname = _dotted(test.func) or ""
        if fname in ("hasattr",) and len(test.args) == 2:
            base = _dotted(test.args[0]) or ""
            if base.split(".")[0] in ("torch", "th") or base.startswith("torch."):
                return 1
            return 0
        words = _words(fname.split(".")[-1])
        if "torch" in words or "version" in words:
            for a in test.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and \
                        a.value.strip() in (">=", ">", "<", "<=", "==", "!="):
                    op = a.value.strip()
                    return 1 if op in (">=", ">") else (-1 if op in ("<", "<=") else 0)
            if "torch" in words:
                if any(w in _OLD_WORDS for w in words):
                    return -1
                if any(w in _NEW_WORDS for w in words) or ("at" in words and "least" in words):
                    return 1
        return 0
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, right, op = test.left, test.comparators[0], test.ops[0]
        sign = 1 if isinstance(op, (ast.GtE, ast.Gt)) else -1 if isinstance(op, (ast.Lt, ast.LtE)) \
            else 0
        if sign == 0:
            return 0
        if _mentions_torch_version(left):
            return sign
        if _mentions_torch_version(right):
            return -sign
    return 0


def _old_only(test: ast.AST) -> tuple[bool, bool]:
    """(taking the true branch implies an old torch, taking the false branch does)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        t, f = _old_only(test.operand)
        return f, t
    if isinstance(test, ast.BoolOp):
        parts = [_old_only(v) for v in test.values]
        if isinstance(test.op, ast.And):
            return any(t for t, _ in parts), all(f for _, f in parts)
        return all(t for t, _ in parts), any(f for _, f in parts)
    s = version_sense(test)
    return (s < 0, s > 0)


def _always_exits(body: Sequence[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], _EXITS)


def _handler_catches_fallback(h: ast.ExceptHandler) -> bool:
    t = h.type
    names = []
    if isinstance(t, ast.Tuple):
        names = [_dotted(e) or "" for e in t.elts]
    elif t is not None:
        names = [_dotted(t) or ""]
    return any(n.split(".")[-1] in _FALLBACK_ERRORS for n in names)


# --- integers ------------------------------------------------------------------------


_INT_CALLS = {"int", "len", "current_device", "current_device_index", "device_count",
              "get_rank", "get_local_rank", "get_world_size", "index"}


def int_like(node: ast.AST, assigned: Optional[dict[str, list[ast.AST]]] = None,
             annotated: Optional[dict[str, str]] = None, depth: int = 0,
             returns_int=None) -> bool:
    """Whether an expression is certainly an int (or None, which device_index
    also takes): a literal, ``int(...)``, ``len(...)``, ``x.index``, the count
    or index calls, arithmetic of those, a name annotated ``int`` or assigned
    only such values in its scope."""
    if depth > 8:
        return False
    if isinstance(node, ast.Constant):
        return node.value is None or (isinstance(node.value, int) and not isinstance(node.value, bool))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return int_like(node.operand, assigned, annotated, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Mod,
                                                             ast.FloorDiv)):
        return int_like(node.left, assigned, annotated, depth + 1) and \
            int_like(node.right, assigned, annotated, depth + 1)
    if isinstance(node, ast.Attribute) and node.attr == "index":
        return True  # torch.device.index: an int or None
    if isinstance(node, ast.Call):
        name = (_dotted(node.func) or "").split(".")[-1]
        if name in _INT_CALLS:
            return True
        return bool(returns_int and isinstance(node.func, ast.Name) and returns_int(node.func.id))
    if isinstance(node, ast.Name):
        if annotated and annotated.get(node.id) == "int":
            return True
        values = (assigned or {}).get(node.id)
        return bool(values) and all(int_like(v, assigned, annotated, depth + 1, returns_int)
                                    for v in values)
    return False


_module_defs: dict[str, dict[str, str]] = {}


def _returns_of(path: str) -> dict[str, str]:
    """name -> return annotation of the module-level functions of a Python file
    (parsed once per run; {} when it cannot be read)."""
    got = _module_defs.get(path)
    if got is None:
        got = {}
        try:
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), filename=path)
            for n in tree.body:
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns is not None:
                    got[n.name] = _dotted(n.returns) or ""
        except (OSError, SyntaxError, ValueError):
            pass
        if len(_module_defs) > 4096:
            _module_defs.clear()
        _module_defs[path] = got
    return got


def scope_facts(scope: ast.AST) -> tuple[dict[str, list[ast.AST]], dict[str, str]]:
    """(name -> values assigned to it, name -> annotation) in one function or
    module, not looking into nested functions and classes. A name bound any
    other way (a loop target, a parameter without an annotation) gets a value
    that is not an int."""
    assigned: dict[str, list[ast.AST]] = {}
    annotated: dict[str, str] = {}
    unknown = ast.Name(id="<unknown>")
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = scope.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            ann = _dotted(arg.annotation) if arg.annotation is not None else None
            if ann == "int":
                annotated[arg.arg] = "int"
            else:
                assigned.setdefault(arg.arg, []).append(unknown)
    todo = _child_nodes(scope, [])
    while todo:
        n = todo.pop()
        if type(n) in _PLAIN:  # most nodes: an expression that binds nothing
            _child_nodes(n, todo)
            continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    assigned.setdefault(t.id, []).append(n.value)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            if (_dotted(n.annotation) or "") == "int":
                annotated[n.target.id] = "int"
            elif n.value is not None:
                assigned.setdefault(n.target.id, []).append(n.value)
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            for t in walk(n.target):
                if isinstance(t, ast.Name):
                    assigned.setdefault(t.id, []).append(unknown)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            assigned.setdefault(n.target.id, []).append(n.value)
        _child_nodes(n, todo)
    return assigned, annotated


def _child_nodes(node: ast.AST, out: list) -> list:
    """``out`` with ast.iter_child_nodes(node) appended, in its order, without
    its two generators per node."""
    AST = ast.AST
    for name in node._fields:
        v = getattr(node, name, None)
        if isinstance(v, AST):
            out.append(v)
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, AST):
                    out.append(x)
    return out


#: The node types scope_facts only walks through: none binds a name nor is a
#: scope of its own (exact types: a subclass takes the isinstance checks).
_PLAIN = frozenset({ast.Name, ast.Attribute, ast.Call, ast.Constant, ast.keyword, ast.Expr,
                    ast.BinOp, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Subscript, ast.Tuple,
                    ast.List, ast.Dict, ast.Set, ast.Return, ast.If, ast.While, ast.JoinedStr,
                    ast.FormattedValue, ast.Starred, ast.Slice, ast.IfExp, ast.Load, ast.Store,
                    ast.Del, ast.arguments, ast.arg, ast.With, ast.withitem, ast.Try,
                    ast.ExceptHandler, ast.Raise, ast.Assert, ast.Pass, ast.Import,
                    ast.ImportFrom, ast.alias, ast.Await})


@functools.lru_cache(maxsize=1024)
def _home_path(path: str) -> Optional[str]:
    """Why the module at ``path`` is a device's own implementation (its name or a
    folder of its path), or None; asked once per file (its rounds share it)."""
    rel = path.replace(os.sep, "/")
    parts = [p for p in rel.split("/") if p not in ("", ".", "..")]
    for i, part in enumerate(parts):
        stem = os.path.splitext(part)[0] if i == len(parts) - 1 else part
        if stem in ("__init__", "__main__"):
            continue
        word = device_token(stem)
        if word is not None:
            what = "module" if i == len(parts) - 1 else "package folder"
            return (f"in the {what} `{part}`, named for {word}: a device's own implementation "
                    "keeps its device-specific calls (rule 4)")
    return None


# --- the analysis of one module ----------------------------------------------------------

#: Methods that take a generic torch.Stream or torch.Event.
_STREAM_TAKERS = frozenset({"record_stream", "wait_stream", "wait_event", "record_event",
                            "record", "wait", "elapsed_time", "set_stream"})

#: The object a call's replacement returns, for the calls whose result the
#: fixer follows (torch.accelerator.current_stream returns a torch.Stream).
RETURNS = {"torch.accelerator.current_stream": "torch.Stream"}

#: What only the CUDA (or XPU) class of a generic object has.
CUDA_ONLY_MEMBERS = {
    "torch.Stream": {"cuda_stream", "__cuda_stream__", "priority", "priority_range", "sycl_queue"},
    "torch.Event": {"cuda_event", "ipc_handle", "from_ipc_handle", "sycl_event"},
    "torch.accelerator.Graph": {"raw_cuda_graph", "raw_cuda_graph_exec", "get_graph_data",
                                "register_generator_state"},
}


@functools.lru_cache(maxsize=8)
def _device_literal(device: str):
    """The full match of a device literal of ``device`` ("cuda", "cuda:1")."""
    return re.compile(rf"{device}(:\d+)?").fullmatch


#: Node types (exact) that are no Constant, JoinedStr nor Attribute: the ones
#: guarded_cuda_code walks through without a look.
_NOT_GUARDED = frozenset({ast.Name, ast.Call, ast.keyword, ast.Expr, ast.Load, ast.Store,
                          ast.Assign, ast.If, ast.Compare, ast.BinOp, ast.BoolOp, ast.UnaryOp,
                          ast.Subscript, ast.Tuple, ast.List, ast.Dict, ast.Return, ast.IfExp,
                          ast.FormattedValue, ast.arguments, ast.arg, ast.Eq, ast.NotEq,
                          ast.Is, ast.IsNot, ast.In, ast.NotIn, ast.Lt, ast.Gt, ast.LtE, ast.GtE,
                          ast.And, ast.Or, ast.Not, ast.Add, ast.Sub, ast.Mult, ast.Div,
                          ast.Starred, ast.Slice, ast.With, ast.withitem, ast.For, ast.Pass,
                          ast.Raise, ast.Assert, ast.AugAssign, ast.AnnAssign})


class Covered:
    """The text spans of the rewrites applied so far, kept sorted by start, so
    asking whether a span lies inside one is a bisection (rewrites nest, they do
    not overlap otherwise: the few that start last before it are enough)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, s: int, e: int) -> None:
        k = bisect.bisect_right(self.starts, s)
        self.starts.insert(k, s)
        self.ends.insert(k, e)

    def contains(self, s: int, e: int) -> bool:
        k = bisect.bisect_right(self.starts, s)
        return any(self.ends[j] >= e for j in range(max(0, k - 8), k))


#: Fields that never hold a node (names, numbers, flags, a Name's ctx and an
#: operator, which have no children), and each node type's other fields.
_NOT_CHILDREN = frozenset({"id", "attr", "ctx", "op", "name", "asname", "module", "level",
                           "arg", "kind", "is_async", "conversion", "type_comment", "simple"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


# Note [One walk]
# The fixer used to walk each module's tree several times (parents, name uses,
# and a descent from the root per finding to locate it), which with the parse
# made `anydev fix` cost about 22x the scan of the same tree. One walk now
# records what each of them needs; locating a finding is a dictionary look-up
# and a climb through its parents (anydev._migrate.fix.python_tree._chain_to).
# The node at each position is kept only on the findings' lines (PyAnalysis.lines):
# a third of the walk went into keeping it for every node. All the nodes at one
# position share its line, so a position there is answered as before; one on
# another line (a suppressed finding's, asked by the literal units) is answered
# None, and the caller descends to it, as it does for a position between nodes.


class PyAnalysis:
    """The checks of the module docstring for one parsed module."""

    def __init__(self, tree: ast.Module, path: str, root: Optional[str] = None,
                 lines: Optional[set[int]] = None):
        self.tree = tree
        #: the lines (1-based) whose nodes node_at answers for (None: every line):
        #: the findings' (Note [One walk])
        self.lines = lines
        self.path = path
        self.root = root or "torch"
        self._bindings: Optional[dict[str, list[tuple[str, int, ast.AST]]]] = None
        self._parents: Optional[dict[int, ast.AST]] = None
        self._path_home: Optional[tuple[Optional[str]]] = None
        self._steps: dict[int, Optional[str]] = {}  # id(child) -> old_torch_only's step
        #: (id(the chain's first node), id(node)) -> old_torch_only of the chain down to node
        self._downto: dict[tuple[int, int], Optional[str]] = {}
        self._uses: dict[str, int] = {}
        self._at: dict[tuple[int, int, int, int], Optional[ast.AST]] = {}
        self._blocks: dict[int, tuple[dict[int, int], Optional[tuple[int, str]]]] = {}
        self._names: dict[tuple[int, str], list[ast.AST]] = {}
        self._attrs: dict[tuple[int, str], list[ast.AST]] = {}
        self._facts: dict[int, tuple[dict[str, list[ast.AST]], dict[str, str]]] = {}
        self._regions: dict[int, list[ast.AST]] = {}
        self._members: dict[int, tuple[list, set[int]]] = {}

    # -- parents and uses --------------------------------------------------------
    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        if self._parents is None:
            self._index()
        return self._parents.get(id(node))  # type: ignore[union-attr]

    def _index(self) -> None:
        """One walk of the module: each node's parent, the loads of each name per
        scope (function or module) and of each ``self.attr`` per class, how often
        each name is used, and the node at each position (for locating the
        findings), so the checks cost a look-up per finding, not a walk of its
        scope (Note [One walk])."""
        parents: dict[int, ast.AST] = {}
        names: dict[tuple[int, str], list[ast.AST]] = {}
        attrs: dict[tuple[int, str], list[ast.AST]] = {}
        uses: dict[str, int] = {}
        at: dict[tuple[int, int, int, int], Optional[ast.AST]] = {}
        AST, Name, Attribute, Load, Constant = ast.AST, ast.Name, ast.Attribute, ast.Load, \
            ast.Constant
        setdefault, uses_get, names_get = at.setdefault, uses.get, names.get
        Global, Nonlocal, ClassDef = ast.Global, ast.Nonlocal, ast.ClassDef
        FunctionDef, AsyncFunctionDef = ast.FunctionDef, ast.AsyncFunctionDef
        leaves, child_fields = _LEAVES, _CHILD_FIELDS
        tree, lines = self.tree, self.lines
        scope: ast.AST = tree
        cls: Optional[ast.AST] = None
        sid = id(tree)
        # the nodes to visit, in the order of a stack of (node, scope, class) as
        # before, without a tuple per node: a def or class pushes the (scope,
        # class) to restore below its children (Note [One walk])
        stack: list = [tree]
        pop, push = stack.pop, stack.append
        while stack:
            node = pop()
            t = type(node)
            if t is Name:
                i = node.id  # type: ignore[attr-defined]
                uses[i] = uses_get(i, 0) + 1
                if type(node.ctx) is Load:  # type: ignore[attr-defined]
                    k = (sid, i)
                    got = names_get(k)
                    if got is None:
                        names[k] = [node]
                    else:
                        got.append(node)
                line = node.lineno  # type: ignore[attr-defined]
                if lines is None or line in lines:
                    key = (line, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
                    seen = setdefault(key, node)
                    if seen is not node:
                        p = parents.get(id(node))
                        while p is not None and p is not seen:
                            p = parents.get(id(p))
                        if p is None:  # two nodes at one place, neither inside the other
                            at[key] = None
                continue  # no children (a Name's ctx is none)
            if t is tuple:  # the end of a def's or class's children
                scope, cls = node
                sid = id(scope)
                continue
            if t is Attribute:
                v = node.value  # type: ignore[attr-defined]
                if cls is not None and type(v) is Name and v.id == "self":
                    attrs.setdefault((id(cls), node.attr), []).append(node)  # type: ignore[attr-defined]
            elif t is Global or t is Nonlocal:
                for n in node.names:  # type: ignore[attr-defined]
                    uses[n] = uses_get(n, 0) + 1
            line = getattr(node, "lineno", None)
            if line is not None and (lines is None or line in lines):
                key = (line, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
                seen = setdefault(key, node)
                if seen is not node:
                    p = parents.get(id(node))
                    while p is not None and p is not seen:
                        p = parents.get(id(p))
                    if p is None:  # two nodes at one place, neither inside the other
                        at[key] = None
            if t is Constant:
                continue  # no children
            if t is Attribute:  # the commonest node with children: one, its value
                parents[id(v)] = node
                push(v)
                continue
            if t is FunctionDef or t is AsyncFunctionDef:
                push((scope, cls))
                scope, sid = node, id(node)
            elif t is ClassDef:
                push((scope, cls))
                cls = node
            fields = child_fields.get(t)
            if fields is None:
                fields = child_fields[t] = t._fields if t.__name__ == "TypeAlias" else \
                    tuple(f for f in t._fields if f not in _NOT_CHILDREN)  # its name is a Name
            for name in fields:
                v = getattr(node, name, None)
                if type(v) is list:
                    for c in v:
                        if isinstance(c, AST):
                            parents[id(c)] = node
                            push(c)
                elif isinstance(v, AST) and type(v) not in leaves:
                    parents[id(v)] = node
                    push(v)
        self._parents, self._names, self._attrs = parents, names, attrs
        self._uses, self._at = uses, at

    def parents(self) -> dict[int, ast.AST]:
        """id(node) -> its parent, for every node of the module but the module."""
        if self._parents is None:
            self._index()
        return self._parents  # type: ignore[return-value]

    def name_uses(self) -> dict[str, int]:
        """How often each name is used (loaded, stored, deleted, declared
        global) in the module."""
        if self._parents is None:
            self._index()
        return self._uses

    def index(self) -> None:
        """Makes the one walk now (it is otherwise made when a check first needs it)."""
        if self._parents is None:
            self._index()

    @property
    def indexed(self) -> bool:
        """Whether the one walk was made (a check needed it)."""
        return self._parents is not None

    def node_at(self, key: tuple[int, int, int, int]) -> Optional[ast.AST]:
        """The outermost node whose position is exactly ``key`` (line, column,
        end line, end column), or None (none there, two that do not nest, or a
        line that is not one of ``lines``: the caller then descends)."""
        if self._parents is None:
            self._index()
        return self._at.get(key)

    def name_loads(self, scope: ast.AST, name: str) -> list[ast.AST]:
        if self._parents is None:
            self._index()
        return self._names.get((id(scope), name), [])

    def self_attr_uses(self, cls: ast.AST, attr: str) -> list[ast.AST]:
        if self._parents is None:
            self._index()
        return self._attrs.get((id(cls), attr), [])

    def returns_int(self, name: str) -> bool:
        """Whether the function ``name`` (defined in this module, or imported from
        a sibling module of the same package) is annotated ``-> int``."""
        for n in self.tree.body:
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name:
                return n.returns is not None and _dotted(n.returns) == "int"
        for what, _, node in self.bindings().get(name, []):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                here = os.path.dirname(os.path.abspath(self.path))
                target = os.path.join(here, *node.module.split(".")) + ".py"
                original = next((a.name for a in node.names if (a.asname or a.name) == name), name)
                return _returns_of(target).get(original) == "int"
        return False

    def facts(self, scope: ast.AST) -> tuple[dict[str, list[ast.AST]], dict[str, str]]:
        """scope_facts, once per scope."""
        got = self._facts.get(id(scope))
        if got is None:
            got = self._facts[id(scope)] = scope_facts(scope)
        return got

    # -- version guards ------------------------------------------------------
    def old_torch_only(self, chain: Sequence[ast.AST]) -> Optional[str]:
        """Why the node at the end of ``chain`` runs only on an older PyTorch, or None
        (each step of a chain is decided once: findings share their ancestors)."""
        # the answer down to each node is kept too, so a finding pays only for
        # the steps below the deepest ancestor an earlier finding reached
        steps, downto = self._steps, self._downto
        top = id(chain[0]) if chain else 0
        k = len(chain) - 1
        while k > 0 and (top, id(chain[k])) not in downto:
            k -= 1
        why = downto[(top, id(chain[k]))] if k > 0 else None
        blocks = _BLOCK_TYPES
        for i in range(k, len(chain) - 1):
            key = id(chain[i + 1])
            if why is None:
                if key in steps:
                    why = steps[key]
                elif type(chain[i]) in blocks:  # else no branch nor block: no step
                    why = steps[key] = self._old_torch_step(chain[i], chain[i + 1])
            downto[(top, key)] = why
        return why

    def _old_torch_step(self, holder: ast.AST, child: ast.AST) -> Optional[str]:
        """Why ``child``, as a part of ``holder``, runs only on an older PyTorch, or None."""
        if type(holder) not in _BLOCK_TYPES:
            return None  # an expression, an argument list, ...: no branch nor block
        if isinstance(holder, (ast.If, ast.IfExp, ast.While)) and child is not holder.test:
            in_body = (child is holder.body) if isinstance(holder, ast.IfExp) else \
                any(child is s for s in holder.body)
            t_old, f_old = _old_only(holder.test)
            if (in_body and t_old) or (not in_body and f_old):
                return self._guard_reason(holder.test)
        if isinstance(holder, ast.ExceptHandler) and _handler_catches_fallback(holder):
            caught = ast.unparse(holder.type) if holder.type is not None else "an error"
            return (f"in the `except {caught}` fallback (line {holder.lineno}) for a PyTorch "
                    "without the newer API; left as it is")
        body = self._block_holding(holder, child)
        if body is not None:
            return self._early_exit_before(body, child)
        return None

    def _early_exit_before(self, body: list, child: ast.AST) -> Optional[str]:
        """The reason of the first version-guarded early exit of ``body`` before
        ``child`` (one pass over each block, cached: linear in the module)."""
        info = self._blocks.get(id(body))
        if info is None:
            index = {id(s): j for j, s in enumerate(body)}
            first: Optional[tuple[int, str]] = None
            for j, prev in enumerate(body):
                if isinstance(prev, ast.If):
                    t_old, f_old = _old_only(prev.test)
                    if (_always_exits(prev.body) and not _always_exits(prev.orelse) and f_old) or \
                            (_always_exits(prev.orelse) and not _always_exits(prev.body) and t_old):
                        first = (j, self._guard_reason(prev.test, early=True))
                        break
            info = self._blocks[id(body)] = (index, first)
        index, first = info
        if first is not None and index.get(id(child), -1) > first[0]:
            return first[1]
        return None

    def _block_holding(self, holder: ast.AST, child: ast.AST) -> Optional[list]:
        """The statement list of ``holder`` that holds ``child`` (one dict look-up
        per list after the first: a module of n statements stays linear)."""
        if not isinstance(child, _LISTED):
            return None  # those lists hold statements and handlers only
        for name in ("body", "orelse", "finalbody", "handlers"):
            b = getattr(holder, name, None)
            if not isinstance(b, list) or not b:
                continue
            index = self._members.get(id(b))
            if index is None or index[0] is not b:
                index = self._members[id(b)] = (b, {id(x) for x in b})
            if id(child) in index[1]:
                return b if name != "handlers" else None
        return None

    @staticmethod
    def _guard_reason(test: ast.AST, early: bool = False) -> str:
        cond = ast.unparse(test)
        if len(cond) > 60:
            cond = cond[:57] + "..."
        where = "after the early exit of" if early else "in the branch of"
        return (f"runs only on an older PyTorch ({where} `{cond}`, line {test.lineno}): a "
                "version-guarded fallback is left as it is")

    # -- device homes -----------------------------------------------------------
    def device_home(self, chain: Sequence[ast.AST]) -> Optional[str]:
        """Why the node is inside a device's own implementation, or None (the
        files `[tool.anydev] keep` names never get here: anydev.fix leaves all
        of their findings first)."""
        for fn in chain:
            if isinstance(fn, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                word = device_token(fn.name)
                if word is not None:
                    kind = "class" if isinstance(fn, ast.ClassDef) else "def"
                    return (f"inside `{kind} {fn.name}` (line {fn.lineno}), named for {word}: a "
                            "device's own implementation keeps its device-specific calls (rule 4)")
        if self._path_home is None:
            self._path_home = (_home_path(self.path),)
        return self._path_home[0]

    # -- bindings ----------------------------------------------------------------
    def bindings(self) -> dict[str, list[tuple[str, int, ast.AST]]]:
        """name -> [(what binds it, line, the binding statement)] for every
        binding anywhere in the module."""
        if self._bindings is None:
            b: dict[str, list[tuple[str, int, ast.AST]]] = {}

            def add(name: str, what: str, node: ast.AST) -> None:
                b.setdefault(name, []).append((what, getattr(node, "lineno", 0) or 0, node))

            for n in walk(self.tree):
                if isinstance(n, ast.Import):
                    for a in n.names:
                        add(a.asname or a.name.split(".")[0],
                            a.name if a.asname else a.name.split(".")[0], n)
                elif isinstance(n, ast.ImportFrom):
                    mod = "." * (n.level or 0) + (n.module or "")
                    for a in n.names:
                        add(a.asname or a.name, f"{mod}.{a.name}", n)
                elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    add(n.name, f"the {'class' if isinstance(n, ast.ClassDef) else 'function'} "
                                f"{n.name}", n)
                elif isinstance(n, (ast.Assign, ast.AnnAssign)):
                    targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                    for t in targets:
                        if isinstance(t, ast.Name):
                            add(t.id, f"`{ast.unparse(n.value)[:40]}`" if n.value is not None
                                else "an annotation", n)
            self._bindings = b
        return self._bindings

    def _branches(self, node: ast.AST) -> list[tuple[int, str]]:
        """(id of an if/try statement, which of its bodies) for each branch point
        above ``node``."""
        out = []
        child, p = node, self.parent(node)
        while p is not None:
            if isinstance(p, (ast.If, ast.Try)) or type(p).__name__ == "TryStar":
                for name in ("body", "orelse", "handlers", "finalbody"):
                    body = getattr(p, name, None)
                    if isinstance(body, list) and any(x is child for x in body):
                        out.append((id(p), name))
            elif isinstance(p, ast.ExceptHandler):
                pass
            child, p = p, self.parent(p)
        return out

    def other_binding(self, head: str, symbol: str) -> Optional[str]:
        """Why the name ``head`` (the first name of a finding of ``symbol``) may
        not be the torch one at run time, or None: the module binds it to torch
        in one branch of an ``if``/``try`` and to something else in another
        branch of the same statement."""
        if head == self.root or head == "torch":
            return None
        binds = self.bindings().get(head, [])
        mine = [x for x in binds if x[0] == "torch" or x[0].startswith("torch.")]
        others = [x for x in binds if not (x[0] == "torch" or x[0].startswith("torch."))]
        if not mine or not others:
            return None
        for _, _, tnode in mine:
            tb = dict(self._branches(tnode))
            for what, line, onode in others:
                ob = dict(self._branches(onode))
                if any(k in tb and tb[k] != v for k, v in ob.items()):
                    return (f"`{head}` is bound to {what} on another branch (line {line}); which "
                            f"one `{head}` is at run time depends on the branch taken, so this is "
                            f"not certainly {symbol}; rewrite by hand")
        return None

    # -- objects -----------------------------------------------------------------
    def cuda_only_use(self, call: ast.Call, replacement: str, legacy_module: str) -> Optional[str]:
        """Why an object made by ``call`` (a Stream/Event/Graph constructor) must keep
        its CUDA class, or None."""
        members = CUDA_ONLY_MEMBERS.get(replacement)
        if members is None:
            return None
        stmt = self.parent(call)
        target: Optional[ast.AST] = None
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and \
                (stmt.value is call):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if len(targets) == 1:
                target = targets[0]
        elif isinstance(stmt, ast.withitem) and stmt.context_expr is call:
            target = stmt.optional_vars
        if target is None:
            # used in place: `torch.cuda.Stream().cuda_stream`, `torch.cuda.graph(torch.cuda.CUDAGraph())`
            return self._use_is_cuda_only(call, members, legacy_module)
        scope: Optional[ast.AST] = None
        if isinstance(target, ast.Name):
            scope = self._enclosing(call, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
            if isinstance(scope, ast.Module) and not target.id.startswith("_"):
                return (f"the object is kept in the module-level name `{target.id}` (line "
                        f"{call.lineno}), which other modules may import and use as the "
                        f"{legacy_module} class; rewrite by hand")
            match = lambda n: isinstance(n, ast.Name) and n.id == target.id  # noqa: E731
            label = target.id
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                target.value.id == "self":
            scope = self._enclosing(call, (ast.ClassDef,))
            attr = target.attr
            match = lambda n: (isinstance(n, ast.Attribute) and n.attr == attr  # noqa: E731
                               and isinstance(n.value, ast.Name) and n.value.id == "self")
            label = f"self.{attr}"
        else:
            return None
        if scope is None:
            return None
        uses = self.name_loads(scope, target.id) if isinstance(target, ast.Name) else \
            self.self_attr_uses(scope, target.attr)
        for n in uses:
            if n is target or not match(n):
                continue
            why = self._use_is_cuda_only(n, members, legacy_module)
            if why:
                return why.replace("the object", f"`{label}`")
        return None

    def _use_is_cuda_only(self, node: ast.AST, members: set, legacy_module: str) -> Optional[str]:
        p = self.parent(node)
        if isinstance(p, ast.Attribute) and p.value is node and p.attr in members:
            return (f"the object is used with `.{p.attr}` (line {p.lineno}), which only the "
                    f"{legacy_module} class has; rewrite by hand")
        if isinstance(p, ast.Attribute) and p.value is node and p.attr == "capture_begin":
            call = self.parent(p)
            if isinstance(call, ast.Call) and (call.args or call.keywords):
                return (f"the object's capture_begin(...) takes a pool or mode (line {p.lineno}), "
                        "which torch.accelerator.Graph takes in its constructor; rewrite by hand")
        if isinstance(p, ast.keyword):
            p = self.parent(p)
        if isinstance(p, ast.Call) and p.func is not node:
            callee = _dotted(p.func) or ""
            head = callee.split(".")[0]
            roots = {self.root, "torch"}
            parts = callee.split(".")
            if head in roots and len(parts) > 2 and parts[1] == legacy_module.split(".")[-1]:
                return (f"the object is passed to `{callee}` (line {p.lineno}), a "
                        f"{legacy_module} API that expects the {legacy_module} class; rewrite by "
                        "hand")
            if head in roots and (len(parts) < 2 or parts[1] not in DEVICE_WORDS):
                return None  # PyTorch's generic API takes the generic object
            if parts[-1] in _STREAM_TAKERS:
                return None  # `t.record_stream(s)`, `s2.wait_stream(s)`: generic ones take it
            return (f"the object is passed to `{callee or ast.unparse(p.func)[:40]}` (line "
                    f"{p.lineno}), which the fixer does not follow (it may use what only the "
                    f"{legacy_module} class has); rewrite by hand")
        if isinstance(p, ast.Return) or isinstance(p, (ast.Yield, ast.YieldFrom)):
            return (f"the object is returned (line {p.lineno}) to callers the fixer does not "
                    "follow; rewrite by hand")
        if isinstance(p, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Starred)):
            return (f"the object is kept in a container (line {getattr(p, 'lineno', '?')}) the "
                    "fixer does not follow; rewrite by hand")
        if isinstance(p, (ast.Assign, ast.AnnAssign)) and getattr(p, "value", None) is node:
            targets = p.targets if isinstance(p, ast.Assign) else [p.target]
            if any(not isinstance(t, ast.Name) for t in targets):
                return (f"the object is stored in `{ast.unparse(targets[0])[:40]}` (line "
                        f"{p.lineno}), which the fixer does not follow; rewrite by hand")
        return None

    def _enclosing(self, node: ast.AST, kinds: tuple) -> Optional[ast.AST]:
        p = self.parent(node)
        while p is not None and not isinstance(p, kinds):
            p = self.parent(p)
        return p

    def scope_of(self, node: ast.AST) -> ast.AST:
        return self._enclosing(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)) or self.tree

    # -- guards ------------------------------------------------------------------
    def guarded_region(self, node: ast.AST, depth: int = 0) -> list[ast.AST]:
        """The expression around a check at ``node`` and the code it guards
        (following a name it is assigned to, two levels deep)."""
        stmt: ast.AST = node
        expr_top: ast.AST = node
        p = self.parent(node)
        while p is not None and not isinstance(p, ast.stmt):
            expr_top = p
            p = self.parent(p)
        stmt = p if p is not None else node
        region: list[ast.AST] = [expr_top]
        if isinstance(stmt, (ast.If, ast.While)) and self._contains(stmt.test, node):
            region += list(stmt.body)
            if _always_exits(stmt.body):
                region += self._following(stmt)
        elif isinstance(stmt, ast.Assert):
            region += self._following(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets if depth < 2 else ():
                uses: list[ast.AST] = []
                if isinstance(t, ast.Name):
                    uses = self.name_loads(self.scope_of(stmt), t.id)
                elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and \
                        t.value.id == "self":
                    cls = self._enclosing(stmt, (ast.ClassDef,))
                    uses = [n for n in (self.self_attr_uses(cls, t.attr) if cls else ())
                            if isinstance(n.ctx, ast.Load)]
                for n in uses[:64]:  # a bounded reach keeps a module of n checks linear
                    region += self.guarded_region(n, depth + 1)
        elif stmt is not node:
            region.append(stmt)
        return region

    @staticmethod
    def _contains(outer: ast.AST, inner: ast.AST) -> bool:
        return any(n is inner for n in walk(outer))

    def _following(self, stmt: ast.AST) -> list[ast.AST]:
        holder = self.parent(stmt)
        body = self._block_holding(holder, stmt) if holder is not None else None
        if body is None:
            return []
        k = next(j for j, s in enumerate(body) if s is stmt)
        return list(body[k + 1:k + 1 + 200])  # a guard's reach, bounded: linear cost

    def guarded_cuda_code(self, node: ast.AST, device: str, covered: "Covered",
                          span) -> Optional[str]:
        """Why a check at ``node`` guards code that stays ``device``-specific: the
        first such piece in its region that is not inside one of the ``covered``
        text spans (the rewrites the same fix applies, and the check itself).
        ``span(node)`` gives a node's text span."""
        own = span(node)

        def is_covered(n: ast.AST) -> bool:
            s, e = span(n)
            return (own[0] <= s and e <= own[1]) or covered.contains(s, e)

        seen: set[int] = set()
        literal = _device_literal(device)
        plain = _NOT_GUARDED
        for top in self.guarded_region(node):
            for n in walk(top):
                if type(n) in plain:
                    continue  # no literal, f-string nor attribute: nothing to look at
                if id(n) in seen:
                    continue
                seen.add(id(n))
                what = None
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and \
                        literal(n.value):
                    what = f"the device literal {n.value!r}"
                elif isinstance(n, ast.JoinedStr) and n.values and \
                        isinstance(n.values[0], ast.Constant) and \
                        str(n.values[0].value).startswith(f"{device}:"):
                    what = f"the device literal f\"{n.values[0].value}...\""
                elif isinstance(n, ast.Attribute) and n.attr in (device, f"is_{device}"):
                    base = _dotted(n.value) or ""
                    if base.split(".")[0] in (self.root, "torch") and n.attr == device:
                        if is_covered(n) or self._covered_chain(n, is_covered):
                            continue
                        outer = self.parent(n)
                        name = _dotted(outer) if isinstance(outer, ast.Attribute) else None
                        what = f"`{name or _dotted(n)}`"
                    elif n.attr == device and isinstance(self.parent(n), ast.Call) and \
                            self.parent(n).func is n:
                        what = f"the `.{device}()` call"
                    elif n.attr == f"is_{device}":
                        what = f"`.is_{device}`"
                if what is not None and is_covered(n):
                    continue  # a literal, .cuda() or .is_cuda the same fix rewrites
                if what is not None:
                    return (f"the code it guards stays {device.upper()}-specific ({what}, line "
                            f"{getattr(n, 'lineno', '?')}); a generic check there would send other "
                            f"accelerators down a {device.upper()}-only path; migrate both together")
        return None

    def _covered_chain(self, n: ast.AST, is_covered) -> bool:
        p = self.parent(n)
        while isinstance(p, (ast.Attribute, ast.Call)):
            if is_covered(p):
                return True
            p = self.parent(p)
        return False



# --- local bindings ---------------------------------------------------------------

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda) + _COMPREHENSIONS


def _local_names(scope: ast.AST) -> dict[str, tuple[str, int]]:
    """name -> (how it is bound, line) for the names a function, lambda or
    comprehension binds itself (parameters, assignments, loop and ``with``
    targets, ``except ... as``, imports, comprehension variables), not looking
    into the scopes nested in it; a ``global``/``nonlocal`` name is not its own."""
    out: dict[str, tuple[str, int]] = {}
    declared: set[str] = set()
    if isinstance(scope, _COMPREHENSIONS):
        for g in scope.generators:
            for n in walk(g.target):
                if isinstance(n, ast.Name):
                    out.setdefault(n.id, ("a comprehension variable", n.lineno))
        return out
    a = scope.args  # type: ignore[attr-defined]
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if arg is not None:
            out.setdefault(arg.arg, ("a parameter", arg.lineno))
    body = scope.body if isinstance(scope.body, list) else [scope.body]  # type: ignore[attr-defined]
    todo: list = list(body)
    while todo:
        n = todo.pop()
        t = type(n)
        if t is ast.Name and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.setdefault(n.id, ("assigned", n.lineno))
            continue
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
            continue
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for al in n.names:
                name = al.asname or al.name.split(".")[0]
                # a binding from torch itself (`import torch.cuda as tc`, `from
                # torch.cuda import X`) is what the scanner resolved the finding by
                torch = al.name == "torch" or al.name.startswith("torch.") \
                    if isinstance(n, ast.Import) else \
                    (n.level == 0 and (n.module or "").split(".")[0] == "torch")
                out.setdefault(name, ("torch" if torch else "imported", n.lineno))
            continue
        if isinstance(n, ast.ExceptHandler) and n.name:
            out.setdefault(n.name, ("an `except ... as` name", n.lineno))
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.setdefault(n.name, ("a nested definition", n.lineno))
            todo.extend(n.decorator_list)
            continue
        if isinstance(n, (ast.Lambda,) + _COMPREHENSIONS):
            continue
        if t is ast.MatchAs or t.__name__ in ("MatchAs", "MatchStar"):
            if getattr(n, "name", None):
                out.setdefault(n.name, ("a match pattern", n.lineno))
        for name in n._fields:
            v = getattr(n, name, None)
            if isinstance(v, ast.AST):
                todo.append(v)
            elif type(v) is list:
                todo.extend(x for x in v if isinstance(x, ast.AST))
    for name in declared:
        out.pop(name, None)
    return out


def local_rebinding(chain: Sequence[ast.AST], name: str, memo: dict) -> Optional[str]:
    """Why ``name`` (the package torch is spelled with) is not torch where the
    end of ``chain`` is: a function, lambda or comprehension around it binds
    the name itself to something else (a parameter, ``t =
    time.perf_counter()``, a comprehension variable). None when none does (or
    one binds it by ``import torch``)."""
    for scope in reversed(chain):
        if not isinstance(scope, _SCOPES):
            continue
        names = memo.get(id(scope))
        if names is None or names[0] is not scope:
            names = memo[id(scope)] = (scope, _local_names(scope))
        got = names[1].get(name)
        if got is None:
            continue
        how, line = got
        if how == "torch":
            return None
        where = f"`def {scope.name}`" if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) \
            else "a lambda" if isinstance(scope, ast.Lambda) else "a comprehension"
        return (f"`{name}` is {how} in {where} (line {line}), so it is not the torch package "
                "there; the rewrite would call something else: rewrite by hand")
    return None
