"""``anydev fix``: the command-line side of :mod:`anydev.fix`.

Exit codes: 0 nothing left to migrate by hand (every finding was fixed, or
there was none); 1 findings remain (rows without a mechanical fix, unsafe
fixes not asked for, calls the fixer could not bind, files it left alone
because they do not parse or are symbolic links), or with ``--diff``, the
diff is not empty; 2 a usage or configuration error, a path that does not
exist, or a file that could not be read or written.

Messages go to stderr: one line per file fixed and per finding left (with
why), then a summary. ``--diff`` prints the unified diff on stdout.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

from . import fix as _fix
from . import scan as _scan
from ._scan_cli import UsageError, _is_io_error, _print_errors, selection


def add_fix_parser(sub) -> None:
    p = sub.add_parser(
        "fix", help="rewrite the legacy calls the compat table marks as mechanical",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent("""\
            Applies the safe fixes of the findings `anydev scan` reports (and the unsafe
            ones with --unsafe-fixes) in place, atomically, keeping each file's encoding,
            BOM, line endings and mode. A Python file that would no longer parse is left
            as it was, and so is a file reached through a symbolic link. --diff prints a
            unified diff and writes nothing. Rule selection and excludes come from
            [tool.anydev] as for `anydev scan`.

            Exit status: 0 nothing left to migrate, 1 findings left (or, with --diff, a
            non-empty diff), 2 usage, configuration or I/O error."""))
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="also apply fixes that change behaviour (see `anydev rule CODE`)")
    p.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    p.add_argument("--target-torch", metavar="VERSION",
                   help="the oldest PyTorch the fixed code must run on (2.1): rewrites to newer "
                        "APIs are not applied; default: [tool.anydev] target-torch, else the "
                        "lower bound of torch in the project's pyproject.toml/setup.cfg/setup.py/"
                        "requirements*.txt, else the newest release the table knows")
    p.add_argument("--select", action="append", metavar="CODES",
                   help="only these rule codes or prefixes, comma-separated (AD1,AD601)")
    p.add_argument("--ignore", action="append", metavar="CODES",
                   help="not these rule codes or prefixes, comma-separated")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="skip paths matching this gitignore-style glob (repeatable)")
    p.add_argument("--no-gitignore", action="store_true",
                   help="do not honour .gitignore files and .git/info/exclude")
    p.add_argument("--no-config", action="store_true", help="ignore pyproject.toml")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="scanner threads (default: all cores)")
    p.set_defaults(func=cmd_fix)


def cmd_fix(args: argparse.Namespace) -> int:
    try:
        return _fix_main(args)
    except UsageError as e:
        print(f"anydev fix: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `anydev fix --diff | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _fix_main(args: argparse.Namespace) -> int:
    sel = selection(args)
    keep, paths, excludes = sel.keep, sel.paths, sel.excludes
    scanned = _scan._scan_paths(paths, keep=keep, excludes=excludes, jobs=args.jobs,
                                respect_gitignore=not args.no_gitignore)
    result = _fix.fix_paths(paths, unsafe=args.unsafe_fixes, diff=args.diff, scanned=scanned,
                            target_torch=sel.target_torch, keep=sel.keep_globs)
    _print_errors(result.errors)
    if args.diff:
        sys.stdout.write(result.diff)
        sys.stdout.flush()
    io_failed = False
    for fr in result.files:
        if fr.error is not None:
            io_failed = io_failed or fr.io_error
            print(f"{fr.path}: {'error' if fr.io_error else 'not fixed'}: {fr.error}",
                  file=sys.stderr)
        elif fr.changed and not args.diff:
            print(f"{fr.path}: fixed {len(fr.applied)}", file=sys.stderr)
    remaining = result.remaining
    file_errors = {fr.path for fr in result.files if fr.error is not None}
    for f, why in remaining:
        if f.path in file_errors:
            continue  # said once for the file above
        print(f"{f.path}:{f.line}:{f.column}: {f.rule} {f.symbol}: not fixed: {why}",
              file=sys.stderr)
    verb = "would fix" if args.diff else "fixed"
    changed = sum(1 for fr in result.files if fr.changed)
    hint = "" if args.unsafe_fixes or not any(f.fix == "unsafe" for f, _ in remaining) else \
        " (--unsafe-fixes applies the unsafe ones)"
    print(f"anydev fix: {verb} {result.applied} finding(s) in {changed} file(s); "
          f"{len(remaining)} left to migrate by hand{hint}", file=sys.stderr)
    for t in result.targets.values():
        if t.declared:
            print(f"anydev fix: target torch {t.text} (from {t.source})", file=sys.stderr)
        else:
            print(f"anydev fix: no torch version declared: target torch {t.text}, the newest "
                  "release the table knows (give --target-torch or [tool.anydev] target-torch)",
                  file=sys.stderr)
    if result.needs_torch:
        print(f"anydev fix: the fixed code needs torch >= {result.needs_torch}", file=sys.stderr)
    if io_failed or any(_is_io_error(e) for e in result.errors):
        return 2
    if args.diff:
        return 1 if result.diff else 0
    return 1 if remaining else 0
