"""The runtime report: every legacy call that actually ran, by call site.

Counting happens in native code on every legacy call, warned or not. This
module turns the counts into a report:

* :func:`snapshot` returns it as a dict (the JSON format below);
* ``ANYDEV_REPORT=path`` writes it when the process exits (normally, by an
  uncaught exception or by ``sys.exit``), atomically; ``{pid}`` and
  ``{rank}`` in the path expand (rank from ``RANK``, else ``LOCAL_RANK``,
  else 0);
* :func:`merge` combines the reports of many processes without losing a
  count, and :func:`render` shows one as text, Markdown, JSON or SARIF 2.1.0.

Format (``"version": 1``)::

    {"format": "anydev-report", "version": 1,
     "processes": [{"id": "3f2a...", "pid": 12, "rank": 0, "argv": [...], "started": "...",
                    "written": "..."}],
     "calls": [{"file": "train.py", "line": 41, "module": "__main__",
                "legacy": "torch.cuda.current_device",
                "replacement": "torch.accelerator.current_device_index",
                "rule": "AD103", "count": 1000, "first_seen": "2026-11-29T20:41:07.123Z"}]}

Each process has an ``id`` (random, new in every process, a forked child
included), so merging the same report twice counts it once. Under
``anydev run`` every process of the run writes its counts (spawned, forked
and forkserver children, subprocesses of the same Python: see
:mod:`anydev._cli.run_child`) and the run's report merges them.
"""

from __future__ import annotations

import atexit
import datetime as _dt
import hashlib
import json
import os
import pathlib
import sys
import uuid
from typing import Any, Iterable, Optional

from . import _C
from ._common import json_text as _json_text
from ._common.files import open_input, replace_atomically

__all__ = ["ReportError", "expand_path", "load", "merge", "parse", "render", "snapshot",
           "write"]

FORMAT = "anydev-report"
VERSION = 1
_started = _dt.datetime.now(_dt.timezone.utc)
_process_id = uuid.uuid4().hex
# The folder the children of an `anydev run` write their reports to, in the
# run's own process (anydev._cli.run_child sets it); None elsewhere.
_children_dir: Optional[str] = None
# Functions (calls, native) -> None that snapshot() calls with its entries and
# the engine's, index for index, before sorting: anydev._torch.cuda_only marks
# and adds the CUDA-only sites of a run on another accelerator.
_snapshot_extensions: list = []


def _new_process() -> None:
    """Gives a forked child its own id and start time (see anydev._cli.run_child)."""
    global _process_id, _started
    _process_id = uuid.uuid4().hex
    _started = _dt.datetime.now(_dt.timezone.utc)


class ReportError(ValueError):
    """A report file is unreadable, corrupt, or cannot be written."""


def _iso(ts: float | _dt.datetime) -> str:
    if isinstance(ts, (int, float)):
        ts = _dt.datetime.fromtimestamp(ts, _dt.timezone.utc)
    return ts.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _rank() -> int:
    for var in ("RANK", "LOCAL_RANK"):
        value = os.environ.get(var, "")
        if value.strip().lstrip("-").isdigit():
            return int(value)
    return 0


def snapshot() -> dict[str, Any]:
    """Returns this process's report so far."""
    calls = []
    native = _C._compat.snapshot()
    for c in native:
        calls.append({
            "file": c["file"], "line": c["line"], "module": c["module"],
            "legacy": c["legacy"], "replacement": c["replacement"], "rule": c["rule"],
            "count": c["count"], "first_seen": _iso(c["first_seen"]),
        })
    for extend in _snapshot_extensions:
        extend(calls, native)
    calls.sort(key=lambda c: (c["file"], c["line"], c["legacy"]))
    return {
        "format": FORMAT,
        "version": VERSION,
        "processes": [dict({
            "id": _process_id, "pid": os.getpid(), "rank": _rank(), "argv": list(sys.argv),
            "started": _iso(_started), "written": _iso(_dt.datetime.now(_dt.timezone.utc)),
        }, **({"world_size": int(os.environ["WORLD_SIZE"])}
              if os.environ.get("WORLD_SIZE", "").isdigit() else {}))],
        "calls": calls,
    }


