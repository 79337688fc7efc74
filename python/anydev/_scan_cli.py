"""``anydev scan`` and ``anydev rule``: the command-line side of
:mod:`anydev.scan` (configuration, baselines, output formats, statistics).

Exit codes of ``anydev scan``: 0 no findings (after the baseline, suppressions
and per-file ignores) and every file scanned to its end; 1 findings, or parts
of files that went unscanned (a binary or over-size file, invalid UTF-8, a
lexical error: see ``fail-on-unscanned``); 2 a usage, configuration or I/O
error (a path that does not exist, a file that cannot be read, a bad
configuration value, an output that cannot be written). ``--exit-zero`` turns
1 into 0.

This module is imported at start-up to build the parser: it imports the
scanner only when a command runs, and argparse only when a parser is built
(``anydev scan`` with plain arguments runs without one: Note [Fast argv] in
anydev/cli.py).
"""

from __future__ import annotations

import os
import sys
from . import _config

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` costs the command's start-up
    import argparse
    from collections import Counter
    from typing import Callable, Iterable, Iterator, Optional, Sequence

    from . import scan as _scan

FORMATS = _config.OUTPUT_FORMATS
BASELINE_VERSION = 1
INFORMATION_URI = "https://github.com/anydev/anydev"
DEFAULT_MAX_FILE_SIZE = 20 << 20


class UsageError(Exception):
    """Exit 2 with this message."""


def _scanner():
    from . import scan

    return scan


# --- configuration -------------------------------------------------------------

Config = _config.Config


def load_config(start: str, path: Optional[str] = None) -> Config:
    """The configuration for a run at ``start`` (or of the file ``path``),
    every key checked: UsageError names the file and the key."""
    try:
        if path is not None:
            if not os.path.lexists(path):
                raise UsageError(f"--config {path}: no such file")
            return _config.load_file(path).check()
        return _config.load(start).check()
    except _config.ConfigError as e:
        raise UsageError(str(e)) from None


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
    from collections import Counter

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
    import json

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
    import json

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
    from ._files import replace_atomically

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


def _joined_in_batches(items: Iterable[str], first: str, sep: str, last: str, empty: str,
                       n: int = 2048) -> Iterator[str]:
    """What _joined yields, n items to a chunk (a chunk per item costs more
    than the item's text where there are many)."""
    from itertools import islice

    it = iter(items)
    batch = list(islice(it, n))
    if not batch:
        yield empty
        return
    yield first
    while True:
        yield sep.join(batch)
        batch = list(islice(it, n))
        if not batch:
            break
        yield sep
    yield last


def _fix_counts(findings: Sequence[_scan.Finding]) -> Counter:
    from collections import Counter

    return Counter(f.fix for f in findings)


# The renderers yield the report in chunks, so that a report of many
# findings is written without being held whole in memory.

def render_text(findings, errors, files: int, *, colour: bool = False,
                summary: bool = True, show_fixes: bool = False) -> Iterator[str]:
    if colour:  # as ruff: the path bold, the position dim, the code red, [*] cyan
        b, d, r, c, z = "\033[1m", "\033[2m", "\033[1;31m", "\033[36m", "\033[0m"
        for f in findings:
            mark = f" {c}[*]{z}" if f.fix == "safe" else ""
            yield (f"{b}{f.path}{z}{d}:{z}{f.line}{d}:{z}{f.column}{d}:{z} {r}{f.rule}{z}"
                   f"{mark} {f.message}\n")
    else:
        for f in findings:
            mark = " [*]" if f.fix == "safe" else ""
            yield f"{f.path}:{f.line}:{f.column}: {f.rule}{mark} {f.message}\n"
    if show_fixes:
        yield from render_fix_list([f for f in findings if f.fix == "safe"],
                                   "Would fix {n} with `anydev fix`:")
    if summary:
        yield summary_line(findings, files) + "\n"


def render_fix_list(fixed, title: str) -> Iterator[str]:
    """As ruff's --show-fixes: per file, how many of each rule (and what to)."""
    if not fixed:
        return
    from collections import Counter

    n = len(fixed)
    yield "\n" + title.format(n=f"{n} finding{'s' if n != 1 else ''}") + "\n"
    per_file: dict = {}
    for f in fixed:
        per_file.setdefault(f.path, Counter())[(f.rule, f.symbol, f.replacement)] += 1
    for path, counts in per_file.items():
        yield f"- {path}:\n"
        for (rule, symbol, repl), k in sorted(counts.items()):
            yield f"    {k} × {rule} ({symbol} -> {repl or '(none)'})\n"
    yield "\n"


def summary_line(findings, files: int) -> str:
    if not findings:
        return f"No legacy references found ({files} file{'s' if files != 1 else ''} scanned)."
    n = len(findings)
    nfiles = len({f.path for f in findings})
    safe = unsafe = 0  # counted without collections.Counter: the text report's start-up
    for f in findings:
        if f.fix == "safe":
            safe += 1
        elif f.fix == "unsafe":
            unsafe += 1
    parts = []
    if safe:
        parts.append(f"{safe} fixable with `anydev fix`")
    if unsafe:
        parts.append(f"{unsafe} more with `anydev fix --unsafe-fixes`")
    tail = f" ({', '.join(parts)})" if parts else ""
    return (f"Found {n} legacy reference{'s' if n != 1 else ''} in {nfiles} "
            f"file{'s' if nfiles != 1 else ''}{tail}.")


def render_json(findings, errors) -> Iterator[str]:
    import json

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
    yield from _joined_in_batches(items(), "[\n  ", ",\n  ", "\n ]", "[]")
    yield ',\n "errors": '
    yield from _joined((dumps({"path": e.path, "message": e.message, "line": e.line,
                               "level": error_level(e), "kind": error_kind(e)})
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
        level = "error" if error_level(e) == "error" else "warning"
        yield f"::{level} {props},title=anydev scan::{_gh_escape(e.message, False)}\n"


def sarif_rules(keep) -> list:
    from . import _compat_table

    out = []
    for row in _compat_table.ROWS:
        if row.status == "kept" or not keep(row.code):  # literal rows are rules too
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
    import json

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
        notifications.append({"level": error_level(e), "message": {"text": e.message},
                              "locations": [loc],
                              "properties": {"kind": error_kind(e)}})
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
        "invocations": [{"executionSuccessful": not any(error_level(e) == "error"
                                                        for e in errors),
                         "toolExecutionNotifications": notifications}],
    }
    # The run's small members indented, its results one per line.
    import textwrap

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


def error_kind(e: _scan.ScanError) -> str:
    """``"io"`` (the file could not be read: exit 2), ``"notice"`` (nothing of
    a source went unscanned: a file named that is not a source, a C++ file
    scanned as bytes) or ``"unscanned"`` (all or part of a source was not
    scanned: findings may be hidden there)."""
    m = e.message
    if m.startswith("cannot read"):
        return "io"
    if m.startswith("not a Python or C/C++") or m.endswith("scanned as bytes"):
        return "notice"
    return "unscanned"


def error_level(e: _scan.ScanError) -> str:
    return "warning" if error_kind(e) == "notice" else "error"


def render_unlocks(findings, target: Optional[str] = None) -> list[str]:
    """How many findings with a fix each PyTorch release makes fixable (the
    fix's replacement appears in that release), and how many the target allows."""
    from collections import Counter

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
    from collections import Counter

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
               f"{per_kind['import']} imports, {per_kind['literal']} literals, "
               f"{per_kind['idiom']} idioms.")
    from ._literals import statistics_lines

    out += statistics_lines(findings, by_code)
    out.append(f"By fix: {fixes['safe']} safe, {fixes['unsafe']} unsafe, "
               f"{fixes['none']} without a fix.")
    out += render_unlocks(findings, target)
    out.append(f"Total: {len(findings)} in {len({f.path for f in findings})} files; "
               f"{files} files scanned ({nbytes / 1e6:.1f} MB).")
    return "\n".join(out) + "\n"


# --- anydev scan -------------------------------------------------------------------


def non_negative_int(what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        from argparse import ArgumentTypeError

        try:
            v = int(text)
        except ValueError:
            raise ArgumentTypeError(f"{text!r} is not a whole number") from None
        if v < 0:
            raise ArgumentTypeError(f"must be >= 0 {what}, not {v}")
        return v

    return parse


def target_torch(text: str) -> str:
    """--target-torch: a version the fixer's table knows (anydev._versions)."""
    from . import _versions

    try:
        _versions.resolve_target(text)
    except _versions.VersionError as e:
        from argparse import ArgumentTypeError

        raise ArgumentTypeError(str(e)) from None
    return text


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """The options `anydev scan` and `anydev fix` share (see selection())."""
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files or folders (default: .); `-` reads one file from stdin")
    p.add_argument("--select", action="append", metavar="CODES",
                   help="only these rule codes or prefixes, comma-separated (AD1,AD601)")
    p.add_argument("--ignore", action="append", metavar="CODES",
                   help="not these rule codes or prefixes, comma-separated")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="skip paths matching this gitignore-style glob (repeatable)")
    p.add_argument("--no-gitignore", action="store_true",
                   help="do not honour .gitignore files and .git/info/exclude")
    p.add_argument("--jobs", "-j", type=non_negative_int("threads"), metavar="N",
                   help="threads (default: all cores)")
    p.add_argument("--max-file-size", type=non_negative_int("bytes"), metavar="BYTES",
                   help="skip (and report as unscanned) larger files (default: 20 MiB)")
    p.add_argument("--target-torch", type=target_torch, metavar="VERSION",
                   help="the oldest PyTorch the code must keep running on (2.1): rewrites to "
                        "newer APIs are not applied; default: [tool.anydev] target-torch, else "
                        "the lower bound of torch in the project's pyproject.toml/setup.cfg/"
                        "setup.py/requirements*.txt, else the newest release the table knows")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even with findings or unscanned parts left")
    p.add_argument("--stdin-filename", metavar="NAME",
                   help="the name of the file read from stdin (`-`): its language, and "
                        "which per-file-ignores and keep apply")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print the findings and errors only, no summary")
    p.add_argument("--config", metavar="FILE",
                   help="read this configuration file (a pyproject.toml's [tool.anydev], or "
                        "an anydev.toml) instead of the nearest one")
    p.add_argument("--no-config", action="store_true",
                   help="read no configuration file")


def add_scan_parser(p: argparse.ArgumentParser) -> None:
    import argparse

    p.description = (
        "Finds references to the legacy device-specific symbols of the compat table in\n"
        "Python (.py, .pyi) and C/C++/CUDA/HIP sources, resolving imports and aliases.\n\n"
        "Exit status: 0 none found, 1 found (or parts of files went unscanned), 2 usage,\n"
        "configuration or I/O error.")
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = (
        "defaults come from [tool.anydev] in the nearest pyproject.toml (docs/configuration.md):\n"
        '  select = ["AD1", "AD2"]   ignore = ["AD104"]\n'
        '  exclude = ["third_party/", "*_pb2.py"]   baseline = "anydev-baseline.json"\n'
        '  per-file-ignores = { "tests/**" = ["AD1"] }\n'
        "suppress one line with `# anydev: ignore[AD103]`, `# noqa: AD103` or "
        "`// anydev: ignore`.")
    add_common_arguments(p)
    p.add_argument("--output-format", "--format", dest="format", choices=FORMATS,
                   default=None,
                   help="text (default), json, sarif (2.1.0) or github (workflow annotations)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here (atomically)")
    p.add_argument("--statistics", action="store_true",
                   help="counts per rule and per symbol (with --format text: instead of the "
                        "list; otherwise on stderr)")
    p.add_argument("--show-fixes", action="store_true",
                   help="after the list, what `anydev fix` would fix, per file and rule")
    p.add_argument("--baseline", metavar="FILE",
                   help="report only findings that are not in this baseline")
    p.add_argument("--write-baseline", metavar="FILE",
                   help="record the current findings as the baseline and exit 0")
    p.set_defaults(func=cmd_scan)


