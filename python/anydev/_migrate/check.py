"""One file checked as ``anydev scan`` checks it, and its findings fixed as
``anydev fix`` fixes them: the library behind ``anydev scan -`` / ``anydev
fix -`` (a file read from stdin) and the editor server (anydev._server), so
that a file in an editor gets the findings the command line reports for it.

    settings = check.settings(config)                # [tool.anydev], checked
    checked = check.check_source(data, "/abs/src/a.py", settings)
    checked.findings, checked.errors                 # after every filter

What a file's check applies, in order: the size limit (``max-file-size``);
the scan of its language (Python, C/C++/CUDA/HIP, or a Jupyter notebook's
code cells: anydev/_migrate/notebook.py), with the rules ``select`` and
``ignore`` keep and its ``# noqa`` / ``# anydev: ignore`` comments;
``per-file-ignores``; the baseline (a finding recorded in it is not
reported). ``exclude`` decides whether a file is checked at all
(:meth:`Settings.excluded`); ``keep`` and the target torch decide what a fix
may rewrite (:func:`fix`).
"""

from __future__ import annotations

import os

from anydev import scan as _scan
from anydev._common import config as _config

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` costs `anydev scan`'s start-up
    from typing import Callable, Optional, Sequence

DEFAULT_MAX_FILE_SIZE = 20 << 20


def rule_settings(cfg: _config.Config, select: Optional[Sequence[str]] = None,
                  ignore: Sequence[str] = ()) -> tuple:
    """(the rule filter, the per-file ignores as [(Glob, drops(code))]) of a
    configuration and the command line's ``--select``/``--ignore``;
    ValueError names the entry that is not a rule code and where it is.
    (Written in anydev.scan, which ``anydev scan`` has loaded at start-up
    when it reads them: this module is not loaded for a plain scan.)"""
    return _scan._rule_settings(cfg, select, ignore)


class Settings:
    """What a file is checked (and fixed) with: the rule filter, the
    per-file ignores, the exclude and keep globs (relative to ``root``),
    the target torch (None: the project's own declaration, else the
    newest release the table knows), the size limit and the baseline."""

    def __init__(self, rules: Callable[[str], bool], *, per_file_ignores: Sequence = (),
                 exclude: Sequence[str] = (), keep: Sequence[str] = (), root: str = "",
                 target_torch: Optional[str] = None,
                 max_file_size: int = DEFAULT_MAX_FILE_SIZE,
                 baseline: Optional[str] = None) -> None:
        self.rules = rules
        self.per_file_ignores = list(per_file_ignores)
        self.root = root
        self.exclude = [_config.Glob(g, root) for g in exclude]
        self.keep = list(keep)
        self.target_torch = target_torch
        self.max_file_size = max_file_size
        self.baseline = baseline
        self._known: Optional[set] = None
        self._known_stamp: Optional[tuple] = None

    def excluded(self, path: str) -> bool:
        """Whether an ``exclude`` glob names the file (or a folder above it)."""
        return any(g.match(path) for g in self.exclude)

    def dropped(self, path: str, rule: str) -> bool:
        """Whether ``per-file-ignores`` drop the file's findings of ``rule``."""
        return any(g.match(path) and drop(rule) for g, drop in self.per_file_ignores)

    def known(self) -> set:
        """The baseline's fingerprints (empty without one), read again when
        the file changed (an editor's server lives longer than one run).
        anydev._migrate.output.UsageError when it cannot be read."""
        if self.baseline is None:
            return set()
        try:
            st = os.stat(self.baseline)
            stamp: Optional[tuple] = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        if self._known is None or stamp != self._known_stamp:
            from .formats import read_baseline

            self._known = read_baseline(self.baseline)
            self._known_stamp = stamp
        return self._known


def settings(cfg: _config.Config, *, select: Optional[Sequence[str]] = None,
             ignore: Sequence[str] = (), target_torch: Optional[str] = None,
             max_file_size: Optional[int] = None, baseline: Optional[str] = None) -> Settings:
    """The Settings of a configuration (and the command line's overrides);
    ValueError (a ConfigError for the file's own values) names what is wrong."""
    cfg.check(("select", "ignore", "extend-select", "extend-ignore", "exclude",
               "per-file-ignores", "keep", "baseline", "target-torch", "max-file-size"))
    rules, pfi = rule_settings(cfg, select, ignore)
    target = target_torch or cfg.target_torch
    if target is not None:
        from . import torch_versions as _versions

        try:
            _versions.resolve_target(target)
        except _versions.VersionError as e:
            where = f"{cfg.where()}: `target-torch`: " if target_torch is None else ""
            raise ValueError(f"{where}{e}") from None
    size = max_file_size if max_file_size is not None else (
        cfg.max_file_size if cfg.max_file_size is not None else DEFAULT_MAX_FILE_SIZE)
    return Settings(rules, per_file_ignores=pfi, exclude=cfg.exclude, keep=cfg.keep,
                    root=cfg.root or os.getcwd(), target_torch=target, max_file_size=size,
                    baseline=baseline or cfg.baseline)


def language_of(path: str) -> Optional[str]:
    """"python", "cpp" or "notebook" by the file's extension, else None."""
    if path.lower().endswith(_scan.NOTEBOOK_EXTENSIONS):
        return "notebook"
    return _scan.language_of(path)


class Checked:
    """A file's check: its findings and errors, and what they were found in
    (``data``; ``notebook``, the notebook read from it, or None)."""

    __slots__ = ("path", "language", "data", "findings", "errors", "baselined")

    def __init__(self, path: str, language: Optional[str], data: bytes) -> None:
        self.path, self.language, self.data = path, language, data
        self.findings: list = []
        self.errors: list = []
        self.baselined = 0  # findings the baseline left out


def check_source(data: bytes, path: str, settings: Settings, *,
                 language: Optional[str] = None, baseline: bool = True) -> Checked:
    """Checks one file's bytes as if read from ``path`` (see the module
    docstring). ``language``: "python", "cpp" or "notebook" (default: by the
    extension; ValueError when it tells none). ``baseline``: leave out the
    findings the baseline records (the command line applies it to the whole
    run's findings itself)."""
    lang = language or language_of(path)
    if lang is None:
        raise ValueError(f"{path}: not a Python, C/C++/CUDA/HIP source or Jupyter notebook "
                         "(by its extension)")
    out = Checked(path, lang, data)
    if len(data) > settings.max_file_size:
        out.errors.append(_scan.ScanError(
            path, f"file is {len(data)} bytes, over the limit of {settings.max_file_size} "
                  "(a generated file?); skipped", None))
        return out
    found, out.errors = _scan._scan_source(data, path, lang, settings.rules)
    if settings.per_file_ignores:
        found = [f for f in found if not settings.dropped(path, f.rule)]
    if baseline and found and settings.baseline is not None:
        known = settings.known()
        keys = fingerprint_keys(found, data, os.path.dirname(os.path.abspath(settings.baseline)))
        kept = [f for f, k in zip(found, keys) if k not in known]
        out.baselined = len(found) - len(kept)
        found = kept
    out.findings = found
    return out


def fingerprint_keys(findings: list, data: bytes, relative_to: str) -> list:
    """The baseline keys of one file's findings, their lines read from
    ``data`` (the text checked, which an editor may not have saved) rather
    than from the disk."""
    from .formats import fingerprint_keys as _keys
    from .output import _Lines

    lines = _Lines()
    if findings:
        lines._path, lines._data = findings[0].path, _scanned_text(findings[0], data)
    return _keys(findings, relative_to=relative_to, lines=lines)


def _scanned_text(f, data: bytes) -> bytes:
    """The text a finding's offsets are in: the file, or a notebook's
    source (Note [Notebook source])."""
    if getattr(f, "cell", None) is None:
        return data
    from . import notebook as _notebook

    try:
        return _notebook.Notebook.parse(data).source.encode("utf-8")
    except _notebook.NotebookError:
        return b""


# --- fixes ---------------------------------------------------------------------------


def fix(data: bytes, path: str, findings: list, settings: Settings, *, unsafe: bool = False,
        language: Optional[str] = None) -> tuple:
    """What ``anydev fix`` writes for ``findings`` of the file ``path`` (a
    file's, or a notebook's, checked from ``data``): (new bytes, applied,
    skipped with why). The target torch is the settings' (else the
    project's declaration for the file, else the newest release the table
    knows); a ``keep`` glob refuses every rewrite; the fixed text's rescans
    keep the rules and per-file ignores of the settings. ValueError when the
    file cannot be fixed soundly (it does not parse, the findings are not
    its own)."""
    from anydev import fix as _fix

    from . import torch_versions as _versions

    target = settings.target_torch or _versions.ProjectTargets().for_file(path) or \
        _versions.DEFAULT
    # keep's globs are relative to the configuration's folder: the fixer
    # matches them against the path from there (as a run from there does)
    rel = os.path.relpath(os.path.abspath(path), settings.root).replace(os.sep, "/")
    if rel.startswith("../"):
        rel = os.path.abspath(path).replace(os.sep, "/")
    rules = _rescan_filter(settings, path)
    if (language or language_of(path)) == "notebook":
        return fix_notebook(data, rel, findings, unsafe=unsafe, target_torch=target,
                            keep=settings.keep, rules=rules)
    return _fix.fix_source(data, rel, findings, unsafe=unsafe, target_torch=target,
                           keep=settings.keep, rules=rules)


def _rescan_filter(settings: Settings, path: str) -> Callable[[list], list]:
    """The filter of a fixed file's rescans: the rules and per-file ignores
    the file was checked with."""
    return lambda fs: [f for f in fs if settings.rules(f.rule) and
                       not settings.dropped(path, f.rule)]


def fix_notebook(data: bytes, path: str, findings: list, *, unsafe: bool = False,
                 target_torch=None, keep: Sequence[str] = (),
                 rules: Optional[Callable[[list], list]] = None) -> tuple:
    """fix_source for a notebook: its code cells fixed as one Python source
    (Note [Notebook source]), written back into the notebook's bytes with
    everything outside the changed cells kept (Note [Notebook bytes]).
    ``findings``: the notebook's, from a scan of exactly ``data``. A cell
    that does not parse is left as it is, with its findings (the others are
    fixed). Returns (new bytes, applied, skipped with why)."""
    from anydev import fix as _fix

    from . import notebook as _notebook

    try:
        nb = _notebook.Notebook.parse(data)
    except _notebook.NotebookError as e:
        raise ValueError(str(e)) from None
    rel = path.replace(os.sep, "/")
    kept_by = next((g for g in keep if _config.Glob(g, "").match(rel)), None)
    if kept_by is not None:  # as the fixer refuses a kept file's findings
        why = f"kept: {rel} matches `keep = [\"{kept_by}\"]` of [tool.anydev]"
        return data, [], [(f, why) for f in findings]
    skipped: list = []
    broken: dict = {}  # cell number -> why it is left out
    current = nb
    while True:
        try:
            compile(current.source, path, "exec", dont_inherit=True)
            break
        except (SyntaxError, ValueError) as e:
            cell = current.cell_of(getattr(e, "lineno", None) or 0)
            if cell is None or cell.number in broken:
                raise ValueError(f"its code cells do not parse: {e}") from None
            at = current.locate(e.lineno)
            broken[cell.number] = (f"cell {cell.number} does not parse (line {at[1]}: "
                                   f"{e.msg}); left as it is")
            current = nb.without(list(broken))
    # the findings again, of the source fixed (with the broken cells left
    # out), matched with the ones given by their place in their cell
    wanted = {(f.cell, f.line, f.column, f.rule) for f in findings
              if getattr(f, "cell", None) is not None}
    given = {(f.cell, f.line, f.column, f.rule): f for f in findings
             if getattr(f, "cell", None) is not None}
    source = current.source.encode("utf-8")
    raw, _errors = _scan.scan_source(source, path + ".py", language="python",
                                     select=["ALL"])
    mine: list = []  # (finding of the source, the notebook finding it is)
    for f in raw:
        at = current.locate(f.line)
        if at is None:
            continue
        key = (at[0].number, at[1], f.column, f.rule)
        if key in wanted:
            mine.append((f, given[key]))
            wanted.discard(key)
    for f in findings:
        cell = getattr(f, "cell", None)
        if cell in broken:
            skipped.append((f, broken[cell]))
        elif (cell, f.line, f.column, f.rule) in wanted:
            skipped.append((f, "not found again in the notebook's code cells; left as it is"))
    if not mine:
        return data, [], skipped
    as_source = [f for f, _ in mine]
    back = {id(f): nbf for f, nbf in mine}
    new, applied, left = _fix.fix_source(source, path + ".py", as_source, unsafe=unsafe,
                                         target_torch=target_torch, rules=rules)
    try:
        out = current.rewrite(new.decode("utf-8")) if new != source else data
    except ValueError as e:
        why = f"the fix could not be written back into the notebook ({e}); left as it is"
        return data, [], skipped + [(nbf, why) for _, nbf in mine]
    applied_nb = [back.get(id(f)) or _cell_finding(f, current, path) for f in applied]
    skipped += [(back.get(id(f)) or _cell_finding(f, current, path), why) for f, why in left]
    return out, [f for f in applied_nb if f is not None], \
        [(f, why) for f, why in skipped if f is not None]


def _cell_finding(f, nb, path: str):
    """A finding of a notebook's source (a further round's) as the
    notebook's own, or None on a cell's end line."""
    at = nb.locate(f.line)
    if at is None:
        return None
    cell, line = at
    return _scan.NotebookFinding(path, line, f.column, f.end_line - cell.first + 1, f.end_column,
                                 f.symbol, f.replacement, f.rule, f.fix, f.message, f.kind,
                                 f.start, f.end, f.call_end, f.text, f.language,
                                 cell=cell.number)


def fix_notebook_files(findings: list, *, unsafe: bool = False, diff: bool = False,
                       target_torch: Optional[str] = None, keep: Sequence[str] = (),
                       rules: Optional[Callable[[list], list]] = None) -> tuple:
    """``anydev fix`` for the notebooks of a scan: ``findings`` are their
    NotebookFindings; each notebook is read, fixed (fix_notebook) and
    written atomically with its mode, or with ``diff`` only diffed. Returns
    ([anydev.fix.FileResult], {target source: Target}). ``keep``: globs
    relative to the current directory (as fix_paths takes them)."""
    import stat

    from anydev import fix as _fix
    from anydev._common.files import replace_atomically

    from . import torch_versions as _versions

    explicit = _versions.resolve_target(target_torch) if target_torch is not None else None
    projects = _versions.ProjectTargets()
    by_path: dict = {}
    for f in findings:
        by_path.setdefault(f.path, []).append(f)
    results, targets = [], {}
    for path, found in by_path.items():
        fr = _fix.FileResult(path)
        results.append(fr)
        try:
            if os.path.islink(path):
                raise ValueError("is a symbolic link; not written through")
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = fh.read()
        except OSError as e:
            fr.error, fr.io_error = f"cannot read: {e.strerror or e}", True
            fr.skipped = [(f, fr.error) for f in found]
            continue
        except ValueError as e:
            fr.error, fr.skipped = str(e), [(f, str(e)) for f in found]
            continue
        target = explicit or projects.for_file(path) or _versions.DEFAULT
        targets.setdefault(target.source, target)
        try:
            new, fr.applied, fr.skipped = fix_notebook(data, path, found, unsafe=unsafe,
                                                       target_torch=target, keep=keep,
                                                       rules=rules)
        except ValueError as e:
            fr.error, fr.skipped = str(e), [(f, str(e)) for f in found]
            continue
        if new == data:
            continue
        fr.changed = True
        if diff:
            fr.diff = _fix.unified_diff(path, data.decode("utf-8", "replace"),
                                        new.decode("utf-8", "replace"))
            continue
        try:
            now = os.stat(path, follow_symlinks=False)
            if (now.st_ino, now.st_size, now.st_mtime_ns) != \
                    (st.st_ino, st.st_size, st.st_mtime_ns):
                raise ValueError("changed while it was being fixed; not written")
            replace_atomically(path, [new], mode=stat.S_IMODE(st.st_mode),
                               owner=(st.st_uid, st.st_gid), prefix=".anydev-fix-")
        except ValueError as e:
            fr.changed, fr.error = False, str(e)
            fr.applied, fr.skipped = [], [(f, fr.error) for f in found]
        except OSError as e:
            fr.changed, fr.io_error = False, True
            fr.error = f"could not write: {e.strerror or e}; it was left as it was"
    return results, targets
