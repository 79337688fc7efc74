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
                fixable: "Optional[set]" = None,
                levels: "Optional[RowLevels]" = None) -> Iterator[str]:
    """The text report of `findings`: a list of Findings, a scan._Report
    (its lines written natively: Note [Native reports] in bind_scan.cc), or
    a scan._Stream (its batches' reports written as they come, and its
    ``files`` counted by then: Note [Streamed reports] in anydev/scan.py).
    ``fixable``: the fixer's own answer (--show-fixes); else ``levels``, what
    it can do with each row at the run's target torch (Note [Marks of the
    fixer])."""
    levels = levels if levels is not None else RowLevels(None)
    native = getattr(findings, "render", None)
    batches = getattr(findings, "batches", None)
    if batches is not None:
        texts: dict = {}
        for batch in batches():
            yield from _render_text_native(batch, colour, texts, levels)
            batch = None  # let it go before the next is scanned
        files = findings.files
        yield from _render_text_objects(findings.extra, colour, fixable, levels)  # notebooks
    elif native is not None:
        yield from _render_text_native(findings, colour, {}, levels)
    else:
        yield from _render_text_objects(findings, colour, fixable, levels)
    if show_fixes:
        listed = findings.findings if native is not None else findings
        yield from render_fix_list([f for f in listed if _marked(f, fixable, levels)],
                                   "Would fix {n} with `anydev fix`:")
    if summary:
        yield summary_line(findings, files, fixable, levels) + "\n"


class RowLevels:
    """What `anydev fix` can do with a row's findings at one target torch,
    by the row alone (Note [Marks of the fixer]): "safe", "unsafe" (with
    --unsafe-fixes), "newer" (the target lacks the replacement) or None (no
    mechanical fix). ``target``: a torch_versions.Target, or None for the
    row's level whatever the release; or ``resolve()`` that gives it, asked
    when a mark first needs it (a report without findings never does), in a
    thread of its own from the start with ``background`` (Note [The target
    while the tree is scanned])."""

    def __init__(self, target=None, resolve=None, background: bool = False) -> None:
        self._target = target
        self._resolve = resolve
        self._memo: dict = {}
        self._pending = None
        if resolve is not None and background:
            import _thread

            lock = _thread.allocate_lock()
            lock.acquire()
            box: list = []

            def run() -> None:
                try:
                    box.append((resolve(), None))
                except BaseException as e:  # noqa: BLE001 (raised where the target is asked)
                    box.append((None, e))
                finally:
                    lock.release()

            _thread.start_new_thread(run, ())
            self._pending = (lock, box)

    @property
    def target(self):
        if self._pending is not None:
            lock, box = self._pending
            with lock:  # the thread's answer
                pass
            self._pending = self._resolve = None
            got, err = box[0]
            if err is not None:
                raise err
            self._target = got
        elif self._resolve is not None:
            self._target, self._resolve = self._resolve(), None
        return self._target

    def __call__(self, row) -> "Optional[str]":
        if row is None:
            return None
        got = self._memo.get(id(row), 0)
        if got != 0:
            return got
        level = None
        if row.fix in ("safe", "unsafe") and (
                row.status == "deprecated" or row.status == "literal" and row.language == "python"):
            level = row.fix
            if self.target is not None:
                from anydev._migrate import torch_versions as _versions  # noqa: PLC0415

                if _versions.needs(row, self.target) is not None:
                    level = "newer"
        elif self.target is None and row.fix in ("safe", "unsafe"):
            level = row.fix  # the row's own level, as before
        self._memo[id(row)] = level
        return level

    def of(self, f) -> "Optional[str]":
        """The level of a Finding's row."""
        from anydev._compat import table as _table  # noqa: PLC0415

        return self(_table.ROWS_BY_CODE.get(f.rule) or _table.ROWS_BY_LEGACY.get(f.symbol))


def _marked(f, fixable, levels: "Optional[RowLevels]" = None) -> bool:
    """Whether a finding gets `[*]`: the ones `anydev fix` would fix at that
    site (``fixable``, its dry run's keys), else those whose row it fixes
    without --unsafe-fixes at the target (``levels``)."""
    if fixable is None:
        return (levels or RowLevels(None)).of(f) == "safe"
    return (f.path, f.start, f.rule) in fixable


def fixable_keys(sel, scanned) -> "Optional[set]":
    """The (path, start, rule) of each finding `anydev fix` would rewrite
    without --unsafe-fixes, from a dry run of the fixer on ``scanned`` (Note
    [Marks of the fixer]); None where none can be asked (stdin, no safe row)."""
    if getattr(sel, "stdin", False) or not any(f.fix == "safe" for f in scanned.findings):
        return None
    from anydev import fix as _fix

    result = _fix.fix_paths(sel.paths, unsafe=False, diff=True, scanned=scanned, check=True,
                            **fixer_kwargs(_fix.fix_paths, sel))
    return {(f.path, f.start, f.rule) for fr in result.files if fr.error is None
            for f in fr.applied}


