"""The commands of ``anydev`` other than the fast path of ``anydev scan``
(anydev/_cli/main.py, Note [Fast argv]): what doctor, demo, tour, run and report
do, and the builders of every command's argparse parser. Imported when a
command other than a plain scan runs or a parser is built: `anydev scan
one_file.py` loads none of it (benchmarks/python/bench_startup.py)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # argparse is imported when a parser is built
    import argparse


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _cmd_doctor(args: argparse.Namespace) -> int:
    import anydev

    print(f"anydev {anydev.__version__} ({os.path.dirname(anydev.__file__)})")
    print(f"python {sys.version.split()[0]} ({sys.executable})")
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith("ANYDEV_")}
    print("environment: " + (", ".join(f"{k}={v}" for k, v in env.items()) or "no ANYDEV_ variables set"))
    print()
    rows = []
    for b in anydev.backends():
        state = "available" if b.available else ("not built" if not b.built else "unavailable")
        rows.append([b.name, "yes" if b.built else "no", state, str(b.device_count), b.reason])
    print(_table(rows, ["backend", "built", "state", "devices", "reason"]))
    print()
    try:
        acc = anydev.accelerator.current_accelerator()
    except RuntimeError as e:
        print(f"accelerator: configuration error: {e}")
        return 1
    if acc is None:
        print("accelerator: none (device-generic calls use the CPU; set ANYDEV_SIM_DEVICES=N "
              "for a simulated one)")
        return 0
    n = anydev.accelerator.device_count()
    print(f"accelerator: {acc.type} with {n} device{'s' if n != 1 else ''}")
    for i in range(n):
        p = anydev.get_device_properties(anydev.device(acc.type, i))
        print(f"  {acc.type}:{i}  {p.name}, {p.total_memory / 2**30:.2f} GiB, "
              f"{p.multi_processor_count} multiprocessors" + (f", {p.arch}" if p.arch else ""))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import demo as _demo

    return _demo.run(args.project, args.devices, args.steps)


def _cmd_tour(args: argparse.Namespace) -> int:
    # The simulated accelerator is opt-in; the tour opts in for itself.
    os.environ.setdefault("ANYDEV_SIM_DEVICES", str(args.devices))
    import threading
    import time

    import anydev
    from anydev import testing

    acc = anydev.accelerator
    print("== backends ==")
    for b in anydev.backends():
        print(f"  {b.name:5} {'available' if b.available else 'unavailable':11} "
              f"devices={b.device_count}  {b.reason}")

    current = acc.current_accelerator()
    if current is None:
        print("no accelerator is available; see `anydev doctor`", file=sys.stderr)
        return 1
    print(f"\n== devices ==\n  current accelerator: {current.type}, "
          f"{acc.device_count()} device(s)")
    for i in range(acc.device_count()):
        print(f"  {anydev.get_device_properties(i)!r}")

    print("\n== current device (per thread) ==")
    last = acc.device_count() - 1
    acc.set_device_index(last)
    print(f"  set_device_index({last}) -> current_device_index() = {acc.current_device_index()}")
    with acc.device_index(0):
        print(f"  inside `with device_index(0)`: {acc.current_device_index()}")
    print(f"  after the block: {acc.current_device_index()}")
    seen: list[int] = []
    t = threading.Thread(target=lambda: seen.append(acc.current_device_index()))
    t.start()
    t.join()
    print(f"  a new thread starts on device {seen[0]}")
    acc.set_device_index(0)

    print("\n== streams and events ==")
    producer = anydev.Stream()
    consumer = anydev.Stream(priority=-1)
    print(f"  producer: {producer!r}\n  consumer: {consumer!r} (priority {consumer.priority})")
    start = anydev.Event(enable_timing=True)
    done = anydev.Event(enable_timing=True)
    start.record(producer)
    testing.sleep(args.work, producer)          # "a kernel" that takes args.work seconds
    done.record(producer)
    consumer.wait_event(done)                   # the consumer's work starts after it
    after = consumer.record_event(anydev.Event(enable_timing=True))
    t0 = time.perf_counter()
    print(f"  queued {args.work * 1000:.0f} ms of work; producer.query() = {producer.query()}, "
          f"consumer.query() = {consumer.query()} (work is in flight)")
    after.synchronize()
    waited = (time.perf_counter() - t0) * 1000
    print(f"  consumer's event completed after {waited:.1f} ms on the host clock")
    print(f"  elapsed_time(start, done) = {start.elapsed_time(done):.1f} ms (device clock)")
    print(f"  elapsed_time(start, consumer's event) = {start.elapsed_time(after):.1f} ms")

    with consumer:
        print(f"  inside `with consumer`: current_stream() == consumer -> "
              f"{acc.current_stream() == consumer}")
    print(f"  after the block: current_stream() is the default stream -> "
          f"{acc.current_stream().stream_id == 0}")
    acc.synchronize()
    print("\nok")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    import runpy
    import traceback

    from anydev import report

    if args.facade:
        from anydev._torch import facade as _torch_facade

        _torch_facade.install()
    if args.torch or args.mode or args.accelerator:
        if args.facade:
            print("anydev run: --torch/--mode/--accelerator and --facade exclude each other",
                  file=sys.stderr)
            return 2
        if args.accelerator:  # sim in PyTorch before anything else uses anydev or torch
            from . import sim_run as _sim_run

            error = _sim_run.start(args.accelerator)
            if error is not None:
                print(f"anydev run --accelerator sim: {error}", file=sys.stderr)
                return 2
        try:
            from anydev._torch import adapter as _torch_adapter
        except ImportError as e:  # PyTorch is not installed
            print(f"anydev run --torch: {e}", file=sys.stderr)
            return 2
        try:
            _torch_adapter.install(mode=args.mode or "observe",
                                   project=os.getcwd() if args.module else args.target)
        except (ImportError, ValueError) as e:
            print(f"anydev run --torch: {e}", file=sys.stderr)
            return 2
    template = args.report or os.environ.get("ANYDEV_REPORT")
    if template:
        try:
            report.check_writable(report.expand_path(template))
        except report.ReportError as e:
            print(f"anydev run: {e}", file=sys.stderr)
            return 2
    if args.module:
        target, run = args.target, lambda: runpy.run_module(args.target, run_name="__main__",
                                                             alter_sys=True)
    else:
        if not os.path.isfile(args.target):
            print(f"anydev run: {args.target}: no such file", file=sys.stderr)
            return 2
        target = args.target
        path = os.path.abspath(target)  # as `python script.py`: code and report name it so
        run = lambda: runpy.run_path(path, run_name="__main__")  # noqa: E731
    # Every process of the run counts into its report (anydev._cli.run_child),
    # and the run ends with its summary and report however it ends.
    from . import run_child as _run_child

    _run_child.prepare(torch=bool(args.torch or args.mode or args.accelerator),
                       facade=bool(args.facade), mode=args.mode,
                       project=os.getcwd() if args.module else args.target, sim=args.accelerator)
    if template:
        report.enable_at_exit(template)  # checked above; made absolute now, before any chdir
    sys.path.insert(0, os.getcwd() if args.module else os.path.dirname(path))  # as `python`
    sys.argv = [target, *args.args]
    status = 0
    try:
        run()
    except SystemExit as e:
        code = e.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
        if code is not None and not isinstance(code, int):
            report.say(str(code))
    except KeyboardInterrupt:
        report.say(traceback.format_exc().rstrip("\n"))
        status = 130  # as Python's own exit status after SIGINT
    except BaseException:  # the script's own failure: show it, then the summary
        report.say(traceback.format_exc().rstrip("\n"))
        status = 1
    # A child the script made with os.fork() that returned or raised
    # SystemExit unwinds to here: it ends as it would under Python (its atexit
    # functions, its report among the children's), without the run's summary.
    _run_child.print_summary()
    return status


def _cmd_report_show(args: argparse.Namespace) -> int:
    from anydev._migrate import build_log as _build_log
    from anydev import report

    try:
        data = _build_log.gather(args.files, args.scan or (), args.build_dir)
        text = report.render(data, args.format, root=args.root)
    except (report.ReportError, ValueError) as e:
        print(f"anydev report show: {e}", file=sys.stderr)
        return 2
    # A lone surrogate is valid JSON ("\udcff": what a run writes for a file name
    # that is not UTF-8) but no UTF-8 stdout takes it: written as its escape.
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _cmd_report_merge(args: argparse.Namespace) -> int:
    from anydev._migrate import build_log as _build_log
    from anydev import report

    try:
        merged = _build_log.gather(args.files, args.scan or (), args.build_dir)
        report.write(args.output, merged)
    except (report.ReportError, OSError, ValueError) as e:
        print(f"anydev report merge: {e}", file=sys.stderr)
        return 2
    total = sum(c["count"] for c in merged["calls"])
    print(f"merged {len(args.files)} report(s): {total} legacy call(s) from "
          f"{len(merged['calls'])} call site(s) -> {args.output}", file=sys.stderr)
    return 0


# --- the parser: built for the one command that runs ------------------------------


_parser_classes: list = []


def _parser_class():
    """argparse.ArgumentParser with a did-you-mean for a mistyped option or
    choice, whose errors print this (sub)command's own usage and exit 2;
    defined on first use, so that `anydev --version` does not import argparse."""
    if _parser_classes:
        return _parser_classes[0]
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str):  # type: ignore[override]
            message += _suggestion(self, message)
            self.print_usage(sys.stderr)
            self.exit(2, f"{self.prog}: error: {message}\n")

        def _get_formatter(self):
            # argparse's own asks shutil for the terminal width, and importing
            # shutil (with bz2, lzma) is a tenth of the command's start-up.
            return self.formatter_class(prog=self.prog, width=_terminal_width() - 2)

    _parser_classes.append(_Parser)
    return _Parser


def _terminal_width() -> int:
    """As shutil.get_terminal_size().columns: $COLUMNS, the terminal, or 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    import re

    from anydev._common.config import did_you_mean

    m = re.match(r"unrecognized arguments: (\S+)", message)
    if m and m.group(1).startswith("-"):
        word = m.group(1).split("=", 1)[0]
        return did_you_mean(word, [o for o in parser._option_string_actions if len(o) > 2])
    m = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if m:
        choices = re.findall(r"'([^']*)'", m.group(2)) or [c.strip() for c in
                                                           m.group(2).split(",")]
        return did_you_mean(m.group(1), choices)
    return ""


