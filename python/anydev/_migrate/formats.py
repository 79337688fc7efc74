"""The other outputs of ``anydev scan``, loaded when a run asks for one: the
JSON (docs/scan-report.schema.json), JSON Lines, SARIF, GitHub, GitLab Code
Quality, JUnit and ruff's ``full`` reports, ``--statistics`` (as text, or as
JSON: docs/scan-statistics.schema.json) and baselines (with the fingerprints
they match by). The text report most runs print is :mod:`anydev._cli.scan`'s
own: Note [Fast argv] in anydev/_cli/main.py."""

from __future__ import annotations

import os

from .output import (BASELINE_VERSION, INFORMATION_URI, UsageError, _fix_counts, _Lines,
                     error_kind, error_level, finding_kind, rule_url, write_atomic)

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections import Counter
    from typing import Callable, Iterable, Iterator, Optional, Sequence

    from anydev import scan as _scan

    #: (finding) -> (edits or None, why not or None): anydev._migrate.fix_edits'
    #: finding_edits bound to the file's bytes and target (the command line's).
    EditsOf = Callable[[_scan.Finding], tuple[Optional[list], Optional[str]]]


def _sha256():
    """hashlib.sha256 without importing hashlib: its OpenSSL costs 11M
    instructions to load, and a digest of a short text costs more through it
    than through the built-in _sha256 module (the same digests)."""
    try:
        from _sha256 import sha256
    except ImportError:  # pragma: no cover - a Python without it (3.12 has _sha2)
        try:
            from _sha2 import sha256  # type: ignore[no-redef]
        except ImportError:
            from hashlib import sha256
    return sha256


def fingerprint_keys(findings: Sequence[_scan.Finding], *, relative_to: str = ".",
                     lines: Optional[_Lines] = None) -> list[tuple]:
    """The key of each finding that survives edits elsewhere in its file:
    (path relative to `relative_to`, rule, symbol, hash of the stripped line,
    occurrence of that quadruple so far in the file)."""
    return list(_fingerprint_keys(findings, relative_to, lines))


def _fingerprint_keys(findings: Iterable[_scan.Finding], relative_to: str,
                      lines: Optional[_Lines], digests: bool = False) -> Iterator:
    """fingerprint_keys, one at a time (a report need not hold them all); with
    `digests`, the _fingerprint of each instead."""
    lines = lines or _Lines()
    base = os.path.abspath(relative_to)
    relative: dict = {}  # per path: a file's findings come together, and are many

    def relative_path(p: str) -> str:
        r = relative[p] = os.path.relpath(os.path.abspath(p), base).replace(os.sep, "/")
        return r

    # The occurrences counted so far, per key; where each file's findings
    # come together (a report's do), only the current file's are kept: a
    # tree's keys were 20 MB of a 200 MB tree's SARIF report.
    grouped = False
    if isinstance(findings, list):
        grouped, done, last = True, set(), None
        for f in findings:
            p = f.path
            if p != last:
                if p in done:
                    grouped = False
                    break
                done.add(p)
                last = p
        grouped = grouped and len({relative_path(p) for p in done}) == len(done)
        done = None
    seen: dict = {}
    hashes: dict = {}  # per line text of the current file: findings share lines
    sha256, text = _sha256(), lines.text
    last = path = None
    for f in findings:
        if f.path != last:
            last = f.path
            path = relative.get(last)
            if path is None:
                path = relative_path(last)
            hashes = {}
            pre = None
            if grouped:
                seen = {}
        t = text(f)
        h = hashes.get(t)
        if h is None:
            h = hashes[t] = sha256(t.encode("utf-8")).hexdigest()[:16]
        k = (path, f.rule, f.symbol, h)
        n = seen.get(k, 0)
        seen[k] = n + 1
        if not digests:
            yield (path, f.rule, f.symbol, h, n)
            continue
        # _fingerprint(k + (n,)), from a copy of the digest of the path's
        # share, made once per file (a path is often a block of SHA-256).
        if pre is None:
            pre = sha256(f"{path}\0".encode("utf-8"))
        d = pre.copy()
        d.update(f"{f.rule}\0{f.symbol}\0{h}\0{n}".encode("utf-8"))
        yield d.hexdigest()[:32]


