"""Device literals and idioms (the AD9xx rules of compat_map/literals.toml) for
the command line: their part of ``anydev scan --statistics`` and of ``anydev
rule``.

A finding is an *API* finding when its row is a legacy entry point of the table
(python.toml, xpu.toml, cpp.toml) and a *literal* finding when its row is one of
literals.toml ("cuda" in a device position, the availability idiom, .cuda(),
.is_cuda, "nccl", at::kCUDA): the first half is what forwarders and renames
migrate, the second what keeps code on CUDA after they have.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Iterable

__all__ = ["family", "module_of", "statistics_lines", "examples"]


def family(row) -> str:
    """"literal" for a row of literals.toml, else "api"."""
    return "literal" if row.status == "literal" else "api"


def module_of(path: str) -> str:
    """The module a finding's file belongs to, for the statistics: its folder
    ("." for a file at the top)."""
    folder = os.path.dirname(path.replace(os.sep, "/"))
    return folder or "."


def statistics_lines(findings: Iterable, by_code: dict) -> list[str]:
    """The "By module" section: per folder, the API findings and the literal
    and idiom findings, most findings first."""
    api: Counter = Counter()
    lit: Counter = Counter()
    for f in findings:
        row = by_code.get(f.rule)
        (lit if row is not None and family(row) == "literal" else api)[module_of(f.path)] += 1
    modules = sorted(set(api) | set(lit), key=lambda m: (-(api[m] + lit[m]), m))
    out = ["By module: API references | device literals and idioms:"]
    if not modules:
        return out + ["  (none)"]
    wa = max(3, max(len(str(api[m])) for m in modules))
    wl = max(3, max(len(str(lit[m])) for m in modules))
    out.append(f"  {'api':>{wa}}  {'lit':>{wl}}  module")
    for m in modules:
        out.append(f"  {api[m]:>{wa}}  {lit[m]:>{wl}}  {m}")
    out.append(f"  {sum(api.values()):>{wa}}  {sum(lit.values()):>{wl}}  (all)")
    return out


def examples(row) -> tuple[list[str], list[str]]:
    """Before/after examples of a literal row, from its `example` key."""
    if len(row.example) == 2:
        return [row.example[0]], [row.example[1]]
    return [], []