def cmd_scan(args: argparse.Namespace) -> int:
    try:
        return _scan_main(args)
    except UsageError as e:
        print(f"anydev scan: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `anydev scan | head`: the reader has seen enough
        _silence_stdout()
        return 1


def _silence_stdout() -> None:
    """Points stdout at /dev/null, so that Python's final flush of what could
    not be written does not fail again at exit."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # pragma: no cover - no real stdout
        pass


def write_stdout(chunks: Iterable[str], what: str = "the report") -> None:
    """Writes to stdout; a write that fails (a full disk, /dev/full) is a
    UsageError naming it (a closed pipe stays a BrokenPipeError)."""
    try:
        sys.stdout.writelines(chunks)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        _silence_stdout()
        raise UsageError(f"cannot write {what} to stdout: {e.strerror or e}") from None


class Selection:
    """What a scan or fix run covers and how it ends, from the configuration
    and the command line: the rule filter (``rules``), the paths, the
    exclude globs (each with the folder it is relative to), ``keep``: the
    globs as written (a device's own implementation: reported, never
    rewritten) and ``keep_globs``: the same relative to the current directory,
    for the fixer; the per-file ignores (``[(Glob, rule predicate)]``),
    ``target_torch`` and the exit policy."""

    def __init__(self, cfg: Config, rules: Callable[[str], bool], paths: list,
                 excludes: list, *, keep: Sequence[str] = (),
                 per_file_ignores: Sequence = (), keep_globs: Sequence = (),
                 target_torch: Optional[str] = None, exit_zero: bool = False,
                 fail_on_unscanned: bool = True, max_file_size: int = DEFAULT_MAX_FILE_SIZE,
                 respect_gitignore: bool = True, stdin: bool = False,
                 stdin_filename: Optional[str] = None) -> None:
        self.cfg, self.rules, self.paths, self.excludes = cfg, rules, paths, excludes
        self.keep = list(keep)
        self.per_file_ignores = list(per_file_ignores)
        self.keep_globs = list(keep_globs)
        self.target_torch = target_torch
        self.exit_zero, self.fail_on_unscanned = exit_zero, fail_on_unscanned
        self.max_file_size, self.respect_gitignore = max_file_size, respect_gitignore
        self.stdin, self.stdin_filename = stdin, stdin_filename

    def dropped(self) -> Callable[[str, str], bool]:
        """A predicate (path, rule) -> whether per-file-ignores drop that
        finding; each path is matched once."""
        memo: dict = {}

        def drop(path: str, rule: str) -> bool:
            preds = memo.get(path)
            if preds is None:
                preds = memo[path] = [p for g, p in self.per_file_ignores if g.match(path)]
            return any(pred(rule) for pred in preds)

        return drop

    def filter(self, findings: list) -> list:
        if not self.per_file_ignores:
            return findings
        drop = self.dropped()
        return [f for f in findings if not drop(f.path, f.rule)]

    def status(self, findings_left: bool, errors: Sequence) -> int:
        """The exit status of a run (2 for I/O errors is the caller's)."""
        unscanned = self.fail_on_unscanned and any(error_kind(e) == "unscanned"
                                                   for e in errors)
        if (findings_left or unscanned) and not self.exit_zero:
            return 1
        return 0


def print_config_warnings(cfg: Config, command: str) -> None:
    for w in cfg.warnings:
        print(f"anydev {command}: warning: {w}", file=sys.stderr)


def selection(args: argparse.Namespace) -> Selection:
    """Reads the configuration and the command line's options and paths, as
    `anydev scan` and `anydev fix` share them."""
    config_file = getattr(args, "config", None)
    if config_file and args.no_config:
        raise UsageError("--config and --no-config exclude each other")
    cfg = Config(root=os.getcwd()) if args.no_config else load_config(os.getcwd(),
                                                                       config_file)
    print_config_warnings(cfg, getattr(args, "command", None) or "scan")
    scan = _scanner()
    select = args.select if args.select is not None else cfg.select
    ignore = list(cfg.ignore) + list(args.ignore or [])
    try:
        rules = scan.rule_filter(select, ignore)
    except ValueError as e:
        where = cfg.where() + ": " if cfg.path and (cfg.select or cfg.ignore) and \
            args.select is None and not args.ignore else ""
        raise UsageError(f"{where}{e}") from None
    pfi = []
    for glob, codes in cfg.per_file_ignores:
        try:
            pred = scan.rule_filter(["ALL"], codes) if codes else (lambda code: False)
        except ValueError as e:
            raise UsageError(f"{cfg.where()}: `per-file-ignores` {glob!r}: {e}") from None
        pfi.append((_config.Glob(glob, cfg.root), lambda code, p=pred: not p(code)))
    paths = args.paths or ["."]
    stdin = paths == ["-"]
    if "-" in paths and not stdin:
        raise UsageError("`-` (stdin) must be the only path")
    if args.stdin_filename and not stdin:
        raise UsageError("--stdin-filename goes with the path `-` (stdin)")
    if not stdin:
        for p in paths:
            if not os.path.lexists(p):
                raise UsageError(f"{p}: no such file or directory")
    excludes = [(g, cfg.root) for g in cfg.exclude] + [(g, "") for g in args.exclude]
    if cfg.target_torch is not None and args.target_torch is None:
        from . import _versions

        try:
            _versions.resolve_target(cfg.target_torch)
        except _versions.VersionError as e:
            raise UsageError(f"{cfg.where()}: `target-torch`: {e}") from None
    max_size = args.max_file_size if args.max_file_size is not None else (
        cfg.max_file_size if cfg.max_file_size is not None else DEFAULT_MAX_FILE_SIZE)
    return Selection(
        cfg, rules, paths, excludes, keep=list(cfg.keep), per_file_ignores=pfi,
        keep_globs=_relative_to_cwd(cfg.keep, cfg.root),
        target_torch=args.target_torch or cfg.target_torch,
        exit_zero=args.exit_zero or cfg.exit_zero, fail_on_unscanned=cfg.fail_on_unscanned,
        max_file_size=max_size,
        respect_gitignore=cfg.respect_gitignore and not args.no_gitignore,
        stdin=stdin, stdin_filename=args.stdin_filename)


def _relative_to_cwd(globs: Sequence[str], root: str) -> list[str]:
    """Globs relative to ``root`` rewritten relative to the current directory
    (what the fixer's ``keep`` takes)."""
    base = os.path.relpath(root, os.getcwd()).replace(os.sep, "/") if root else "."
    if base == ".":
        return list(globs)
    out = []
    for g in globs:
        anchored = "/" in g.rstrip("/")
        out.append(f"{base}/{g.lstrip('/')}" if anchored else f"{base}/**/{g}")
    return out


def read_stdin(sel: Selection):
    """Reads the file given as `-`: (display path, bytes, language)."""
    scan = _scanner()
    name = sel.stdin_filename or "-"
    language = scan.language_of(name) if sel.stdin_filename else "python"
    if language is None:
        raise UsageError(f"--stdin-filename {name}: not a Python or C/C++/CUDA/HIP source "
                         f"(by its extension)")
    try:
        data = sys.stdin.buffer.read()
    except (OSError, AttributeError, ValueError) as e:
        raise UsageError(f"cannot read stdin: {getattr(e, 'strerror', None) or e}") from None
    return name, data, language


def scan_selection(sel: Selection, jobs: Optional[int]) -> "_scan.ScanResult":
    """Scans what the selection covers (the paths, or stdin), with the
    per-file-ignores applied."""
    scan = _scanner()
    if sel.stdin:
        name, data, language = read_stdin(sel)
        result = scan.ScanResult(files=1, bytes=len(data))
        if len(data) > sel.max_file_size:
            result.errors.append(scan.ScanError(
                name, f"file is {len(data)} bytes, over the limit of {sel.max_file_size} "
                      f"(a generated file?); skipped", None))
            result.files = 0
        else:
            result.findings, result.errors = scan.scan_source(data, name, language=language)
            result.findings = [f for f in result.findings if sel.rules(f.rule)]
        result.stdin_data = data  # type: ignore[attr-defined]
    else:
        result = scan._scan_paths(sel.paths, keep=sel.rules, excludes=sel.excludes, jobs=jobs,
                                  respect_gitignore=sel.respect_gitignore,
                                  max_file_size=sel.max_file_size)
    result.findings = sel.filter(result.findings)
    return result


def use_colour(stream) -> bool:
    """Colour on a terminal, as https://no-color.org and FORCE_COLOR say."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def _scan_main(args: argparse.Namespace) -> int:
    sel = selection(args)
    cfg = sel.cfg
    fmt = args.format or cfg.output_format or "text"
    result = scan_selection(sel, args.jobs)
    findings = result.findings
    lines = _Lines()

    if args.write_baseline:
        try:
            write_baseline(args.write_baseline, findings)
        except OSError as e:
            raise UsageError(f"{args.write_baseline}: cannot write: {e.strerror}") from None
        if not args.quiet:
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

    if fmt == "text":
        if args.statistics:
            text: Iterable[str] = [render_statistics(findings, result.files, result.bytes,
                                                     sel.target_torch)]
        else:
            colour = not args.output and use_colour(sys.stdout)
            text = render_text(findings, result.errors, result.files, colour=colour,
                               summary=not args.quiet, show_fixes=args.show_fixes)
        text = (c for p in (text, [] if args.quiet else [_scanner().ignore_summary(result)])
                for c in p)
    elif fmt == "json":
        text = render_json(findings, result.errors)
    elif fmt == "sarif":
        import anydev

        text = render_sarif(findings, result.errors, sel.rules, version=anydev.__version__,
                            lines=lines)
    else:
        text = render_github(findings, result.errors)
    if args.statistics and fmt != "text":
        sys.stderr.write(render_statistics(findings, result.files, result.bytes,
                                           sel.target_torch))

    if args.output:
        try:
            write_atomic(args.output, text)
        except OSError as e:
            raise UsageError(f"{args.output}: cannot write: {e.strerror}") from None
    else:
        write_stdout(text)
    if fmt != "github" or args.output:
        _print_errors(result.errors)
    if any(_is_io_error(e) for e in result.errors):
        return 2
    return sel.status(bool(findings), result.errors)


def _print_errors(errors: Iterable[_scan.ScanError]) -> None:
    for e in errors:
        where = f"{e.path}:{e.line}" if e.line else e.path
        print(f"{where}: {error_level(e)}: {e.message}", file=sys.stderr)


# --- anydev rule ---------------------------------------------------------------------


def add_rule_parser(p: argparse.ArgumentParser) -> None:
    p.description = ("Explains a rule of the compat table: the legacy symbol, its spellings "
                     "and replacement, why, an example before and after, and the fix's safety.")
    p.add_argument("code", nargs="?", metavar="CODE")
    p.add_argument("--all", action="store_true", help="list every rule")
    p.add_argument("--output-format", "--format", dest="format", choices=("text", "json"),
                   default="text")
    p.set_defaults(func=cmd_rule)


def cmd_rule(args: argparse.Namespace) -> int:
    import json
    import textwrap

    from . import _compat_table

    rows = _compat_table.ROWS
    if args.all:
        if args.format == "json":
            print(json.dumps([_rule_doc(r) for r in rows], indent=1))
            return 0
        w = max(len(r.legacy) for r in rows)
        for r in rows:
            status = r.fix if r.status != "kept" else "kept"
            print(f"{r.code}  {status:6}  {r.legacy:{w}}  {r.replacement or '-'}")
        return 0
    if not args.code:
        print("anydev rule: give a rule code (AD101) or --all", file=sys.stderr)
        return 2
    row = _compat_table.ROWS_BY_CODE.get(args.code.strip().upper())
    if row is None:
        hint = _config.did_you_mean(args.code.strip().upper(), _compat_table.ROWS_BY_CODE)
        print(f"anydev rule: unknown rule code {args.code!r}{hint} (see `anydev rule --all`)",
              file=sys.stderr)
        return 2
    # Versions and proof: the release the replacement needs (`since`) and what the
    # differential proof (tools/prove_fixes.py, compat_map/proofs.json) showed.
    proof = getattr(_compat_table, "PROOFS", {}).get(row.code)
    if row.status not in ("deprecated", "literal") or not row.replacement:
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
    if row.status in ("deprecated", "literal"):
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
        if row.status == "literal":
            lines.append(textwrap.fill(
                "fixed as:       a unit: with the other device literals, idioms and "
                "availability checks of its function, or not at all (a finding the fixer "
                "cannot rewrite leaves its whole function; docs/scan.md)"
                if row.language == "python" else
                "fixed as:       not rewritten: C++ literals are hints", 88,
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
    import textwrap

    wrap = lambda s: textwrap.fill(s, 88, initial_indent="  ", subsequent_indent="  ")  # noqa: E731
    out = [f"{row.code}: {row.legacy}", ""]
    out.append(f"  legacy:         {row.legacy}  ({row.language}, {row.kind.replace('_', ' ')})")
    out.append(f"  spellings:      {', '.join([row.legacy, *row.also, *row.covers])}")
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
    if row.status != "kept":
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
    if row.status == "literal":
        from ._literals import examples as literal_examples

        return literal_examples(row)
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
