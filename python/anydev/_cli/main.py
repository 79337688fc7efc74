"""The ``anydev`` command.

    anydev doctor                 what anydev sees: backends, devices, the accelerator and why
    anydev demo                   the migration demo: scan, fix and run the bundled legacy project
    anydev tour                   a tour of devices, streams and events on the simulated accelerator
    anydev scan [PATH...]         find legacy calls (Python and C++), as text, JSON, SARIF, GitHub
    anydev fix [PATH...]          rewrite the mechanical ones (--unsafe-fixes, --diff)
    anydev rule CODE              explain a rule
    anydev server                 the editor server (LSP over stdio): findings as you type
    anydev run SCRIPT [ARGS...]   run a legacy script with the runtime report on; print its summary
                                  (--torch [--mode forward]: on the real PyTorch, see docs/torch.md;
                                  --accelerator sim[:N]: on a non-CUDA accelerator, with the call
                                  sites that ask for CUDA reported first)
    anydev report show FILE...    render a runtime report or a build log (text, markdown, json,
                                  sarif); --scan PATH merges the scanner's findings
    anydev report merge FILES -o OUT   merge the reports of many processes and build logs
    anydev report html [PATH...]  one self-contained HTML page of the migration (--history:
                                  the findings over the git history; docs/report-html.md)
    anydev version                the version (also `anydev --version`, `-V`)
    anydev completion SHELL       a completion script for bash, zsh or fish

Only the parser of the command that runs is built, and each command imports
what it needs when it runs (start-up time: benchmarks/python/bench_startup.py):
the commands themselves and their parsers are in anydev._cli.commands, and a plain
`anydev scan` builds no parser (Note [Fast argv]).

Exit codes: 0 success, 1 a check failed (``doctor`` with a bad configuration,
``scan`` with findings or unscanned parts), 2 usage, configuration or I/O
errors (a bad report file, a report path that cannot be written); ``run``
exits with the script's own status.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # argparse is imported when a parser is built (not for --version)
    import argparse
    from typing import Sequence


def _cmd_version(args: "argparse.Namespace | None") -> int:
    from anydev._version import __version__  # not anydev._C: the runtime is not loaded

    print(__version__)
    return 0


def _builder(name: str):
    """The builder ``name`` of anydev._cli.commands, imported when a parser is built."""
    def build(p: argparse.ArgumentParser) -> None:
        from . import commands as _commands

        getattr(_commands, name)(p)

    build.__name__ = build.__qualname__ = name
    return build


def _parser_class():
    """The parser class of every command (anydev._cli.commands._parser_class)."""
    from . import commands as _commands

    return _commands._parser_class()


# `anydev version` and `anydev completion` are about the command tree itself:
# they are built here, beside the tree, not in anydev._cli.commands.
def _build_version(p: argparse.ArgumentParser) -> None:
    p.set_defaults(func=_cmd_version)


def _build_completion(p: argparse.ArgumentParser) -> None:
    p.description = ("Prints a completion script for the shell: "
                     "`eval \"$(anydev completion bash)\"` in ~/.bashrc, "
                     "`anydev completion zsh > \"${fpath[1]}/_anydev\"`, "
                     "`anydev completion fish > ~/.config/fish/completions/anydev.fish`.")
    p.add_argument("shell", choices=("bash", "zsh", "fish"))
    p.set_defaults(func=_cmd_completion)


def _cmd_completion(args: argparse.Namespace) -> int:
    from . import completion as _completion

    sys.stdout.write(_completion.script(args.shell, build_parser()))
    return 0


# name -> (one-line help, builder); the order of `anydev --help`.
COMMANDS = {
    "doctor": ("show backends, devices and why a backend is unavailable",
               _builder("_build_doctor")),
    "demo": ("the migration demo: scan, fix and run the bundled legacy project",
             _builder("_build_demo")),
    "tour": ("a tour of devices, streams and events on the simulated accelerator",
             _builder("_build_tour")),
    "run": ("run a legacy script with the runtime report on", _builder("_build_run")),
    "report": ("show or merge runtime reports and build logs", _builder("_build_report")),
    "scan": ("find legacy torch.cuda / c10::cuda references in Python and C++ sources",
             _builder("_build_scan")),
    "fix": ("rewrite the legacy calls the compat table marks as mechanical",
            _builder("_build_fix")),
    "rule": ("explain a scanner rule (AD101) or list them all", _builder("_build_rule")),
    "server": ("the editor server: a Language Server (LSP 3.17, stdio) for anydev's findings",
               _builder("_build_server")),
    "version": ("print the version", _build_version),
    "completion": ("print a shell completion script (bash, zsh, fish)",
                   _build_completion),
}
DESCRIPTION = "Device-generic runtime and migration kit for torch.cuda-era code."


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of one command, on its own (its errors show its usage)."""
    help_text, build = COMMANDS[name]
    p = _parser_class()(prog=f"anydev {name}",
                        description=help_text[:1].upper() + help_text[1:] + ".")
    build(p)
    return p