# Note [The target while the tree is scanned]
# The marks' target torch is the project's declared one, and reading it can
# take a while: DeepSpeed's setup.py, setup.cfg, requirements files and package
# __init__.py files took 16 ms of a 57 ms `anydev scan` (the syntax trees of the
# version checks). The scan of a tree releases the GIL (its native threads), so
# a thread of its own (_thread: `threading` is not imported at start-up) reads
# the target from the start of the command, and the first mark waits for it;
# a report without findings does not wait at all. A one-file scan reads it
# when a mark first asks, in the main thread.

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
# 5 s of wall on top of the scan's 1.3 s. The plain report still knows the
# target torch, which costs nothing per finding (a verdict per row): `[*]`
# and "fixable" count only the rows whose replacement the target has, and
# the summary says how many more a newer --target-torch would unlock. On the
# development set's default targets that took the plain marks from 82 to 0 on
# detectron2 (the fixer's dry run: 0) and from 80 to 7 on mmcv (dry run: 3):
# what is left is the evidence a site needs, which only the dry run sees.


def _render_text_objects(findings, colour: bool, fixable=None,
                         levels: "Optional[RowLevels]" = None) -> Iterator[str]:
    """The text lines of Finding objects (a notebook's: `path:cell N:line:column`)."""
    shown = _text_path
    if colour:  # as ruff: the path bold, the position dim, the code red, [*] cyan
        b, d, r, c, z = "\033[1m", "\033[2m", "\033[1;31m", "\033[36m", "\033[0m"
        for f in findings:
            mark = f" {c}[*]{z}" if _marked(f, fixable, levels) else ""
            cell = getattr(f, "cell", None)
            where = f"{d}:{z}cell {cell}" if cell is not None else ""
            yield (f"{b}{shown(f.path)}{z}{where}{d}:{z}{f.line}{d}:{z}{f.column}{d}:{z} "
                   f"{r}{f.rule}{z}"
                   f"{mark} {f.message}\n")
    else:
        for f in findings:
            mark = " [*]" if _marked(f, fixable, levels) else ""
            cell = getattr(f, "cell", None)
            where = f":cell {cell}" if cell is not None else ""
            yield f"{shown(f.path)}{where}:{f.line}:{f.column}: {f.rule}{mark} {f.message}\n"


def _render_text_native(report, colour: bool, texts: dict,
                        levels: "Optional[RowLevels]" = None) -> Iterator:
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
    levels = levels if levels is not None else RowLevels(None)
    for code, symbol, msg, row in report.keys():
        t = texts.get((code, symbol, id(row)))
        if t is None:
            t = texts[(code, symbol, id(row))] = head.format(
                code, safe if levels(row) == "safe" else "", msg)
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


def summary_line(findings, files: int, fixable: "Optional[set]" = None,
                 levels: "Optional[RowLevels]" = None) -> str:
    if not findings:
        return f"No legacy references found ({files} file{'s' if files != 1 else ''} scanned)."
    levels = levels if levels is not None else RowLevels(None)
    counts = getattr(findings, "summary_counts", None)  # a scan._Report
    newer = 0
    if counts is not None:
        n, nfiles, safe, unsafe, newer = counts(levels)
    else:
        n = len(findings)
        nfiles = len({f.path for f in findings})
        safe = unsafe = 0  # counted without collections.Counter: the text report's start-up
        for f in findings:
            level = levels.of(f)
            if level == "unsafe":
                unsafe += 1
            elif level == "newer":
                newer += 1
            elif level == "safe" and fixable is None:
                safe += 1
        if fixable is not None:
            safe = sum(1 for f in findings if (f.path, f.start, f.rule) in fixable)
    parts = []
    if safe:
        parts.append(f"{safe} fixable with `anydev fix`")
    if unsafe:
        parts.append(f"{unsafe} more with `anydev fix --unsafe-fixes`")
    target = levels.target
    where = ""
    if newer and target is not None:
        parts.append(f"{newer} more with a newer `--target-torch`")
        why = "the default: every release the table knows" if target.source == "default" \
            else target.source
        where = f" Target torch: {target.text}, from {why}."
    tail = f" ({', '.join(parts)})" if parts else ""
    return (f"Found {n} legacy reference{'s' if n != 1 else ''} in {nfiles} "
            f"file{'s' if nfiles != 1 else ''}{tail}.{where}")


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


