"""Finding a Python finding's node in the syntax tree (a descent by
position, Note [Locating findings]) and what is around it: the statements that
run at module level, the statement list that holds a statement, f-strings."""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from typing import Iterable, Optional

from .text import _LINE_BREAK


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
