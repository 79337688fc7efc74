"""Each finding's fix as text edits: what ``anydev scan --format json``
includes (``edits``), and what an editor's code action applies, equal to what
``anydev fix`` writes for that finding alone.

    edits, why_not = finding_edits(data, "train.py", finding, target=target)
    # edits: [{"line": 4, "column": 5, "end_line": 4, "end_column": 27,
    #          "start": 57, "end": 79, "content": "torch.accelerator.synchronize"}]
    # or None and the reason the fixer gives ("needs torch >= 2.9 (target 2.1)")

A finding's fix is :func:`anydev.fix.fix_source` of the file with that
finding alone (its first round; the file parsed once for all its findings) (the unsafe fixes allowed where the rule's fix is unsafe, as
``--unsafe-fixes`` would), one round: what the rewrite writes itself (a
template's ``"cuda"``, which ``anydev fix --unsafe-fixes`` rewrites in a
further round, is a finding of its own after it). The edits are the
difference of the two texts, line blocks then characters: a change of one
call is one edit, an ``import torch`` the rewrite adds another. Positions
are as a finding's (1-based lines, columns in code points, the end
exclusive), ``start``/``end`` byte offsets of the original file.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, Optional, Sequence

__all__ = ["apply_edits", "file_edits", "finding_edits", "text_edits"]


def finding_edits(data: bytes, path: str, finding, *, target=None, keep: Sequence[str] = (),
                  parsed=None) -> tuple[Optional[list[dict]], Optional[str]]:
    """(edits, None) where ``anydev fix`` rewrites ``finding`` (of the file
    whose bytes are ``data``, shown as ``path``); (None, why) where it does
    not: the rule has no fix, the target torch lacks the replacement, the
    file is kept, the call cannot be rewritten where it stands. ``parsed``:
    :func:`parse` of ``data``, for several findings of one file."""
    if finding.fix == "none":
        return None, "the rule has no automatic fix"
    from anydev._migrate import torch_versions as _versions
    from anydev._migrate.fix import engine

    if isinstance(target, str):
        target = _versions.resolve_target(target)
    try:
        # one round of fix_source (what the rewrite writes itself), on the
        # file's syntax tree where the caller parsed it (no rewrite changes
        # the tree: python_api._fix_python)
        new, applied, skipped, _tree = engine._fix_once(
            data, path, [finding], unsafe=finding.fix == "unsafe", target_torch=target,
            keep=keep, tree=parsed if parsed is not False else None, more=None)
    except ValueError as e:
        return None, str(e)
    if not applied or new == data:
        why = skipped[0][1] if skipped else "the fixer leaves it"
        return None, why
    return text_edits(data, new), None


def parse(data: bytes, path: str):
    """The (text, syntax tree) the fixer works on for a Python file, or None
    (not Python, or it does not parse: each fix then says why)."""
    import ast

    from anydev import scan as _scan
    from anydev._migrate.fix.text import _Text

    if (_scan.language_of(path) or "python") != "python":
        return None
    try:
        text = _Text(data, "python", strict=True).text
        return text, ast.parse(text, filename=path)
    except Exception:  # SyntaxError, ValueError, _FileError (not UTF-8): each fix says why
        return None


def file_edits(data: bytes, path: str, findings: Sequence, *, target=None,
               keep: Sequence[str] = ()) -> list[tuple[Optional[list[dict]], Optional[str]]]:
    """finding_edits of each of ``findings`` (all of one file), in their
    order: each finding fixed alone, so that each edit set applies on its own
    (as a code action applies it). Fixed together, a finding's rewrite can
    depend on the others' (a guard that refuses a check whose guarded code
    stays CUDA-specific allows it where that code is migrated in the same
    run), so the file's joint fix is no sum of these."""
    parsed = parse(data, path) if len(findings) > 1 else None
    return [finding_edits(data, path, f, target=target, keep=keep, parsed=parsed)
            for f in findings]


def _no_further_round(findings: list) -> list:
    return []


def text_edits(old: bytes, new: bytes) -> list[dict]:
    """The edits that turn ``old`` into ``new`` (both UTF-8; a byte that is
    not stays as it is), smallest first by line blocks, then by characters
    within a block."""
    from difflib import SequenceMatcher

    a = old.decode("utf-8", "surrogateescape")
    b = new.decode("utf-8", "surrogateescape")
    # the common head and tail, in whole lines
    la, lb = a.splitlines(keepends=True), b.splitlines(keepends=True)
    head = 0
    while head < min(len(la), len(lb)) and la[head] == lb[head]:
        head += 1
    tail = 0
    while tail < min(len(la), len(lb)) - head and la[-1 - tail] == lb[-1 - tail]:
        tail += 1
    ma, mb = la[head:len(la) - tail], lb[head:len(lb) - tail]
    starts = [0]  # character offset of each line of `a`
    for line in la:
        starts.append(starts[-1] + len(line))
    edits: list[dict] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, ma, mb, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        x = "".join(ma[i1:i2])
        y = "".join(mb[j1:j2])
        # the characters the two blocks share at their ends are no edit
        p = 0
        while p < min(len(x), len(y)) and x[p] == y[p]:
            p += 1
        q = 0
        while q < min(len(x), len(y)) - p and x[-1 - q] == y[-1 - q]:
            q += 1
        at = starts[head + i1] + p
        edits.append(_edit(a, starts, at, at + len(x) - p - q, y[p:len(y) - q]))
    return edits


def _edit(a: str, starts: list, lo: int, hi: int, content: str) -> dict:
    from bisect import bisect_right

    def pos(offset: int) -> tuple[int, int]:
        i = bisect_right(starts, offset) - 1
        if i >= len(starts) - 1 and starts[-1] == offset and i > 0 and \
                not a[starts[i - 1]:offset].endswith(("\n", "\r")):
            i -= 1  # the end of a last line without a line break
        return i + 1, offset - starts[i] + 1

    line, col = pos(lo)
    end_line, end_col = pos(hi)
    start_b = len(a[:lo].encode("utf-8", "surrogateescape"))
    end_b = start_b + len(a[lo:hi].encode("utf-8", "surrogateescape"))
    return {"line": line, "column": col, "end_line": end_line, "end_column": end_col,
            "start": start_b, "end": end_b, "content": content}


def apply_edits(old: bytes, edits: Sequence[dict]) -> bytes:
    """``old`` with ``edits`` applied by their byte offsets (for tests and
    for clients that check an edit set)."""
    out = old
    for e in sorted(edits, key=lambda e: e["start"], reverse=True):
        out = out[:e["start"]] + e["content"].encode("utf-8", "surrogateescape") + out[e["end"]:]
    return out