def revision(text: str) -> str:
    """--diff-base: a git revision (checked when the run starts: anydev._cli.diff_base)."""
    if not text:
        from argparse import ArgumentTypeError

        raise ArgumentTypeError("the revision is empty")
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
    p.add_argument("--extend-select", action="append", metavar="CODES",
                   help="these rule codes or prefixes too, besides the selection "
                        "(an opt-in rule: AD001, AD911)")
    p.add_argument("--ignore", action="append", metavar="CODES",
                   help="not these rule codes or prefixes, comma-separated")
    p.add_argument("--extend-ignore", action="append", metavar="CODES",
                   help="not these either (the same as --ignore, by ruff's name)")
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
                   help="text (default; concise is the same), full (with the source lines), "
                        "json, json-lines, sarif (2.1.0), github (workflow annotations), "
                        "gitlab (Code Quality) or junit (docs/ci.md)")
    p.add_argument("--output", "-o", type=file_name, metavar="FILE",
                   help="write the report here (atomically); `-`: stdout")
    p.add_argument("--statistics", action="store_true",
                   help="counts per rule, symbol, kind and fix instead of the list: as text, "
                        "or with --format json as a JSON document (docs/scan-statistics.schema."
                        "json); with another format, on stderr as text after the report")
    p.add_argument("--show-fixes", action="store_true",
                   help="after the list, what `anydev fix` would fix, per file and rule; with "
                        "--format json or json-lines, each finding's fix as text edits")
    p.add_argument("--baseline", type=file_name, metavar="FILE",
                   help="report only findings that are not in this baseline")
    p.add_argument("--diff-base", type=revision, metavar="REV",
                   help="report only findings on lines added or changed since the merge base "
                        "of REV and HEAD (git diff, the work tree's changes and untracked files "
                        "included; renames followed): a ratchet on new code")
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
    and the command line: the rule filter (``rules``: for the native scan,
    the rules any file's configuration keeps), the paths, the exclude globs
    (each with the folder it is relative to), ``keep``: the globs as written
    (a device's own implementation: reported, never rewritten) and
    ``keep_globs``: the same relative to the current directory, for the
    fixer; the per-file ignores (``[(Glob, rule predicate)]``),
    ``target_torch`` and the exit policy.

    ``files`` (a FileConfigs) is each file's own configuration (Note
    [Configuration per file]): ``dropped()`` drops what a file's own
    selection and per-file-ignores leave out, ``target_for(path)`` is the
    file's target torch."""

    def __init__(self, cfg: Config, rules: Callable[[str], bool], paths: list,
                 excludes: list, *, keep: Sequence[str] = (),
                 per_file_ignores: Sequence = (), keep_globs: Sequence = (),
                 target_torch: Optional[str] = None, exit_zero: bool = False,
                 fail_on_unscanned: bool = True, max_file_size: int = DEFAULT_MAX_FILE_SIZE,
                 respect_gitignore: bool = True, stdin: bool = False,
                 stdin_filename: Optional[str] = None,
                 files: Optional[FileConfigs] = None,
                 explicit_target: Optional[str] = None) -> None:
        self.cfg, self.paths, self.excludes = cfg, paths, excludes
        self._rules = rules
        self.keep = list(keep)
        self.per_file_ignores = list(per_file_ignores)
        self._keep_globs = list(keep_globs)
        self.target_torch = target_torch
        self.explicit_target = explicit_target
        self.exit_zero, self.fail_on_unscanned = exit_zero, fail_on_unscanned
        self.max_file_size, self.respect_gitignore = max_file_size, respect_gitignore
        self.stdin, self.stdin_filename = stdin, stdin_filename
        self.files = files

    def rules(self, code: str) -> bool:
        """Whether some file's selection keeps the rule ``code``."""
        files = self.files
        if files is not None and files.nested:
            return files.any_rules(code)
        return self._rules(code)

    @property
    def keep_globs(self) -> list:
        files = self.files
        if files is not None and files.nested:
            return files.keep_globs()
        return self._keep_globs

    def per_file(self) -> bool:
        """Whether findings are dropped per file (per-file-ignores, or files
        whose configuration is another than the run's)."""
        files = self.files
        return bool(self.per_file_ignores) or (files is not None and files.nested)

    def dropped(self) -> Callable[[str, str], bool]:
        """A predicate (path, rule) -> whether per-file-ignores (or the file's
        own configuration) drop that finding; each path is matched once."""
        memo: dict = {}
        files = self.files
        nested = files is not None and files.nested

        def drop(path: str, rule: str) -> bool:
            preds = memo.get(path)
            if preds is None:
                if nested:
                    cfg = files.for_path(path)
                    preds = [lambda code, keep=files.rules_of(cfg): not keep(code)]
                    preds += [p for g, p in files.per_file_ignores_of(cfg) if g.match(path)]
                else:
                    preds = [p for g, p in self.per_file_ignores if g.match(path)]
                memo[path] = preds
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
        if not self.per_file():
            return findings
        drop = self.dropped()
        return [f for f in findings if not drop(f.path, f.rule)]

    def target_for(self, path: str):
        """The file's target torch (an anydev._migrate.torch_versions.Target):
        --target-torch, else the `target-torch` of the file's configuration,
        else what the file's package declares (`torch>=`), else None."""
        from anydev._migrate import torch_versions as _versions

        if self.explicit_target is not None:
            return _versions.resolve_target(self.explicit_target)
        files = self.files
        cfg = files.for_path(path) if files is not None else self.cfg
        if cfg.target_torch is not None and "target-torch" in cfg.set:
            return _versions.resolve_target(cfg.target_torch,
                                            f"{cfg.where('target-torch')}")
        if files is None:
            return _versions.project_target(path)
        return files.projects().for_file(path)

    def run_target(self):
        """The one target torch of the plain report's marks (Note [Marks of
        the fixer]): each scanned path's (a folder's as a file in it would
        have it), the oldest where they differ; the default where none is
        declared."""
        from anydev._migrate import torch_versions as _versions

        found = []
        for p in ([self.stdin_filename or "-"] if self.stdin else self.paths) or ["."]:
            where = os.path.join(p, "__anydev__.py") if os.path.isdir(p) else p
            try:
                found.append(self.target_for(where) or _versions.DEFAULT)
            except (OSError, ValueError):  # an unreadable project file: the default
                found.append(_versions.DEFAULT)
        return min(found, key=lambda t: t.version)

    def status(self, findings_left: bool, errors: Sequence) -> int:
        """The exit status of a run (2 for I/O errors is the caller's)."""
        unscanned = self.fail_on_unscanned and any(error_kind(e) == "unscanned"
                                                   for e in errors)
        if (findings_left or unscanned) and not self.exit_zero:
            return 1
        return 0


# Note [Configuration per file]
# As ruff's hierarchical configuration: each file takes the keys that select
# what is reported in it from the configuration nearest to it (the closest
# folder at or above it with an anydev.toml or a pyproject.toml with
# [tool.anydev], with what that file inherits through `extend`): select,
# extend-select, ignore, extend-ignore, per-file-ignores, exclude, keep and
# target-torch. The keys of the run itself (baseline, output-format,
# exit-zero, fail-on-unscanned, max-file-size, respect-gitignore) are the
# run's configuration's: the one at the current folder, or --config. A file
# without a configuration above it takes the run's. --config and
# --no-config give every file the one configuration. Command-line options
# apply on top of each file's configuration.
# The files' folders are known from the walk, before the scan (Note [Walked
# first] in anydev/scan.py): their configurations decide the rules the
# native scan keeps (any file's), and their excludes the files scanned; each
# finding is then dropped where its own file's selection leaves it out. The
# run's own `exclude` applies to the files it governs; a
# nested configuration's replaces it below its folder, as `exclude` is resolved
# while ruff walks: a folder is left out when the configuration of the folder
# above it excludes it, a file when its own folder's does. The walk prunes
# with the run's excludes (natively, as before); where a configuration below
# excludes other paths (its own `exclude`, or none), the tree is walked again
# without them and each path is excluded by its folders' configurations.
# Where every file takes the run's configuration (most runs), nothing more
# is done: no second walk, nothing dropped per file.


class FileConfigs:
    """Each file's configuration for one run (Note [Configuration per
    file]), found once per folder; the rule filter and per-file ignores of
    each configuration, made once."""

    def __init__(self, root: Config, args: argparse.Namespace, per_file: bool) -> None:
        self.root = root
        self.args = args
        self.per_file = per_file
        self._finder = _config.Finder() if per_file else None
        self._by_dir: dict[str, Config] = {}
        self._rules: dict[int, Callable[[str], bool]] = {}
        self._pfi: dict[int, list] = {}
        self._projects = None
        self._union_memo: dict[str, bool] = {}
        #: with `collect`, the Python files walked: (shown path, name as walked)
        self.collect = False
        self.python_files: list[tuple[str, str]] = []
        #: the configurations in use, by file (the run's first)
        self.used: dict[Optional[str], Config] = {root.path: root}
        #: the command line's --exclude, (pattern, base) as the walk takes them
        self.cli_excludes = [(g, "") for g in getattr(args, "exclude", None) or []]
        self._dirs_out: dict[str, bool] = {}
        self._globs: dict[int, list] = {}
        self.nested = False  # some file takes a configuration other than the run's

    def for_path(self, path: str) -> Config:
        """The configuration of the file ``path`` (UsageError for a bad one)."""
        if not self.per_file:
            return self.root
        return self.for_folder(os.path.dirname(os.path.abspath(path)))

    def for_folder(self, d: str) -> Config:
        """The configuration of the files of the folder ``d`` (absolute)."""
        if not self.per_file:
            return self.root
        cfg = self._by_dir.get(d)
        if cfg is None:
            found = self._finder.find(d)
            if found is None or found == self.root.path:
                cfg = self.root
            else:
                cfg = self.used.get(found)
                if cfg is None:
                    cfg = self._load(found)
            self._by_dir[d] = cfg
        return cfg

    def _load(self, found: str) -> Config:
        try:
            cfg = _config.load_file(found).check(PER_FILE_KEYS)
        except _config.ConfigError as e:
            raise UsageError(str(e)) from None
        print_config_warnings(cfg, getattr(self.args, "command", None) or "scan")
        self.rules_of(cfg)  # a bad code is an error before the scan
        self.per_file_ignores_of(cfg)
        if cfg.target_torch is not None:
            _check_target(cfg)
        self.used[found] = cfg
        self.nested = True
        self._union_memo.clear()
        return cfg

    def rules_of(self, cfg: Config) -> Callable[[str], bool]:
        """The rule filter of a file with the configuration ``cfg`` and the
        command line's options."""
        got = self._rules.get(id(cfg))
        if got is None:
            got = self._rules[id(cfg)] = rule_selection(cfg, self.args)
        return got

    def per_file_ignores_of(self, cfg: Config) -> list:
        got = self._pfi.get(id(cfg))
        if got is None:
            got = self._pfi[id(cfg)] = per_file_ignores(cfg)
        return got

    def any_rules(self, code: str) -> bool:
        """Whether the configuration of some file of the run keeps ``code``."""
        v = self._union_memo.get(code)
        if v is None:
            v = self._union_memo[code] = any(self.rules_of(c)(code)
                                             for c in self.used.values())
        return v

    def keep_globs(self) -> list[str]:
        out: list[str] = []
        for cfg in self.used.values():
            for g in _relative_to_cwd(cfg.keep, cfg.base("keep")):
                if g not in out:
                    out.append(g)
        return out

    def projects(self):
        if self._projects is None:
            from anydev._migrate import torch_versions as _versions

            self._projects = _versions.ProjectTargets()
        return self._projects

    def walked(self, names: list, show: Callable[[bytes], str],
               rewalk: Optional[Callable[[list], list]] = None) -> list:
        """The files to scan of the walk's (Note [Configuration per file]):
        finds the configuration of each folder (once per folder: the walk
        gives a folder's files together); where one below the run's excludes
        other paths than the run's, walks again without the configurations'
        excludes and excludes each file as its folders' configurations say."""
        if self.per_file:
            self._find_folders(names)
            if rewalk is not None and any(not _same_exclude(c, self.root)
                                          for c in self.used.values()):
                names = rewalk(self.cli_excludes)
                self._find_folders(names)
                names = [n for n in names if not self._excluded(os.fsdecode(n))]
        collect = self.collect or any(self.rules_of(c)("AD001") for c in self.used.values())
        self.collect = collect
        if collect:  # AD001 reads the Python files walked (Note [Unused noqa])
            python = self.python_files
            for name in names:
                if name.endswith((b".py", b".pyi")):
                    path = os.fsdecode(name)
                    if self.rules_of(self.for_path(path))("AD001"):
                        python.append((show(name), path))
        return names

    def _find_folders(self, names: list) -> None:
        """The configuration of each folder of ``names`` (as the walk gives
        them: bytes, relative to the current folder or absolute)."""
        last = None
        for name in names:
            d = name.rpartition(b"/")[0]
            if d != last:
                last = d
                self.for_folder(os.path.abspath(os.fsdecode(d) if d else "."))

    def _excluded(self, path: str) -> bool:
        """Whether the configurations exclude the file: a folder above it
        that the configuration of its parent folder excludes, or the file
        itself by its own folder's (as ruff resolves `exclude` while it walks)."""
        d = os.path.dirname(os.path.abspath(path))
        return self._dir_excluded(d) or _excludes(self.for_path(path), os.path.abspath(path),
                                                  False, self._globs)

    def _dir_excluded(self, d: str) -> bool:
        memo = self._dirs_out
        got = memo.get(d)
        if got is None:
            parent = os.path.dirname(d)
            if parent == d:
                got = False
            else:
                got = self._dir_excluded(parent) or _excludes(self.for_folder(parent), d, True,
                                                              self._globs)
            memo[d] = got
        return got


def _same_exclude(cfg: Config, root: Config) -> bool:
    """Whether ``cfg`` excludes what the run's configuration does (the same
    globs from the same folder: its own, or inherited through `extend`)."""
    return cfg is root or (cfg.exclude == root.exclude and
                           (not cfg.exclude or cfg.base("exclude") == root.base("exclude")))


def _excludes(cfg: Config, path: str, is_dir: bool, cache: dict) -> bool:
    """Whether ``cfg``'s `exclude` matches ``path`` (absolute), a path below
    the folder its globs are relative to."""
    if not cfg.exclude:
        return False
    base = cfg.base("exclude")
    if not (path + os.sep).startswith(base.rstrip(os.sep) + os.sep) or path == base:
        return False
    globs = cache.get(id(cfg))
    if globs is None:
        globs = cache[id(cfg)] = [_config.Glob(g, base) for g in cfg.exclude]
    return any(g.match(path, is_dir) for g in globs)


#: The keys each file takes from its own configuration (Note [Configuration per file]).
PER_FILE_KEYS = ("extend", "select", "extend-select", "ignore", "extend-ignore", "exclude",
                 "per-file-ignores", "keep", "target-torch")


def rule_selection(cfg: Config, args: argparse.Namespace) -> Callable[[str], bool]:
    """The rule filter of ``cfg``'s select/extend-select/ignore/extend-ignore
    with the command line's on top (anydev.scan._rule_selection, which the
    editor server's settings use too)."""
    try:
        return _scanner()._rule_selection(
            cfg, getattr(args, "select", None), getattr(args, "ignore", None) or (),
            getattr(args, "extend_select", None) or (), getattr(args, "extend_ignore", None) or ())
    except ValueError as e:
        raise UsageError(str(e)) from None


def per_file_ignores(cfg: Config) -> list:
    """``cfg``'s per-file-ignores: [(Glob, predicate: code -> dropped)]
    (anydev.scan._per_file_ignores, the editor server's too)."""
    try:
        return _scanner()._per_file_ignores(cfg)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _check_target(cfg: Config) -> None:
    from anydev._migrate import torch_versions as _versions

    try:
        _versions.resolve_target(cfg.target_torch)
    except _versions.VersionError as e:
        raise UsageError(f"{cfg.where()}: `target-torch`: {e}") from None


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
    files = FileConfigs(cfg, args, per_file=not (args.no_config or config_file))
    rules = files.rules_of(cfg)
    pfi = files.per_file_ignores_of(cfg)
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
    excludes = [(g, cfg.base("exclude")) for g in cfg.exclude] + \
        [(g, "") for g in args.exclude]
    if cfg.target_torch is not None and args.target_torch is None:
        _check_target(cfg)
    max_size = args.max_file_size if args.max_file_size is not None else (
        cfg.max_file_size if cfg.max_file_size is not None else DEFAULT_MAX_FILE_SIZE)
    sel = Selection(
        cfg, rules, paths, excludes, keep=list(cfg.keep), per_file_ignores=pfi,
        keep_globs=_relative_to_cwd(cfg.keep, cfg.base("keep")),
        target_torch=args.target_torch or cfg.target_torch,
        exit_zero=args.exit_zero or cfg.exit_zero, fail_on_unscanned=cfg.fail_on_unscanned,
        max_file_size=max_size,
        respect_gitignore=cfg.respect_gitignore and not args.no_gitignore,
        stdin=stdin, stdin_filename=args.stdin_filename, files=files,
        explicit_target=args.target_torch)
    if stdin and args.stdin_filename:
        files.for_path(args.stdin_filename)  # its folder's configuration, checked now
    return sel


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
    asked for: Note [Streamed reports] in anydev/scan.py). Each file's own
    configuration applies (Note [Configuration per file])."""
    scan = _scanner()
    files = sel.files
    walked = files.walked if files is not None and (files.per_file or files.collect) else None
    if stream and not sel.stdin:
        return scan._scan_stream(
            sel.paths, keep=sel.rules, excludes=sel.excludes, jobs=jobs,
            respect_gitignore=sel.respect_gitignore, max_file_size=sel.max_file_size,
            drop=_LazyDrop(sel), notebooks=True, walked=walked)
    if sel.stdin:
        from anydev._migrate import check as _check  # one file, as `anydev server` checks it

        name, data, language = read_stdin(sel)
        checked = _check.check_source(data, name, sel.settings(), language=language,
                                      baseline=False)
        result = scan.ScanResult(findings=checked.findings, errors=checked.errors,
                                 files=0 if len(data) > sel.max_file_size else 1,
                                 bytes=len(data))
        result.stdin_data = data  # type: ignore[attr-defined]
        result.findings = sel.filter(result.findings)  # the file's own configuration
        return result
    found = scan._scan_report(sel.paths, keep=sel.rules, excludes=sel.excludes, jobs=jobs,
                              respect_gitignore=sel.respect_gitignore,
                              max_file_size=sel.max_file_size, notebooks=True, walked=walked)
    if sel.per_file():
        found.drop_where(sel.dropped())
    return found if report else found.result()


class _LazyDrop:
    """The stream's drop predicate, decided once the walk has found each
    folder's configuration (Note [Configuration per file]): before the first
    batch, the stream asks whether there is one (bool) and then calls it."""

    __slots__ = ("_sel", "_drop")

    def __init__(self, sel: Selection) -> None:
        self._sel = sel
        self._drop: Optional[Callable[[str, str], bool]] = None

    def __bool__(self) -> bool:
        return self._sel.per_file()

    def __call__(self, path: str, rule: str) -> bool:
        if self._drop is None:
            self._drop = self._sel.dropped()
        return self._drop(path, rule)


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


#: The formats written as the tree is scanned, a batch at a time (Note
#: [Streamed reports] in anydev/scan.py); the others read the whole tree's findings.
_STREAMED = ("text", "json", "json-lines", "github", "full")


def _scan_main(args: argparse.Namespace) -> int:
    sel = selection(args)
    cfg = sel.cfg
    fmt = args.format or cfg.output_format or "text"
    if fmt == "concise":  # ruff's name of the one-line-a-finding text
        fmt = "text"
    baseline = args.baseline or cfg.baseline
    diff_base = getattr(args, "diff_base", None)
    changed = None
    if diff_base:
        if args.write_baseline:
            raise UsageError("--write-baseline records every finding; it does not go with "
                             "--diff-base")
        changed = _changed_lines(diff_base, sel)
    files = sel.files
    # AD001 (unused noqa) reads the Python files the walk finds (Note [Unused
    # noqa] in anydev/_migrate/meta_rules.py): the tree is walked first then.
    if files is not None and not files.per_file and sel.rules("AD001"):
        files.collect = True
    objects = (args.write_baseline or baseline or args.statistics or
               args.show_fixes and fmt == "text" or changed is not None or fmt not in _STREAMED)
    # the text report's marks need the target torch: a tree's is read while the tree
    # is scanned (Note [The target while the tree is scanned])
    levels = RowLevels(resolve=sel.run_target, background=fmt == "text" and not sel.stdin and
                       not args.show_fixes and not args.statistics and
                       any(os.path.isdir(p) for p in (sel.paths or ["."])))
    result = scan_selection(sel, args.jobs, report=True, stream=not objects)
    unused_noqa = files is not None and sel.rules("AD001") and not sel.stdin
    if unused_noqa and hasattr(result, "batches"):
        result = result.whole()  # not scanned yet: the whole tree's report instead
        objects = True
    findings = result.findings if objects or not hasattr(result, "render") and \
        not hasattr(result, "batches") else result
    errors = result.errors
    lines = _Lines()
    if unused_noqa:
        extra = _unused_noqa(sel)
        if extra:
            findings = sorted([*findings, *extra], key=lambda f: (f.path, f.start))

    if args.write_baseline:
        from anydev._migrate.formats import write_baseline

        try:
            write_baseline(args.write_baseline, findings)
        except OSError as e:
            raise UsageError(f"{args.write_baseline}: cannot write: {e.strerror}") from None
        if not args.quiet:
            print(f"anydev scan: wrote {len(findings)} finding(s) to {args.write_baseline}",
                  file=sys.stderr)
        _print_errors(errors)
        return 2 if any(_is_io_error(e) for e in errors) else 0

    if baseline:
        from anydev._migrate.formats import fingerprint_keys, read_baseline

        known = read_baseline(baseline)
        base = os.path.dirname(os.path.abspath(baseline))
        keys = fingerprint_keys(findings, relative_to=base, lines=lines)
        findings = [f for f, k in zip(findings, keys) if k not in known]

    if changed is not None:
        # the ratchet: what is on the lines added or changed since the base
        books = _NotebookLines()
        findings = [f for f in findings if _on_changed_lines(changed, f, books)]
        errors = [e for e in errors if error_kind(e) != "unscanned" or changed.has_file(e.path)]

    stats_target = sel.target_for if sel.files is not None and not sel.stdin else \
        sel.target_torch
    if args.statistics and fmt in ("text", "json"):
        from anydev._migrate.formats import render_statistics, render_statistics_json

        render = render_statistics if fmt == "text" else render_statistics_json
        text: Iterable[str] = [render(findings, result.files, result.bytes, stats_target)]
        if fmt == "text" and not args.quiet:
            text = _then(text, lambda: _scanner().ignore_summary(result))
    elif fmt == "text":
        colour = not args.output and use_colour(sys.stdout)
        # with --show-fixes, `[*]` is what `anydev fix` would fix at that site (Note
        # [Marks of the fixer]); the streamed report marks the safe rows
        fixable = fixable_keys(sel, result) if findings and args.show_fixes else None
        text = render_text(findings, errors, result.files, colour=colour,
                           summary=not args.quiet, show_fixes=args.show_fixes,
                           fixable=fixable, levels=levels)
        if not args.quiet:
            text = _then(text, lambda: _scanner().ignore_summary(result))
    elif fmt == "full":
        from anydev._migrate.formats import render_full

        text = render_full(findings)
        if not args.quiet:
            text = _then(_then(text, lambda: summary_line(
                findings, result.files, levels=RowLevels(resolve=sel.run_target)) + "\n"),
                         lambda: _scanner().ignore_summary(result))
    elif fmt in ("json", "json-lines"):
        from anydev._migrate.formats import render_json, render_json_lines

        edits = _edits_of(sel, result) if args.show_fixes else None
        text = render_json(findings, errors, edits) if fmt == "json" else \
            render_json_lines(findings, edits)
    elif fmt == "sarif":
        import anydev

        from anydev._migrate.formats import render_sarif

        text = render_sarif(findings, errors, sel.rules, version=anydev.__version__,
                            lines=lines)
    elif fmt == "gitlab":
        from anydev._migrate.formats import render_gitlab

        text = render_gitlab(findings, errors)
    elif fmt == "junit":
        from anydev._migrate.formats import render_junit

        text = [render_junit(findings, errors, result.files)]
    else:
        from anydev._migrate.formats import render_github

        text = render_github(findings, errors)
    if args.statistics and fmt not in ("text", "json"):
        from anydev._migrate.formats import render_statistics

        text = _then(text, lambda: "")
        stats = render_statistics(findings, result.files, result.bytes, stats_target)
        sys.stderr.write(stats)

    if args.output:
        try:
            write_atomic(args.output, text, durable=False)
        except OSError as e:
            raise UsageError(f"{args.output}: cannot write: {e.strerror}") from None
    else:
        write_stdout(text, utf8=fmt not in ("text", "full"))
    if fmt != "github" or args.output:
        _print_errors(errors)
    if any(_is_io_error(e) for e in errors):
        return 2
    return sel.status(bool(findings), errors)


class _NotebookLines:
    """The file lines of notebook findings (Notebook.file_line), each
    notebook read once."""

    def __init__(self) -> None:
        self._books: dict = {}

    def __call__(self, path: str, cell: int, line: int) -> Optional[int]:
        if path not in self._books:
            from anydev._migrate.notebook import Notebook, NotebookError

            try:
                with open(path, "rb") as fh:
                    self._books[path] = Notebook.parse(fh.read())
            except (OSError, NotebookError):
                self._books[path] = None
        book = self._books[path]
        return book.file_line(cell, line) if book is not None else None


def _on_changed_lines(changed, f, books: _NotebookLines) -> bool:
    """Whether a finding is on lines added or changed since the base: a
    notebook finding's cell lines are those of the JSON file git compares."""
    cell = getattr(f, "cell", None)
    if cell is None:
        return changed.covers(f.path, f.line, f.end_line)
    first = books(f.path, cell, f.line)
    last = books(f.path, cell, f.end_line or f.line)
    return first is not None and changed.covers(f.path, first, last or first)