def _fingerprint(key: tuple) -> str:
    return _sha256()("\0".join(map(str, key)).encode("utf-8")).hexdigest()[:32]


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
    """The accepted findings of a baseline file; UsageError (exit 2) naming
    the file for anything else: missing, not a regular file or pipe (a named
    FIFO would block the open forever), not JSON, nested or numbered past what
    a baseline holds (read in bounded time and memory: anydev._common.json_text),
    or not of the format."""
    import json

    from anydev._common import json_text
    from anydev._common.files import open_input

    try:
        with open_input(path, "baseline") as f:
            raw = f.read()
    except FileNotFoundError:
        raise UsageError(f"{path}: baseline not found (create it with --write-baseline)") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read the baseline: {e.strerror}") from None
    try:
        doc = json_text.loads(raw.decode("utf-8"), max_nesting=8, max_digits=20)
    except UnicodeDecodeError as e:
        raise UsageError(f"{path}: not a baseline (not UTF-8 text: byte {e.start})") from None
    except json_text.JSONLimitError as e:
        raise UsageError(f"{path}: not a baseline ({e})") from None
    except ValueError as e:
        raise UsageError(f"{path}: not a baseline (invalid JSON: {e})") from None
    if not isinstance(doc, dict) or doc.get("version") != BASELINE_VERSION or \
            not isinstance(doc.get("findings"), list):
        raise UsageError(f"{path}: not an anydev baseline of version {BASELINE_VERSION}")
    out = set()
    for e in doc["findings"]:
        try:
            occurrence = e["occurrence"]
            if isinstance(occurrence, float) and occurrence.is_integer():
                occurrence = int(occurrence)  # 2.0: what another JSON writer may give
            if not isinstance(occurrence, int) or isinstance(occurrence, bool) or occurrence < 0:
                raise ValueError(occurrence)
            out.add((e["path"], e["rule"], e["symbol"], e["line_hash"], occurrence))
        except (KeyError, TypeError, ValueError):
            shown = repr(e)
            if len(shown) > 200:
                shown = shown[:200] + "..."
            raise UsageError(f"{path}: a baseline entry lacks path, rule, symbol, line_hash "
                             f"or a whole occurrence: {shown}") from None
    return out


def line_hash(text: str) -> str:
    """The hash of a line's stripped text that baselines match by."""
    return _sha256()(text.strip().encode("utf-8")).hexdigest()[:16]


def baseline_sites(path: str) -> tuple[set[tuple[str, str, str]], str]:
    """A baseline's entries as (path, rule, line hash), occurrence and symbol
    left out, and the folder its paths are relative to: what the pytest
    plugin matches a legacy call that ran against (its file, line and rule)."""
    known = read_baseline(path)
    return {(k[0], k[1], k[3]) for k in known}, os.path.dirname(os.path.abspath(path))


def site_key(file: str, line: int, rule: str, base: str,
             read: Optional[Callable[[str], Optional[list[str]]]] = None
             ) -> Optional[tuple[str, str, str]]:
    """The (path, rule, line hash) of a call site (a file and a 1-based line),
    as baseline_sites gives a baseline's entries; None where the file cannot be
    read. ``read(file)``: the file's lines (a cache), else it is read."""
    if read is not None:
        lines = read(file)
    else:
        try:
            with open(file, "rb") as fh:
                lines = fh.read().decode("utf-8", "replace").split("\n")
        except OSError:
            lines = None
    if lines is None or not 1 <= line <= len(lines):
        return None
    rel = os.path.relpath(os.path.abspath(file), base).replace(os.sep, "/")
    return rel, rule, line_hash(lines[line - 1])


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


def _json_dumps():
    """json.JSONEncoder(ensure_ascii=False).encode, without importing json
    (its decoder imports re: 30M instructions of `anydev scan`'s start-up)
    for a str, which is what the findings' fields are: for a str the encoder
    returns _json's encode_basestring of it."""
    try:
        from _json import encode_basestring
    except ImportError:  # pragma: no cover - a Python without _json
        encode_basestring = None
    encode = None

    def dumps(o) -> str:
        nonlocal encode
        if encode_basestring is not None and isinstance(o, str):
            return encode_basestring(o)
        if encode is None:
            import json

            encode = json.JSONEncoder(ensure_ascii=False).encode
        return encode(o)

    return dumps


def _rows() -> dict:
    """Every rule's row by code: the table's and anydev's own (AD001)."""
    from anydev._compat import table as _compat_table
    from . import meta_rules as _meta

    return {**_compat_table.ROWS_BY_CODE, **_meta.ROWS_BY_CODE}


def _finding_objects(findings) -> Iterator:
    """The Finding objects of a list, a scan._Report or a scan._Stream (a
    batch at a time: Note [Streamed reports])."""
    batches = getattr(findings, "batches", None)
    if batches is not None:
        for batch in batches():
            yield from batch.findings
            batch = None  # let it go before the next is scanned
    elif getattr(findings, "render", None) is not None:
        yield from findings.findings
    else:
        yield from findings


