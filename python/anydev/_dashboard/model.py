"""The page's data: every finding with the fixer's verdict on it, the
statistics, the baseline's share, the runtime reports joined to the
findings, and the history.

    d = model.build(scan_result, paths=["src"], reports=["run.json"],
                    baseline="anydev-baseline.json", target_torch="2.1")
    html = render.page(d)

Each finding becomes an :class:`Item` whose ``verdict`` says what the next
step is for it:

* ``safe``: ``anydev fix`` rewrites it;
* ``unsafe``: ``anydev fix --unsafe-fixes`` rewrites it (its row says how
  behaviour changes);
* ``refused``: the row has a fix, but the fixer leaves this one (``reason``:
  why, as ``anydev fix`` says it: a target torch without the replacement, a
  guard, an argument it cannot bind, a ``keep`` glob);
* ``manual``: the row has no automatic fix (``reason``: the row's note).

The verdicts come from :func:`anydev.fix.fix_paths` run on the scan's
findings with ``diff=True`` (nothing is written) and ``unsafe=True`` (so
that an unsafe fix is refused only for a reason of its own). Without the
fixer (``fixer=False``) a finding's verdict is its row's fix level.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from anydev import report as _report
from anydev._compat.table import ROWS_BY_CODE
from anydev._migrate import torch_versions as _versions

from . import sites as _sites
from . import stats as _stats
from .history import History

__all__ = ["BaselineSummary", "Dashboard", "Item", "RuntimeSummary", "build", "items_of"]

VERDICTS = ("safe", "unsafe", "refused", "manual")


@dataclass
class Item:
    """One finding as the page shows it."""

    path: str
    line: int
    column: int
    rule: str
    symbol: str
    replacement: str
    fix: str             # the row's fix level: safe, unsafe, none
    category: str        # api, literal, idiom
    kind: str            # the finding's kind: call, reference, import, mock, literal, idiom
    since: Optional[str]  # the first torch release with the replacement
    verdict: str         # safe, unsafe, refused, manual (see the module docstring)
    reason: str = ""     # why refused, or what a human must do
    accepted: bool = False  # recorded in the baseline


@dataclass
class BaselineSummary:
    path: str
    accepted: int        # findings the baseline records
    new: int             # findings it does not: what `anydev scan --baseline` fails on
    gone: int            # entries of the baseline no finding matches any more (fixed)
    by_module: dict[str, int] = field(default_factory=dict)  # accepted, per module


@dataclass
class RuntimeSummary:
    paths: list[str]
    processes: int
    calls: int           # legacy calls counted
    sites: int           # call sites that ran


@dataclass
class Dashboard:
    """Everything the page shows."""

    title: str
    root: str            # the folder the paths are shown relative to
    generated: str       # ISO 8601, UTC
    version: str
    paths: list[str]
    items: list[Item]
    stats: _stats.Statistics
    errors: list[tuple[str, Optional[int], str]] = field(default_factory=list)
    fixer: bool = False  # whether the verdicts are the fixer's
    reasons: list[tuple[str, int, str]] = field(default_factory=list)  # (kind, count, example)
    baseline: Optional[BaselineSummary] = None
    runtime: Optional[RuntimeSummary] = None
    sites: Optional[list[_sites.Site]] = None
    history: Optional[History] = None

    @property
    def verdicts(self) -> Counter:
        return Counter(i.verdict for i in self.items)


def _key(f: Any) -> tuple:
    return (f.path, f.start, f.end, f.rule)


def items_of(findings: Sequence[Any], verdicts: Optional[dict] = None) -> list[Item]:
    """Items of ``findings``, with the verdicts given by finding key ((path,
    start, end, rule) -> (verdict, reason)), else each row's fix level."""
    out = []
    for f in findings:
        row = ROWS_BY_CODE.get(f.rule)
        fix = row.fix if row is not None else "none"
        since = row.since if row is not None and fix != "none" else None
        got = verdicts.get(_key(f)) if verdicts is not None else None
        if got is None:
            got = (fix if fix != "none" else "manual",
                   "" if fix != "none" else _manual_reason(row))
        out.append(Item(f.path, f.line, f.column, f.rule, f.symbol, f.replacement, fix,
                        _stats.category_of(row), f.kind, since, got[0], got[1]))
    return out


def _manual_reason(row: Any) -> str:
    if row is None:
        return "not a rule of this anydev's table"
    return f"no automatic fix: {row.note}" if row.note else "no automatic fix"


def _fixer_verdicts(findings: Sequence[Any], paths: Sequence[str], scanned: Any,
                    target_torch: Optional[str], keep: Sequence[str],
                    jobs: Optional[int]) -> dict:
    from anydev import fix as _fix

    result = _fix.fix_paths(list(paths), diff=True, unsafe=True, scanned=scanned,
                            target_torch=target_torch, keep=keep, jobs=jobs)
    out: dict[tuple, tuple[str, str]] = {}
    for fr in result.files:
        for f in fr.applied:
            row = ROWS_BY_CODE.get(f.rule)
            level = row.fix if row is not None else "none"
            if fr.error is not None:
                out[_key(f)] = ("refused", fr.error)
            elif level in ("safe", "unsafe"):
                out[_key(f)] = (level, "")
        for f, why in fr.skipped:
            row = ROWS_BY_CODE.get(f.rule)
            if row is None or row.fix == "none":
                out[_key(f)] = ("manual", _manual_reason(row))
            else:
                out[_key(f)] = ("refused", why)
    return out