def _changed_lines(rev: str, sel: Selection):
    """The ratchet's lines (anydev._migrate.changed_lines): UsageError where
    git cannot give them, or a path lies outside the work tree."""
    from anydev._migrate import changed_lines as _changed

    try:
        changed = _changed.changed_since(rev, os.getcwd())
    except _changed.DiffBaseError as e:
        raise UsageError(str(e)) from None
    if sel.stdin:
        if not sel.stdin_filename:
            raise UsageError("--diff-base with `-` (stdin) needs --stdin-filename: which "
                             "file's changes count")
        paths = [sel.stdin_filename]
    else:
        paths = sel.paths
    for p in paths:
        if changed.outside(p):
            raise UsageError(f"--diff-base {rev}: {p} is outside the git work tree "
                             f"{changed.toplevel}")
    return changed


def _edits_of(sel: Selection, result):
    """The fix's edits of each finding for the JSON reports: (edits, None) or
    (None, why not). The findings come by file: each file's are fixed
    together when its first is asked for (anydev._migrate.fix_edits.file_edits),
    so the renderer must ask for them in the report's order."""
    from anydev._migrate import fix_edits as _edits
    from anydev._migrate import meta_rules as _meta

    state: dict = {"path": None, "got": {}}
    keep = sel.keep_globs
    stdin = getattr(result, "stdin_data", None)
    pending: list = []

    def edits(f):
        if f.rule in _meta.ROWS_BY_CODE or f.fix == "none":
            return None, "the rule has no automatic fix"
        got = state["got"].get(id(f))
        if got is not None:
            return got
        return None, "not fixed"  # pragma: no cover - asked out of order

    def prepare(findings: list) -> None:
        """Fixes the findings of each file of ``findings`` (a batch)."""
        by_path: dict = {}
        for f in findings:
            if f.fix != "none" and f.rule not in _meta.ROWS_BY_CODE:
                by_path.setdefault(f.path, []).append(f)
        got = state["got"] = {}
        for path, fs in by_path.items():
            if stdin is not None:
                data = stdin
            else:
                try:
                    with open(path, "rb") as fh:
                        data = fh.read()
                except OSError as e:
                    for f in fs:
                        got[id(f)] = (None, f"cannot read the file: {e.strerror or e}")
                    continue
            target = sel.target_for(sel.stdin_filename or path) if sel.files is not None \
                else None
            for f, r in zip(fs, _edits.file_edits(data, path, fs, target=target, keep=keep)):
                got[id(f)] = r

    edits.prepare = prepare  # type: ignore[attr-defined]
    del pending
    return edits