def _devices(p: argparse.ArgumentParser) -> None:
    p.add_argument("--devices", type=_int_in(1, 64), default=2, metavar="N",
                   help="simulated devices when ANYDEV_SIM_DEVICES is unset (default: 2)")


def _int_in(lo: int, hi: int):
    def parse(text: str) -> int:
        import argparse

        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be in {lo}..{hi}, not {v}")
        return v

    return parse


def _accelerator(text: str) -> int:
    from . import sim_run as _sim_run

    return _sim_run.argument_type(text)


def _seconds(text: str) -> float:
    import argparse

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= v <= 60:
        raise argparse.ArgumentTypeError(f"must be in [0, 60] seconds, not {text}")
    return v


def _build_doctor(p: argparse.ArgumentParser) -> None:
    p.set_defaults(func=_cmd_doctor)


def _build_demo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--project", metavar="DIR",
                   help="the legacy example project (default: examples/legacy_project)")
    _devices(p)
    p.add_argument("--steps", type=_int_in(0, 1000), default=2, metavar="N",
                   help="training steps of the example's run (default: 2)")
    p.set_defaults(func=_cmd_demo)


def _build_tour(p: argparse.ArgumentParser) -> None:
    _devices(p)
    p.add_argument("--work", type=_seconds, default=0.05, metavar="SECONDS",
                   help="length of the simulated kernel (default: 0.05)")
    p.set_defaults(func=_cmd_tour)