def build_parser() -> argparse.ArgumentParser:
    """The whole tree (for `anydev --help` and the completion scripts)."""
    parser = _parser_class()(prog="anydev", description=DESCRIPTION)
    parser.add_argument("-V", "--version", action="store_true", help="print the version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_parser_class())
    for name, (help_text, build) in COMMANDS.items():
        build(sub.add_parser(name, help=help_text))
    return parser


# --- the fast path of `anydev scan` ------------------------------------------------
#
# Note [Fast argv]: `anydev scan PATH...` with plain options is parsed by hand
# below, without argparse (whose import, parser and gettext look-ups are a
# third of the command's start-up: benchmarks/python/bench_startup.py). It
# makes the namespace argparse would make, or gives up (None) and the
# command's argparse parser parses the arguments as before: so --help, every
# error (an unknown or abbreviated option, a missing or bad value, paths in
# two groups), `--`, bundled short options (-qj4) and values that start with
# `-` keep argparse's own behaviour and messages. tests/python/cli/test_cli_fast_argv.py
# checks the two agree on a table of argument vectors.

# option -> dest of the flags (store_true) of `anydev scan`
_SCAN_FLAGS = {
    "--no-gitignore": "no_gitignore", "--exit-zero": "exit_zero", "--quiet": "quiet",
    "-q": "quiet", "--no-config": "no_config", "--statistics": "statistics",
    "--show-fixes": "show_fixes",
}
# option -> (dest, how the value is taken: "append", "int" (>= 0), "torch",
# "format", "file" or "rev" (not empty))
_SCAN_VALUES = {
    "--select": ("select", "append"), "--ignore": ("ignore", "append"),
    "--extend-select": ("extend_select", "append"),
    "--extend-ignore": ("extend_ignore", "append"), "--diff-base": ("diff_base", "rev"),
    "--exclude": ("exclude", "append"), "--jobs": ("jobs", "int"), "-j": ("jobs", "int"),
    "--max-file-size": ("max_file_size", "int"), "--target-torch": ("target_torch", "torch"),
    "--stdin-filename": ("stdin_filename", "file"), "--config": ("config", "file"),
    "--output-format": ("format", "format"), "--format": ("format", "format"),
    "--output": ("output", "file"), "-o": ("output", "file"),
    "--baseline": ("baseline", "file"), "--write-baseline": ("write_baseline", "file"),
}


class _Args:
    """The attributes argparse.Namespace would hold (cmd_scan reads them)."""

    def __init__(self, **kwargs) -> None:
        self.__dict__.update(kwargs)

    def __repr__(self) -> str:
        return f"_Args({', '.join(f'{k}={v!r}' for k, v in sorted(self.__dict__.items()))})"


def _fast_scan_args(argv: list[str]):
    """What `anydev scan`'s parser makes of ``argv`` when it is plain (an
    _Args), else None (Note [Fast argv])."""
    from . import scan as _scan_cli

    ns = {"paths": [], "select": None, "ignore": None, "exclude": [], "no_gitignore": False,
          "jobs": None, "max_file_size": None, "target_torch": None, "exit_zero": False,
          "stdin_filename": None, "quiet": False, "config": None, "no_config": False,
          "format": None, "output": None, "statistics": False, "show_fixes": False,
          "baseline": None, "write_baseline": None, "extend_select": None,
          "extend_ignore": None, "diff_base": None}
    paths: list[str] = ns["paths"]
    group = 0  # 1 while in the one group of paths, 2 after it
    i, n = 0, len(argv)
    while i < n:
        a = argv[i]
        i += 1
        if a[:1] != "-" or a == "-":  # a path
            if group == 2:
                return None  # argparse: "unrecognized arguments"
            group = 1
            paths.append(a)
            continue
        if group == 1:
            group = 2
        flag = _SCAN_FLAGS.get(a)
        if flag is not None:
            ns[flag] = True
            continue
        name, eq, value = a.partition("=") if a[:2] == "--" else (a, "", "")
        spec = _SCAN_VALUES.get(name)
        if spec is None:
            return None
        if not eq:
            if i == n:
                return None
            value = argv[i]
            i += 1
            if value[:1] == "-" and value != "-":
                return None
        dest, how = spec
        if how == "append":
            items = ns[dest]
            ns[dest] = [value] if items is None else [*items, value]
            continue
        if how == "int":
            try:
                v = int(value)
            except ValueError:
                return None
            if v < 0:
                return None
            ns[dest] = v
            continue
        if how == "torch":
            try:
                value = _scan_cli.target_torch(value)
            except Exception:  # argparse says what is wrong with it
                return None
        elif how == "format" and value not in _scan_cli.FORMATS:
            return None
        elif how in ("file", "rev") and not value:
            return None
        ns[dest] = value
    return _Args(**ns, func=_scan_cli.cmd_scan)


def _top_usage(err: bool = True) -> None:
    print("usage: anydev [-h] [-V] COMMAND ...\n"
          f"commands: {', '.join(COMMANDS)} (`anydev --help` says more)",
          file=sys.stderr if err else sys.stdout)


# Note [Exit without teardown]: after `anydev scan` has written its report, a
# normal exit tears the interpreter down: it collects every module's objects
# and clears the modules, 11.5M instructions of the 20 MB tree's 324M, for a
# process about to end (the kernel takes its memory back at once). So the
# command's own entry points (`python -m anydev`, python/bin/anydev) end a
# `scan` as Python would, less that teardown: the atexit functions run, stdout
# and stderr are flushed, and os._exit gives the status. Where anything of
# the teardown could matter it is not skipped: another command (`run` runs a
# user's script, `fix` is left as it was), a scan that imported threading
# (git's subprocess; a non-daemon thread is joined at exit), a flush that
# fails (Python reports it, and exits 120), an interpreter started with
# options or by another program (cProfile, coverage, runpy in a test: their
# work after ours), or a Python without sys.orig_argv (3.9).
_FAST_EXIT = ("scan",)


def finish(code: int, direct: bool) -> None:
    """sys.exit(code), without the interpreter's teardown where that is safe
    (Note [Exit without teardown]); ``direct``: the entry point is the
    program Python was started with."""
    if direct and type(code) is int and "threading" not in sys.modules and (
            sys.argv[1:2] and sys.argv[1] in _FAST_EXIT):
        import atexit
        import os

        # CPython's own (3.9 to 3.13); another Python without it exits normally
        run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
        if run_exitfuncs is not None:
            run_exitfuncs()
            try:
                for out in (sys.stdout, sys.stderr):
                    if out is not None:
                        out.flush()
            except Exception:  # the normal exit flushes again and reports it
                pass
            else:
                os._exit(code & 0xFF)
    sys.exit(code)


def command(direct: bool) -> None:
    """The `anydev` command, from its entry points (`python -m anydev`,
    python/bin/anydev). ``direct``: Python was started as that entry point
    (not under cProfile, coverage or a test's runpy); then the objects of the
    start-up (site, runpy, the imports so far), which live as long as the
    process, are frozen out of the cyclic collector's walks (gc.freeze), and a
    scan ends without the interpreter's teardown (Note [Exit without teardown])."""
    if direct:
        import gc

        gc.freeze()
    finish(main(), direct)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv)
    except SystemExit as e:  # argparse: --help (0) or a usage error (2)
        code = e.code
        return code if isinstance(code, int) else (0 if code is None else 2)


def _main(argv: list[str]) -> int:
    if not argv:
        _top_usage()
        print("anydev: error: give a command", file=sys.stderr)
        return 2
    first = argv[0]
    if first in ("-V", "--version"):
        return _cmd_version(None)
    if first in ("-h", "--help"):
        build_parser().print_help()
        return 0
    if first not in COMMANDS:
        from anydev._common.config import did_you_mean

        _top_usage()
        if first == "-":
            print("anydev: error: `-` is not a command; stdin is read by `anydev scan -` "
                  "and `anydev fix -`", file=sys.stderr)
        elif first.startswith("-"):
            hint = did_you_mean(first, ["--help", "--version"])
            print(f"anydev: error: unknown option {first!r}{hint}", file=sys.stderr)
        else:
            hint = did_you_mean(first, COMMANDS)
            print(f"anydev: error: unknown command {first!r}{hint}", file=sys.stderr)
        return 2
    if first == "scan":
        fast = _fast_scan_args(argv[1:])
        if fast is not None:
            fast.command = first
            return fast.func(fast)
    args = command_parser(first).parse_args(argv[1:])
    args.command = first
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