def _make_directive_finding(path: str, data: bytes, line: int, column: int, end_line: int,
                            end_column: int, text: str, message: str):
    """An AD001 finding (anydev.scan.Finding) of a `# noqa` directive."""
    scan = _scanner()
    starts = 0
    for _ in range(line - 1):
        starts = data.find(b"\n", starts) + 1
    row_end = data.find(b"\n", starts)
    row = data[starts:row_end if row_end >= 0 else len(data)].decode("utf-8", "surrogateescape")
    if line == 1 and row.startswith("\ufeff"):
        row = row[1:]
        starts += 3
    start = starts + len(row[:column - 1].encode("utf-8", "surrogateescape"))
    end = starts + len(row[:end_column - 1].encode("utf-8", "surrogateescape"))
    return scan.Finding(path, line, column, end_line, end_column, "noqa", "", "AD001", "none",
                        message, "directive", start, end, None, text, "python")


def _unused_noqa(sel: Selection) -> list:
    """The AD001 findings of the run (Note [Unused noqa] in
    anydev/_migrate/meta_rules.py): the `# noqa` directives of the Python
    files walked whose AD codes suppress nothing on their line. The scanner
    drops what line directives suppress (Note [noqa directives] in
    core/scan), so a file with a directive is scanned again with none
    applied: what each line would report."""
    from anydev._migrate import meta_rules as _meta
    from anydev._migrate.noqa import read_file

    scan = _scanner()
    files = sel.files
    native, rows = scan._rules()
    out: list = []
    for shown, name in files.python_files:
        keep = files.rules_of(files.for_path(name))
        if not keep("AD001"):
            continue
        data = read_file(name)
        if not data or b"noqa" not in data.lower():
            continue
        lines_rules: dict = {}
        for t in scan._native().scan_source(native, data, "python", False)[0]:
            f = scan._finding(shown, t, rows[t[0]])
            lines_rules.setdefault(f.line, []).append(f.rule)
        out += _meta.unused_noqa(
            shown, data, lines_rules, keep,
            lambda *a, data=data: _make_directive_finding(a[0], data, *a[1:]))
    return sel.filter(out)