def _build_run(p: argparse.ArgumentParser) -> None:
    import argparse

    p.description = ("Runs SCRIPT (or -m MODULE) as __main__ with anydev's runtime report on "
                     "and prints the legacy calls that ran.")
    p.add_argument("-m", dest="module", action="store_true", help="TARGET is a module name")
    p.add_argument("--facade", action="store_true",
                   help="run without PyTorch: `import torch` gets anydev's facade, whose "
                        "torch.cuda is anydev's legacy shims (see anydev._torch.facade)")
    p.add_argument("--torch", action="store_true",
                   help="run on the real PyTorch with anydev's forwarders on torch.cuda, "
                        "torch.cuda.amp and torch.xpu, scoped to the script (and the packages "
                        "and paths of [tool.anydev]); see docs/torch.md")
    p.add_argument("--mode", choices=("observe", "forward"),
                   help="with --torch (implies it): observe (default) warns about and counts "
                        "legacy calls and runs them unchanged; forward also sends them to "
                        "torch.accelerator / torch.amp / torch.Stream / torch.Event")
    p.add_argument("--accelerator", metavar="sim[:N]", type=_accelerator,
                   help="with --torch (implies it): make anydev's simulated accelerator PyTorch's "
                        "device 'sim' (N devices; default $ANYDEV_SIM_DEVICES, else 1) in every "
                        "Python process of the run, and report the call sites that ask for CUDA "
                        "(see docs/torch.md)")
    p.add_argument("--report", metavar="PATH",
                   help="also write the report here ({pid} and {rank} expand); "
                        "default: $ANYDEV_REPORT if set")
    p.add_argument("target", metavar="SCRIPT")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    p.set_defaults(func=_cmd_run)