def expand_path(template: str) -> str:
    """Expands ``{pid}`` and ``{rank}`` in a report path."""
    try:
        return template.format(pid=os.getpid(), rank=_rank())
    except (KeyError, IndexError, ValueError) as e:
        raise ReportError(f"report path {template!r}: only {{pid}} and {{rank}} may be "
                          f"expanded ({e})") from None


def check_writable(path: str) -> None:
    """Raises ReportError when ``path`` cannot be written (its folder is missing
    or not writable), so the problem shows up before the run, not after it."""
    if not path:  # abspath("") is the current folder: the rename named ''
        raise ReportError("report path '' is empty")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ReportError(f"report path {path}: the directory {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise ReportError(f"report path {path}: the directory {folder} is not writable")
    if os.path.isdir(path):
        raise ReportError(f"report path {path} is a directory")


def write(path: str, report: Optional[dict[str, Any]] = None) -> str:
    """Writes ``report`` (default: :func:`snapshot`) to ``path`` atomically: a
    temporary file in the same folder, renamed over ``path``, so no reader ever
    sees a partial report. Returns the path written."""
    check_writable(path)
    data = json.dumps(report if report is not None else snapshot(), indent=1, sort_keys=True)
    # A new file gets the umask's mode (as `open` would give it), a replaced
    # one keeps its own: the temporary file's 0600 would hide it from the team.
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    replace_atomically(path, [(data + "\n").encode("utf-8")], mode=mode,
                       prefix=".anydev-report-")
    return path


def _fail(path: str, problem: str) -> ReportError:
    return ReportError(f"{path}: {problem}")


def validate(report: Any, path: str = "<report>") -> dict[str, Any]:
    """Checks that ``report`` has the report format; returns it."""
    if not isinstance(report, dict):
        raise _fail(path, "not an anydev report (the top level is not a JSON object)")
    if report.get("format") != FORMAT:
        raise _fail(path, f"not an anydev report (format is {report.get('format')!r}, "
                          f"expected {FORMAT!r})")
    if report.get("version") != VERSION:
        raise _fail(path, f"unsupported report version {report.get('version')!r} "
                          f"(this anydev reads version {VERSION})")
    for key in ("processes", "calls"):
        if not isinstance(report.get(key), list):
            raise _fail(path, f"`{key}` is missing or not a list")
    fields = {"file": str, "line": int, "module": str, "legacy": str, "replacement": str,
              "rule": str, "count": int, "first_seen": str}
    for i, call in enumerate(report["calls"]):
        if not isinstance(call, dict):
            raise _fail(path, f"calls[{i}] is not an object")
        for name, typ in fields.items():
            value = call.get(name)
            if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
                raise _fail(path, f"calls[{i}].{name} is missing or not a {typ.__name__}")
        if call["count"] < 0:
            raise _fail(path, f"calls[{i}].count is negative")
        # A CUDA-only site (a run on another accelerator, anydev/_torch/cuda_only.py)
        if "cuda_only" in call and not isinstance(call["cuda_only"], bool):
            raise _fail(path, f"calls[{i}].cuda_only is not a bool")
        raised = call.get("raised", 0)
        if not isinstance(raised, int) or isinstance(raised, bool) or raised < 0:
            raise _fail(path, f"calls[{i}].raised is not a count")
    for i, p in enumerate(report["processes"]):
        if not isinstance(p, dict):
            raise _fail(path, f"processes[{i}] is not an object")
    return report


def load(path: str) -> dict[str, Any]:
    """Reads and validates a report file; ReportError names the file and the problem."""
    try:
        with open_input(path, "report") as f:
            raw = f.read()
    except OSError as e:
        raise _fail(path, f"cannot read: {e.strerror or e}") from None
    return parse(raw, path)


def parse(raw: bytes, path: str = "<report>") -> dict[str, Any]:
    """Parses and validates a report's bytes; ReportError names ``path`` and
    the problem, whatever the bytes (fuzz/report_fuzz.py holds it to that)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _fail(path, f"not UTF-8 text (byte {e.start})") from None
    # Note [Hostile reports]: a report is data from elsewhere (another
    # machine's ranks). Its nesting is bounded before the recursive parser
    # sees it, in linear time and constant memory (Note [Linear depth check]
    # in anydev/_common/json_text.py), and so is the size of its numbers, so
    # neither a 100,000-deep array nor a 5,000-digit integer becomes a
    # RecursionError or ValueError traceback: each is a ReportError (exit 2
    # on the command line).
    try:
        data = _json_text.loads(text, max_nesting=MAX_DEPTH, max_digits=MAX_DIGITS)
    except json.JSONDecodeError as e:
        raise _fail(path, f"corrupt JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    except _json_text.JSONLimitError as e:
        raise _fail(path, str(e)) from None
    except RecursionError:  # not reached below MAX_DEPTH; kept as a guard
        raise _fail(path, "nested too deeply") from None
    return validate(data, path)


MAX_DEPTH = 64      # levels of arrays and objects in a report (it uses 4)
MAX_DIGITS = 40     # digits of an integer (a count or a line is at most 20)


def merge(reports: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Merges reports (one per process, e.g. the ranks of a distributed job):
    counts of the same (file, line, legacy entry point) add up, the earliest
    first_seen is kept, and every process is listed. A report whose processes
    are all in the merge already (the same file given twice, or a part of a
    merged report merged with it again) adds nothing; one that shares only
    some of its processes with the merge is a ReportError, since its counts
    cannot be split between them. Reports without process ids (from anydev
    before they had them) are always added."""
    processes: list[dict[str, Any]] = []
    calls: dict[tuple[str, int, str], dict[str, Any]] = {}
    seen: set[str] = set()
    for n, r in enumerate(reports):
        ids = {p["id"] for p in r["processes"] if isinstance(p, dict) and isinstance(p.get("id"), str)}
        if ids and ids <= seen:
            continue  # already counted
        if ids & seen:
            raise ReportError(
                f"report {n + 1} shares processes {', '.join(sorted(ids & seen))} with the "
                "reports before it but not all of them; merge the original per-process reports")
        seen |= ids
        processes.extend(r["processes"])
        for c in r["calls"]:
            key = (c["file"], c["line"], c["legacy"])
            if key in calls:
                m = calls[key]
                m["count"] += c["count"]
                m["first_seen"] = min(m["first_seen"], c["first_seen"])
                if c.get("cuda_only"):
                    m["cuda_only"] = True
                    m["raised"] = m.get("raised", 0) + c.get("raised", 0)
            else:
                calls[key] = dict(c)
    return {"format": FORMAT, "version": VERSION, "processes": processes,
            "calls": sorted(calls.values(), key=lambda c: (c["file"], c["line"], c["legacy"]))}


def _rel(path: str, root: str) -> str:
    try:
        rel = os.path.relpath(path, root)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def render(report: dict[str, Any], fmt: str = "text", root: Optional[str] = None) -> str:
    """Renders a report as ``text``, ``markdown``, ``json`` or ``sarif``."""
    root = root or os.getcwd()
    # CUDA-only sites first (a run on another accelerator): what to migrate first
    calls = sorted(report["calls"], key=lambda c: (not c.get("cuda_only"), -c["count"], c["file"],
                                                   c["line"]))
    total = sum(c["count"] for c in calls)
    cuda_only = _cuda_only_line(calls)
    if fmt == "json":
        return json.dumps(report, indent=1, sort_keys=True)
    if fmt == "sarif":
        return json.dumps(_sarif(report, root), indent=1)
    if fmt == "markdown":
        lines = [f"# anydev runtime report",
                 "",
                 f"{total} legacy call{'s' if total != 1 else ''} from {len(calls)} call "
                 f"site{'s' if len(calls) != 1 else ''} in {len(report['processes'])} "
                 f"process{'es' if len(report['processes']) != 1 else ''}."
                 + (f" {_cuda_only_count(calls)} of the call sites are CUDA-only: they asked "
                    "for CUDA while another accelerator was current (listed first)."
                    if cuda_only else ""),
                 ""]
        if calls:
            lines += ["| count | call site | legacy | replacement | rule |",
                      "|---:|---|---|---|---|"]
            for c in calls:
                lines.append(f"| {c['count']} | `{_rel(c['file'], root)}:{c['line']}` | "
                             f"`{c['legacy']}` | `{c['replacement'] or '(none)'}` | "
                             f"{c['rule']}{_seen_by(c)}{_cuda_note(c, ', ')} |")
        return "\n".join(lines) + "\n"
    if fmt != "text":
        raise ReportError(f"unknown format {fmt!r}; expected text, markdown, json or sarif")
    who = "anydev"
    procs = report["processes"]
    if len(procs) == 1 and isinstance(procs[0], dict) and "world_size" in procs[0]:
        who = f"anydev [rank {procs[0].get('rank', 0)}/{procs[0]['world_size']}]"
    if not calls:
        return f"{who}: no legacy calls ran.\n"
    out = [f"{who}: {total} legacy call{'s' if total != 1 else ''} from {len(calls)} call "
           f"site{'s' if len(calls) != 1 else ''}" + (f"; {cuda_only}" if cuda_only else "")
           + ":"]
    width = max(len(str(c["count"])) for c in calls)
    for c in calls:
        out.append(f"  {c['count']:>{width}}  {_rel(c['file'], root)}:{c['line']}  "
                   f"{c['legacy']} -> {c['replacement'] or '(no replacement)'}  [{c['rule']}]"
                   f"{_seen_by(c)}{_cuda_note(c, '  ')}")
    return "\n".join(out) + "\n"


def _cuda_only_line(calls: list[dict[str, Any]]) -> str:
    """"3 of them CUDA-only ...": the CUDA-only sites of a run on another
    accelerator (anydev/_torch/cuda_only.py), "" when there are none."""
    n = _cuda_only_count(calls)
    if not n:
        return ""
    return (f"{n} of them CUDA-only (they asked for CUDA while another accelerator was "
            "current; listed first)")


def _cuda_only_count(calls: list[dict[str, Any]]) -> int:
    return sum(1 for c in calls if c.get("cuda_only"))


def _cuda_note(c: dict[str, Any], sep: str) -> str:
    """`  CUDA-only, raised 2`: a CUDA-only site and how many of its calls raised."""
    if not c.get("cuda_only"):
        return ""
    raised = c.get("raised", 0)
    return f"{sep}CUDA-only" + (f", raised {raised}" if raised else "")


def _seen_by(c: dict[str, Any]) -> str:
    """` (build 2, scan 1)`: which sources saw a merged call site (see
    anydev._migrate.build_log); "" for a plain runtime call."""
    seen = c.get("seen_by")
    if not isinstance(seen, dict) or not seen:
        return ""
    return " (" + ", ".join(f"{k} {v}" for k, v in sorted(seen.items())) + ")"


def _region(c: dict[str, Any]) -> dict[str, int]:
    region = {"startLine": max(1, c["line"])}
    if isinstance(c.get("column"), int) and c["column"] > 0:  # build logs and scans have one
        region["startColumn"] = c["column"]
    return region


def _sarif_message(c: dict[str, Any]) -> str:
    use = f"use {c['replacement'] or 'a device-generic API'} ({c['rule']})"
    if c.get("cuda_only"):
        raised = c.get("raised", 0)
        return (f"CUDA-only: {c['legacy']} ran {c['count']} time{'s' if c['count'] != 1 else ''} "
                f"while another accelerator was current"
                + (f" ({raised} raised)" if raised else "") + f"; {use}")
    seen = c.get("seen_by")
    if isinstance(seen, dict) and set(seen) != {"run"}:
        what = {"run": "ran", "build": "compiler warnings", "scan": "found by the scanner"}
        parts = [f"{what.get(k, k)} {v}" if k != "run" else f"ran {v} time{'s' if v != 1 else ''}"
                 for k, v in sorted(seen.items())]
        return f"{c['legacy']}: {', '.join(parts)}; {use}"
    return f"{c['legacy']} ran {c['count']} time{'s' if c['count'] != 1 else ''}; {use}"


def _sarif(report: dict[str, Any], root: str) -> dict[str, Any]:
    from ._compat.table import ROWS_BY_CODE

    version = _C._version()  # anydev.__version__

    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results = []
    for c in sorted(report["calls"], key=lambda c: (c["file"], c["line"], c["rule"])):
        if c["rule"] not in index:
            index[c["rule"]] = len(rules)
            row = ROWS_BY_CODE.get(c["rule"])
            note = row.note if row else ""
            replacement = c["replacement"] or "(none)"
            rules.append({
                "id": c["rule"],
                "name": c["legacy"],
                "shortDescription": {"text": f"{c['legacy']} is a legacy device-specific API; "
                                             f"use {replacement}"},
                "fullDescription": {"text": note or f"Use {replacement}."},
                "help": {"text": f"{c['legacy']} -> {replacement}. {note}".strip(),
                         "markdown": f"`{c['legacy']}` → `{replacement}`\n\n{note}".strip()},
                "defaultConfiguration": {"level": "warning"},
            })
        uri = _rel(c["file"], root)
        key = f"{uri}:{c['line']}:{c['legacy']}".encode("utf-8", "surrogatepass")  # "\udcff" is JSON
        fingerprint = hashlib.sha256(key).hexdigest()[:32]
        # SARIF wants URIs: a relative one against %SRCROOT%, else file:///...
        artifact = ({"uri": pathlib.PurePath(uri).as_uri()} if os.path.isabs(uri)
                    else {"uri": uri.replace(os.sep, "/"), "uriBaseId": "%SRCROOT%"})
        results.append({
            "ruleId": c["rule"],
            "ruleIndex": index[c["rule"]],
            "level": "warning",
            "message": {"text": _sarif_message(c)},
            "locations": [{"physicalLocation": {
                "artifactLocation": artifact,
                "region": _region(c)}}],
            "partialFingerprints": {"anydevCallSite/v1": fingerprint},
        })
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "anydev", "version": version,
                                "informationUri": "https://github.com/anydev/anydev",
                                "rules": rules}},
            "results": results,
        }],
    }


