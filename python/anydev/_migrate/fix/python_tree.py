"""Finding a Python finding's node in the syntax tree (a descent by
position, Note [Locating findings]) and what is around it: the statements that
run at module level, the statement list that holds a statement, f-strings."""

from __future__ import annotations

import ast
import bisect
import functools
import io
import keyword
import re
import tokenize
from typing import Iterable, Optional

from .text import _LINE_BREAK


def walk(node: ast.AST) -> Iterable[ast.AST]:
    """ast.walk's nodes in ast.walk's order (breadth first, fields in order),
    without its generator per node."""
    AST = ast.AST
    todo = [node]
    i = 0
    while i < len(todo):
        n = todo[i]
        i += 1
        for name in n._fields:
            v = getattr(n, name, None)
            if isinstance(v, AST):
                todo.append(v)
            elif type(v) is list:
                for x in v:
                    if isinstance(x, AST):
                        todo.append(x)
        yield n


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


#: The nodes that may have decorators, where they start (_start_of).
_DECORATED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


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
            if type(child) in _LEAVES:
                continue
            end_line = getattr(child, "end_lineno", None)
            if end_line is None:  # arguments, withitem, comprehension
                todo.extend(ast.iter_child_nodes(child))
                continue
            if (child.lineno, child.col_offset) > start and (  # type: ignore[attr-defined]
                    not getattr(child, "decorator_list", None) or _start_of(child) > start):
                continue
            if (end_line, child.end_col_offset) >= end:  # type: ignore[attr-defined]
                inside.append(chain + [child])
        stack.extend(inside)
    return best


def _chain_to(tree: ast.AST, index, start: tuple[int, int], end: tuple[int, int]
              ) -> Optional[list[ast.AST]]:
    """What :func:`_chain` gives for a node whose position is exactly [start,
    end], from the position index of the module's one walk (``index``, an
    anydev._migrate.fix.analysis.PyAnalysis: its node_at and parent) instead of a
    descent: the node's positioned ancestors, each checked to contain the
    position as the descent checks it. None when there is no such node, two
    that do not nest share the position, or an ancestor does not contain it:
    the caller then descends (Note [Locating findings])."""
    node = index.node_at((*start, *end))
    if node is None:
        return None
    chain = [node]
    parent = index.parents().get  # the walk's map: one look-up per ancestor
    decorated = _DECORATED
    p = parent(id(node))
    while p is not None and p is not tree:
        end_line = getattr(p, "end_lineno", None)
        if end_line is not None:  # not arguments, withitem, ...
            first = _start_of(p) if type(p) in decorated else (p.lineno, p.col_offset)  # type: ignore[attr-defined]
            if not (first <= start and (end_line, p.end_col_offset) >= end):  # type: ignore[attr-defined]
                return None
            chain.append(p)
        p = parent(id(p))
    if p is None:
        return None
    chain.append(tree)
    chain.reverse()
    return chain


#: Nodes without children or a position (a Name's ctx, an operator).
_LEAVES = frozenset(t for t in vars(ast).values() if isinstance(t, type) and
                    issubclass(t, (ast.expr_context, ast.operator, ast.boolop, ast.unaryop,
                                   ast.cmpop)))
_STMT_LISTS = ("body", "orelse", "finalbody", "handlers")
_starts_cache: "dict[int, tuple[list, list[tuple[int, int]]]]" = {}


def _candidates(node: ast.AST, start: tuple[int, int]) -> list[ast.AST]:
    """The children of ``node`` that may contain a position: all of them, but
    of a long statement list only the statement that starts last at or before
    it (statements do not overlap), found by bisection, so locating n findings
    in a module of n statements costs n log n, not n^2 (Note [Locating findings])."""
    out: list[ast.AST] = []
    AST = ast.AST
    for name in node._fields:
        value = getattr(node, name, None)
        if type(value) is list:
            if len(value) > 16 and name in _STMT_LISTS:
                cached = _starts_cache.get(id(value))
                if cached is None or cached[0] is not value:
                    cached = (value, [_start_of(x) for x in value])
                    _starts_cache[id(value)] = cached
                k = bisect.bisect_right(cached[1], start) - 1
                if k >= 0:
                    out.append(value[k])
            else:
                for x in value:
                    if isinstance(x, AST):
                        out.append(x)
        elif isinstance(value, AST):
            out.append(value)
    return out


# Note [Locating findings]
# A file with 600k findings used to spend 96% of `anydev fix` in _chain, which
# looked at every statement of the module for every finding. Statement lists
# are sorted by position and their members do not overlap, so one bisection
# per level finds the only statement that can hold a finding. The cache of
# start positions is keyed by the list's id and checked by identity, so a
# later tree that reuses an id cannot read a stale entry.
#
# Since then a finding whose position is exactly a node's (nearly all of
# them) is found by a look-up in the position index of the module's one walk
# (PyAnalysis._index, Note [One walk]) and its chain is the node's ancestors;
# the descent is kept for the rest (a position between nodes, two nodes of an
# f-string that share one before Python 3.12). Both give the same chain: the
# index keeps the outermost node at a position (the descent's first) and marks
# a position two unrelated nodes share, and each ancestor is checked to
# contain the position as the descent checks it.


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
        JoinedStr = ast.JoinedStr
        for n in self.chain:
            if type(n) is JoinedStr:
                return True
        return False


#: A dotted name of ASCII identifiers, as the proof of a rename reads one (the
#: original may have blanks around its dots; the replacement has none).
_DOTTED_SPAN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[ \t]*\.[ \t]*[A-Za-z_][A-Za-z0-9_]*)*\Z")
_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