def _report_inputs(q: argparse.ArgumentParser) -> None:
    q.add_argument("files", nargs="+", metavar="FILE",
                   help="runtime reports (JSON) and build logs of g++, clang++ or nvcc "
                        "(their -Wdeprecated-declarations warnings from "
                        "<anydev/torch_deprecations.h>; see docs/compat.md)")
    q.add_argument("--scan", action="append", metavar="PATH",
                   help="also merge the scanner's findings over PATH (repeatable)")
    q.add_argument("--build-dir", metavar="DIR",
                   help="the folder the compiler ran in: relative paths of a build log are "
                        "taken from it (default: as written)")


def _build_report(p: argparse.ArgumentParser) -> None:
    rsub = p.add_subparsers(dest="report_command", metavar="ACTION",
                            parser_class=_parser_class())
    rsub.required = True
    q = rsub.add_parser("show", help="render a report (several inputs are merged first)")
    _report_inputs(q)
    q.add_argument("--output-format", "--format", dest="format",
                   choices=("text", "markdown", "json", "sarif"), default="text")
    q.add_argument("--root", help="paths are shown relative to this folder (default: cwd)")
    q.set_defaults(func=_cmd_report_show)
    q = rsub.add_parser("merge", help="merge the reports of many processes, build logs and "
                                      "scans into one")
    _report_inputs(q)
    q.add_argument("-o", "--output", required=True, metavar="OUT")
    q.set_defaults(func=_cmd_report_merge)
    q = rsub.add_parser("html", help="one self-contained HTML page of the migration: where the "
                                     "legacy code is, what fixing it costs, what runs, progress")
    _build_report_html(q)


def _build_scan(p: argparse.ArgumentParser) -> None:
    from . import scan as _scan_cli

    _scan_cli.add_scan_parser(p)


def _build_fix(p: argparse.ArgumentParser) -> None:
    from . import fix as _fix_cli

    _fix_cli.add_fix_parser(p)


def _build_rule(p: argparse.ArgumentParser) -> None:
    from . import rule as _rule_cli

    _rule_cli.add_rule_parser(p)


def _build_server(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Runs the editor server: a Language Server (LSP 3.17) on stdin/stdout that shows "
        "`anydev scan`'s findings as you type in Python, C/C++/CUDA/HIP files and notebook "
        "cells, with `anydev fix`'s rewrites and `# noqa` as code actions and `anydev rule` "
        "on hover. Started by an editor, not by hand: docs/editors.md says how.")
    p.add_argument("--config", metavar="FILE",
                   help="read this configuration file for every file (default: each file's "
                        "nearest pyproject.toml with [tool.anydev], or anydev.toml)")
    p.add_argument("--clientProcessId", "--client-process-id", dest="client_pid", type=int,
                   metavar="PID", help="exit when this process (the editor) is gone")
    p.add_argument("--diff-base", metavar="REV",
                   help="the ratchet in the editor: findings on lines older than the merge base "
                        "of REV and HEAD are dimmed (initializationOptions.oldFindings: 'hide' "
                        "leaves them out); as `anydev scan --diff-base REV`")
    p.add_argument("--stdio", action="store_true",
                   help="talk over stdin/stdout (the default and only transport; accepted "
                        "because editors pass it)")
    p.set_defaults(func=_cmd_server)


def _cmd_server(args: argparse.Namespace) -> int:
    if sys.stdin is None or sys.stdout is None:
        print("anydev server: stdin and stdout must be open (an editor starts it)",
              file=sys.stderr)
        return 2
    if sys.stdin.isatty() and sys.stdout.isatty():
        print("anydev server: a Language Server talks to an editor over stdin/stdout; "
              "docs/editors.md says how to set one up", file=sys.stderr)
    from anydev._server import server as _server

    return _server.serve(config=args.config, client_pid=args.client_pid, exit_process=True,
                         diff_base=args.diff_base)


# --- `anydev report html` (the page itself: anydev._dashboard) ---------------------


