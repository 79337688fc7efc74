"""anydev's pytest plugin: the legacy device calls a test suite reaches.

    pytest -p anydev                      # on for this run
    pytest --anydev                       # the same, where anydev is installed
    pytest --anydev-strict                # and fail the tests that reach a new legacy call
    [tool.anydev] pytest = true           # on for every run of the project

pytest finds it by the ``pytest11`` entry point named ``anydev`` (the
installed package's metadata), so ``-p anydev`` names that entry point and
no top-level module of that name is needed; with plugin autoloading off
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``) ``-p anydev`` still loads it by that
name, and from a source tree that is not installed ``-p
anydev._torch.pytest_plugin`` does. Loaded, it stays off unless asked:
``-p anydev`` itself, ``--anydev``, ``--anydev-strict``, ``--anydev-report``,
or ``pytest``/``pytest-strict`` in ``[tool.anydev]``. Loading it imports
neither torch nor anydev's runtime.

On, it installs :mod:`anydev.torch`'s observe mode on the real PyTorch for
the session (:func:`anydev._torch.adapter.install`: every legacy entry point
of ``torch.cuda``, ``torch.cuda.amp`` and ``torch.xpu`` counted per call
site, the calls unchanged) with the scope of ``[tool.anydev] packages`` and
``paths`` of the configuration nearest to pytest's rootdir (without either,
the rootdir's files outside any Python environment). Around each phase of
each test (setup, call, teardown) it notes the call sites of the project
whose counts grew; the terminal summary names the tests that reached legacy
calls and where, and the session's runtime report (:mod:`anydev.report`) is
written to ``--anydev-report`` (default ``[tool.anydev] pytest-report``, else
``anydev-report.json`` in the rootdir). With ``--anydev-strict`` a phase
that reached a call site whose line is not in the baseline (``--anydev-
baseline``, else ``[tool.anydev] baseline``: the file ``anydev scan
--write-baseline`` writes, matched by path, rule and line text) fails, so a
suite fails on legacy calls that new code makes.
"""

from __future__ import annotations

import os
import sys

import pytest

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Optional

__all__ = ["AnydevSession"]

_PLUGIN_NAME = "anydev-session"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("anydev", "anydev: the legacy device calls the tests reach")
    group.addoption("--anydev", action="store_true", default=False,
                    help="count the legacy torch.cuda/torch.xpu calls each test reaches "
                         "(anydev.torch's observe mode), name those tests in the summary and "
                         "write the runtime report")
    group.addoption("--anydev-strict", action="store_true", default=False,
                    help="as --anydev, and fail each test that reaches a legacy call whose "
                         "line is not in the baseline")
    group.addoption("--anydev-report", metavar="PATH", default=None,
                    help="where to write the session's runtime report (default: [tool.anydev] "
                         "pytest-report, else anydev-report.json in the rootdir)")
    group.addoption("--anydev-baseline", metavar="FILE", default=None,
                    help="the baseline --anydev-strict accepts (default: [tool.anydev] "
                         "baseline)")
    group.addoption("--no-anydev", action="store_true", default=False,
                    help="leave the plugin off, whatever [tool.anydev] says")


def _asked_by_name(config: Any) -> bool:
    """Whether the command line said ``-p anydev``."""
    for name in getattr(config.option, "plugins", None) or ():
        if name in ("anydev", "anydev._torch.pytest_plugin"):
            return True
    return False