@functools.lru_cache(maxsize=1024)
def _safe_name(new: str) -> bool:
    """Whether ``new`` is a dotted name of ASCII identifiers, none a keyword, the
    first no soft keyword (`match.x` at a statement's start reads differently)."""
    if not _DOTTED_NAME.match(new):
        return False
    parts = new.split(".")
    return not (any(keyword.iskeyword(p) for p in parts) or keyword.issoftkeyword(parts[0]))


def _token_safe_rename(text: str, start: int, end: int, node: ast.AST, new: str,
                       in_fstring: "bool | _Located") -> bool:
    """Whether putting the dotted name ``new`` in place of ``node`` (a loaded
    Name or dotted Attribute, exactly at text[start:end]) leaves a file that
    parsed still parsing, so the statement needs no parse again (Note
    [Checking the rewrite]): both are NAME (. NAME)* tokens in the place of a
    primary, which any dotted name may fill, and the characters on either side
    cannot join them. ``in_fstring``: whether ``node`` is inside an f-string, or
    its _Located (asked last: it looks at the whole chain)."""
    if type(getattr(node, "ctx", None)) is not ast.Load:
        return False
    n = node
    while type(n) is ast.Attribute:
        n = n.value  # type: ignore[attr-defined]
    if type(n) is not ast.Name or not _safe_name(new):
        return False
    if not _DOTTED_SPAN.match(text, start, end):
        return False
    if start > 0 and text[start - 1] in _WORD_CHARS:
        return False
    if end < len(text) and (text[end] in _WORD_CHARS or text[end] in "'\""):
        return False
    return not (in_fstring if isinstance(in_fstring, bool) else in_fstring.in_fstring)


def _changed_statements(tree: ast.Module, line_starts: list[int], text_len: int,
                        edits) -> Optional[list[str]]:
    """The fixed text of each group of top-level statements an edit falls in
    (statements that share a line are one group), for the check that the fixed
    file parses;
    None when only a parse of the whole file can tell (Note [Checking the
    rewrite]). ``edits``: the file's anydev._migrate.fix.edits._Edits."""
    if not edits.items:
        return []
    groups: list[list[int]] = []  # [first line, last line], 1-based
    for st in tree.body:
        first = _start_of(st)[0]
        last = st.end_lineno or first  # type: ignore[attr-defined]
        if groups and first <= groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], last)
        else:
            groups.append([first, last])
    n = len(line_starts)
    spans = [(line_starts[a - 1], line_starts[b] if b < n else text_len) for a, b in groups]
    starts = [a for a, _ in spans]
    mine: dict[int, list] = {}
    for e in edits.items:
        k = bisect.bisect_right(starts, e.start) - 1
        if k < 0 or e.end > spans[k][1]:
            return None
        mine.setdefault(k, []).append(e)
    out = []
    for k in sorted(mine):
        if all(e.proven for e in mine[k]):
            continue  # renames that cannot break the statement
        pos, parts = spans[k][0], []
        for e in mine[k]:
            parts.append(edits.text[pos:e.start])
            parts.append(e.text)
            pos = e.end
        parts.append(edits.text[pos:spans[k][1]])
        piece = "".join(parts)
        # a piece ends where a line ends (or the file does), as the group did
        if piece and not piece.endswith(("\n", "\r")) and spans[k][1] != text_len:
            return None
        out.append(piece)
    return out


# Note [Checking the rewrite]
# A fixed Python file is written only if it parses. Parsing it again whole
# cost as much as the first parse; the edits change only the statements they
# fall in, so only those are parsed again, each group of top-level statements
# on its own: a statement is complete (its brackets and strings are closed
# where it ends, and a top-level statement starts a line at column 0), so a
# file whose groups still end with a line break parses exactly when each group
# does, and the unchanged ones parsed before (the parse is the syntax tree's,
# PyCF_ONLY_AST, which checks no rule across statements, such as where a
# `from __future__` import may be). An edit between statements (on a comment
# or blank line) or one that leaves a group without its last line break makes
# the whole file be parsed again, and so does a failure (for the error's line,
# and to let the whole file's parse have the last word). A group is checked by
# building its symbol table (symtable.symtable), which runs the same parser but
# makes no Python object of the syntax tree (40% cheaper than compile with
# PyCF_ONLY_AST); where the symbol table objects (it also refuses what only the
# compiler does, `nonlocal` at module level), compile decides, so the verdict is
# the tree's parse's. Where a further round follows (Note [Rounds]), the fixed
# file is parsed whole instead: the next round needs that tree anyway.
# tests/python/fix/test_fix_check.py checks the verdicts agree on generated
# breaking edits of the fixtures.
#
# A group whose only edits are proven renames is not parsed at all (two thirds
# of the groups on benchmarks/fix's generated tree): an edit that puts a dotted
# name of ASCII identifiers, none a keyword, in place of a loaded Name or
# dotted Attribute whose text is such a name (blanks around its dots at most),
# with no word character, dot or quote on either side and outside f-strings
# (_token_safe_rename), swaps NAME (. NAME)* tokens for NAME (. NAME)* tokens
# in the place of a primary, which any dotted name may fill in Python's
# grammar; the characters around cannot join the new tokens, as they did not
# join the old. The call rewrites that move arguments, the import edits and
# the literal rewrites are checked as before. test_fix_check.py puts every
# name it proves in place of every name and attribute of the fixtures and
# parses the whole file.
