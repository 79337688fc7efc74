"""``anydev fix``: the command-line side of :mod:`anydev.fix`.

Exit codes: 0 nothing left to migrate by hand (every finding was fixed, or
there was none); 1 findings remain (rows without a mechanical fix, unsafe
fixes not asked for, calls the fixer could not bind), or with ``--diff``, the
diff is not empty; 2 a usage, configuration or I/O error.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

from . import fix as _fix
from . import scan as _scan
from ._scan_cli import Config, UsageError, _print_errors, load_config


def add_fix_parser(sub) -> None:
    p = sub.add_parser(
        "fix", help="rewrite the legacy calls the compat table marks as mechanical",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.dedent("""\
            Applies the safe fixes of the findings `anydev scan` reports (and the unsafe
            ones with --unsafe-fixes) in place, atomically, keeping each file's encoding,
            BOM, line endings and mode. A Python file that would no longer parse is left
            as it was. --diff prints a unified diff and writes nothing. Rule selection
            and excludes come from [tool.anydev] as for `anydev scan`."""))
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="also apply fixes that change behaviour (see `anydev rule CODE`)")
    p.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    p.add_argument("--select", type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
                   help="only these rule codes or prefixes (comma-separated)")
    p.add_argument("--ignore", type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
                   action="extend", help="skip these rule codes or prefixes")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    p.add_argument("--no-gitignore", action="store_true")
    p.add_argument("--no-config", action="store_true", help="ignore pyproject.toml")
    p.add_argument("--jobs", type=int, default=None, metavar="N")
    p.set_defaults(func=cmd_fix)


def cmd_fix(args: argparse.Namespace) -> int:
    try:
        return _fix_main(args)
    except UsageError as e:
        print(f"anydev fix: {e}", file=sys.stderr)
        return 2


def _fix_main(args: argparse.Namespace) -> int:
    cfg = Config() if args.no_config else load_config(os.getcwd())
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
    excludes = [(g, os.path.dirname(cfg.path)) for g in cfg.exclude] + \
               [(g, "") for g in args.exclude]
    scanned = _scan._scan_paths(paths, keep=keep, excludes=excludes, jobs=args.jobs,
                                respect_gitignore=not args.no_gitignore)
    result = _fix.fix_paths(paths, unsafe=args.unsafe_fixes, diff=args.diff, scanned=scanned)
    _print_errors(result.errors)
    if args.diff:
        sys.stdout.write(result.diff)
        sys.stdout.flush()
    failed = 0
    for fr in result.files:
        if fr.error is not None:
            failed += 1
            print(f"anydev fix: {fr.path}: {fr.error}", file=sys.stderr)
        elif fr.changed and not args.diff:
            print(f"fixed {len(fr.applied)} in {fr.path}", file=sys.stderr)
    remaining = result.remaining
    for f, why in remaining:
        print(f"{f.path}:{f.line}:{f.column}: {f.rule} {f.symbol}: not fixed: {why}",
              file=sys.stderr)
    verb = "would fix" if args.diff else "fixed"
    print(f"anydev fix: {verb} {result.applied} finding(s) in "
          f"{sum(1 for fr in result.files if fr.changed)} file(s); {len(remaining)} left "
          "to migrate by hand" + ("" if args.unsafe_fixes else
                                  " (--unsafe-fixes applies the unsafe ones)"),
          file=sys.stderr)
    if any(_scan_io_error(e) for e in result.errors):
        return 2
    if args.diff:
        return 1 if result.diff else 0
    return 1 if remaining or failed else 0


def _scan_io_error(e: _scan.ScanError) -> bool:
    from ._scan_cli import _is_io_error

    return _is_io_error(e)