# The template of this process's report at exit (ANYDEV_REPORT, `anydev run
# --report`), absolute; None: no report at exit (or a child of a run, whose
# report anydev._cli.run_child writes).
_registered: Optional[str] = None
_hooked = False
_written_pid = -1  # the process that wrote its report at exit (a forked child writes its own)


def say(text: str) -> None:
    """Writes ``text`` (a line) to standard error wherever it still goes:
    sys.stderr, else the file descriptor 2, which a script that closed
    sys.stderr did not close (Python opens it with closefd=False). Never
    raises: a summary or a warning must not change a run's exit status."""
    if not text.endswith("\n"):
        text += "\n"
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None and not stream.closed:
                stream.write(text)
                stream.flush()
                return
        except (OSError, ValueError, AttributeError):
            continue
    try:
        os.write(2, text.encode("utf-8", "backslashreplace"))
    except OSError:
        pass


def run_snapshot() -> dict[str, Any]:
    """This process's report merged with those its children of an ``anydev
    run`` wrote so far (just :func:`snapshot` outside a run's own process)."""
    own = snapshot()
    if _children_dir is None:
        return own
    children = []
    try:
        names = sorted(os.listdir(_children_dir))
    except OSError:
        names = []
    for name in names:
        if name.startswith("child-") and name.endswith(".json"):
            try:
                children.append(load(os.path.join(_children_dir, name)))
            except ReportError as e:
                say(f"anydev: a child's runtime report is unreadable: {e}")
    return merge([own, *children])


