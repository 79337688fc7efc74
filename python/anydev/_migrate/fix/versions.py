"""The refusals decided before any rewrite is tried: findings whose
replacement is newer than the target torch (anydev._migrate.torch_versions), files a
``[tool.anydev] keep`` glob names, and mock targets (moved by the tree-wide
pass of anydev._migrate.fix.mocks, never file by file)."""

from __future__ import annotations

import os
import re
from typing import Optional, Sequence

from anydev._common import config as _config
from anydev._migrate import torch_versions as _versions
from anydev import scan as _scan
from .rows import _row_of


#: (row, target) -> whether the target has the row's replacement: one check per
#: row and target, not per finding.
_VERDICTS: dict[tuple, Optional[str]] = {}


def _target_refusals(findings: Sequence[_scan.Finding], target: Optional[_versions.Target],
                     path: str, keep: Sequence[str], frozen: Optional[dict[str, str]] = None,
                     data: bytes = b""
                     ) -> tuple[list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    """The findings the language fixers may consider, and those the target
    torch, a `keep` glob, a mock that cannot move (``frozen``: symbol -> why)
    or a project's own device marker on the line (``data``: the file's bytes)
    rules out (with why)."""
    rel = path.replace(os.sep, "/")
    marked = _marked_lines(data) if data else {}
    kept_by = next((g for g in keep if _config.Glob(g, "").match(rel)), None)
    todo: list[_scan.Finding] = []
    out: list[tuple[_scan.Finding, str]] = []
    target = target or _versions.DEFAULT
    for f in findings:
        if kept_by is not None:
            out.append((f, f"kept: {rel} matches `keep = [\"{kept_by}\"]` of [tool.anydev]"))
            continue
        if f.kind == "mock":
            out.append((f, "a mock target: rewritten with the code it patches by `anydev fix` on "
                           "the whole tree (fix_paths), not file by file"))
            continue
        if frozen and f.symbol in frozen and f.kind != "import":
            out.append((f, frozen[f.symbol]))
            continue
        if marked and f.line in marked:
            out.append((f, f"kept: the line carries the project's own `{marked[f.line]}` marker, "
                           "which says this code is meant to stay device-specific"))
            continue
        row = _row_of(f)
        why = None
        if row is not None and row.status in ("deprecated", "literal") and row.fix != "none":
            key = (row.code, row.since, row.replacement, target.version)
            if key in _VERDICTS:
                why = _VERDICTS[key]
            else:
                why = _VERDICTS[key] = _versions.needs(row, target)
        if why is not None:
            out.append((f, why))
        else:
            todo.append(f)
    return todo, out


#: Comments by which a project says a line is meant to stay device-specific
#: (DeepSpeed's `#ignore-cuda`, which its own check of `torch.cuda` honours).
_MARKER = re.compile(rb"#[ \t]*((?:ignore|keep|allow)[-_](?:cuda|xpu|device)|cuda[-_]only)\b",
                     re.IGNORECASE)


def _marked_lines(data: bytes) -> dict[int, str]:
    """line (1-based) -> the device marker its comment carries."""
    if b"cuda" not in data and b"CUDA" not in data and b"xpu" not in data and \
            b"device" not in data:
        return {}
    out: dict[int, str] = {}
    for m in _MARKER.finditer(data):
        line = data.count(b"\n", 0, m.start()) + 1
        out[line] = m.group(0).decode("ascii", "replace")
    return out


# Note [Project markers]
# DeepSpeed asks its contributors to write `#ignore-cuda` on a line whose
# `torch.cuda` is meant to be CUDA's (scripts/check-torchcuda.py fails on any
# other). Such a line is the project saying rule 4 itself: its findings are
# left, as a device home's are, without blocking the rest of their function.