# A refusal's text names the code it is about (`x`, 'name', line 12); its
# kind is the text without them, so that the same reason groups. Versions
# stay: "needs torch >= 2.7" and "needs torch >= 2.9" are two steps.
_SPECIFIC = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|\blines? \d+(?:-\d+)?")


def reason_kind(reason: str) -> str:
    """A refusal reason with its specifics (quoted names, line numbers) left out."""
    return re.sub(r"\s+", " ", _SPECIFIC.sub("…", reason)).strip()


def _reasons(items: Sequence[Item]) -> list[tuple[str, int, str]]:
    """(kind, count, an example) of the refusal reasons, most first."""
    count: Counter = Counter()
    example: dict[str, str] = {}
    for i in items:
        if i.verdict == "refused":
            k = reason_kind(i.reason)
            count[k] += 1
            example.setdefault(k, i.reason)
    return [(k, n, example[k]) for k, n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))]


def _baseline(path: str, findings: Sequence[Any], items: list[Item]) -> BaselineSummary:
    from anydev._migrate.formats import fingerprint_keys, read_baseline

    known = read_baseline(path)  # UsageError names the file and the problem
    base = os.path.dirname(os.path.abspath(path))
    keys = fingerprint_keys(findings, relative_to=base)
    matched = set()
    per: Counter = Counter()
    from anydev._migrate.literals import module_of

    for item, k in zip(items, keys):
        if k in known:
            item.accepted = True
            matched.add(k)
            per[module_of(item.path)] += 1
    accepted = sum(per.values())
    return BaselineSummary(path, accepted, len(items) - accepted, len(known - matched),
                           dict(per))


def _target(target_torch: Optional[str], paths: Sequence[str]) -> tuple[Optional[str], str]:
    """The floor of the unlock counts: the one given, else what the project of
    the first path declares, else none (the newest release)."""
    if target_torch is not None:
        return target_torch, "--target-torch or [tool.anydev] target-torch"
    first = paths[0] if paths else "."
    probe = os.path.join(first, "_") if os.path.isdir(first) else first
    t = _versions.project_target(probe)
    if t is not None:  # its source names the project's file: shown relative to here
        return t.text, t.source.replace(os.getcwd() + os.sep, "")
    return None, "no torch declared: the newest release the table knows"


def _distinct(reports: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reports less those whose processes are all in an earlier one (the
    same file given twice), as :func:`anydev.report.merge` counts them; the
    reports stay apart so that each call keeps its own record (a CUDA-only
    marker of a later report would be lost in the merged one)."""
    seen: set = set()
    out = []
    for r in reports:
        ids = {p["id"] for p in r["processes"] if isinstance(p, dict) and
               isinstance(p.get("id"), str)}
        if ids and ids <= seen:
            continue
        seen |= ids
        out.append(r)
    return out


def build(scanned: Any, *, paths: Sequence[str], title: Optional[str] = None,
          reports: Sequence[str] = (), baseline: Optional[str] = None,
          target_torch: Optional[str] = None, keep: Sequence[str] = (),
          fixer: bool = True, jobs: Optional[int] = None,
          history: Optional[History] = None, root: Optional[str] = None,
          version: str = "", now: Optional[Callable[[], _dt.datetime]] = None) -> Dashboard:
    """The dashboard of a scan (an :class:`anydev.scan.ScanResult` of
    ``paths``). ``reports``: runtime report files (JSON; ReportError names a
    bad one); ``baseline``: a baseline file (UsageError of
    anydev._migrate.output for a bad one); ``target_torch``/``keep``: as for
    ``anydev fix``; ``fixer=False``: verdicts from the rows alone (the fixer
    is not run); ``history``: :func:`anydev._dashboard.history.walk`'s."""
    findings = list(scanned.findings)
    root = os.path.abspath(root or os.getcwd())
    verdicts = _fixer_verdicts(findings, paths, scanned, target_torch, keep, jobs) \
        if fixer and findings else None
    items = items_of(findings, verdicts)
    floor, source = _target(target_torch, paths)
    st = _stats.statistics(findings, files=scanned.files, nbytes=scanned.bytes,
                           target=floor, target_source=source)
    d = Dashboard(
        title=title or f"anydev: {os.path.basename(root) or root}",
        root=root,
        generated=(now() if now else _dt.datetime.now(_dt.timezone.utc)).isoformat(
            timespec="seconds").replace("+00:00", "Z"),
        version=version, paths=list(paths), items=items, stats=st,
        errors=[(e.path, e.line, e.message) for e in scanned.errors],
        fixer=verdicts is not None, history=history)
    d.reasons = _reasons(items)
    if baseline:
        d.baseline = _baseline(baseline, findings, items)
    if reports:
        loaded = [_report.load(p) for p in reports]
        merged = _report.merge(loaded)  # ReportError for reports that share some processes
        d.sites = _sites.join(_distinct(loaded), items, root)
        d.runtime = RuntimeSummary(list(reports), len(merged["processes"]),
                                   sum(c["count"] for c in merged["calls"]),
                                   len(merged["calls"]))
    return d