# Note [One report path, many processes]
# Processes given the same ANYDEV_REPORT path without {pid} or {rank} (32
# ranks of a job, a shell loop with `&`) each replaced the file at exit, so
# the last one won: 1 process and 1,000 of 32,000 calls were left, without a
# word. Now a process writes its report at exit with its folder locked
# (flock on the folder: the report itself is renamed over, so it cannot hold
# a lock), and merges into it the report it finds there when that one was
# written while this process ran (its modification time is after this
# process's start): a sibling of the same job, which has not ended before
# this one began. A report written before this process started is a former
# run's and is replaced, as before. Processes of one job that do not
# overlap at all (the first ended before the last began) cannot be told from
# two runs one after the other; they want {pid} or {rank} in the path, as
# the docs say. Reports are merged as `anydev report merge` does: a process
# is counted once, by its id.
_LOCK_WAIT_S = 30.0


class _FolderLock:
    """An exclusive flock on a folder for the ``with`` block; nothing where
    the system has no such locks (a network file system may not), and after
    _LOCK_WAIT_S the block runs unlocked, with a warning (a writer stopped
    with its lock held must not stop every other at its exit)."""

    def __init__(self, folder: str):
        self.folder = folder
        self.fd = -1

    def __enter__(self) -> "_FolderLock":
        try:
            import fcntl
            import time

            self.fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                              | getattr(os, "O_CLOEXEC", 0))
        except (ImportError, OSError):
            return self
        deadline = time.monotonic() + _LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:
                    say(f"anydev: {self.folder} stayed locked by another process writing its "
                        f"report for {_LOCK_WAIT_S:.0f} s; writing without the lock")
                    return self
                time.sleep(0.005)
            except OSError:  # no flock here
                return self

    def __exit__(self, *exc: Any) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # releases the lock
            self.fd = -1


