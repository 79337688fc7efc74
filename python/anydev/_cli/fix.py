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
import sys
import textwrap

from .scan import (
    UsageError,
    _is_io_error,
    _print_errors,
    _silence_stdout,
    add_common_arguments,
    fixer_kwargs,
    render_fix_list,
    scan_selection,
    selection,
    write_stdout,
)


def add_fix_parser(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = textwrap.dedent("""\
        Applies the safe fixes of the findings `anydev scan` reports (and the unsafe
        ones with --unsafe-fixes) in place, atomically, keeping each file's encoding,
        BOM, line endings and mode. A Python file that would no longer parse is left
        as it was, and so is a file reached through a symbolic link. --diff prints a
        unified diff and writes nothing. `-` reads one file from stdin and writes the
        fixed file to stdout. Rule selection, excludes, per-file-ignores and keep come
        from [tool.anydev] as for `anydev scan` (docs/configuration.md).

        Exit status: 0 nothing left to migrate, 1 findings left (or, with --diff, a
        non-empty diff, or parts of files that went unscanned), 2 usage, configuration
        or I/O error.""")
    add_common_arguments(p)
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="also apply fixes that change behaviour (see `anydev rule CODE`)")
    p.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    p.add_argument("--show-fixes", action="store_true",
                   help="list the fixes applied, per file and rule")
    p.add_argument("--summary", metavar="FILE.md",
                   help="write a pull-request description of the fix (per file what changed, "
                        "each change's level and proof, the torch it needs, what was left "
                        "and why) to FILE.md")
    p.set_defaults(func=cmd_fix)


