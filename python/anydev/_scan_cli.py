"""``anydev scan`` and ``anydev rule``: the command-line side of
:mod:`anydev.scan` (configuration, baselines, output formats, statistics).

Exit codes of ``anydev scan``: 0 no findings (after the baseline and
suppressions), 1 findings, 2 a usage, configuration or I/O error (a path that
does not exist, a file that cannot be read, a bad ``[tool.anydev]``, an output
that cannot be written). A file the scanner cannot parse is reported on stderr
(and in the ``errors`` of JSON and SARIF) and does not change the exit code.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Optional, Sequence

from . import scan as _scan
from ._files import replace_atomically

FORMATS = ("text", "json", "sarif", "github")
CONFIG_KEYS = ("select", "ignore", "exclude", "baseline", "target-torch", "keep")
# Keys of [tool.anydev] that belong to the runtime policy (anydev.compat).
RUNTIME_KEYS = ("legacy", "legacy-override")
BASELINE_VERSION = 1
INFORMATION_URI = "https://github.com/anydev/anydev"


class UsageError(Exception):
    """Exit 2 with this message."""


# --- configuration -------------------------------------------------------------


@dataclass
class Config:
    path: Optional[str] = None  # the pyproject.toml it came from
    select: Optional[list[str]] = None
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)  # relative to the pyproject's folder
    baseline: Optional[str] = None  # absolute
    target_torch: Optional[str] = None  # "2.1": the oldest PyTorch the code must run on
    keep: list[str] = field(default_factory=list)  # globs relative to the pyproject's folder


def find_pyproject(start: str) -> Optional[str]:
    """Returns the nearest pyproject.toml at or above `start` that has a
    [tool.anydev] table, or None."""
    d = os.path.abspath(start)
    while True:
        p = os.path.join(d, "pyproject.toml")
        if os.path.isfile(p):
            try:
                with open(p, "rb") as f:
                    raw = f.read()
            except OSError as e:
                raise UsageError(f"{p}: cannot read: {e.strerror}") from None
            if b"tool.anydev" in raw and _load_toml(p, raw).get("tool", {}).get("anydev") is not None:
                return p
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _load_toml(path: str, raw: bytes) -> dict:
    try:
        import tomllib  # Python >= 3.11
    except ImportError:  # pragma: no cover - older Pythons
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise UsageError(f"{path}: reading [tool.anydev] needs Python 3.11 or the `tomli` "
                             "package") from None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{path}: not valid TOML: {e}") from None


def load_config(start: str) -> Config:
    """Reads [tool.anydev] of the nearest pyproject.toml (keys select, ignore,
    exclude, baseline; legacy and legacy-override are the runtime policy's and
    are skipped here). UsageError names the file and the problem."""
    path = find_pyproject(start)
    if path is None:
        return Config()
    with open(path, "rb") as f:
        section = _load_toml(path, f.read())["tool"]["anydev"]
    where = f"{path}: [tool.anydev]"
    if not isinstance(section, dict):
        raise UsageError(f"{where} must be a table")
    cfg = Config(path=path)
    for key, value in section.items():
        if key in RUNTIME_KEYS:
            continue
        if key not in CONFIG_KEYS:
            raise UsageError(f"{where}: unknown key {key!r} (the scanner reads "
                             f"{', '.join(CONFIG_KEYS)}; the runtime policy reads "
                             f"{', '.join(RUNTIME_KEYS)})")
        if key == "target-torch":
            from . import _versions
            try:
                _versions.resolve_target(value if isinstance(value, str) else repr(value))
            except _versions.VersionError as e:
                raise UsageError(f"{where}: `target-torch`: {e}") from None
            cfg.target_torch = value
            continue
        if key == "baseline":
            if not isinstance(value, str) or not value:
                raise UsageError(f"{where}: `baseline` must be a path (a string)")
            cfg.baseline = os.path.join(os.path.dirname(path), value)
            continue
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise UsageError(f"{where}: `{key}` must be a list of strings")
        items = [v.strip() for v in items if v.strip()]
        if key in ("select", "ignore"):
            try:
                _scan.rule_filter(items if key == "select" else None,
                                  items if key == "ignore" else None)
            except ValueError as e:
                raise UsageError(f"{where}: {e}") from None
            if key == "select":
                cfg.select = items
            else:
                cfg.ignore = items
        elif key == "keep":
            cfg.keep = items
        else:
            cfg.exclude = items
    return cfg


# --- fingerprints and baselines --------------------------------------------------


class _Lines:
    """The source line of each finding, read once per file."""

    def __init__(self) -> None:
        self._files: dict[str, Optional[bytes]] = {}

    def text(self, f: _scan.Finding) -> str:
        data = self._files.get(f.path, b"")
        if data == b"":
            try:
                with open(f.path, "rb") as fh:
                    data = fh.read()
            except OSError:
                data = None
            self._files[f.path] = data
        if not data:
            return f.text
        b = data.rfind(b"\n", 0, f.start) + 1
        e = data.find(b"\n", f.start)
        return data[b:e if e >= 0 else len(data)].decode("utf-8", "replace").strip()


def fingerprint_keys(findings: Sequence[_scan.Finding], *, relative_to: str = ".",
                     lines: Optional[_Lines] = None) -> list[tuple]:
    """The key of each finding that survives edits elsewhere in its file:
    (path relative to `relative_to`, rule, symbol, hash of the stripped line,
    occurrence of that quadruple so far in the file)."""
    import hashlib

    lines = lines or _Lines()
    seen: Counter = Counter()
    keys = []
    base = os.path.abspath(relative_to)
    for f in findings:
        path = os.path.relpath(os.path.abspath(f.path), base).replace(os.sep, "/")
        line_hash = hashlib.sha256(lines.text(f).encode("utf-8")).hexdigest()[:16]
        k = (path, f.rule, f.symbol, line_hash)
        keys.append(k + (seen[k],))
        seen[k] += 1
    return keys


def _fingerprint(key: tuple) -> str:
    import hashlib

    return hashlib.sha256("\0".join(map(str, key)).encode("utf-8")).hexdigest()[:32]


def write_baseline(path: str, findings: Sequence[_scan.Finding]) -> None:
    base = os.path.dirname(os.path.abspath(path))
    keys = fingerprint_keys(findings, relative_to=base)
    entries = [{"path": k[0], "rule": k[1], "symbol": k[2], "line_hash": k[3],
                "occurrence": k[4], "line": f.line}
               for k, f in zip(keys, findings)]
    entries.sort(key=lambda e: (e["path"], e["line"], e["rule"]))
    doc = {"version": BASELINE_VERSION, "tool": "anydev scan",
           "note": "Accepted legacy references: `anydev scan --baseline` reports only others. "
                   "Matched by path, rule, symbol, line text and occurrence, not line number.",
           "findings": entries}
    write_atomic(path, json.dumps(doc, indent=1) + "\n")


def read_baseline(path: str) -> set[tuple]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"{path}: baseline not found (create it with --write-baseline)") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read the baseline: {e.strerror}") from None
    except ValueError as e:
        raise UsageError(f"{path}: not a baseline (invalid JSON: {e})") from None
    if not isinstance(doc, dict) or doc.get("version") != BASELINE_VERSION or \
            not isinstance(doc.get("findings"), list):
        raise UsageError(f"{path}: not an anydev baseline of version {BASELINE_VERSION}")
    out = set()
    for e in doc["findings"]:
        try:
            out.add((e["path"], e["rule"], e["symbol"], e["line_hash"], int(e["occurrence"])))
        except (KeyError, TypeError, ValueError):
            raise UsageError(f"{path}: a baseline entry lacks path, rule, symbol, line_hash "
                             f"or occurrence: {e!r}") from None
    return out


# --- output ------------------------------------------------------------------------


def write_atomic(path: str, text: "str | Iterable[str]") -> None:
    """Writes `text` (a string or chunks of one) to `path` through a
    temporary file and a rename, keeping the mode of a file it replaces (a
    device such as /dev/null or a pipe is written directly)."""
    chunks = [text] if isinstance(text, str) else text
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(chunks)
        return
    if os.path.exists(path):
        mode = os.stat(path).st_mode & 0o7777
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    replace_atomically(path, (c.encode("utf-8") for c in chunks), mode=mode)


def _joined(items: Iterable[str], first: str, sep: str, last: str, empty: str) -> Iterator[str]:
    """Yields first, the items separated by sep, then last; or only empty."""
    it = iter(items)
    for item in it:
        yield first
        yield item
        for item in it:
            yield sep
            yield item
        yield last
        return
    yield empty


def _fix_counts(findings: Sequence[_scan.Finding]) -> Counter:
    return Counter(f.fix for f in findings)


# The renderers yield the report in chunks, so that a report of many
# findings is written without being held whole in memory.

def render_text(findings, errors, files: int) -> Iterator[str]:
    for f in findings:
        mark = " [*]" if f.fix == "safe" else ""
        yield f"{f.path}:{f.line}:{f.column}: {f.rule}{mark} {f.message}\n"
    yield summary_line(findings, files) + "\n"


def summary_line(findings, files: int) -> str:
    if not findings:
        return f"No legacy references found ({files} file{'s' if files != 1 else ''} scanned)."
    n = len(findings)
    nfiles = len({f.path for f in findings})
    fixes = _fix_counts(findings)
    parts = []
    if fixes["safe"]:
        parts.append(f"{fixes['safe']} fixable with `anydev fix`")
    if fixes["unsafe"]:
        parts.append(f"{fixes['unsafe']} more with `anydev fix --unsafe-fixes`")
    tail = f" ({', '.join(parts)})" if parts else ""
    return (f"Found {n} legacy reference{'s' if n != 1 else ''} in {nfiles} "
            f"file{'s' if nfiles != 1 else ''}{tail}.")


def render_json(findings, errors) -> Iterator[str]:
    # One finding per line, assembled from JSON fragments cached per path and
    # per (rule, symbol): a report can hold hundreds of thousands of findings.
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    paths: dict = {}
    tails: dict = {}

    def items() -> Iterator[str]:
        for f in findings:
            p = paths.get(f.path)
            if p is None:
                p = paths[f.path] = dumps(f.path)
            key = (f.rule, f.symbol)
            t = tails.get(key)
            if t is None:
                t = tails[key] = (f'"symbol": {dumps(f.symbol)}, "replacement": '
                                  f'{dumps(f.replacement)}, "rule": {dumps(f.rule)}, '
                                  f'"fix": {dumps(f.fix)}, "message": {dumps(f.message)}}}')
            yield (f'{{"path": {p}, "line": {f.line}, "column": {f.column}, '
                   f'"end_line": {f.end_line}, "end_column": {f.end_column}, {t}')

    yield '{"version": 1,\n "findings": '
    yield from _joined(items(), "[\n  ", ",\n  ", "\n ]", "[]")
    yield ',\n "errors": '
    yield from _joined((dumps({"path": e.path, "message": e.message, "line": e.line})
                        for e in errors), "[\n  ", ",\n  ", "\n ]", "[]")
    yield "}\n"


def _gh_escape(s: str, prop: bool) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return s


def render_github(findings, errors) -> Iterator[str]:
    for f in findings:
        props = (f"file={_gh_escape(f.path, True)},line={f.line},col={f.column},"
                 f"endLine={f.end_line},endColumn={f.end_column},title={f.rule}")
        yield f"::warning {props}::{_gh_escape(f.message, False)}\n"
    for e in errors:
        props = f"file={_gh_escape(e.path, True)}" + (f",line={e.line}" if e.line else "")
        yield f"::error {props},title=anydev scan::{_gh_escape(e.message, False)}\n"


def sarif_rules(keep) -> list:
    from . import _compat_table

    out = []
    for row in _compat_table.ROWS:
        if row.status != "deprecated" or not keep(row.code):
            continue
        repl = row.replacement or "(no drop-in replacement)"
        fix = {"safe": "`anydev fix` rewrites it.",
               "unsafe": "`anydev fix --unsafe-fixes` rewrites it; the rewrite changes "
                         "behaviour as the note says.",
               "none": "No automatic fix."}[row.fix]
        out.append({
            "id": row.code,
            "name": row.legacy,
            "shortDescription": {"text": f"{row.legacy} is deprecated; use {repl}"},
            "fullDescription": {"text": row.note},
            "help": {
                "text": f"{row.legacy} -> {repl}. {row.note} {fix}",
                "markdown": (f"`{row.legacy}` → `{repl}`\n\n{row.note}\n\n{fix} "
                             f"Run `anydev rule {row.code}` for an example."),
            },
            "defaultConfiguration": {"level": "warning"},
            "properties": {"tags": ["anydev", row.language, f"fix:{row.fix}"],
                           "precision": "very-high",
                           "deprecated_in": row.deprecated_in},
        })
    return out


def render_sarif(findings, errors, keep, *, version: str,
                 lines: Optional[_Lines] = None) -> Iterator[str]:
    rules = sarif_rules(keep)
    index = {r["id"]: i for i, r in enumerate(rules)}
    keys = fingerprint_keys(findings, lines=lines)
    dumps = json.JSONEncoder(ensure_ascii=False).encode

    def results() -> Iterator[str]:
        for f, k in zip(findings, keys):
            yield dumps({
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": "warning",
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": _uri(f.path), "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": f.line, "startColumn": f.column,
                               "endLine": f.end_line, "endColumn": f.end_column},
                }}],
                "partialFingerprints": {"anydevFingerprint/v1": _fingerprint(k)},
                "properties": {"symbol": f.symbol, "replacement": f.replacement, "fix": f.fix},
            })

    notifications = []
    for e in errors:
        loc = {"physicalLocation": {"artifactLocation": {"uri": _uri(e.path),
                                                         "uriBaseId": "%SRCROOT%"}}}
        if e.line:
            loc["physicalLocation"]["region"] = {"startLine": e.line}
        notifications.append({"level": "error" if _is_io_error(e) else "warning",
                              "message": {"text": e.message}, "locations": [loc]})
    root = os.getcwd().rstrip("/") + "/"
    head = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
    }
    run_head = {
        "tool": {"driver": {"name": "anydev", "informationUri": INFORMATION_URI,
                            "version": version, "semanticVersion": version, "rules": rules}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + _uri(root)}},
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": not any(_is_io_error(e) for e in errors),
                         "toolExecutionNotifications": notifications}],
    }
    # The run's small members indented, its results one per line.
    yield json.dumps(head, indent=1, ensure_ascii=False)[:-2] + ',\n "runs": [\n  '
    yield textwrap.indent(json.dumps(run_head, indent=1, ensure_ascii=False)[:-2],
                          "  ").lstrip() + ',\n   "results": '
    yield from _joined(results(), "[\n    ", ",\n    ", "\n   ]", "[]")
    yield "\n  }\n ]\n}\n"


def _uri(path: str) -> str:
    from urllib.parse import quote

    return quote(path.replace(os.sep, "/"))


def _is_io_error(e: _scan.ScanError) -> bool:
    return e.message.startswith("cannot read")


def render_unlocks(findings, target: Optional[str] = None) -> list[str]:
    """How many findings with a fix each PyTorch release makes fixable (the
    fix's replacement appears in that release), and how many the target allows."""
    from . import _compat_table, _versions

    by_code = _compat_table.ROWS_BY_CODE
    per: Counter = Counter()
    for f in findings:
        row = by_code.get(f.rule)
        if row is None or row.fix == "none" or not row.since:
            continue
        per[row.since] += 1
    if not per:
        return []
    key = lambda v: (1, (0, 0)) if v == "main" else (0, _versions.parse_version(v))  # noqa: E731
    out = ["Fixes by the PyTorch release that has their replacement (what a target unlocks):"]
    total = 0
    for since in sorted(per, key=key):
        total += per[since] if since != "main" else 0
        label = "no release yet" if since == "main" else f"torch >= {since}"
        cum = "" if since == "main" else f"  ({total} fixable at target {since})"
        out.append(f"  {per[since]:>6}  {label}{cum}")
    if target is not None:
        t = _versions.resolve_target(target)
        ok = sum(n for s, n in per.items() if s != "main" and _versions.parse_version(s) <= t.version)
        out.append(f"At target torch {t.text}: {ok} of {sum(per.values())} findings with a fix "
                   "can be applied.")
    return out


def render_statistics(findings, files: int, nbytes: int, target: Optional[str] = None) -> str:
    from . import _compat_table

    by_code = {r.code: r for r in _compat_table.ROWS}
    per_rule = Counter(f.rule for f in findings)
    per_symbol = Counter(f.symbol for f in findings)
    per_kind = Counter(f.kind for f in findings)
    fixes = _fix_counts(findings)
    out = ["Legacy references by rule:"]
    if per_rule:
        w = max(len(str(c)) for c in per_rule.values())
        for code, n in sorted(per_rule.items(), key=lambda kv: (-kv[1], kv[0])):
            row = by_code[code]
            out.append(f"  {n:>{w}}  {code}  {row.fix:6}  {row.legacy} -> "
                       f"{row.replacement or '(none)'}")
    else:
        out.append("  (none)")
    out.append("Legacy references by symbol:")
    if per_symbol:
        w = max(len(str(c)) for c in per_symbol.values())
        for sym, n in sorted(per_symbol.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"  {n:>{w}}  {sym}")
    else:
        out.append("  (none)")
    out.append(f"By kind: {per_kind['call']} calls, {per_kind['reference']} references, "
               f"{per_kind['import']} imports.")
    out.append(f"By fix: {fixes['safe']} safe, {fixes['unsafe']} unsafe, "
               f"{fixes['none']} without a fix.")
    out += render_unlocks(findings, target)
    out.append(f"Total: {len(findings)} in {len({f.path for f in findings})} files; "
               f"{files} files scanned ({nbytes / 1e6:.1f} MB).")
    return "\n".join(out) + "\n"


# --- anydev scan -------------------------------------------------------------------


def add_scan_parser(sub) -> None:
    p = sub.add_parser(
        "scan", help="find legacy torch.cuda / c10::cuda references in Python and C++ sources",
        description="Finds references to the legacy device-specific symbols of the compat "
                    "table in Python (.py, .pyi) and C/C++/CUDA/HIP sources, resolving imports "
                    "and aliases. Exit status: 0 none found, 1 found, 2 usage or I/O error.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=textwrap.dedent("""\
            defaults come from [tool.anydev] in the nearest pyproject.toml:
              select = ["AD1", "AD2"]   ignore = ["AD104"]
              exclude = ["third_party/", "*_pb2.py"]   baseline = "anydev-baseline.json"
            suppress one line with `# anydev: ignore[AD103]` or `// anydev: ignore`."""))
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (default), json, sarif (2.1.0) or github (workflow annotations)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here (atomically)")
    p.add_argument("--select", action="append", metavar="CODES",
                   help="only these rule codes or prefixes, comma-separated (AD1,AD601)")
    p.add_argument("--ignore", action="append", metavar="CODES",
                   help="not these rule codes or prefixes, comma-separated")
    p.add_argument("--target-torch", metavar="VERSION",
                   help="the oldest PyTorch the code must keep running on (2.1); default: "
                        "[tool.anydev] target-torch, else the project's torch>= declaration")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="skip paths matching this gitignore-style glob (repeatable)")
    p.add_argument("--no-gitignore", action="store_true",
                   help="do not honour .gitignore files and .git/info/exclude")
    p.add_argument("--jobs", "-j", type=int, metavar="N", help="threads (default: all cores)")
    p.add_argument("--statistics", action="store_true",
                   help="counts per rule and per symbol (with --format text: instead of the "
                        "list; otherwise on stderr)")
    p.add_argument("--baseline", metavar="FILE",
                   help="report only findings that are not in this baseline")
    p.add_argument("--write-baseline", metavar="FILE",
                   help="record the current findings as the baseline and exit 0")
    p.add_argument("--max-file-size", type=int, default=20 << 20, metavar="BYTES",
                   help="skip (and report) larger files (default: 20 MiB)")
    p.add_argument("--no-config", action="store_true", help="ignore pyproject.toml")
    p.set_defaults(func=cmd_scan)


def cmd_scan(args: argparse.Namespace) -> int:
    try:
        return _scan_main(args)
    except UsageError as e:
        print(f"anydev scan: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `anydev scan | head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


@dataclass
class Selection:
    """What a scan or fix run covers: the configuration, the rule filter, the
    paths and the exclude globs (each with the folder it is relative to)."""

    cfg: Config
    keep: object
    paths: list
    excludes: list
    target_torch: Optional[str] = None  # --target-torch, else [tool.anydev] target-torch
    keep_globs: list = field(default_factory=list)  # [tool.anydev] keep, relative to the cwd


def selection(args: argparse.Namespace) -> Selection:
    """Reads [tool.anydev] and the command line's --select/--ignore/--exclude/
    --jobs and paths, as `anydev scan` and `anydev fix` share them."""
    cfg = Config() if args.no_config else load_config(os.getcwd())
    if args.jobs is not None and args.jobs < 0:
        raise UsageError("--jobs must be >= 0")
    select = args.select if args.select is not None else cfg.select
    ignore = list(cfg.ignore) + list(args.ignore or [])
    try:
        keep = _scan.rule_filter(select, ignore)
    except ValueError as e:
        raise UsageError(str(e)) from None
    paths = args.paths or ["."]
    for p in paths:
        if not os.path.lexists(p):
            raise UsageError(f"{p}: no such file or directory")
    excludes = [(g, os.path.dirname(cfg.path or "")) for g in cfg.exclude] + \
               [(g, "") for g in args.exclude]
    target = getattr(args, "target_torch", None) or cfg.target_torch
    if target is not None:
        from . import _versions
        try:
            _versions.resolve_target(target)
        except _versions.VersionError as e:
            raise UsageError(f"--target-torch: {e}") from None
    base = os.path.relpath(os.path.dirname(cfg.path), os.getcwd()) if cfg.path else "."
    keep_globs = [g if g.startswith("/") or base == "." else f"{base}/{g.lstrip('/')}"
                  for g in cfg.keep]
    return Selection(cfg, keep, paths, excludes, target, keep_globs)


def _scan_main(args: argparse.Namespace) -> int:
    import anydev

    sel = selection(args)
    cfg, keep, paths, excludes = sel.cfg, sel.keep, sel.paths, sel.excludes
    result = _scan._scan_paths(paths, keep=keep, excludes=excludes, jobs=args.jobs,
                               respect_gitignore=not args.no_gitignore,
                               max_file_size=args.max_file_size)
    findings = result.findings
    lines = _Lines()

    if args.write_baseline:
        try:
            write_baseline(args.write_baseline, findings)
        except OSError as e:
            raise UsageError(f"{args.write_baseline}: cannot write: {e.strerror}") from None
        print(f"anydev scan: wrote {len(findings)} finding(s) to {args.write_baseline}",
              file=sys.stderr)
        _print_errors(result.errors)
        return 2 if any(_is_io_error(e) for e in result.errors) else 0

    baseline = args.baseline or cfg.baseline
    if baseline:
        known = read_baseline(baseline)
        base = os.path.dirname(os.path.abspath(baseline))
        keys = fingerprint_keys(findings, relative_to=base, lines=lines)
        findings = [f for f, k in zip(findings, keys) if k not in known]

    if args.format == "text":
        text = ([render_statistics(findings, result.files, result.bytes, sel.target_torch)]
                if args.statistics
                else render_text(findings, result.errors, result.files))
    elif args.format == "json":
        text = render_json(findings, result.errors)
    elif args.format == "sarif":
        text = render_sarif(findings, result.errors, keep, version=anydev.__version__,
                            lines=lines)
    else:
        text = render_github(findings, result.errors)
    if args.statistics and args.format != "text":
        sys.stderr.write(render_statistics(findings, result.files, result.bytes,
                                           sel.target_torch))

    if args.output:
        try:
            write_atomic(args.output, text)
        except OSError as e:
            raise UsageError(f"{args.output}: cannot write: {e.strerror}") from None
    else:
        sys.stdout.writelines(text)
        sys.stdout.flush()
    if args.format != "github" or args.output:
        _print_errors(result.errors)
    if any(_is_io_error(e) for e in result.errors):
        return 2
    return 1 if findings else 0


def _print_errors(errors: Iterable[_scan.ScanError]) -> None:
    for e in errors:
        where = f"{e.path}:{e.line}" if e.line else e.path
        kind = "error" if _is_io_error(e) else "warning"
        print(f"{where}: {kind}: {e.message}", file=sys.stderr)


# --- anydev rule ---------------------------------------------------------------------


def add_rule_parser(sub) -> None:
    p = sub.add_parser("rule", help="explain a scanner rule (AD101) or list them all",
                       description="Explains a rule of the compat table: the legacy symbol, "
                                   "its spellings and replacement, why, an example before and "
                                   "after, and the fix's safety.")
    p.add_argument("code", nargs="?", metavar="CODE")
    p.add_argument("--all", action="store_true", help="list every rule")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_rule)


def cmd_rule(args: argparse.Namespace) -> int:
    from . import _compat_table

    rows = _compat_table.ROWS
    if args.all:
        if args.format == "json":
            print(json.dumps([_rule_doc(r) for r in rows], indent=1))
            return 0
        w = max(len(r.legacy) for r in rows)
        for r in rows:
            status = r.fix if r.status == "deprecated" else "kept"
            print(f"{r.code}  {status:6}  {r.legacy:{w}}  {r.replacement or '-'}")
        return 0
    if not args.code:
        print("anydev rule: give a rule code (AD101) or --all", file=sys.stderr)
        return 2
    row = _compat_table.ROWS_BY_CODE.get(args.code.strip().upper())
    if row is None:
        print(f"anydev rule: unknown rule code {args.code!r} (see `anydev rule --all`)",
              file=sys.stderr)
        return 2
    # Versions and proof: the release the replacement needs (`since`) and what the
    # differential proof (tools/prove_fixes.py, compat_map/proofs.json) showed.
    proof = getattr(_compat_table, "PROOFS", {}).get(row.code)
    if row.status != "deprecated" or not row.replacement:
        needs = None
    elif row.since == "main":
        needs = (f"no PyTorch release up to {_compat_table.NEWEST_TORCH} has "
                 f"{row.replacement}: never applied")
    else:
        needs = f"needs torch >= {row.since}" if row.since else None
    if proof is None and row.status == "deprecated" and row.fix != "none":
        proof = ("not run: tools/prove_fixes.py runs Python rows only"
                 if row.language == "cpp" else "not run: no record in compat_map/proofs.json")
    if args.format == "json":
        doc = _rule_doc(row)
        doc.update(since=row.since, needs=needs, proof=proof)
        print(json.dumps(doc, indent=1))
        return 0
    sys.stdout.write(explain(row))
    if row.status == "deprecated":
        lines = ["", "Versions and proof"]
        if needs:
            lines.append(f"  since:          {needs}")
        lines.append(f"  fix level:      {row.fix}"
                     + ("  (why: the note above, and what the proof shows)"
                        if row.fix == "unsafe" else ""))
        if proof:
            lines.append(textwrap.fill(f"proven:         {proof}" if proof.startswith("same")
                                       else f"proof:          {proof}", 88,
                                       initial_indent="  ", subsequent_indent=" " * 18))
        sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _rule_doc(row) -> dict:
    before, after = examples(row)
    return {"code": row.code, "legacy": row.legacy, "spellings": [row.legacy, *row.also],
            "kind": row.kind, "status": row.status, "replacement": row.replacement,
            "anydev": row.anydev, "fix": row.fix, "signature": row.signature,
            "template": row.template, "deprecated_in": row.deprecated_in, "note": row.note,
            "language": row.language, "source": row.source,
            "example": {"before": before, "after": after}}


_FIX_TEXT = {
    "safe": "safe: `anydev fix` rewrites it; the rewrite keeps the behaviour.",
    "unsafe": "unsafe: `anydev fix --unsafe-fixes` rewrites it; the rewrite changes behaviour "
              "as the note says, so review it.",
    "none": "none: no automatic rewrite; migrate by hand as the note says.",
}


def explain(row) -> str:
    wrap = lambda s: textwrap.fill(s, 88, initial_indent="  ", subsequent_indent="  ")  # noqa: E731
    out = [f"{row.code}: {row.legacy}", ""]
    out.append(f"  legacy:         {row.legacy}  ({row.language}, {row.kind.replace('_', ' ')})")
    out.append(f"  spellings:      {', '.join([row.legacy, *row.also])}")
    if row.status == "kept":
        out.append(f"  status:         kept: device-specific (rule 4), never reported "
                   f"(checked against PyTorch {row.deprecated_in})")
    else:
        out.append(f"  replacement:    {row.replacement or '(none in PyTorch)'}")
        if row.anydev:
            out.append(f"  in anydev:      {row.anydev}")
        out.append(f"  deprecated in:  PyTorch {row.deprecated_in}")
        out.append(f"  fix:            {_FIX_TEXT[row.fix]}")
    out.append(f"  defined at:     {row.source}")
    out += ["", "Why", wrap(row.note)]
    before, after = examples(row)
    if row.status == "deprecated":
        out += ["", "Example"]
        for b, a in zip(before, after):
            out.append("  before:")
            out += ["    " + line for line in b.splitlines()]
            out.append("  after:" if row.fix != "none" else "  after (by hand):")
            out += ["    " + line for line in a.splitlines()]
    return "\n".join(out) + "\n"


# --- examples from the signature and template ---------------------------------------


def _split_top(s: str) -> list[str]:
    """Splits at top-level commas (outside brackets and quotes)."""
    out, depth, cur, quote_ch = [], 0, [], ""
    for ch in s:
        if quote_ch:
            cur.append(ch)
            if ch == quote_ch:
                quote_ch = ""
            continue
        if ch in "\"'":
            quote_ch = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _params(row) -> list[tuple[str, bool]]:
    """(name, required) of the legacy signature's named parameters."""
    sig = (row.signature or "").strip()
    if not sig.startswith("("):
        return []
    out = []
    for p in _split_top(sig[1:-1]):
        if not p or p in ("*", "/") or p.startswith("*"):
            continue
        has_default = "=" in p
        head = p.split("=", 1)[0].strip()
        if row.language == "cpp":
            import re

            m = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", head)
            if not m:
                continue
            name = m[-1]
        else:
            name = head.split(":", 1)[0].strip()
        out.append((name, not has_default))
    return out


def expand_template(template: str, args: list[str], bound: dict[str, str]) -> str:
    """Expands a row template (compat_map/SCHEMA.md) for a call whose
    arguments are `args` (source text, in order) and `bound` (parameter name
    -> source text): an argument item whose placeholders were not all
    supplied is dropped with its comma; {*} is every argument."""
    import re

    open_at = template.index("(")
    callee, inner = template[:open_at], template[open_at + 1:template.rindex(")")]
    items = []
    for item in _split_top(inner):
        if item == "{*}":
            items.extend(args)
            continue
        names = re.findall(r"\{([A-Za-z_][A-Za-z0-9_]*|\*)\}", item)
        if any(n != "*" and n not in bound for n in names):
            continue
        items.append(re.sub(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: bound[m.group(1)], item)
                     .replace("{*}", ", ".join(args)))
    return f"{callee}({', '.join(items)})"


def examples(row) -> tuple[list[str], list[str]]:
    """Before/after examples for a row: a call with its required arguments,
    and, when the template adapts an optional one, a call passing it."""
    params = _params(row)
    required = [n for n, req in params if req]
    optional = [n for n, req in params if not req]
    cases: list[tuple[list[str], dict]] = [([n for n in required], {n: n for n in required})]
    if row.template and optional:
        for n in optional:
            if "{" + n + "}" in row.template:
                bound = {m: m for m in required}
                bound[n] = n
                cases.append(([*required, f"{n}={n}"], bound))
                break
    before, after = [], []
    for args, bound in cases:
        b, a = _example(row, args, bound)
        before.append(b)
        after.append(a)
    return before, after


def _example(row, args: list[str], bound: dict) -> tuple[str, str]:
    cpp = row.language == "cpp"
    repl = row.replacement
    arg_text = ", ".join(args)
    if row.kind == "module":
        b = f"import {row.legacy}"
        a = f"import {repl}" if repl else "(no replacement)"
        return b, a
    if row.kind == "attribute":
        if row.legacy.endswith("Error"):
            return (f"except {row.legacy}:\n    ...",
                    f"except {repl}:\n    ..." if repl else "(no replacement)")
        return f"x = {row.legacy}", (f"x = {repl}" if repl else "(no replacement)")
    call_args = list(args)

    def new_call() -> str:
        if not repl:
            return "(no replacement)"
        if row.template:
            return expand_template(row.template, call_args, bound)
        return f"{repl}({arg_text})"

    if cpp:
        if row.kind == "class":
            var = "guard" if "Guard" in row.legacy else "x"
            return (f"{row.legacy} {var}({arg_text});",
                    f"{repl} {var}({arg_text});" if repl else "(no replacement)")
        return f"{row.legacy}({arg_text});", new_call() + ";" if repl else "(no replacement)"
    if row.kind == "context_manager":
        return f"with {row.legacy}({arg_text}):\n    ...", (
            f"with {new_call()}:\n    ..." if repl else "(no replacement)")
    if row.kind == "decorator":
        if args:
            return f"@{row.legacy}({arg_text})\ndef f(...): ...", f"@{new_call()}\ndef f(...): ..."
        bare = expand_template(row.template, [], {}) if row.template else repl
        return f"@{row.legacy}\ndef f(...): ...", f"@{bare}\ndef f(...): ..."
    if row.kind == "class":
        return f"x = {row.legacy}({arg_text})", f"x = {new_call()}"
    return f"{row.legacy}({arg_text})", new_call()
