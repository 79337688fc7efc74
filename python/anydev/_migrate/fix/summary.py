"""``anydev fix --summary FILE.md``: a pull-request description of a fix.

    text = summary.markdown(result, unsafe=False, diff=False, argv=["src/"])

Per file, what changed (each rewrite's rule, from what to what, its level and
the proof behind it: the differential proof of the table row, or for an
availability check the evidence that the code it decides is generic), the
torch the result needs and where the target came from, and what was left
with why (grouped by reason, so a reviewer reads each reason once).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from typing import Sequence

from anydev._compat import table as _table
from .guards import _GUARD_REPLACEMENTS
from .rows import _row_of

__all__ = ["markdown"]

#: How many places are listed under one reason before "and N more".
_PLACES = 8


def _level(f) -> str:
    row = _row_of(f)
    if row is None:
        return "?"
    return row.fix if row.status != "literal" else "unsafe"


def _proof(f) -> str:
    row = _row_of(f)
    if row is None:
        return ""
    if row.replacement in _GUARD_REPLACEMENTS and row.fix == "safe":
        return ("the code the check decides was shown device-generic (its branch, the code "
                "after it, the names it sets; Note [Safe on every accelerator])")
    if row.status == "literal":
        return f"behaves differently on other accelerators, by design (`anydev rule {row.code}`)"
    proof = getattr(_table, "PROOFS", {}).get(row.code)
    return proof or f"`anydev rule {row.code}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(result, *, unsafe: bool, diff: bool, argv: Sequence[str] = ()) -> str:
    """The Markdown text of a pull-request description of ``result`` (an
    anydev.fix.FixResult)."""
    out: list[str] = []
    applied = [(fr.path, f) for fr in result.files if fr.error is None for f in fr.applied]
    changed = [fr for fr in result.files if fr.changed]
    out.append("# Migrate device-specific PyTorch calls to the device-generic API")
    out.append("")
    cmd = "anydev fix" + ("".join(f" {a}" for a in argv) if argv else "")
    verb = "would rewrite" if diff else "rewrote"
    n_safe = sum(1 for _, f in applied if _level(f) == "safe")
    out.append(f"`{cmd}` {verb} {len(applied)} finding(s) in {len(changed)} file(s): "
               f"{n_safe} safe, {len(applied) - n_safe} unsafe"
               + (" (asked for with `--unsafe-fixes`)" if unsafe else "") + ".")
    out.append("")
    for t in getattr(result, "targets", {}).values():
        where = f"from {t.source}" if t.declared else \
            "no torch declared: the oldest release the table knows"
        out.append(f"- Target torch: {t.text} ({where}).")
    if result.needs_torch:
        out.append(f"- The fixed code needs torch >= {result.needs_torch}.")
    out.append("- Safe: the same behaviour on a machine without an accelerator and on a CUDA "
               "machine, and correct on another accelerator (the row's differential proof on "
               "the real PyTorch builds; for an availability check, the code it decides shown "
               "device-generic). Unsafe: a behaviour change the row's note describes.")
    out.append("")
    if changed:
        out.append("## Changes")
        out.append("")
    by_file: "OrderedDict[str, list]" = OrderedDict()
    for path, f in applied:
        by_file.setdefault(path, []).append(f)
    for path, fs in by_file.items():
        out.append(f"### `{path}`")
        out.append("")
        out.append("| line | rule | from | to | level | proof |")
        out.append("|---|---|---|---|---|---|")
        for f in sorted(fs, key=lambda f: (f.line, f.column)):
            old = f.text.splitlines()[0][:60] if f.text else f.symbol
            out.append(f"| {f.line} | {f.rule} | `{_cell(old)}` | `{_cell(f.replacement or '')}` "
                       f"| {_level(f)} | {_cell(_proof(f))} |")
        out.append("")
    left = result.remaining
    if left:
        out.append(f"## Left as it is ({len(left)})")
        out.append("")
        groups: "OrderedDict[str, list]" = OrderedDict()
        for f, why in left:
            groups.setdefault(_reason_key(why), []).append((f, why))
        for key, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            places = ", ".join(f"`{os.path.normpath(f.path)}:{f.line}` {f.rule}"
                               for f, _ in items[:_PLACES])
            more = f", and {len(items) - _PLACES} more" if len(items) > _PLACES else ""
            out.append(f"- **{len(items)}** × {_cell(items[0][1])} ({places}{more})")
        out.append("")
    return "\n".join(out)


def _reason_key(why: str) -> str:
    """A reason without what varies between its findings (line numbers), so
    the same reason groups."""
    import re  # noqa: PLC0415

    return re.sub(r"\(line \d+\)|line \d+|:\d+\)", "", why)