def pytest_configure(config: Any) -> None:
    opt = config.option
    if opt.no_anydev:
        return
    from anydev._common import config as _config

    rootdir = str(config.rootpath)
    by_option = bool(opt.anydev or opt.anydev_strict or opt.anydev_report or
                     _asked_by_name(config))
    try:
        cfg = _config.load(rootdir).check(("packages", "paths", "pytest", "pytest-strict",
                                           "pytest-report", "baseline"))
    except _config.ConfigError as e:
        if by_option:
            raise pytest.UsageError(f"anydev: {e}") from None
        # a project whose configuration anydev cannot read still runs its tests
        config.issue_config_time_warning(pytest.PytestConfigWarning(
            f"anydev: the plugin is off: {e}"), stacklevel=2)
        return
    if not (by_option or cfg.pytest or cfg.pytest_strict):
        return
    try:
        import torch  # noqa: F401
    except ImportError:
        if by_option:
            raise pytest.UsageError("anydev: the plugin observes the legacy calls of PyTorch, "
                                    "which is not importable here") from None
        config.issue_config_time_warning(pytest.PytestConfigWarning(
            "anydev: [tool.anydev] pytest is on, but PyTorch is not importable: the plugin "
            "is off"), stacklevel=2)
        return
    strict = bool(opt.anydev_strict or cfg.pytest_strict)
    report = opt.anydev_report or cfg.pytest_report or os.path.join(rootdir, "anydev-report.json")
    baseline = opt.anydev_baseline or cfg.baseline
    session = AnydevSession(rootdir, cfg, strict=strict, report=report, baseline=baseline)
    config.pluginmanager.register(session, _PLUGIN_NAME)