def finding_records(findings, edits: Optional[EditsOf] = None) -> Iterator[str]:
    """Each finding as the JSON object of the JSON and JSON Lines reports
    (docs/scan-report.schema.json), one line of JSON each. ``edits``: the
    fix's edits of each finding (``edits`` and, where there are none,
    ``not_fixed``); without it, neither key."""
    dumps = _json_dumps()
    rows = _rows()
    paths: dict = {}
    tails: dict = {}
    prepare = getattr(edits, "prepare", None)
    if prepare is not None:  # fixes a batch's files together (anydev._cli.scan._edits_of)
        findings = list(_finding_objects(findings))
        prepare(findings)
    for f in _finding_objects(findings):
        p = paths.get(f.path)
        if p is None:
            p = paths[f.path] = dumps(f.path)
        key = (f.rule, f.symbol, f.kind, f.message)
        t = tails.get(key)
        if t is None:
            row = rows.get(f.rule)
            t = tails[key] = (
                f'"symbol": {dumps(f.symbol)}, "replacement": {dumps(f.replacement)}, '
                f'"rule": {dumps(f.rule)}, "fix": {dumps(f.fix)}, '
                f'"message": {dumps(f.message)}, "kind": {dumps(finding_kind(f, row))}, '
                f'"usage": {dumps(f.kind)}, "url": {dumps(rule_url(f.rule))}')
        cell = getattr(f, "cell", None)  # a notebook's: the cell, then lines in it
        c = "" if cell is None else f'"cell": {int(cell)}, '
        head = (f'{{"path": {p}, {c}"line": {f.line}, "column": {f.column}, '
                f'"end_line": {f.end_line}, "end_column": {f.end_column}, {t}')
        if edits is None:
            yield head + "}"
            continue
        got, why = edits(f)
        if got is None:
            yield head + f', "edits": null, "not_fixed": {dumps(why or "")}}}'
        else:
            yield head + f', "edits": {_edits_json(got, dumps)}}}'


def _edits_json(edits: list, dumps) -> str:
    return "[" + ", ".join(
        f'{{"line": {e["line"]}, "column": {e["column"]}, "end_line": {e["end_line"]}, '
        f'"end_column": {e["end_column"]}, "start": {e["start"]}, "end": {e["end"]}, '
        f'"content": {dumps(e["content"])}}}' for e in edits) + "]"


def render_json(findings, errors, edits: Optional[EditsOf] = None) -> Iterator[str]:
    """The JSON report (docs/scan-report.schema.json): ``{"version": 1,
    "findings": [...], "errors": [...]}``, a finding to a line; of a stream,
    a chunk per batch (Note [Streamed reports])."""
    dumps = _json_dumps()
    yield '{"version": 1,\n "findings": '
    batches = getattr(findings, "batches", None)
    if batches is not None:
        first = True
        for batch in batches():
            if len(batch):
                yield ("[\n  " if first else ",\n  ") + ",\n  ".join(
                    finding_records(batch.findings, edits))
                first = False
            batch = None  # let it go before the next is scanned
        if findings.extra:  # the notebooks' (Note [Notebooks in a scan] in anydev/scan.py)
            yield "[\n  " if first else ",\n  "
            first = False
            yield ",\n  ".join(finding_records(findings.extra, edits))
        yield "[]" if first else "\n ]"
    else:
        yield from _joined_in_batches(finding_records(findings, edits), "[\n  ", ",\n  ",
                                      "\n ]", "[]")
    yield ',\n "errors": '
    yield from _joined((dumps({"path": e.path, "message": e.message, "line": e.line,
                               "level": error_level(e), "kind": error_kind(e)})
                        for e in errors), "[\n  ", ",\n  ", "\n ]", "[]")
    yield "}\n"


def render_json_lines(findings, edits: Optional[EditsOf] = None) -> Iterator[str]:
    """JSON Lines (https://jsonlines.org): each finding's object (as in the
    JSON report) on a line of its own; the errors go to stderr, as for the
    text report."""
    batches = getattr(findings, "batches", None)
    if batches is not None:
        for batch in batches():
            if len(batch):
                yield "".join(r + "\n" for r in finding_records(batch.findings, edits))
            batch = None  # let it go before the next is scanned
        return
    for record in finding_records(findings, edits):
        yield record + "\n"


