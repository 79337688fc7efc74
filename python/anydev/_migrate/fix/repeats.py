"""Guarded blocks that the rewrites made repeat the statement before them.

    torch.manual_seed(seed)                    torch.manual_seed(seed)
    if torch.cuda.is_available():        ->
        torch.cuda.manual_seed_all(seed)

``torch.cuda.manual_seed_all(seed)`` becomes ``torch.manual_seed(seed)``, and
the block then runs, where there is an accelerator, the call the line before
it has just made: a reviewer deletes it (Note [A block that repeats]).

    new = drop_repeats(original, current)   # bytes; `current` when nothing is dropped
"""

from __future__ import annotations

import ast
from typing import Optional

from .analysis import statements

__all__ = ["drop_repeats"]

#: Calls that set state to their arguments: a second call with the same
#: arguments changes nothing (torch/random.py's manual_seed seeds the CPU and
#: every built backend's generators).
_IDEMPOTENT = frozenset({"manual_seed"})


def _check(test: ast.AST, roots: set[str]) -> bool:
    """`torch.accelerator.is_available()` or `torch.cuda.is_available()`."""
    if not (isinstance(test, ast.Call) and not test.args and not test.keywords and
            isinstance(test.func, ast.Attribute) and test.func.attr == "is_available"):
        return False
    owner = test.func.value
    return isinstance(owner, ast.Attribute) and owner.attr in ("accelerator", "cuda") and \
        isinstance(owner.value, ast.Name) and owner.value.id in roots


def _idempotent(st: ast.AST, roots: set[str]) -> bool:
    """`torch.manual_seed(...)` as a statement, its arguments names or constants."""
    if not isinstance(st, ast.Expr) or not isinstance(st.value, ast.Call):
        return False
    call = st.value
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr in _IDEMPOTENT and \
        isinstance(f.value, ast.Name) and f.value.id in roots and \
        all(isinstance(a, (ast.Name, ast.Constant)) for a in call.args) and \
        all(k.arg is not None and isinstance(k.value, (ast.Name, ast.Constant))
            for k in call.keywords)


def _roots(tree: ast.Module) -> set[str]:
    roots = {"torch"}
    for n in tree.body:
        if isinstance(n, ast.Import):
            roots |= {a.asname for a in n.names if a.name == "torch" and a.asname}
    return roots


def drop_repeats(original: bytes, current: bytes, parsed: Optional[list] = None) -> bytes:
    """``current`` without the guarded blocks the fix made repeat the
    statement before them (Note [A block that repeats]). ``parsed``: the
    (text, tree) pairs of the file's parses (Note [One parse a text] in
    ladders.py): the tree of ``current`` is taken from them, or added."""
    if current == original or b"manual_seed" not in current or b"is_available" not in current:
        return current
    try:
        text = current.decode("utf-8")
        tree = next((t for s, t in reversed(parsed or ()) if s == text), None)
        if tree is None:
            tree = ast.parse(text)
            if parsed is not None:
                parsed.append((text, tree))
    except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return current
    lines = text.splitlines(keepends=True)
    before = set(original.decode("utf-8", "replace").splitlines())
    roots = _roots(tree)
    drop: list[tuple[int, int]] = []
    for node in statements(tree):  # the nodes that hold statement lists
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for prev, st in zip(block, block[1:]):
                span = _repeat(prev, st, roots, lines, before)
                if span is not None:
                    drop.append(span)
    if not drop:
        return current
    for first, last in sorted(drop, reverse=True):
        del lines[first - 1:last]
    return "".join(lines).encode("utf-8")


def _repeat(prev: ast.stmt, st: ast.stmt, roots: set[str], lines: list[str],
            before: set[str]) -> Optional[tuple[int, int]]:
    """(first line, last line) of ``st`` where it is a guarded block that only
    repeats ``prev``, written by the fix and alone on its lines; else None."""
    if not (isinstance(st, ast.If) and not st.orelse and _check(st.test, roots) and
            _idempotent(prev, roots)):
        return None
    want = ast.dump(prev)
    if not all(ast.dump(s) == want for s in st.body):
        return None
    first, last = st.lineno, st.end_lineno or st.lineno
    if prev.end_lineno is None or prev.end_lineno >= first:
        return None  # on one line with the statement before it
    own = lines[first - 1:last]
    if "#" in "".join(own) or not lines[first - 1].lstrip().startswith("if"):
        return None  # a comment (lost with the block) or a `;` before it
    if all(ln.rstrip("\r\n") in before for ln in own):
        return None  # the project's own block, not the fix's
    if st.end_col_offset is not None and lines[last - 1].rstrip("\r\n")[st.end_col_offset:].strip():
        return None  # `; more` after it
    return first, last


# Note [A block that repeats]
# A training script seeds with `torch.manual_seed(seed)` and then, for CUDA,
# `if torch.cuda.is_available(): torch.cuda.manual_seed_all(seed)`. The table's
# replacement for manual_seed_all is torch.manual_seed (which seeds the CPU and
# every built backend: torch/random.py), so the fixed block repeats the line
# before it, under a check: code a maintainer deletes. The fix drops such a
# block when every statement of it is the same call as the statement just
# before the `if`, that call only sets state to its arguments (names and
# constants: nothing it evaluates can have changed), the check is the
# accelerator's or CUDA's (no `else`), and the block is the fix's own (one of
# its lines changed) and alone on its lines without comments. Behaviour: on a
# machine without an accelerator the block did not run; where there is one it
# set the seeds the statement before it had just set.