def _build_report_html(q: argparse.ArgumentParser) -> None:
    from . import scan as _scan_cli

    q.description = ("Writes one self-contained HTML page (no network: open it from disk or a "
                     "CI artefact) of the legacy code in PATHs: a map of the findings by folder "
                     "and file, what `anydev fix` does with them and what it refuses, what each "
                     "torch release unlocks, the baseline's share, the runtime reports joined to "
                     "the findings, and with --history the findings over the git history. "
                     "See docs/report-html.md.")
    q.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    q.add_argument("-o", "--output", type=_scan_cli.file_name, default="anydev-report.html",
                   metavar="FILE", help="the page (default: anydev-report.html)")
    q.add_argument("--report", action="append", metavar="FILE",
                   help="a runtime report (anydev run --report, ANYDEV_REPORT) to join to the "
                        "findings (repeatable: the reports are merged)")
    q.add_argument("--baseline", type=_scan_cli.file_name, metavar="FILE",
                   help="show which findings this baseline accepts (default: [tool.anydev] "
                        "baseline)")
    q.add_argument("--history", action="store_true",
                   help="plot the findings at sampled commits of the git history")
    q.add_argument("--history-tags", action="store_true",
                   help="plot them at the repository's tags (and HEAD) instead")
    q.add_argument("--history-samples", type=_int_in(1, 1000), default=30, metavar="N",
                   help="at most N commits or tags (default: 30)")
    q.add_argument("--no-fixer", action="store_true",
                   help="take each finding's next step from its rule's fix level, without "
                        "asking the fixer (faster; no refusal reasons)")
    q.add_argument("--title", metavar="TEXT", help="the page's title")
    for opt in ("--select", "--ignore"):
        q.add_argument(opt, action="append", metavar="CODES",
                       help=f"as for anydev scan {opt}")
    q.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="as for anydev scan --exclude")
    q.add_argument("--no-gitignore", action="store_true", help="as for anydev scan")
    q.add_argument("--jobs", "-j", type=_scan_cli.non_negative_int("threads"), metavar="N",
                   help="threads (default: all cores)")
    q.add_argument("--max-file-size", type=_scan_cli.non_negative_int("bytes"), metavar="BYTES",
                   help="as for anydev scan")
    q.add_argument("--target-torch", type=_scan_cli.target_torch, metavar="VERSION",
                   help="the floor: the oldest PyTorch the code must keep running on (default: "
                        "[tool.anydev] target-torch, else what the project declares)")
    q.add_argument("--config", type=_scan_cli.file_name, metavar="FILE",
                   help="read this configuration file instead of the nearest one")
    q.add_argument("--no-config", action="store_true", help="read no configuration file")
    q.set_defaults(func=_cmd_report_html, exit_zero=False, stdin_filename=None)


def _cmd_report_html(args: argparse.Namespace) -> int:
    import anydev
    from anydev import report
    from anydev._common.config import Glob
    from anydev._dashboard import history as _history
    from anydev._dashboard import model as _model
    from anydev._dashboard import render as _render
    from anydev._migrate.output import UsageError, write_atomic

    from . import scan as _scan_cli

    args.command = "report html"
    try:
        sel = _scan_cli.selection(args)
        if sel.stdin:
            raise UsageError("the page is made of files and folders, not of stdin (`-`)")
        scanned = _scan_cli.scan_selection(sel, args.jobs)
        walked = None
        if args.history or args.history_tags:
            globs = [Glob(p, b or os.getcwd()) for p, b in sel.excludes]
            walked = _history.walk(
                sel.paths, samples=args.history_samples, tags=args.history_tags, keep=sel.rules,
                keep_path=(lambda p: not any(g.match(p) for g in globs)) if globs else None,
                drop=sel.dropped() if sel.per_file_ignores else None,
                max_file_size=sel.max_file_size)
        d = _model.build(scanned, paths=sel.paths, title=args.title, reports=args.report or (),
                         baseline=args.baseline or sel.cfg.baseline,
                         target_torch=sel.target_torch, keep=sel.keep_globs,
                         fixer=not args.no_fixer, jobs=args.jobs, history=walked,
                         version=anydev.__version__)
        page = _render.page(d)
        try:
            write_atomic(args.output, page.encode("utf-8", "backslashreplace").decode("utf-8"))
        except OSError as e:
            raise UsageError(f"{args.output}: cannot write: {e.strerror or e}") from None
    except (UsageError, report.ReportError, _history.HistoryError) as e:
        print(f"anydev report html: {e}", file=sys.stderr)
        return 2
    more = f"; {len(walked.points)} points of history" if walked is not None else ""
    print(f"anydev report html: wrote {args.output} ({len(d.items)} finding(s) in "
          f"{d.stats.files} file(s){more})", file=sys.stderr)
    return 0
