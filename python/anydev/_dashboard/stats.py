"""The statistics of a scan: one model for every view of the counts.

    from anydev._dashboard import stats
    s = stats.statistics(result.findings, files=result.files, nbytes=result.bytes,
                         target="2.1")
    s.by_module["src/pkg"].api        # API references in that folder
    s.unlocks[0]                      # Unlock(torch="2.5", safe=12, unsafe=3, ...)
    json.dumps(s.to_dict())           # the JSON form (SCHEMA, VERSION below)

Each finding is counted once in each breakdown:

* ``category``: ``api`` (a legacy entry point of the table: python.toml,
  xpu.toml, cpp.toml), ``literal`` (a device literal: ``"cuda"`` in a device
  position, ``.cuda()``, ``"nccl"``) or ``idiom`` (the availability idiom),
  from the finding's row (literals.toml's ``kind``);
* ``fix``: the row's fix level, ``safe``, ``unsafe`` or ``none``;
* ``kind``: the finding's own kind (``call``, ``reference``, ``import``,
  ``mock``, ``literal``, ``idiom``);
* ``module``: the folder of its file (``.`` at the top), as ``anydev scan
  --statistics`` groups them (:func:`anydev._migrate.literals.module_of`);
  ``file``: the file;
* ``release``: the first PyTorch release with the row's replacement (the
  row's ``since``; ``main`` where no release has it yet, ``None`` for a row
  without a fix).

``unlocks`` answers "what does raising the floor cost and bring": for each
release newer than the target, how many fixes the table allows there and not
at the target (``safe``: applied by ``anydev fix``; ``unsafe``: by ``anydev
fix --unsafe-fixes``), and the running totals. It is the table's view; the
fixer may still refuse a finding for a reason of its own code (a guard, an
argument it cannot bind): :mod:`anydev._dashboard.model` adds its verdicts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from anydev._compat.table import NEWEST_TORCH, ROWS_BY_CODE
from anydev._migrate import torch_versions as _versions
from anydev._migrate.literals import module_of

__all__ = ["CATEGORIES", "Counts", "FIX_LEVELS", "SCHEMA", "Statistics", "Unlock", "VERSION",
           "category_of", "release_key", "statistics"]

SCHEMA = "anydev-statistics"
VERSION = 1
CATEGORIES = ("api", "literal", "idiom")
FIX_LEVELS = ("safe", "unsafe", "none")


def category_of(row: Any) -> str:
    """"api", "literal" or "idiom" for a row of the table (None: "api")."""
    if row is not None and row.status == "literal":
        return "idiom" if row.kind == "idiom" else "literal"
    return "api"


def release_key(release: str) -> tuple:
    """A sort key of release names: "2.6" < "2.10" < "main"."""
    if release == "main":
        return (1, (0, 0))
    return (0, _versions.parse_version(release))


@dataclass
class Counts:
    """Findings of one group, by category and by fix level."""

    total: int = 0
    api: int = 0
    literal: int = 0
    idiom: int = 0
    safe: int = 0
    unsafe: int = 0
    none: int = 0

    def add(self, category: str, fix: str, n: int = 1) -> None:
        self.total += n
        setattr(self, category, getattr(self, category) + n)
        setattr(self, fix, getattr(self, fix) + n)

    def to_dict(self) -> dict[str, int]:
        return {"total": self.total, "api": self.api, "literal": self.literal,
                "idiom": self.idiom, "safe": self.safe, "unsafe": self.unsafe,
                "none": self.none}


@dataclass
class Unlock:
    """What raising the floor (the target torch) to ``torch`` brings: the
    fixes of findings whose replacement first appears there (``safe``,
    ``unsafe``), and all those allowed there and not at the target
    (``more_safe``, ``more_unsafe``: the running totals)."""

    torch: str
    safe: int
    unsafe: int
    more_safe: int
    more_unsafe: int

    def to_dict(self) -> dict[str, Any]:
        return {"torch": self.torch, "safe": self.safe, "unsafe": self.unsafe,
                "more_safe": self.more_safe, "more_unsafe": self.more_unsafe}


@dataclass
class RuleCount:
    """One rule's findings, with what the table says of it."""

    code: str
    count: int
    legacy: str
    replacement: str
    fix: str
    category: str
    since: Optional[str]

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "count": self.count, "legacy": self.legacy,
                "replacement": self.replacement, "fix": self.fix,
                "category": self.category, "since": self.since}