def render_full(findings, *, summary: Optional[str] = None,
                lines: Optional[_Lines] = None) -> Iterator[str]:
    """ruff's ``full`` output: each finding with its source line and the
    line around it, the span underlined, and the replacement as help."""
    from . import meta_rules as _meta

    reader = _SourceLines()
    for f in _finding_objects(findings):
        mark = " [*]" if f.fix == "safe" else ""
        yield f"{f.rule}{mark} {f.message}\n"
        src = reader.lines(f.path)
        first = max(1, f.line - 1)
        last = min(len(src), f.end_line + 1) if src else 0
        width = len(str(max(last, f.line)))
        pad = " " * width
        yield f"{pad}--> {f.path}:{f.line}:{f.column}\n"
        yield f"{pad} |\n"
        for n in range(first, last + 1):
            text = src[n - 1].expandtabs(1)
            yield f"{n:>{width}} | {text}\n"
            if f.line <= n <= f.end_line:
                lo = f.column if n == f.line else 1
                hi = f.end_column if n == f.end_line else len(text) + 1
                yield f"{pad} | {' ' * (lo - 1)}{'^' * max(1, hi - lo)}\n"
        yield f"{pad} |\n"
        if f.rule in _meta.ROWS_BY_CODE:
            yield "help: remove the unused codes from the directive\n"
        elif f.replacement:
            how = {"safe": "`anydev fix`", "unsafe": "`anydev fix --unsafe-fixes`"}.get(f.fix)
            yield (f"help: use `{f.replacement}`" + (f" ({how} rewrites it)" if how else "")
                   + f"; `anydev rule {f.rule}`\n")
        else:
            yield f"help: migrate by hand; `anydev rule {f.rule}`\n"
        yield "\n"
    if summary is not None:
        yield summary + "\n"


class _SourceLines:
    """The lines of the last file asked for (the findings come by file)."""

    def __init__(self) -> None:
        self._path: Optional[str] = None
        self._lines: list[str] = []

    def lines(self, path: str) -> list[str]:
        if path != self._path:
            self._path = path
            try:
                with open(path, "rb") as fh:
                    data = fh.read()
            except OSError:
                data = b""
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            self._lines = data.decode("utf-8", "replace").splitlines()
        return self._lines


def render_gitlab(findings, errors) -> Iterator[str]:
    """GitLab's Code Quality report (a JSON array of issues: description,
    check_name, fingerprint, severity, location with path and positions),
    each finding an issue of severity ``minor``, each file that went
    unscanned or could not be read one of severity ``major``. The
    fingerprints are the baseline's (path, rule, symbol, line text,
    occurrence), so an issue keeps its identity when lines move."""
    dumps = _json_dumps()
    objects = list(_finding_objects(findings))
    fps = _fingerprint_keys(objects, ".", None, digests=True)

    def items() -> Iterator[str]:
        for f, fp in zip(objects, fps):
            yield (f'{{"description": {dumps(f"{f.rule}: {f.message}")}, '
                   f'"check_name": {dumps(f.rule)}, "fingerprint": "{fp}", '
                   f'"severity": "minor", "location": {{"path": {dumps(f.path)}, '
                   f'"positions": {{"begin": {{"line": {f.line}, "column": {f.column}}}, '
                   f'"end": {{"line": {f.end_line}, "column": {f.end_column}}}}}}}}}')
        for e in errors:
            if error_kind(e) == "notice":
                continue
            fp = _fingerprint(("error", e.path, e.message))
            yield (f'{{"description": {dumps("anydev scan: " + e.message)}, '
                   f'"check_name": "anydev/{error_kind(e)}", "fingerprint": "{fp}", '
                   f'"severity": "major", "location": {{"path": {dumps(e.path)}, '
                   f'"lines": {{"begin": {e.line or 1}}}}}}}')

    yield from _joined(items(), "[\n ", ",\n ", "\n]\n", "[]\n")


def _xml(s: str, attr: bool = True) -> str:
    """Text for XML 1.0: escaped, and the characters XML 1.0 cannot hold
    (control characters but tab and line breaks) as U+FFFD."""
    out = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if attr:
        out = out.replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
    if not out.isprintable():
        out = "".join(c if c >= " " or c in "\t\n\r" else "\ufffd" for c in out)
    return out


