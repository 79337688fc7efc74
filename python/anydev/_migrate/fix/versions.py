"""The refusals decided before any rewrite is tried: findings whose
replacement is newer than the target torch (anydev._migrate.torch_versions), files a
``[tool.anydev] keep`` glob names, and mock targets (moved by the tree-wide
pass of anydev._migrate.fix.mocks, never file by file)."""

from __future__ import annotations

import os
from typing import Optional, Sequence

from anydev._common import config as _config
from anydev._migrate import torch_versions as _versions
from anydev import scan as _scan
from .rows import _row_of


#: (row, target) -> whether the target has the row's replacement: one check per
#: row and target, not per finding.
_VERDICTS: dict[tuple, Optional[str]] = {}


def _target_refusals(findings: Sequence[_scan.Finding], target: Optional[_versions.Target],
                     path: str, keep: Sequence[str]
                     ) -> tuple[list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    """The findings the language fixers may consider, and those the target
    torch or a `keep` glob rules out (with why)."""
    rel = path.replace(os.sep, "/")
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