class AnydevSession:
    """The plugin while it is on: the adapter installed for the session, the
    call sites each test's phases reached, the strict verdicts."""

    def __init__(self, rootdir: str, cfg: Any, *, strict: bool, report: str,
                 baseline: Optional[str]) -> None:
        from anydev import report as _report
        from anydev._torch import adapter

        self.rootdir = rootdir
        self.strict = strict
        self.report_path = report
        self.baseline_path = baseline
        try:
            _report.check_writable(report)
        except _report.ReportError as e:
            raise pytest.UsageError(f"anydev: --anydev-report: {e}") from None
        self._known: Optional[set] = None
        self._base = ""
        if strict and baseline:
            from anydev._migrate import formats as _formats
            from anydev._migrate.output import UsageError

            if not os.path.exists(baseline):
                raise pytest.UsageError(f"anydev: the baseline {baseline} does not exist "
                                        f"(write it with `anydev scan --write-baseline "
                                        f"{baseline}`)")
            try:
                self._known, self._base = _formats.baseline_sites(baseline)
            except UsageError as e:
                raise pytest.UsageError(f"anydev: {e}") from None
        packages = list(cfg.packages)
        paths = list(cfg.paths)
        self.scope_source = cfg.where("packages") if packages or paths else \
            f"{rootdir} (no [tool.anydev] packages or paths)"
        if not packages and not paths:
            paths = [rootdir]
        try:
            self.status = adapter.install("observe", packages=packages, paths=paths,
                                          project=rootdir)
        except adapter.ScopeError as e:
            raise pytest.UsageError(f"anydev: {e}") from None
        self._adapter = adapter
        self._envs = _environment_dirs()
        self._lines: dict[str, Optional[list[str]]] = {}
        self.per_test: dict[str, dict[tuple, dict]] = {}  # nodeid -> site -> call, count
        self.new: dict[tuple[str, str], list[dict]] = {}  # (nodeid, phase) -> sites
        self._tests = 0

    # --- counting ----------------------------------------------------------------

    def _counts(self) -> dict[tuple, dict]:
        from anydev import _C

        out = {}
        for c in _C._compat.snapshot():
            out[(c["file"], c["line"], c["legacy"])] = c
        return out

    def _ours(self, call: dict) -> bool:
        """Whether a call site is the project's own code (in the scope, and
        not in a Python environment inside the rootdir)."""
        file = call["file"]
        if self._adapter._resolve_scope(call["module"], file) != 1:
            return False
        path = os.path.abspath(file)
        return not any(path.startswith(d) for d in self._envs)

    def _phase(self, item: Any, when: str):
        before = self._counts()
        yield
        after = self._counts()
        reached = {}
        for key, c in after.items():
            n = c["count"] - (before[key]["count"] if key in before else 0)
            if n > 0 and self._ours(c):
                reached[key] = (c, n)
        if not reached:
            return
        mine = self.per_test.setdefault(item.nodeid, {})
        for key, (c, n) in reached.items():
            got = mine.get(key)
            mine[key] = (c, n + (got[1] if got else 0))
        if self.strict:
            new = [c for c, _n in reached.values() if not self._accepted(c)]
            if new:
                self.new[(item.nodeid, when)] = new

    def _read(self, file: str) -> Optional[list[str]]:
        lines = self._lines.get(file, False)
        if lines is False:
            try:
                with open(file, "rb") as fh:
                    lines = fh.read().decode("utf-8", "replace").split("\n")
            except OSError:
                lines = None
            self._lines[file] = lines
        return lines

    def _accepted(self, call: dict) -> bool:
        if not self._known:
            return False
        from anydev._migrate import formats as _formats

        key = _formats.site_key(call["file"], call["line"], call["rule"], self._base,
                                self._read)
        return key is not None and key in self._known

    # --- hooks ---------------------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: Any):
        yield from self._phase(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: Any):
        self._tests += 1
        yield from self._phase(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: Any):
        yield from self._phase(item, "teardown")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: Any, call: Any):
        outcome = yield
        rep = outcome.get_result()
        new = self.new.get((item.nodeid, call.when))
        if not new or not rep.passed:
            return
        where = "" if call.when == "call" else f" (in {call.when})"
        lines = [f"anydev: this test reached legacy calls that are not in the baseline"
                 f"{where} (--anydev-strict):"]
        for c in new:
            lines.append(f"  {self._shown(c['file'])}:{c['line']}: {c['rule']} "
                         f"{c['legacy']} -> {c['replacement'] or '(no replacement)'}")
        lines.append("migrate them (`anydev fix`), or accept them: `anydev scan "
                     "--write-baseline FILE`")
        rep.outcome = "failed"
        rep.longrepr = "\n".join(lines)

    def pytest_report_header(self, config: Any) -> list[str]:
        mode = "strict, baseline " + (self.baseline_path or "(none)") if self.strict else \
            "observe"
        return [f"anydev: legacy calls counted ({mode}); scope: {self.scope_source}"]

    def _shown(self, file: str) -> str:
        try:
            rel = os.path.relpath(file, self.rootdir)
        except ValueError:  # pragma: no cover - another drive
            return file
        return file if rel.startswith("..") else rel

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: Any,
                                config: Any) -> None:
        tr = terminalreporter
        tr.section("anydev: legacy calls reached")
        if not self.per_test:
            tr.write_line(f"no test reached a legacy call of the project ({self._tests} tests "
                          f"run)")
        for nodeid, sites in self.per_test.items():
            n = sum(count for _c, count in sites.values())
            tr.write_line(f"{nodeid}: {n} legacy call{'s' if n != 1 else ''}")
            for c, count in sorted(sites.values(),
                                   key=lambda cc: (cc[0]["file"], cc[0]["line"])):
                tr.write_line(f"    {self._shown(c['file'])}:{c['line']}: {c['rule']} "
                              f"{c['legacy']} -> {c['replacement'] or '(no replacement)'}"
                              f" ({count}x)")
        if self.per_test:
            k = len(self.per_test)
            tr.write_line(f"{k} test{'s' if k != 1 else ''} of {self._tests} reached legacy "
                          f"calls (`anydev fix` migrates them; docs/torch.md)")
        written = getattr(self, "written", None)
        if written:
            tr.write_line(f"runtime report: {written}")

    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        from anydev import report as _report

        try:
            self.written = _report.write(self.report_path)
        except _report.ReportError as e:
            self.written = None
            sys.stderr.write(f"anydev: cannot write the runtime report: {e}\n")

    def pytest_unconfigure(self, config: Any) -> None:
        self._adapter.uninstall()


def _environment_dirs() -> tuple[str, ...]:
    """The folders of Python environments (this one's prefix and library
    folders): code there is a library's, not the project's."""
    import sysconfig

    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    for key in ("purelib", "platlib", "stdlib", "platstdlib"):
        try:
            dirs.add(sysconfig.get_paths()[key])
        except KeyError:  # pragma: no cover
            pass
    return tuple(os.path.abspath(d).rstrip(os.sep) + os.sep for d in dirs if d)