def render_junit(findings, errors, files: int) -> str:
    """A JUnit XML report, as ruff writes it: a test suite per file with
    findings, a failed test case per finding (``anydev.AD107``, its line and
    column), a test case in error per file that went unscanned or could not be
    read; with neither, one passing case."""
    objects = list(_finding_objects(findings))
    by_file: dict = {}
    for f in objects:
        by_file.setdefault(f.path, []).append(f)
    bad = [e for e in errors if error_kind(e) != "notice"]
    for e in bad:
        by_file.setdefault(e.path, [])
    n_cases = len(objects) + len(bad)
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n',
           f'<testsuites name="anydev" tests="{max(n_cases, 1)}" failures="{len(objects)}" '
           f'errors="{len(bad)}">\n']
    if not n_cases:
        out.append(f'  <testsuite name="anydev" tests="1" failures="0" errors="0">\n'
                   f'    <testcase name="no legacy references ({files} files scanned)" '
                   f'classname="anydev"/>\n  </testsuite>\n')
    for path, fs in by_file.items():
        errs = [e for e in bad if e.path == path]
        cls = _xml(os.path.splitext(path)[0].replace("/", "."))
        out.append(f'  <testsuite name="{_xml(path)}" tests="{len(fs) + len(errs)}" '
                   f'failures="{len(fs)}" errors="{len(errs)}" package="anydev">\n')
        for f in fs:
            msg = _xml(f.message)
            out.append(f'    <testcase name="anydev.{f.rule}" classname="{cls}" '
                       f'file="{_xml(path)}" line="{f.line}" column="{f.column}">\n'
                       f'      <failure message="{msg}" type="{f.rule}">'
                       f'{_xml(f"line {f.line}, col {f.column}, {f.message}", False)}'
                       f'</failure>\n    </testcase>\n')
        for e in errs:
            out.append(f'    <testcase name="anydev/{error_kind(e)}" classname="{cls}" '
                       f'file="{_xml(path)}"' + (f' line="{e.line}"' if e.line else "") +
                       f'>\n      <error message="{_xml(e.message)}" '
                       f'type="{error_kind(e)}"/>\n    </testcase>\n')
        out.append("  </testsuite>\n")
    out.append("</testsuites>\n")
    return "".join(out)


def _gh_escape(s: str, prop: bool) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        s = s.replace(":", "%3A").replace(",", "%2C")
    return s


def render_github(findings, errors) -> Iterator[str]:
    texts: dict = {}

    def native(report) -> Iterator:
        keys = []
        for code, _symbol, msg, _row in report.keys():
            t = texts.get((code, msg))  # kept from batch to batch of a stream
            if t is None:
                t = texts[(code, msg)] = f"{code}::{_gh_escape(msg, False)}\n"
            keys.append(t)
        return report.render([0, 2, ",col=", 3, ",endLine=", 4, ",endColumn=", 5, ",title=", 1],
                             lambda p: f"::warning file={_gh_escape(p, True)},line=", keys)

    batches = getattr(findings, "batches", None)  # a scan._Stream: Note [Streamed reports]
    if batches is not None:
        for batch in batches():
            yield from native(batch)
            batch = None  # let it go before the next is scanned
        findings = findings.extra  # the notebooks' findings
    elif getattr(findings, "render", None) is not None:  # a scan._Report: Note [Native reports]
        yield from native(findings)
        findings = ()
    for f in findings:
        cell = getattr(f, "cell", None)
        if cell is not None:
            # a line of the notebook's JSON would be the wrong place: the file,
            # and the cell and position in the message
            props = f"file={_gh_escape(f.path, True)},title={f.rule}"
            msg = f"cell {cell}, line {f.line}, column {f.column}: {f.message}"
            yield f"::warning {props}::{_gh_escape(msg, False)}\n"
            continue
        props = (f"file={_gh_escape(f.path, True)},line={f.line},col={f.column},"
                 f"endLine={f.end_line},endColumn={f.end_column},title={f.rule}")
        yield f"::warning {props}::{_gh_escape(f.message, False)}\n"
    for e in errors:
        props = f"file={_gh_escape(e.path, True)}" + (f",line={e.line}" if e.line else "")
        level = "error" if error_level(e) == "error" else "warning"
        yield f"::{level} {props},title=anydev scan::{_gh_escape(e.message, False)}\n"