def cmd_fix(args: argparse.Namespace) -> int:
    try:
        return _fix_main(args)
    except UsageError as e:
        print(f"anydev fix: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `anydev fix --diff | head`
        _silence_stdout()
        return 1


def location(f) -> str:
    """`path:line:column`, or in a notebook `path:cell N:line:column`."""
    from anydev.scan import location as _location

    return _location(f)


def _fix_main(args: argparse.Namespace) -> int:
    from anydev import fix as _fix

    args.command = "fix"
    sel = selection(args)
    scanned = scan_selection(sel, args.jobs)
    if sel.stdin:
        return _fix_stdin(args, sel, scanned)
    # a notebook's cells are fixed as one Python source and written back into
    # its JSON (anydev._migrate.check.fix_notebook_files): fix_paths gets the rest
    notebook = [f for f in scanned.findings if getattr(f, "cell", None) is not None]
    if notebook:
        from anydev import scan as _scan

        scanned = _scan.ScanResult(
            findings=[f for f in scanned.findings if getattr(f, "cell", None) is None],
            errors=scanned.errors, files=scanned.files, bytes=scanned.bytes)
    result = _fix.fix_paths(sel.paths, unsafe=args.unsafe_fixes, diff=args.diff,
                            scanned=scanned, jobs=args.jobs,
                            **fixer_kwargs(_fix.fix_paths, sel))
    if notebook:
        from anydev._migrate import check as _check

        kw = fixer_kwargs(_check.fix_notebook_files, sel)
        files, targets = _check.fix_notebook_files(notebook, unsafe=args.unsafe_fixes,
                                                   diff=args.diff, **kw)
        result.files += files
        for source, t in targets.items():
            result.targets.setdefault(source, t)
    _print_errors(result.errors)
    for name in getattr(result, "removed_temps", ()):
        print(f"anydev fix: removed {name}, a temporary file a stopped run left",
              file=sys.stderr)
    if args.diff:
        write_stdout([result.diff], "the diff", utf8=True)
    io_failed = False
    for fr in result.files:
        if fr.error is not None:
            io_failed = io_failed or fr.io_error
            print(f"{fr.path}: {'error' if fr.io_error else 'not fixed'}: {fr.error}",
                  file=sys.stderr)
        elif fr.changed and not args.diff and not args.quiet:
            print(f"{fr.path}: fixed {len(fr.applied)}", file=sys.stderr)
    remaining = result.remaining
    file_errors = {fr.path for fr in result.files if fr.error is not None}
    for f, why in remaining:
        if f.path in file_errors:
            continue  # said once for the file above
        print(f"{location(f)}: {f.rule} {f.symbol}: not fixed: {why}", file=sys.stderr)
    verb = "would fix" if args.diff else "fixed"
    if args.show_fixes:
        applied = [f for fr in result.files for f in fr.applied]
        sys.stderr.writelines(render_fix_list(
            applied, "Would fix {n}:" if args.diff else "Fixed {n}:"))
    changed = sum(1 for fr in result.files if fr.changed)
    hint = "" if args.unsafe_fixes or not any(
        f.fix == "unsafe" and not f.rule.startswith("AD95") for f, _ in remaining) else \
        " (--unsafe-fixes applies the unsafe ones)"
    if not args.quiet:
        later = getattr(result, "later", 0)
        also = (f" ({later} of them written by the fixes themselves and fixed in a further "
                "round)") if later else ""
        print(f"anydev fix: {verb} {result.applied} finding(s){also} in {changed} file(s); "
              f"{len(remaining)} left to migrate by hand{hint}", file=sys.stderr)
        for t in getattr(result, "targets", {}).values():
            if t.declared:
                print(f"anydev fix: target torch {t.text} (from {t.source})", file=sys.stderr)
            else:
                print(f"anydev fix: no torch version declared: target torch {t.text}, the "
                      "oldest release the table knows, so only the rewrites every release has "
                      "are applied (give --target-torch or [tool.anydev] target-torch, or "
                      "declare torch>=X)", file=sys.stderr)
        _say_unlocks(remaining, args)
    if getattr(result, "needs_torch", None):
        print(f"anydev fix: the fixed code needs torch >= {result.needs_torch}", file=sys.stderr)
    _say_literals([f for fr in result.files if fr.error is None for f in fr.applied], args)
    if getattr(args, "summary", None):
        from anydev._migrate.fix import summary as _summary
        try:
            with open(args.summary, "w", encoding="utf-8") as fh:
                fh.write(_summary.markdown(result, unsafe=args.unsafe_fixes, diff=args.diff,
                                          argv=[a for a in sys.argv[2:] if a != args.summary
                                                and not a.startswith("--summary")]))
        except OSError as e:
            print(f"anydev fix: cannot write the summary {args.summary}: {e.strerror or e}",
                  file=sys.stderr)
            return 2
    if io_failed or any(_is_io_error(e) for e in result.errors):
        return 2
    if args.diff:
        return sel.status(bool(result.diff), result.errors)
    return sel.status(bool(remaining), result.errors)


def _fix_stdin(args: argparse.Namespace, sel, scanned) -> int:
    """`anydev fix -`: the fixed file (or, with --diff, the diff) on stdout."""
    from anydev import fix as _fix

    name, data = sel.stdin_filename or "-", scanned.stdin_data
    _print_errors(scanned.errors)
    new: bytes = data
    applied: list = []
    skipped: list = []
    error = None
    if scanned.findings:
        kwargs = fixer_kwargs(_fix.fix_source, sel)
        if "target_torch" not in kwargs:
            # the project around the file it stands for (--stdin-filename), else around
            # the current folder, declares the target as for a file on disk
            import os
            from anydev._migrate import torch_versions as _versions
            where = os.path.abspath(sel.stdin_filename or os.path.join(os.getcwd(), "-"))
            declared = _versions.ProjectTargets().for_file(where)
            if declared is not None:
                kwargs["target_torch"] = declared
        try:
            if getattr(scanned.findings[0], "cell", None) is not None:  # a notebook
                from anydev._migrate import check as _check

                new, applied, skipped = _check.fix_notebook(
                    data, name, scanned.findings, unsafe=args.unsafe_fixes,
                    **fixer_kwargs(_check.fix_notebook, sel))
            else:
                new, applied, skipped = _fix.fix_source(data, name, scanned.findings,
                                                        unsafe=args.unsafe_fixes, **kwargs)
        except ValueError as e:
            error = str(e)
            skipped = [(f, error) for f in scanned.findings]
    if args.diff:
        if new != data:
            old_text, new_text = data.decode("utf-8", "replace"), new.decode("utf-8", "replace")
            write_stdout([_fix.unified_diff(name, old_text, new_text)], "the diff", utf8=True)
    else:
        if sys.stdout is None:
            write_stdout([], "the fixed file")  # stdout closed: that error
        try:
            sys.stdout.flush()
            sys.stdout.buffer.write(new)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            _silence_stdout()
            raise UsageError(f"cannot write the fixed file to stdout: {e.strerror or e}") from None
    if error is not None:
        print(f"{name}: not fixed: {error}", file=sys.stderr)
    else:
        for f, why in skipped:
            print(f"{location(f)}: {f.rule} {f.symbol}: not fixed: {why}", file=sys.stderr)
    if args.show_fixes:
        sys.stderr.writelines(render_fix_list(applied, "Would fix {n}:" if args.diff
                                              else "Fixed {n}:"))
    if not args.quiet:
        verb = "would fix" if args.diff else "fixed"
        print(f"anydev fix: {verb} {len(applied)} finding(s) in {name}; {len(skipped)} left "
              f"to migrate by hand", file=sys.stderr)
    _say_literals(applied, args)
    if args.diff:
        return sel.status(new != data, scanned.errors)
    return sel.status(bool(skipped), scanned.errors)


def _say_unlocks(remaining, args) -> None:
    """How many more findings a newer target would make fixable, per release."""
    from anydev._migrate import torch_versions as _versions

    got = _versions.unlocks([why for f, why in remaining
                             if args.unsafe_fixes or f.fix == "safe"])
    if got:
        parts = ", ".join(f"--target-torch {v} {n} more" for v, n in got)
        print(f"anydev fix: a newer target makes more findings fixable: {parts}",
              file=sys.stderr)


def _say_literals(applied, args) -> None:
    """The summary's line on the device literals and idioms rewritten: they
    change behaviour on purpose, and the reviewer must see it."""
    lit = [f for f in applied if f.rule.startswith("AD9")]
    if lit and not args.quiet:
        codes = ", ".join(sorted({f.rule for f in lit}))
        print(f"anydev fix: {'would rewrite' if args.diff else 'rewrote'} {len(lit)} device "
              f"literal(s) and idiom(s) ({codes}), a function at a time: unsafe, they behave "
              "differently on accelerators other than CUDA and on machines without one; "
              "review them (`anydev rule CODE`)", file=sys.stderr)