def write_shared(path: str, report: dict[str, Any]) -> str:
    """Writes ``report`` to ``path`` as :func:`write` does, merged with the
    report of a process that wrote the same path while this one ran (Note
    [One report path, many processes]). Returns the path written."""
    check_writable(path)
    with _FolderLock(os.path.dirname(os.path.abspath(path))):
        try:
            st = os.stat(path)
        except OSError:
            st = None
        import stat as _stat

        if st is not None and _stat.S_ISREG(st.st_mode) and \
                st.st_mtime >= _started.timestamp():
            try:
                other: Optional[dict[str, Any]] = load(path)
            except ReportError:
                other = None  # not a report: replaced, as before
            if other is not None:
                ours = {p.get("id") for p in report["processes"] if isinstance(p, dict)}
                theirs = {p.get("id") for p in other["processes"] if isinstance(p, dict)}
                if not (ours & theirs - {None}):
                    report = merge([other, report])
        return write(path, report)


def _write_at_exit(template: str) -> None:
    try:
        write_shared(expand_path(template), run_snapshot())
    except (ReportError, OSError) as e:
        say(f"anydev: could not write the runtime report: {e}")


def write_registered() -> None:
    """Writes the report to the path :func:`enable_at_exit` registered, now,
    once per process (at exit; `anydev run` calls it on SIGTERM too)."""
    global _written_pid
    if _registered is None or _written_pid == os.getpid():
        return
    _written_pid = os.getpid()
    _write_at_exit(_registered)


def _absolute(template: str) -> str:
    """``template`` made absolute against the current folder now: a script
    that changes its folder later must not move its report (the braces of
    the folder's name escaped, since the template is expanded later)."""
    if os.path.isabs(template) or not template:
        return template
    here = os.getcwd().replace("{", "{{").replace("}", "}}")
    return os.path.join(here, template)


def enable_at_exit(template: str) -> str:
    """Arranges for the report to be written to ``template`` (with ``{pid}``
    and ``{rank}`` expanded at exit; a relative path against the current
    folder now) when the process exits; checks the path now. Returns the
    path as expanded now."""
    global _registered, _hooked
    path = expand_path(template)
    check_writable(path)
    if not _hooked:
        atexit.register(write_registered)
        _hooked = True
    _registered = _absolute(template)
    return path


def disable_at_exit() -> None:
    """No report at exit (a child of `anydev run` writes its own instead)."""
    global _registered
    _registered = None


def _enable_from_environment() -> None:
    template = os.environ.get("ANYDEV_REPORT")
    if not template:
        return
    try:
        enable_at_exit(template)
    except ReportError as e:
        say(f"anydev: ANYDEV_REPORT: {e}")