def _print_errors(errors: Iterable[_scan.ScanError]) -> None:
    for e in errors:
        where = _text_path(e.path) + (f":{e.line}" if e.line else "")
        print(f"{where}: {error_level(e)}: {e.message}", file=sys.stderr)


def _accepts(fn, name: str) -> bool:
    import inspect

    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False


def fixer_kwargs(fn, sel) -> dict:
    """The selection's ``target_torch=``/``target_for=``, ``keep=`` and
    ``rules=`` for the fixer's function ``fn``, as far as it takes them: what
    `anydev fix` passes, and what `anydev scan --show-fixes` asks its dry run
    with (Note [Marks of the fixer])."""
    out: dict = {}
    if _accepts(fn, "target_for") and sel.files is not None:
        # each file's own target (Note [Configuration per file] in anydev/_cli/scan.py)
        if sel.explicit_target is not None:
            out["target_torch"] = sel.explicit_target
        else:
            out["target_for"] = sel.target_for
    elif sel.stdin and sel.stdin_filename and sel.files is not None and \
            _accepts(fn, "target_torch"):
        target = sel.target_for(sel.stdin_filename)
        if target is not None:
            out["target_torch"] = target
    elif sel.target_torch is not None and _accepts(fn, "target_torch"):
        out["target_torch"] = sel.target_torch
    if sel.keep_globs and _accepts(fn, "keep"):
        out["keep"] = sel.keep_globs
    if _accepts(fn, "rules"):  # the rescans of a fixed file keep the selection
        out["rules"] = lambda fs: sel.filter([f for f in fs if sel.rules(f.rule)])
    return out