@dataclass
class Statistics:
    """The counts of a set of findings (see the module docstring)."""

    total: Counts = field(default_factory=Counts)
    by_module: dict[str, Counts] = field(default_factory=dict)
    by_file: dict[str, Counts] = field(default_factory=dict)
    by_rule: dict[str, RuleCount] = field(default_factory=dict)
    by_kind: dict[str, int] = field(default_factory=dict)
    by_release: dict[str, Counts] = field(default_factory=dict)  # "2.6", "main"
    #: the floor the unlocks are counted from ("2.1"), where it came from
    target: str = NEWEST_TORCH
    target_source: str = "default"
    #: fixes the table allows at the target: {"safe": n, "unsafe": n}
    at_target: dict[str, int] = field(default_factory=dict)
    unlocks: list[Unlock] = field(default_factory=list)
    files_scanned: int = 0
    bytes_scanned: int = 0

    @property
    def files(self) -> int:
        """Files with at least one finding."""
        return len(self.by_file)

    def unlock(self, torch: str) -> Optional[Unlock]:
        """The Unlock of raising the floor to ``torch`` ("2.6"); None when it is
        not above the target or nothing is unlocked by then."""
        best = None
        v = _versions.parse_version(torch)
        for u in self.unlocks:
            if u.torch != "main" and _versions.parse_version(u.torch) <= v:
                best = u
        return best

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"format": "anydev-statistics", "version": 1, ...}``,
        every breakdown sorted (most findings first, then by name)."""
        def counts(d: dict[str, Counts]) -> list[dict[str, Any]]:
            items = sorted(d.items(), key=lambda kv: (-kv[1].total, kv[0]))
            return [dict(name=k, **v.to_dict()) for k, v in items]

        return {
            "format": SCHEMA,
            "version": VERSION,
            "total": self.total.to_dict(),
            "files": self.files,
            "files_scanned": self.files_scanned,
            "bytes_scanned": self.bytes_scanned,
            "by_module": counts(self.by_module),
            "by_file": counts(self.by_file),
            "by_rule": [r.to_dict() for r in sorted(self.by_rule.values(),
                                                     key=lambda r: (-r.count, r.code))],
            "by_kind": dict(sorted(self.by_kind.items(), key=lambda kv: (-kv[1], kv[0]))),
            "by_release": [dict(torch=k, **v.to_dict()) for k, v in
                           sorted(self.by_release.items(), key=lambda kv: release_key(kv[0]))],
            "target": {"torch": self.target, "source": self.target_source,
                       "fixable": dict(self.at_target)},
            "unlocks": [u.to_dict() for u in self.unlocks],
        }


def statistics(findings: Iterable[Any], *, files: int = 0, nbytes: int = 0,
               target: Optional[str] = None, target_source: Optional[str] = None,
               rows: Optional[dict[str, Any]] = None) -> Statistics:
    """Counts ``findings`` (:class:`anydev.scan.Finding`, or anything with
    ``path``, ``rule`` and ``kind``). ``files``/``nbytes``: what the scan
    read. ``target``: the floor the unlocks are counted from ("2.1"; default:
    the newest release the table knows, where nothing is left to unlock);
    VersionError for a malformed one. ``rows``: the table by code (default:
    the compat table)."""
    rows = ROWS_BY_CODE if rows is None else rows
    if target is None:
        floor, source = _versions.NEWEST, target_source or "default"
    else:
        floor, source = _versions.parse_version(target), target_source or "--target-torch"
    s = Statistics(target=_versions.fmt(floor), target_source=source, files_scanned=files,
                   bytes_scanned=nbytes)
    kinds: Counter = Counter()
    # The findings come by file, and share rules: a rule's row is read once,
    # a file's and its module's counts are looked up once per run of the file.
    last_path: Optional[str] = None
    last_file = last_module = Counts()  # replaced at the first finding
    info: dict[str, tuple[str, str, Optional[str], Any]] = {}
    for f in findings:
        code = f.rule
        got = info.get(code)
        if got is None:
            row = rows.get(code)
            fix = row.fix if row is not None and row.fix in FIX_LEVELS else "none"
            since = row.since if row is not None and fix != "none" and row.since else None
            got = info[code] = (category_of(row), fix, since, row)
            s.by_rule[code] = RuleCount(code, 0, row.legacy if row else code,
                                        row.replacement if row else "", fix, got[0], since)
        cat, fix, since, row = got
        s.total.add(cat, fix)
        s.by_rule[code].count += 1
        kinds[f.kind] += 1
        if f.path != last_path:
            last_path = f.path
            last_file = s.by_file.setdefault(f.path, Counts())
            last_module = s.by_module.setdefault(module_of(f.path), Counts())
        last_file.add(cat, fix)
        last_module.add(cat, fix)
        if since is not None:
            r = s.by_release.get(since)
            if r is None:
                r = s.by_release[since] = Counts()
            r.add(cat, fix)
    s.by_kind = dict(kinds)
    s.at_target, s.unlocks = _unlocks(s.by_release, floor)
    return s


def _unlocks(by_release: dict[str, Counts],
             floor: tuple[int, int]) -> tuple[dict[str, int], list[Unlock]]:
    at = {"safe": 0, "unsafe": 0}
    out: list[Unlock] = []
    more_safe = more_unsafe = 0
    for release in sorted(by_release, key=release_key):
        c = by_release[release]
        if release != "main" and _versions.parse_version(release) <= floor:
            at["safe"] += c.safe
            at["unsafe"] += c.unsafe
            continue
        if release == "main":  # no release has these yet: nothing a floor unlocks
            continue
        more_safe += c.safe
        more_unsafe += c.unsafe
        out.append(Unlock(release, c.safe, c.unsafe, more_safe, more_unsafe))
    return at, out
