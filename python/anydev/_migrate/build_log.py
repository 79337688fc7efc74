"""Build logs into the runtime report: legacy C++ calls the compiler saw.

``<anydev/torch_deprecations.h>`` (see :mod:`anydev.cpp_extension`) makes
g++, clang++ and nvcc warn at each legacy ``c10::cuda`` / ``at::cuda`` /
``c10::xpu`` call with a ``-Wdeprecated-declarations`` message that ends with
the rule tag::

    ext.cpp:16:32: warning: 'c10::DeviceIndex c10::cuda::device_count()' is
        deprecated: use at::accelerator::deviceCount [AD601] [-Wdeprecated-declarations]
    kernel.cu(16): warning #1444-D: function "c10::cuda::device_count" ... was
        declared deprecated ("use at::accelerator::deviceCount [AD601]")

:func:`parse` finds those diagnostics in a log (GCC/Clang ``file:line:col:``
and nvcc's front-end ``file(line):`` forms, errors under ``-Werror`` too;
colour codes, notes, source excerpts and every other line are skipped), and
:func:`to_report` makes them a report in the runtime report's format
(:mod:`anydev.report`): one call site per (file, line, legacy spelling), with
``count`` the number of diagnostics there (one per translation unit that
compiled the line) and ``seen_by`` saying which source saw it. The spelling
and column come from the scanner's finding of the same rule on the same line
(``at::cuda::getCurrentCUDAStream`` rather than the ``c10::cuda`` entity the
compiler names), so a build report, a scan (:func:`from_scan`) and a runtime
report of the same code key their call sites alike, and :func:`combine`
merges them: counts add up and ``seen_by`` keeps each source's share
(``{"build": 2, "scan": 1, "run": 1000}``).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

from anydev import report as _report

__all__ = ["Diagnostic", "combine", "from_scan", "load_input", "parse", "read", "to_report"]

# A diagnostic line of GCC or Clang: `path:line[:col]: warning|error: text`.
_GNU = re.compile(r"^(?P<file>[^\s:][^:]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s*"
                  r"(?:warning|error):\s*(?P<text>.*)$")
# A diagnostic of nvcc's front end (EDG): `path(line): warning #1444-D: text`.
_EDG = re.compile(r"^(?P<file>[^\s(][^(]*?)\((?P<line>\d+)\):\s*(?:warning|error)"
                  r"(?:\s*#\d+(?:-D)?)?:\s*(?P<text>.*)$")
_TAG = re.compile(r"\[(AD\d{3})\]")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_DEPRECATED = re.compile(r"\bdeprecated\b")
# A header of PyTorch's own include folders (site-packages/torch/include/...).
_TORCH_HEADER = re.compile(r"(?:^|/)torch/include/(?:c10|ATen|torch|caffe2)/")


@dataclass(frozen=True)
class Diagnostic:
    """One deprecation warning (or error) that carries a rule tag."""

    file: str            # as the log names it, resolved against build_dir when relative
    line: int
    column: Optional[int]  # GCC/Clang's column; None for nvcc's front end
    rule: str            # "AD625"
    style: str           # "gnu" (g++, clang++, nvcc's host compiler) or "nvcc"
    log_line: int        # 1-based line of the log


def parse(text: str, build_dir: Optional[str] = None) -> list[Diagnostic]:
    """Returns the tagged deprecation diagnostics of a build log, in log order.

    A relative path in the log is taken relative to ``build_dir`` (the folder
    the compiler ran in) when it is given. Lines that are not such
    diagnostics are skipped, and so are a tag that names no deprecated row of
    the table and a diagnostic inside PyTorch's own headers (under
    ``torch/include/``: a build that does not include them with -isystem)."""
    rows = _rows()
    out: list[Diagnostic] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = _ANSI.sub("", raw).rstrip("\r")
        if "AD" not in line or "deprecated" not in line:
            continue
        m = _GNU.match(line)
        style = "gnu"
        if m is None or not _DEPRECATED.search(m.group("text")):
            m = _EDG.match(line)
            style = "nvcc"
        if m is None or not _DEPRECATED.search(m.group("text")):
            continue
        tags = [t for t in _TAG.findall(m.group("text")) if t in rows]
        if not tags:
            continue
        path = m.group("file").strip()
        if _TORCH_HEADER.search(path.replace("\\", "/")):
            continue  # PyTorch's own headers, built without -isystem: not the user's code
        if build_dir and not os.path.isabs(path):
            path = os.path.normpath(os.path.join(build_dir, path))
        col = m.groupdict().get("col")
        out.append(Diagnostic(path, int(m.group("line")), int(col) if col else None,
                              tags[-1], style, n))
    return out


def read(path: str, build_dir: Optional[str] = None) -> list[Diagnostic]:
    """Reads a build log and parses it; ReportError names an unreadable file.
    Bytes that are not UTF-8 (a log may hold any) are read as U+FFFD."""
    data = _read_input(path, reports=False)[1]
    return parse(data.decode("utf-8", errors="replace"), build_dir)


#: The bytes an input's kind is judged by (a report's `{`, a binary file's NUL).
_HEAD = 4096


def _read_input(path: str, reports: bool = True) -> tuple[bool, bytes]:
    """(whether ``path`` is a JSON report, its bytes), read once: an input
    may be a pipe (``report show <(zcat build.log.gz)``), whose bytes a second
    open would not see again. A file that is not a report and holds a NUL in
    its first 4 KiB is refused before the rest is read (a 2 GB binary, or
    /dev/zero, which has no end). ``reports=False``: every input is a build
    log.

    It is a report when its name ends in ``.json``, or its first non-blank
    byte is ``{`` (not ``[``: ninja starts its lines with ``[1/8]``)."""
    from anydev._common.files import open_input

    try:
        with open_input(path, "report or build log") as f:  # never blocks on a named FIFO
            head = f.read(_HEAD)
            is_json = reports and (path.lower().endswith(".json") or
                                   head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{")
            if not is_json and b"\0" in head:
                raise _report.ReportError(f"{path}: not a text file (a build log or a report "
                                          f"was expected)")
            return is_json, head + f.read()
    except OSError as e:
        raise _report.ReportError(f"{path}: cannot read: {e.strerror or e}") from None


def _rows() -> dict[str, Any]:
    from anydev._compat.table import ROWS_BY_CODE

    return {c: r for c, r in ROWS_BY_CODE.items() if r.status == "deprecated"}


def _display(path: str, cwd: str) -> str:
    if os.path.isabs(path):
        norm = os.path.normpath(path)
        if norm.startswith(cwd.rstrip(os.sep) + os.sep):
            return os.path.relpath(norm, cwd)
        return norm
    while path.startswith("./"):
        path = path[2:]
    return path


def _spellings(path: str) -> dict[tuple[int, str], list[Any]]:
    """The scanner's findings of one file by (line, rule); {} when it cannot
    be scanned (missing, not C++)."""
    from anydev import scan

    if scan.language_of(path) != "cpp":
        return {}
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return {}
    found, _errors = scan.scan_source(data, path, language="cpp")
    out: dict[tuple[int, str], list[Any]] = {}
    for f in found:
        out.setdefault((f.line, f.rule), []).append(f)
    return out


def _iso(ts: float) -> str:
    return _dt.datetime.fromtimestamp(ts, _dt.timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


def to_report(diagnostics: Sequence[Diagnostic], log: str = "<log>",
              when: Optional[float] = None) -> dict[str, Any]:
    """Makes a report (the runtime report's format) of a log's diagnostics.
    ``when``: the build's time (default: now), each call's first_seen."""
    import time

    rows = _rows()
    cwd = os.getcwd()
    stamp = _iso(time.time() if when is None else when)
    scans: dict[str, dict[tuple[int, str], list[Any]]] = {}
    calls: dict[tuple[str, int, str], dict[str, Any]] = {}
    for d in diagnostics:
        row = rows[d.rule]
        shown = _display(d.file, cwd)
        if shown not in scans:
            scans[shown] = _spellings(d.file)
        found = scans[shown].get((d.line, d.rule), [])
        legacy = found[0].symbol if found else row.legacy
        column = found[0].column if found else d.column
        key = (shown, d.line, legacy)
        c = calls.get(key)
        if c is None:
            c = calls[key] = {
                "file": shown, "line": d.line, "module": "", "legacy": legacy,
                "replacement": row.replacement, "rule": d.rule, "count": 0,
                "first_seen": stamp, "column": column or 0, "seen_by": {"build": 0},
            }
        c["count"] += 1
        c["seen_by"]["build"] += 1
    styles = sorted({d.style for d in diagnostics})
    return {"format": _report.FORMAT, "version": _report.VERSION,
            "processes": [{"build_log": log, "diagnostics": len(diagnostics),
                           "styles": styles, "written": stamp}],
            "calls": sorted(calls.values(), key=lambda c: (c["file"], c["line"], c["legacy"]))}


def from_scan(paths: Sequence[str], *, language: Optional[str] = None) -> dict[str, Any]:
    """Runs the scanner over ``paths`` and returns its findings as a report:
    one call site per (file, line, spelling), ``seen_by: {"scan": n}``.
    ``language``: keep only "cpp" or "python" findings."""
    import time

    from anydev import scan

    for p in paths:
        if not os.path.exists(p):
            raise _report.ReportError(f"--scan {p}: no such file or folder")
    result = scan.scan_paths(list(paths))
    stamp = _iso(time.time())
    calls: dict[tuple[str, int, str], dict[str, Any]] = {}
    for f in result.findings:
        if language and f.language != language:
            continue
        key = (f.path, f.line, f.symbol)
        c = calls.get(key)
        if c is None:
            c = calls[key] = {
                "file": f.path, "line": f.line, "module": "", "legacy": f.symbol,
                "replacement": f.replacement, "rule": f.rule, "count": 0,
                "first_seen": stamp, "column": f.column, "seen_by": {"scan": 0},
            }
        c["count"] += 1
        c["seen_by"]["scan"] += 1
    return {"format": _report.FORMAT, "version": _report.VERSION,
            "processes": [{"scan": list(paths), "files": result.files, "written": stamp}],
            "calls": sorted(calls.values(), key=lambda c: (c["file"], c["line"], c["legacy"]))}


def combine(reports: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Merges runtime, build and scan reports of the same code: call sites
    with the same (file, line, rule) become one (Note [One row per site]; the
    first spelling is kept), their counts add
    up, ``seen_by`` adds up per source (a runtime call without it counts as
    ``run``), the earliest first_seen and the first known column are kept."""
    processes: list[dict[str, Any]] = []
    calls: dict[tuple[str, int, str], dict[str, Any]] = {}
    cwd = os.getcwd()
    for r in reports:
        processes.extend(r["processes"])
        for c in r["calls"]:
            seen = c.get("seen_by") or {"run": c["count"]}
            # Note [One row per site]: a runtime report names a file as the
            # interpreter saw it (absolute under `anydev run`), a scan as given
            # (relative), and a scan spells a call as written (an `also`
            # spelling) where the runtime names the row's legacy symbol: a
            # site is its file as shown here, its line and its rule, so that
            # `report merge --scan` lists one call site once.
            file = _display(c["file"], cwd)
            key = (file, c["line"], c["rule"])
            m = calls.get(key)
            if m is None:
                m = calls[key] = dict(c, file=file)
                m["seen_by"] = dict(seen)
                continue
            m["count"] += c["count"]
            m["first_seen"] = min(m["first_seen"], c["first_seen"])
            if not m.get("column") and c.get("column"):
                m["column"] = c["column"]
            if not m.get("module") and c.get("module"):
                m["module"] = c["module"]
            if c.get("cuda_only"):  # a run on another accelerator: anydev/_torch/cuda_only.py
                m["cuda_only"] = True
                m["raised"] = m.get("raised", 0) + c.get("raised", 0)
            for k, v in seen.items():
                m["seen_by"][k] = m["seen_by"].get(k, 0) + v
    return {"format": _report.FORMAT, "version": _report.VERSION, "processes": processes,
            "calls": sorted(calls.values(), key=lambda c: (c["file"], c["line"], c["legacy"]))}


def load_input(path: str, build_dir: Optional[str] = None) -> dict[str, Any]:
    """Reads a runtime report (JSON) or a build log (anything else) as a
    report; ReportError names the file and the problem."""
    is_json, data = _read_input(path)
    if is_json:
        return _report.parse(data, path)
    diagnostics = parse(data.decode("utf-8", errors="replace"), build_dir)
    try:
        when = os.path.getmtime(path)
    except OSError:
        when = None
    return to_report(diagnostics, path, when)


def gather(inputs: Sequence[str], scan: Sequence[str] = (),
           build_dir: Optional[str] = None) -> dict[str, Any]:
    """The report of ``anydev report show/merge``: runtime reports and build
    logs (``inputs``) and, with ``scan``, the scanner's findings over those
    paths, merged. Runtime reports alone merge as :func:`anydev.report.merge`
    does; with a build log or a scan, call sites merge by :func:`combine`."""
    loaded = [load_input(p, build_dir) for p in inputs]
    if scan:
        loaded.append(from_scan(scan))
    if len(loaded) == 1:
        return loaded[0]
    if not any("seen_by" in c for r in loaded for c in r["calls"]):
        return _report.merge(loaded)
    return combine(loaded)
