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
anydev/_cli/main.py).
"""

from __future__ import annotations

import os
import sys

from anydev._common import config as _config
from anydev._migrate.output import (UsageError, _is_io_error, _Lines, _then, error_kind,
                                    error_level, write_atomic)

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` costs the command's start-up
    import argparse
    from typing import Callable, Iterable, Iterator, Optional, Sequence

    from anydev import scan as _scan

FORMATS = _config.OUTPUT_FORMATS
DEFAULT_MAX_FILE_SIZE = 20 << 20


def _scanner():
    from anydev import scan

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


# --- output ------------------------------------------------------------------------


# The renderers yield the report in chunks, so that a report of many
# findings is written without being held whole in memory.

def _text_path(path: str) -> str:
    """A path as the text report and the error lines show it: one holding a
    control character (a line break split its line in two) in git's quotes,
    as `anydev fix --diff` shows it. A name that is not UTF-8 is already
    quoted, with no control character left in it."""
    if path.isprintable() or not any(c < " " or c == "\x7f" for c in path):
        return path
    return _scanner().quote_path(path.encode("utf-8", "surrogateescape"))


def render_text(findings, errors, files: int, *, colour: bool = False,
                summary: bool = True, show_fixes: bool = False,
                fixable: "Optional[set]" = None) -> Iterator[str]:
    """The text report of `findings`: a list of Findings, a scan._Report
    (its lines written natively: Note [Native reports] in bind_scan.cc), or
    a scan._Stream (its batches' reports written as they come, and its
    ``files`` counted by then: Note [Streamed reports] in anydev/scan.py)."""
    native = getattr(findings, "render", None)
    batches = getattr(findings, "batches", None)
    if batches is not None:
        texts: dict = {}
        for batch in batches():
            yield from _render_text_native(batch, colour, texts)
            batch = None  # let it go before the next is scanned
        files = findings.files
        yield from _render_text_objects(findings.extra, colour, fixable)  # notebooks, at the end
    elif native is not None:
        yield from _render_text_native(findings, colour, {})
    else:
        yield from _render_text_objects(findings, colour, fixable)
    if show_fixes:
        listed = findings.findings if native is not None else findings
        yield from render_fix_list([f for f in listed if _marked(f, fixable)],
                                   "Would fix {n} with `anydev fix`:")
    if summary:
        yield summary_line(findings, files, fixable) + "\n"


def _marked(f, fixable) -> bool:
    """Whether a finding gets `[*]`: the ones `anydev fix` would fix at that
    site (``fixable``, its dry run's keys), else those of a safe row."""
    if fixable is None:
        return f.fix == "safe"
    return (f.path, f.start, f.rule) in fixable


def fixable_keys(sel, scanned) -> "Optional[set]":
    """The (path, start, rule) of each finding `anydev fix` would rewrite
    without --unsafe-fixes, from a dry run of the fixer on ``scanned`` (Note
    [Marks of the fixer]); None where none can be asked (stdin, no safe row)."""
    if getattr(sel, "stdin", False) or not any(f.fix == "safe" for f in scanned.findings):
        return None
    from anydev import fix as _fix

    kwargs: dict = {}
    if sel.target_torch is not None:
        kwargs["target_torch"] = sel.target_torch
    if sel.keep_globs:
        kwargs["keep"] = sel.keep_globs
    result = _fix.fix_paths(sel.paths, unsafe=False, diff=True, scanned=scanned, check=True,
                            rules=lambda fs: sel.filter([f for f in fs if sel.rules(f.rule)]),
                            **kwargs)
    return {(f.path, f.start, f.rule) for fr in result.files if fr.error is None
            for f in fr.applied}


# Note [Marks of the fixer]
# `anydev scan` marked `[*]` every finding of a row whose fix is safe, and said
# "4 fixable" where `anydev fix` then left all four (a target torch without the
# replacement, a device home, a check over code not shown generic, a test's
# patch). `anydev scan --show-fixes` asks the fixer itself, in a dry run on the
# same findings (it parses only the files with a finding the table lets it
# rewrite at the target: Note [Nothing to fix]), and marks and lists exactly
# what it would rewrite. The plain text report stays streamed from the native
# scan (Note [Streamed reports]: its memory does not grow with the findings,
# and it imports no fixer), so there `[*]` is still the row's level; JSON and
# SARIF keep the row's level in `fix`. On Megatron-LM the dry run costs about
# 5 s of wall on top of the scan's 1.3 s.


def _render_text_objects(findings, colour: bool, fixable=None) -> Iterator[str]:
    """The text lines of Finding objects (a notebook's: `path:cell N:line:column`)."""
    shown = _text_path
    if colour:  # as ruff: the path bold, the position dim, the code red, [*] cyan
        b, d, r, c, z = "\033[1m", "\033[2m", "\033[1;31m", "\033[36m", "\033[0m"
        for f in findings:
            mark = f" {c}[*]{z}" if _marked(f, fixable) else ""
            cell = getattr(f, "cell", None)
            where = f"{d}:{z}cell {cell}" if cell is not None else ""
            yield (f"{b}{shown(f.path)}{z}{where}{d}:{z}{f.line}{d}:{z}{f.column}{d}:{z} "
                   f"{r}{f.rule}{z}"
                   f"{mark} {f.message}\n")
    else:
        for f in findings:
            mark = " [*]" if _marked(f, fixable) else ""
            cell = getattr(f, "cell", None)
            where = f":cell {cell}" if cell is not None else ""
            yield f"{shown(f.path)}{where}:{f.line}:{f.column}: {f.rule}{mark} {f.message}\n"


def _render_text_native(report, colour: bool, texts: dict) -> Iterator:
    """The text lines of a scan._Report's findings, written natively (Note
    [Native reports] in bind_scan.cc); ``texts`` keeps the text of each key
    from one report (a batch of a stream) to the next."""
    if colour:  # as ruff: the path bold, the position dim, the code red, [*] cyan
        b, d, r, c, z = "\033[1m", "\033[2m", "\033[1;31m", "\033[36m", "\033[0m"
        parts: list = [0, 2, f"{d}:{z}", 3, 1]
        head = f"{d}:{z} {r}{{}}{z}{{}} {{}}\n"
        safe = f" {c}[*]{z}"
        path: Callable[[str], str] = lambda p: f"{b}{_text_path(p)}{z}{d}:{z}"  # noqa: E731
    else:
        parts, head, safe = [0, 2, ":", 3, 1], ": {}{} {}\n", " [*]"
        path = lambda p: _text_path(p) + ":"  # noqa: E731
    keys = []
    for code, symbol, msg, row in report.keys():
        t = texts.get((code, symbol, id(row)))
        if t is None:
            t = texts[(code, symbol, id(row))] = head.format(
                code, safe if row.fix == "safe" else "", msg)
        keys.append(t)
    return report.render(parts, path, keys)


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
        yield f"- {_text_path(path)}:\n"
        for (rule, symbol, repl), k in sorted(counts.items()):
            yield f"    {k} × {rule} ({symbol} -> {repl or '(none)'})\n"
    yield "\n"


def summary_line(findings, files: int, fixable: "Optional[set]" = None) -> str:
    if not findings:
        return f"No legacy references found ({files} file{'s' if files != 1 else ''} scanned)."
    counts = getattr(findings, "summary_counts", None)  # a scan._Report
    if counts is not None:
        n, nfiles, safe, unsafe = counts()
    elif fixable is not None:
        n = len(findings)
        nfiles = len({f.path for f in findings})
        safe = sum(1 for f in findings if (f.path, f.start, f.rule) in fixable)
        unsafe = sum(1 for f in findings if f.fix == "unsafe")
    else:
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


def file_name(text: str) -> str:
    """An option's file name: an empty one is refused by name, where it used
    to read as the option's absence (`-o ''` printed to stdout, `--baseline ''`
    compared with no baseline)."""
    if not text:
        from argparse import ArgumentTypeError

        raise ArgumentTypeError("the file name is empty")
    return text


def target_torch(text: str) -> str:
    """--target-torch: a version the fixer's table knows (anydev._migrate.torch_versions)."""
    from anydev._migrate import torch_versions as _versions

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
    p.add_argument("--stdin-filename", type=file_name, metavar="NAME",
                   help="the name of the file read from stdin (`-`): its language, and "
                        "which per-file-ignores and keep apply")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print the findings and errors only, no summary")
    p.add_argument("--config", type=file_name, metavar="FILE",
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
    p.add_argument("--output", "-o", type=file_name, metavar="FILE",
                   help="write the report here (atomically); `-`: stdout")
    p.add_argument("--statistics", action="store_true",
                   help="counts per rule and per symbol (with --format text: instead of the "
                        "list; otherwise on stderr)")
    p.add_argument("--show-fixes", action="store_true",
                   help="after the list, what `anydev fix` would fix, per file and rule")
    p.add_argument("--baseline", type=file_name, metavar="FILE",
                   help="report only findings that are not in this baseline")
    p.add_argument("--write-baseline", type=file_name, metavar="FILE",
                   help="record the current findings as the baseline and exit 0")
    p.set_defaults(func=cmd_scan)


def cmd_scan(args: argparse.Namespace) -> int:
    if args.output == "-":  # `-o -`: stdout, as the path `-` is stdin
        args.output = None
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


def write_stdout(chunks: Iterable[str], what: str = "the report", *,
                 utf8: bool = False) -> None:
    """Writes to stdout; a write that fails (a full disk, /dev/full) is a
    UsageError naming it (a closed pipe stays a BrokenPipeError). ``utf8``:
    the text is UTF-8 whatever the locale says (JSON, SARIF and GitHub's
    annotations are UTF-8 by their specifications, and a diff must hold the
    bytes of the file); else it is in stdout's encoding, with a character
    that encoding lacks as a backslash escape (a Latin-1 locale once stopped
    the SARIF report with a UnicodeEncodeError traceback at its first `→`)."""
    if sys.stdout is None:  # started with stdout closed (`anydev scan . >&-`)
        raise UsageError(f"cannot write {what} to stdout: it is closed")
    try:
        _write_text(sys.stdout, chunks, utf8)
    except BrokenPipeError:
        raise
    except OSError as e:
        _silence_stdout()
        raise UsageError(f"cannot write {what} to stdout: {e.strerror or e}") from None


def _write_text(out, chunks: Iterable, utf8: bool = False) -> None:
    """Writes chunks of str, or bytes of UTF-8 (the native renderer's), to the
    text stream `out`, through its binary buffer: in UTF-8 when ``utf8`` or
    when it encodes so (bytes then go as they are), else encoded as it
    encodes, a character it cannot encode as a backslash escape. A stream
    without a buffer (a StringIO) takes str."""
    import codecs

    raw = getattr(out, "buffer", None)
    encoding = "utf-8"
    if raw is not None and not utf8:
        try:
            encoding = codecs.lookup(out.encoding).name
        except (LookupError, TypeError, AttributeError):
            raw = None
    if raw is None:
        out.writelines(c.decode("utf-8") if c.__class__ is bytes else c for c in chunks)
        out.flush()
        return
    out.flush()  # what was printed before goes first
    native = encoding == "utf-8"
    for c in chunks:
        if c.__class__ is bytes:
            raw.write(c if native else c.decode("utf-8").encode(encoding, "backslashreplace"))
        else:
            raw.write(c.encode(encoding, "backslashreplace"))
    raw.flush()


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

    def settings(self):
        """The selection as anydev._migrate.check.Settings (for one file, as
        the editor server checks it)."""
        from anydev._migrate import check as _check

        return _check.Settings(self.rules, per_file_ignores=self.per_file_ignores,
                               keep=self.keep, root=self.cfg.root or os.getcwd(),
                               target_torch=self.target_torch,
                               max_file_size=self.max_file_size)

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
    try:  # as the editor server reads them (anydev._migrate.check.rule_settings)
        rules, pfi = _scanner()._rule_settings(cfg, args.select, args.ignore or [])
    except ValueError as e:
        raise UsageError(str(e)) from None
    paths = _distinct(args.paths or ["."])
    stdin = paths == ["-"]
    if "-" in paths and not stdin:
        raise UsageError("`-` (stdin) must be the only path")
    if args.stdin_filename and not stdin:
        raise UsageError("--stdin-filename goes with the path `-` (stdin)")
    if not stdin:
        for p in paths:
            if not p:
                raise UsageError("a PATH is empty (`''`); give `.` for the current folder")
            if not os.path.lexists(p):
                raise UsageError(f"{p}: no such file or directory")
    excludes = [(g, cfg.root) for g in cfg.exclude] + [(g, "") for g in args.exclude]
    if cfg.target_torch is not None and args.target_torch is None:
        from anydev._migrate import torch_versions as _versions

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


def _distinct(paths: Sequence[str]) -> list[str]:
    """The paths without the repeats of an earlier one, spelt alike or not
    (`a.py ./a.py`, `src src/`): each file is scanned, counted and fixed once.
    Names are compared as written with `./`, `//` and a trailing `/` taken
    out; `..` is kept, as it could name another file past a symbolic link."""
    seen: set[str] = set()
    out = []
    for p in paths:
        key = p
        if p not in ("", "-"):
            parts = [c for c in p.split("/") if c not in ("", ".")]
            key = ("/" if p.startswith("/") else "") + "/".join(parts) or "."
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


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
    from anydev._migrate import check as _check

    name = sel.stdin_filename or "-"
    language = _check.language_of(name) if sel.stdin_filename else "python"
    if language is None:
        raise UsageError(f"--stdin-filename {name}: not a Python or C/C++/CUDA/HIP source "
                         f"or a Jupyter notebook (by its extension)")
    try:
        data = sys.stdin.buffer.read()
    except (OSError, AttributeError, ValueError) as e:
        raise UsageError(f"cannot read stdin: {getattr(e, 'strerror', None) or e}") from None
    return name, data, language


def scan_selection(sel: Selection, jobs: Optional[int], *, report: bool = False,
                   stream: bool = False):
    """Scans what the selection covers (the paths, or stdin), with the
    per-file-ignores applied: a ScanResult, or with ``report`` and paths, a
    scan._Report (its findings native until asked for), or with ``stream``
    and paths, a scan._Stream (the tree walked, scanned as its batches are
    asked for: Note [Streamed reports] in anydev/scan.py)."""
    scan = _scanner()
    if stream and not sel.stdin:
        return scan._scan_stream(
            sel.paths, keep=sel.rules, excludes=sel.excludes, jobs=jobs,
            respect_gitignore=sel.respect_gitignore, max_file_size=sel.max_file_size,
            drop=sel.dropped() if sel.per_file_ignores else None, notebooks=True)
    if sel.stdin:
        from anydev._migrate import check as _check  # one file, as `anydev server` checks it

        name, data, language = read_stdin(sel)
        checked = _check.check_source(data, name, sel.settings(), language=language,
                                      baseline=False)
        result = scan.ScanResult(findings=checked.findings, errors=checked.errors,
                                 files=0 if len(data) > sel.max_file_size else 1,
                                 bytes=len(data))
        result.stdin_data = data  # type: ignore[attr-defined]
        return result
    found = scan._scan_report(sel.paths, keep=sel.rules, excludes=sel.excludes, jobs=jobs,
                              respect_gitignore=sel.respect_gitignore,
                              max_file_size=sel.max_file_size, notebooks=True)
    if sel.per_file_ignores:
        found.drop_where(sel.dropped())
    return found if report else found.result()


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
    baseline = args.baseline or cfg.baseline
    # The text, JSON and GitHub reports are written from the native report,
    # as the tree is scanned (Note [Streamed reports] in anydev/scan.py); the
    # rest reads the whole tree's Finding objects.
    objects = (args.write_baseline or baseline or args.statistics or args.show_fixes
               or fmt not in ("text", "json", "github"))
    result = scan_selection(sel, args.jobs, report=True, stream=not objects)
    findings = result.findings if objects or not hasattr(result, "render") and \
        not hasattr(result, "batches") else result
    lines = _Lines()

    if args.write_baseline:
        from anydev._migrate.formats import write_baseline

        try:
            write_baseline(args.write_baseline, findings)
        except OSError as e:
            raise UsageError(f"{args.write_baseline}: cannot write: {e.strerror}") from None
        if not args.quiet:
            print(f"anydev scan: wrote {len(findings)} finding(s) to {args.write_baseline}",
                  file=sys.stderr)
        _print_errors(result.errors)
        return 2 if any(_is_io_error(e) for e in result.errors) else 0

    if baseline:
        from anydev._migrate.formats import fingerprint_keys, read_baseline

        known = read_baseline(baseline)
        base = os.path.dirname(os.path.abspath(baseline))
        keys = fingerprint_keys(findings, relative_to=base, lines=lines)
        findings = [f for f, k in zip(findings, keys) if k not in known]

    if fmt == "text":
        if args.statistics:
            from anydev._migrate.formats import render_statistics

            text: Iterable[str] = [render_statistics(findings, result.files, result.bytes,
                                                     sel.target_torch)]
        else:
            colour = not args.output and use_colour(sys.stdout)
            # with --show-fixes, `[*]` is what `anydev fix` would fix at that site (Note
            # [Marks of the fixer]); the streamed report marks the safe rows
            fixable = fixable_keys(sel, result) if findings and args.show_fixes else None
            text = render_text(findings, result.errors, result.files, colour=colour,
                               summary=not args.quiet, show_fixes=args.show_fixes,
                               fixable=fixable)
        if not args.quiet:
            text = _then(text, lambda: _scanner().ignore_summary(result))
    elif fmt == "json":
        from anydev._migrate.formats import render_json

        text = render_json(findings, result.errors)
    elif fmt == "sarif":
        import anydev

        from anydev._migrate.formats import render_sarif

        text = render_sarif(findings, result.errors, sel.rules, version=anydev.__version__,
                            lines=lines)
    else:
        from anydev._migrate.formats import render_github

        text = render_github(findings, result.errors)
    if args.statistics and fmt != "text":
        from anydev._migrate.formats import render_statistics

        sys.stderr.write(render_statistics(findings, result.files, result.bytes,
                                           sel.target_torch))

    if args.output:
        try:
            write_atomic(args.output, text, durable=False)
        except OSError as e:
            raise UsageError(f"{args.output}: cannot write: {e.strerror}") from None
    else:
        write_stdout(text, utf8=fmt != "text")
    if fmt != "github" or args.output:
        _print_errors(result.errors)
    if any(_is_io_error(e) for e in result.errors):
        return 2
    return sel.status(bool(findings), result.errors)


def _print_errors(errors: Iterable[_scan.ScanError]) -> None:
    for e in errors:
        where = _text_path(e.path) + (f":{e.line}" if e.line else "")
        print(f"{where}: {error_level(e)}: {e.message}", file=sys.stderr)