def sarif_rules(keep) -> list:
    from anydev._compat import table as _compat_table
    from . import meta_rules as _meta

    out = []
    for row in (*_meta.ROWS_BY_CODE.values(), *_compat_table.ROWS):
        if row.status == "kept" or not keep(row.code):  # literal rows are rules too
            continue
        repl = row.replacement or "(no drop-in replacement)"
        if row.status == "meta":
            out.append({"id": row.code, "name": row.name,
                        "shortDescription": {"text": row.legacy},
                        "fullDescription": {"text": row.note},
                        "helpUri": rule_url(row.code),
                        "help": {"text": row.note, "markdown": row.note},
                        "defaultConfiguration": {"level": "warning"},
                        "properties": {"tags": ["anydev", row.language, f"fix:{row.fix}"],
                                       "precision": "very-high", "deprecated_in": None}})
            continue
        fix = {"safe": "`anydev fix` rewrites it.",
               "unsafe": "`anydev fix --unsafe-fixes` rewrites it; the rewrite changes "
                         "behaviour as the note says.",
               "none": "No automatic fix."}[row.fix]
        out.append({
            "id": row.code,
            "name": getattr(row, "name", None) or row.legacy,
            "shortDescription": {"text": f"{row.legacy} is deprecated; use {repl}"},
            "fullDescription": {"text": row.note},
            "helpUri": rule_url(row.code),
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


def _json_indented(o, dumps, indent: str = "\n") -> str:
    """json.dumps(o, indent=1, ensure_ascii=False) with every line after the
    first indented as `indent` says, for the dicts, lists, str, int and bool
    of a SARIF report's head, without importing json (which imports re):
    anything else goes to json."""
    if o.__class__ is str:
        return dumps(o)
    if o is True:
        return "true"
    if o is False:
        return "false"
    if o is None:
        return "null"
    if o.__class__ is int:
        return int.__repr__(o)
    inner = indent + " "
    if o.__class__ is dict:
        if not o:
            return "{}"
        return ("{" + inner + ("," + inner).join(
            f"{dumps(k)}: {_json_indented(v, dumps, inner)}" for k, v in o.items())
            + indent + "}") if all(k.__class__ is str for k in o) else _json_other(o, indent)
    if o.__class__ is list:
        if not o:
            return "[]"
        return ("[" + inner + ("," + inner).join(_json_indented(v, dumps, inner) for v in o)
                + indent + "]")
    return _json_other(o, indent)


def _sarif_rules_json(rules: list, dumps, indent: str) -> str:
    """_json_indented(rules, dumps, indent) for what sarif_rules returns,
    each rule written from one template of its members (the generic walk of
    a report's 163 rules was 32M instructions)."""
    if not rules:
        return "[]"
    i1 = indent + " "
    k, n = i1 + " ", i1 + "  "
    out = []
    for r in rules:
        help_, props = r["help"], r["properties"]
        out.append(
            f'{{{k}"id": {dumps(r["id"])},{k}"name": {dumps(r["name"])},'
            f'{k}"shortDescription": {{{n}"text": {dumps(r["shortDescription"]["text"])}{k}}},'
            f'{k}"fullDescription": {{{n}"text": {dumps(r["fullDescription"]["text"])}{k}}},'
            f'{k}"helpUri": {dumps(r["helpUri"])},'
            f'{k}"help": {{{n}"text": {dumps(help_["text"])},'
            f'{n}"markdown": {dumps(help_["markdown"])}{k}}},'
            f'{k}"defaultConfiguration": {{{n}"level": '
            f'{dumps(r["defaultConfiguration"]["level"])}{k}}},'
            f'{k}"properties": {{{n}"tags": {_json_indented(props["tags"], dumps, n)},'
            f'{n}"precision": {dumps(props["precision"])},'
            f'{n}"deprecated_in": {_json_indented(props["deprecated_in"], dumps, n)}{k}}}'
            f'{i1}}}')
    return "[" + i1 + ("," + i1).join(out) + indent + "]"


def _json_other(o, indent: str) -> str:  # pragma: no cover - not in a SARIF head today
    import json

    return json.dumps(o, indent=1, ensure_ascii=False).replace("\n", indent)


def render_sarif(findings, errors, keep, *, version: str,
                 lines: Optional[_Lines] = None) -> Iterator[str]:
    rules = sarif_rules(keep)
    index = {r["id"]: i for i, r in enumerate(rules)}
    fingerprints = _fingerprint_keys(findings, ".", lines, digests=True)
    dumps = _json_dumps()

    def results() -> Iterator[str]:
        # What json's dumps makes of each result's dict (default separators),
        # from fragments cached per rule and message, per path and per
        # (symbol, replacement, fix): one dumps of a nested dict per finding
        # was a third of a large report's time.
        heads: dict = {}
        uris: dict = {}
        tails: dict = {}
        for f, fp in zip(findings, fingerprints):
            h = heads.get((f.rule, f.message))
            if h is None:
                h = heads[(f.rule, f.message)] = (
                    f'{{"ruleId": {dumps(f.rule)}, "ruleIndex": {int.__repr__(index[f.rule])}, '
                    f'"level": "warning", "message": {{"text": {dumps(f.message)}}}, '
                    f'"locations": [{{"physicalLocation": {{"artifactLocation": {{"uri": ')
            u = uris.get(f.path)
            if u is None:
                u = uris[f.path] = (f'{dumps(_uri(f.path))}, "uriBaseId": "%SRCROOT%"}}, '
                                    f'"region": {{"startLine": ')
            t = tails.get((f.symbol, f.replacement, f.fix))
            if t is None:
                t = tails[(f.symbol, f.replacement, f.fix)] = (
                    f'}}, "properties": {{"symbol": {dumps(f.symbol)}, "replacement": '
                    f'{dumps(f.replacement)}, "fix": {dumps(f.fix)}}}}}')
            cell = getattr(f, "cell", None)
            if cell is not None:  # a notebook's: the region's lines are the cell's
                t = t[:-2] + f', "cell": {int(cell)}}}}}'
            yield (f'{h}{u}{f.line}, "startColumn": {f.column}, "endLine": {f.end_line}, '
                   f'"endColumn": {f.end_column}}}}}}}], "partialFingerprints": '
                   f'{{"anydevFingerprint/v1": "{fp}"{t}')

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
    run_head = {
        "tool": {"driver": {"name": "anydev", "informationUri": INFORMATION_URI,
                            "version": version, "semanticVersion": version, "rules": rules}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + _uri(root)}},
        "columnKind": "unicodeCodePoints",
        "invocations": [{"executionSuccessful": not any(error_level(e) == "error"
                                                        for e in errors),
                         "toolExecutionNotifications": notifications}],
    }
    # The run's small members indented, its results one per line: what
    # json.dumps(indent=1) and textwrap.indent made of them.
    yield ('{\n "$schema": "https://json.schemastore.org/sarif-2.1.0.json",\n'
           ' "version": "2.1.0",\n "runs": [\n  ')
    # The rules written apart, from a template: the driver's members are at
    # 5 spaces, and `"rules": []` is nowhere else (a string's quotes are escaped).
    run_head["tool"]["driver"]["rules"] = []
    head = _json_indented(run_head, dumps, "\n  ")[:-4]
    if rules:
        head = head.replace('"rules": []', '"rules": ' + _sarif_rules_json(
            rules, dumps, "\n     "), 1)
    yield head + ',\n   "results": '
    yield from _joined_in_batches(results(), "[\n    ", ",\n    ", "\n   ]", "[]")
    yield "\n  }\n ]\n}\n"


# What urllib.parse.quote(s) keeps (its default safe "/" and the unreserved
# characters of RFC 3986): the rest is %XX per byte of UTF-8.
_URI_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/")


def _uri(path: str) -> str:
    """urllib.parse.quote(path with "/" for os.sep), without importing
    urllib.parse (which imports re)."""
    b = path.replace(os.sep, "/").encode("utf-8")
    if b.translate(None, bytes(_URI_SAFE)):
        return "".join(chr(c) if c in _URI_SAFE else f"%{c:02X}" for c in b)
    return b.decode("ascii")


def _unlocks(findings, target=None):
    """(per release: how many findings with a fix its replacement appears in,
    sorted oldest first with "main" last; what the target allows: None, or
    (findings applicable, findings with a fix, {target text: (source, files)})).
    ``target``: a version ("2.1"), or a function of a finding's path to its
    file's Target (None: the newest release) for per-file targets."""
    from collections import Counter

    from anydev._compat import table as _compat_table
    from . import torch_versions as _versions

    by_code = _compat_table.ROWS_BY_CODE
    per: Counter = Counter()
    fixable = []
    for f in findings:
        row = by_code.get(f.rule)
        if row is None or row.fix == "none" or not row.since:
            continue
        per[row.since] += 1
        fixable.append((f, row.since))
    key = lambda v: (1, (0, 0)) if v == "main" else (0, _versions.parse_version(v))  # noqa: E731
    releases = [(since, per[since]) for since in sorted(per, key=key)]
    if target is None or not per:
        return releases, None
    if not callable(target):
        fixed = _versions.resolve_target(target)
        target_of = lambda path: fixed  # noqa: E731
    else:
        memo: dict = {}

        def target_of(path):
            t = memo.get(path, False)
            if t is False:
                t = memo[path] = target(path) or _versions.DEFAULT
            return t
    ok = 0
    used: dict = {}
    for f, since in fixable:
        t = target_of(f.path)
        files = used.setdefault(t.text, (t.source, set()))[1]
        files.add(f.path)
        if since != "main" and _versions.parse_version(since) <= t.version:
            ok += 1
    return releases, (ok, len(fixable), {k: (src, len(fs)) for k, (src, fs) in used.items()})


def render_unlocks(findings, target=None) -> list[str]:
    """How many findings with a fix each PyTorch release makes fixable (the
    fix's replacement appears in that release), and how many the target allows
    (``target``: as _unlocks takes it)."""
    releases, at = _unlocks(findings, target)
    if not releases:
        return []
    out = ["Fixes by the PyTorch release that has their replacement (what a target unlocks):"]
    total = 0
    for since, n in releases:
        total += n if since != "main" else 0
        label = "no release yet" if since == "main" else f"torch >= {since}"
        cum = "" if since == "main" else f"  ({total} fixable at target {since})"
        out.append(f"  {n:>6}  {label}{cum}")
    if at is not None:
        ok, with_fix, targets = at
        if len(targets) == 1:
            out.append(f"At target torch {next(iter(targets))}: {ok} of {with_fix} findings with "
                       "a fix can be applied.")
        else:
            from . import torch_versions as _versions

            each = ", ".join(f"{t} in {n} file{'s' if n != 1 else ''}" for t, (_src, n) in
                             sorted(targets.items(), key=lambda kv: _versions.parse_version(kv[0])))
            out.append(f"At each file's target torch ({each}): {ok} of {with_fix} findings "
                       "with a fix can be applied.")
    return out


def statistics_data(findings, files: int, nbytes: int, target=None) -> dict:
    """The statistics as ``anydev scan --statistics --format json`` writes them
    (docs/scan-statistics.schema.json); ``target`` as _unlocks takes it."""
    from collections import Counter

    from .literals import family, module_of

    findings = list(findings)
    by_code = _rows()
    per_rule = Counter(f.rule for f in findings)
    per_symbol = Counter(f.symbol for f in findings)
    kinds = Counter(finding_kind(f, by_code.get(f.rule)) for f in findings)
    usage = Counter(f.kind for f in findings)
    fixes = _fix_counts(findings)
    api: Counter = Counter()
    lit: Counter = Counter()
    for f in findings:
        row = by_code.get(f.rule)
        (lit if row is not None and row.status == "literal" and family(row) == "literal"
         else api)[module_of(f.path)] += 1
    releases, at = _unlocks(findings, target)
    cumulative = 0
    unlocks = []
    for since, n in releases:
        if since == "main":
            unlocks.append({"torch": None, "count": n, "cumulative": None})
        else:
            cumulative += n
            unlocks.append({"torch": since, "count": n, "cumulative": cumulative})
    rules = []
    for code, n in sorted(per_rule.items(), key=lambda kv: (-kv[1], kv[0])):
        row = by_code.get(code)
        rules.append({"rule": code, "count": n, "fix": row.fix if row else "none",
                      "legacy": row.legacy if row else code,
                      "replacement": (row.replacement or None) if row else None,
                      "url": rule_url(code)})
    return {
        "version": 1,
        "files_scanned": files,
        "bytes_scanned": nbytes,
        "findings": len(findings),
        "files_with_findings": len({f.path for f in findings}),
        "by_rule": rules,
        "by_symbol": [{"symbol": sym, "count": n} for sym, n in
                      sorted(per_symbol.items(), key=lambda kv: (-kv[1], kv[0]))],
        "by_kind": {k: kinds.get(k, 0) for k in ("api", "literal", "idiom", "mock", "import",
                                                   "directive")},
        "by_usage": dict(sorted(usage.items())),
        "by_fix": {k: fixes.get(k, 0) for k in ("safe", "unsafe", "none")},
        "by_module": [{"module": m, "api": api[m], "literal": lit[m]}
                      for m in sorted(set(api) | set(lit), key=lambda m: (-(api[m] + lit[m]), m))],
        "unlocks": unlocks,
        "target": None if at is None else {
            "applicable": at[0], "with_fix": at[1],
            "targets": [{"torch": t, "source": src, "files": n}
                        for t, (src, n) in sorted(at[2].items())]},
    }


def render_statistics_json(findings, files: int, nbytes: int, target=None) -> str:
    import json

    return json.dumps(statistics_data(findings, files, nbytes, target), indent=1,
                      ensure_ascii=False) + "\n"


def render_statistics(findings, files: int, nbytes: int, target=None) -> str:
    from collections import Counter

    by_code = _rows()
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
    from .literals import statistics_lines

    out += statistics_lines(findings, by_code)
    out.append(f"By fix: {fixes['safe']} safe, {fixes['unsafe']} unsafe, "
               f"{fixes['none']} without a fix.")
    out += render_unlocks(findings, target)
    out.append(f"Total: {len(findings)} in {len({f.path for f in findings})} files; "
               f"{files} files scanned ({nbytes / 1e6:.1f} MB).")
    return "\n".join(out) + "\n"
