"""The static scanner: finds references to legacy symbols of the compat table in
Python and C/C++/CUDA/HIP sources.

    from anydev.scan import scan_paths, scan_source
    result = scan_paths(["src/"], select=["AD1"], jobs=8)
    for f in result.findings:
        print(f.path, f.line, f.column, f.rule, f.symbol, "->", f.replacement)

The rules are the rows of the compat table (``anydev._compat.table.ROWS``):
every ``deprecated`` row is a rule named by its code; ``kept`` rows are never
findings (they still win the longest-prefix match, so
``torch.cuda.memory.empty_cache`` is covered by the kept module row
``torch.cuda.memory`` and is not a finding).

The work is native (``anydev._C._scan``, from ``core/scan/``): files are walked
in C++ (``.gitignore`` files, ``.git/info/exclude``, ``exclude`` globs) and
lexed on ``jobs`` threads, one file at a time per thread, so memory does not
grow with the size of the tree. Inside a git work tree, the files git tracks
are scanned even where an ignore rule matches them (as ``git grep`` does;
``git ls-files`` lists them, and without git only the ignore rules count);
``ScanResult.ignored`` counts the source files and folders the ignore rules
skipped, ``ScanResult.tracked`` the tracked files scanned despite them.

What a finding is
-----------------
Python (``.py``, ``.pyi``): imports are resolved per file (``import torch as
th``, ``import torch.cuda as tc``, ``from torch import cuda``, ``from
torch.cuda import current_device as cd``, imports inside functions bind from
that point on; relative imports bind nothing). A dotted chain
``NAME(.NAME)*`` whose first name is bound to ``torch`` or a torch module or
symbol resolves to a fully qualified name, and the longest table spelling
(``legacy`` or ``also``) that is a prefix of it at a dot boundary is the match.
Each name a ``from torch... import`` brings in is a finding at that name
(``kind="import"``), and so is ``import torch.cuda.amp`` (a module row).
A chain followed by ``(`` is a ``"call"``, any other use a ``"reference"``.
A test's patch target is a ``"mock"`` finding: ``mock.patch("torch.cuda.X")``
(also ``patch``, ``mocker.patch``, ``monkeypatch.setattr("torch.cuda.X", v)``,
``delattr``), where the target is an import path (it starts with ``torch``;
the file's aliases do not apply) and the finding is the string literal with its
quotes; and ``patch.object(torch.cuda, "X")``, ``monkeypatch.setattr(th.cuda,
"X", v)``, ``setattr``/``delattr(torch.xpu, "X")``, where the object resolves
through the file's imports and the finding spans ``torch.cuda, "X"`` as
written. Only a plain literal counts (no prefix, escapes, triple quotes or
concatenation). A patch target must move with the code it patches: ``anydev
fix`` (``fix_paths``) rewrites it when the calls it patches in the fixed tree
are rewritten, and otherwise leaves it with the reason.
Strings, bytes, docstrings and comments are not code; f-string replacement
fields are. ``self.cuda.synchronize()``, ``x.cuda()``, a name that was not
imported from torch, a keyword argument name and a name rebound at the start of
a statement (``cuda = ...``, ``def cuda``, ``... as cuda``) are not findings.

C/C++/CUDA/HIP (``.h .hpp .hh .c .cc .cpp .cxx .cu .cuh .hip``): qualified names
(``c10::cuda::current_device``, ``::at::cuda::getCurrentCUDAStream``, spaces
around ``::`` allowed), namespace aliases (``namespace cu = c10::cuda;``),
``using namespace c10::cuda;`` (then unqualified names of that namespace
match, from the directive to the end of its block), ``using
c10::cuda::getCurrentCUDAStream;`` (a finding of ``kind="import"``, and the
name then resolves), and names qualified relative to an enclosing ``namespace
at {`` block (``cuda::getCurrentCUDAStream()``). Comments, string and
character literals, raw strings and ``#if 0`` groups (and the ``#else`` of an
``#if 1``) are not code; macro bodies are. A file that defines a legacy name
itself in its own ``namespace at { namespace cuda {`` (or ``namespace
c10::cuda {``) block (a function with a body, a class, ``using Name = ...;``)
keeps that name for its callers: its references to that spelling are not
findings (a declaration alone does not count).

Positions: ``line`` and ``column`` are 1-based, of the reference's first
character; ``end_line``/``end_column`` are exclusive. Columns count Unicode
code points from the start of the line, as ruff does (a byte-order mark is not
counted; a byte of a C++ file that is not valid UTF-8 counts as one). ``start``
and ``end`` are byte offsets of the reference text in the file as it is on disk
(a BOM included), ``text`` is that text as written (``"cd"``,
``"th.cuda.current_device"``, ``"cu::getCurrentCUDAStream"``; a leading ``::``
is not part of it), and for calls ``call_end`` is the byte offset just past
the call's closing ``)``. ``symbol`` is the table spelling matched
(``torch.cuda.current_device`` for ``cd()``; ``at::cuda::device_count`` for an
``also`` spelling).

A suppression comment on the line where a finding starts drops it:
``# anydev: ignore``, ``# anydev: ignore[AD101]``,
``// anydev: ignore[AD101, AD6]`` (codes or code prefixes), and in Python
ruff's ``# noqa`` and ``# noqa: AD101`` (see :mod:`anydev._migrate.noqa`).

Files that are not sound to scan are reported as :class:`ScanError` and the
run goes on: a file over ``max_file_size`` (skipped), a binary file (NUL bytes)
or UTF-16 (skipped), a Python file that is not valid UTF-8 (skipped from the
bad byte on) or has a lexical error (an unterminated string or bracket, an
unmatched bracket: the findings before the error are kept), a C++ file that is
not valid UTF-8 (reported, still scanned as bytes) or has an unterminated
comment, string or raw string (findings before it kept). A path that cannot be
read is reported with the OS error.
"""

from __future__ import annotations

import os
import sys
from operator import itemgetter as _at
from posixpath import isabs as _posix_isabs  # os.path's on POSIX

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` and `dataclasses` cost `anydev scan` start-up
    from dataclasses import dataclass, field
    from typing import Callable, Iterable, Iterator, Optional, Sequence, Union

    _NO_LIST: list = []
else:  # the same classes, made without importing dataclasses (anydev/_migrate/record.py)
    from ._migrate.record import _MISSING as _NO_LIST  # a default_factory's "not given"
    from ._migrate.record import field
    from ._migrate.record import record as dataclass

__all__ = [
    "Finding",
    "ScanError",
    "ScanResult",
    "iter_scan_paths",
    "language_of",
    "message_for",
    "quote_path",
    "rule_filter",
    "scan_paths",
    "scan_source",
]

#: File extensions the scanner reads, by language.
EXTENSIONS = {
    "python": (".py", ".pyi"),
    "cpp": (".h", ".hpp", ".hh", ".c", ".cc", ".cpp", ".cxx", ".cu", ".cuh", ".hip"),
}
#: Jupyter notebooks: their code cells are scanned as one Python source
#: (anydev/_migrate/notebook.py). ``anydev scan`` walks them; scan_paths when
#: asked (``notebooks=True``).
NOTEBOOK_EXTENSIONS = (".ipynb",)


# Slots (Python >= 3.10) keep a report of many findings small.
_SLOTS = {"slots": True} if sys.version_info >= (3, 10) else {}


@dataclass(frozen=True, **_SLOTS)
class Finding:
    """One reference to a legacy symbol (see the module docstring for the
    meaning of each position)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    symbol: str
    replacement: str
    rule: str
    fix: str  # "safe" | "unsafe" | "none", from the row
    message: str
    kind: str  # "call" | "reference" | "import" | "mock"
    start: int
    end: int
    call_end: Optional[int]
    text: str
    language: str  # "python" | "cpp"

    # Written out, not made by exec: Note [Written-out __init__] in anydev/_migrate/record.py.
    def __init__(self, path: str, line: int, column: int, end_line: int, end_column: int,
                 symbol: str, replacement: str, rule: str, fix: str, message: str, kind: str,
                 start: int, end: int, call_end: Optional[int], text: str,
                 language: str) -> None:
        _set = object.__setattr__
        _set(self, "path", path)
        _set(self, "line", line)
        _set(self, "column", column)
        _set(self, "end_line", end_line)
        _set(self, "end_column", end_column)
        _set(self, "symbol", symbol)
        _set(self, "replacement", replacement)
        _set(self, "rule", rule)
        _set(self, "fix", fix)
        _set(self, "message", message)
        _set(self, "kind", kind)
        _set(self, "start", start)
        _set(self, "end", end)
        _set(self, "call_end", call_end)
        _set(self, "text", text)
        _set(self, "language", language)


def _twin_init(self, path, line, column, end_line, end_column, symbol, replacement, rule, fix,
               message, kind, start, end, call_end, text, language) -> None:
    """The __init__ of Finding's plain twin (Note [Building findings])."""
    self.path = path
    self.line = line
    self.column = column
    self.end_line = end_line
    self.end_column = end_column
    self.symbol = symbol
    self.replacement = replacement
    self.rule = rule
    self.fix = fix
    self.message = message
    self.kind = kind
    self.start = start
    self.end = end
    self.call_end = call_end
    self.text = text
    self.language = language


class NotebookFinding(Finding):
    """A finding in a code cell of a Jupyter notebook: ``cell`` is the cell's
    number (from 1, in the notebook's ``cells`` list, markdown cells
    counted), ``line``/``end_line`` are lines of that cell; ``start``,
    ``end`` and ``call_end`` are offsets in the notebook's source as it was
    scanned, its code cells as one Python source (Note [Notebook source] in
    anydev/_migrate/notebook.py). Reports show it as ``demo.ipynb:cell
    3:2:8``."""

    __slots__ = ("cell",)

    def __init__(self, *values, cell: int) -> None:
        Finding.__init__(self, *values)
        object.__setattr__(self, "cell", cell)

    def __repr__(self) -> str:
        return f"{Finding.__repr__(self)[:-1]}, cell={self.cell!r})"

    def __eq__(self, other):
        if other.__class__ is self.__class__:
            return Finding.__eq__(self, other) and self.cell == other.cell
        return NotImplemented

    def __hash__(self) -> int:
        return hash((Finding.__hash__(self), self.cell))

    def __reduce__(self):
        return (_notebook_finding, (Finding.__reduce__(self)[1], self.cell))


def _notebook_finding(values: tuple, cell: int) -> NotebookFinding:
    return NotebookFinding(*values, cell=cell)


def location(f: Finding) -> str:
    """Where a finding is, as the text reports show it: ``path:line:column``,
    ``path:cell N:line:column`` in a notebook."""
    cell = getattr(f, "cell", None)
    where = f"{f.path}:cell {cell}" if cell is not None else f.path
    return f"{where}:{f.line}:{f.column}"


@dataclass(frozen=True)
class ScanError:
    """A file that could not be read, or not be scanned soundly to its end."""

    path: str
    message: str
    line: Optional[int]

    def __init__(self, path: str, message: str, line: Optional[int]) -> None:
        _set = object.__setattr__
        _set(self, "path", path)
        _set(self, "message", message)
        _set(self, "line", line)


@dataclass
class ScanResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[ScanError] = field(default_factory=list)
    files: int = 0  # files scanned
    bytes: int = 0  # bytes read
    ignored: int = 0  # source files and folders ignore rules matched (a folder once)
    tracked: int = 0  # files git tracks among them (or inside them), scanned anyway

    def __init__(self, findings: list[Finding] = _NO_LIST,  # type: ignore[assignment]
                 errors: list[ScanError] = _NO_LIST,  # type: ignore[assignment]
                 files: int = 0, bytes: int = 0, ignored: int = 0, tracked: int = 0) -> None:
        self.findings = [] if findings is _NO_LIST else findings
        self.errors = [] if errors is _NO_LIST else errors
        self.files = files
        self.bytes = bytes
        self.ignored = ignored
        self.tracked = tracked


def language_of(path: str) -> Optional[str]:
    """Returns "python" or "cpp" by the file's extension, else None."""
    ext = os.path.splitext(path)[1].lower()
    for lang, exts in EXTENSIONS.items():
        if ext in exts:
            return lang
    return None


def scan_paths(
    paths: Sequence[str],
    *,
    select: Optional[Iterable[str]] = None,
    ignore: Optional[Iterable[str]] = None,
    exclude: Sequence[str] = (),
    jobs: Optional[int] = None,
    respect_gitignore: bool = True,
    max_file_size: int = 20 << 20,
    notebooks: bool = False,
) -> ScanResult:
    """Scans files and directory trees.

    ``select``/``ignore``: rule codes or prefixes (``"AD1"``, ``"AD103"``,
    ``"ALL"``; a string may list several, comma-separated); the most specific
    entry decides, ``ignore`` on a tie; default: every rule. ``exclude``:
    gitignore-style globs relative to the current directory (a glob without
    ``/`` matches a file or folder name at any depth); they apply to the paths
    given too. Folders that tools never hold sources in (``.git``, ``.venv``,
    ``venv``, ``node_modules``, ``__pycache__``, ``.tox``, ``site-packages``,
    ``dist``, ``_build`` ..., ruff's default list) are not walked into.
    ``jobs``: threads (default: all cores). Paths in the result are relative
    to the current directory when they are under it. Findings are ordered by
    path (the walk's order: each folder's entries sorted by name), then
    position. ``notebooks``: Jupyter notebooks (``.ipynb``) are walked and
    their code cells scanned too (:class:`NotebookFinding`); their findings
    come after the other files', ordered by path.
    """
    return _scan_paths(paths, select=select, ignore=ignore,
                       excludes=[(p, "") for p in exclude], jobs=jobs,
                       respect_gitignore=respect_gitignore, max_file_size=max_file_size,
                       notebooks=notebooks)


def iter_scan_paths(
    paths: Sequence[str],
    *,
    select: Optional[Iterable[str]] = None,
    ignore: Optional[Iterable[str]] = None,
    exclude: Sequence[str] = (),
    jobs: Optional[int] = None,
    respect_gitignore: bool = True,
    max_file_size: int = 20 << 20,
    batch: int = 128,
) -> Iterator[ScanResult]:
    """:func:`scan_paths` in parts, for output that is written as it comes
    (text, GitHub annotations, JSON lines): the tree is walked first, then
    scanned ``batch`` files at a time, and one :class:`ScanResult` is
    yielded per batch, its ``files`` and ``bytes`` counting that batch (the
    first also holds the errors of the paths themselves). Memory then
    follows one batch's findings, not the whole tree's. The findings, in
    order, are those of :func:`scan_paths` on one path."""
    return _iter_scan_paths(paths, keep=rule_filter(select, ignore),
                            excludes=[(p, "") for p in exclude], jobs=jobs,
                            respect_gitignore=respect_gitignore, max_file_size=max_file_size,
                            batch=batch)


def _iter_scan_paths(paths: Sequence[str], *, keep: Callable[[str], bool],
                     excludes: Sequence[tuple[str, str]] = (), jobs: Optional[int] = None,
                     respect_gitignore: bool = True, max_file_size: int = 20 << 20,
                     batch: int = 128) -> Iterator[ScanResult]:
    """iter_scan_paths with excludes as (pattern, base folder) pairs, as
    _scan_paths takes them."""
    if isinstance(paths, str):
        paths = [paths]
    if batch < 1:
        raise ValueError("batch must be >= 1")
    if jobs is not None and jobs < 0:
        raise ValueError("jobs must be >= 0")
    native, rows = _scan_rules()
    cwd = os.getcwd()
    files, path_errors = _native().list_files(
        [os.fsencode(p) for p in paths],
        [(os.fsencode(p), os.fsencode(b or cwd)) for p, b in excludes], respect_gitignore)
    return _batches(files, path_errors, native, rows, cwd, keep, jobs, max_file_size, batch)


def _jobs(jobs) -> int:
    # The native side takes a C int: more threads than that are never started
    # anyway (no more threads than files), so a larger count means "as many".
    return min(int(jobs or 0), 2**31 - 1)


def _size_limit(max_file_size) -> int:
    # A uint64_t there; no file is larger, so a larger limit is no limit
    # (`--max-file-size 99999999999999999999999` once raised a TypeError).
    return min(int(max_file_size), 2**64 - 1)


def _batches(files, path_errors, native, rows, cwd, keep, jobs, max_file_size,
             batch) -> Iterator[ScanResult]:
    keep_rows = _keep_rows(keep)
    pending = path_errors
    for at in range(0, max(len(files), 1), batch):
        part, nfiles, nbytes = _native().scan_files_report(
            native, files[at:at + batch], _jobs(jobs), _size_limit(max_file_size), keep_rows)
        report = _Report(part, nfiles, nbytes, rows, cwd)
        report.drop_noqa()  # as scan_paths does
        result = report.result()
        if pending:
            result.errors[:0] = _result(pending, 0, 0, rows, cwd).errors
        yield result
        pending = []


def scan_source(
    source: Union[bytes, str], path: str, *, language: Optional[str] = None,
    select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None,
) -> tuple[list[Finding], list[ScanError]]:
    """Scans one file's content as if it were read from ``path`` (which is
    reported as given). ``language``: "python" or "cpp"; default: from the
    extension of ``path`` (ValueError if it has none the scanner knows). A
    ``str`` is encoded as UTF-8. ``select``/``ignore`` as for
    :func:`scan_paths` (by default every rule but the opt-in ones).
    ``language="notebook"`` (the default for a ``.ipynb`` path): the bytes
    of a Jupyter notebook, whose code cells are scanned
    (:class:`NotebookFinding`); a file that is not one is an error."""
    lang = language or language_of(path) or (
        "notebook" if path.lower().endswith(NOTEBOOK_EXTENSIONS) else None)
    if lang not in EXTENSIONS and lang != "notebook":
        raise ValueError(f"{path}: cannot tell the language (give language='python', 'cpp' "
                         f"or 'notebook')")
    data = source.encode("utf-8") if isinstance(source, str) else bytes(source)
    if select is None and ignore is None:
        # the default rules: their filter and RuleSet once (the fixer's rescans ask per file)
        got = _state.get("default source rules")
        if got is None:
            keep = rule_filter()
            got = _state["default source rules"] = (keep, _native_rules(keep))
        keep, native = got
        rows = _scan_rows()
    else:
        keep = rule_filter(select, ignore)
        native, rows = _scan_rules(keep)
    return _scan_with(data, path, lang, keep, native, rows)


def _scan_source(data: bytes, path: str, language: str,
                 keep: Callable[[str], bool]) -> tuple[list[Finding], list[ScanError]]:
    """scan_source with the rules as a predicate (anydev._migrate.check's:
    the command line's selection, opt-in rules included when it selects them)."""
    native, rows = _scan_rules(keep)
    return _scan_with(data, path, language, keep, native, rows)


def _scan_with(data: bytes, path: str, lang: str, keep: Callable[[str], bool], native,
               rows) -> tuple[list[Finding], list[ScanError]]:
    if lang == "notebook":
        return _scan_notebook(data, path, keep, native, rows)
    raw, errs, noqa = _native().scan_source(native, data, lang)
    findings = [_finding(path, t, rows[t[0]]) for t in raw if keep(rows[t[0]].code)]
    errors = [ScanError(path, message, line) for message, line in errs]
    # the scanner left `# noqa` to tokenize (Note [noqa directives]), or the file
    # may have a file-level `# anydev: noqa` (Note [File-level noqa])
    if findings and (noqa is None
                     or (lang == "python" and (b"nydev" in data or b"NYDEV" in data))):
        from ._migrate import noqa as _noqa  # `# noqa` comments (ruff's convention)

        findings = _noqa.filter_findings(findings, lambda p: data)
    return findings, errors


def rule_filter(select: Optional[Iterable[str]] = None,
                ignore: Optional[Iterable[str]] = None) -> Callable[[str], bool]:
    """Returns a predicate on rule codes for ``select``/``ignore`` (see
    :func:`scan_paths`); ValueError names an entry that is not a code or a
    prefix of one."""
    from ._migrate.scan_table import NATIVE, OPT_IN  # Note [Scan table]
    from ._migrate import meta_rules as _meta  # anydev's own rules (AD001)

    codes = [t[0] for t in NATIVE] + list(_meta.CODES)
    sel = [""] if select is None else _prefixes(select, codes, "select")
    ign = [] if ignore is None else _prefixes(ignore, codes, "ignore")
    # Opt-in rules (a portability hint such as AD911, unused noqa AD001) are
    # on only when selected.
    off = set(OPT_IN) | _meta.OPT_IN if select is None else set()
    if sel == [""] and not ign:  # every rule (the default): only the opt-in ones are off
        return lambda code: code not in off
    memo: dict[str, bool] = {}

    def keep(code: str) -> bool:
        v = memo.get(code)
        if v is None:
            s = i = -1  # the longest entry of each that is a prefix of code
            for p in sel:
                if len(p) > s and code.startswith(p):
                    s = len(p)
            for p in ign:
                if len(p) > i and code.startswith(p):
                    i = len(p)
            v = memo[code] = s >= 0 and s > i and code not in off
        return v

    return keep


# --- internals ---------------------------------------------------------------

_FIELDS = Finding.__match_args__


def _make_builder():
    """Returns build(values) -> Finding, the fastest way this Python allows.

    Note [Building findings]: a frozen dataclass's __init__ sets each field
    through object.__setattr__, about 2 us for Finding's 16, which dominates
    a scan with hundreds of thousands of findings. With slots, an instance of
    a plain (not frozen) twin with the same slots is built by its ordinary
    __init__ and then becomes a Finding by __class__ assignment, which CPython
    allows between classes of the same layout: about 0.3 us, and the result is
    an ordinary frozen Finding.
    """
    from ._migrate.record import make_twin

    if _SLOTS:
        twin = make_twin(Finding, "_FindingTwin", _twin_init)

        def build(values: tuple) -> Finding:
            f = twin(*values)
            f.__class__ = Finding
            return f

        try:
            probe = build(tuple(range(len(_FIELDS))))
            if type(probe) is Finding and probe.line == 1:
                return build
        except TypeError:  # pragma: no cover - a Python that refuses the assignment
            pass

    def build_slow(values: tuple) -> Finding:  # pragma: no cover - Python 3.9
        f = object.__new__(Finding)
        for name, v in zip(_FIELDS, values):
            object.__setattr__(f, name, v)
        return f

    return build_slow


_build = _make_builder()
_state: dict = {}


def _table():
    from ._compat import table as _compat_table

    return _compat_table


def _native():
    from ._scanner import _scan  # the scanner alone: no device runtime to load

    return _scan


class _Rule(tuple):
    """A row of the compat table as the scanner reads it: the fields of
    ``anydev._compat.table.Row`` named in ``anydev._migrate.scan_table.SCAN_FIELDS``,
    by the same names (``message_for`` and the fixer take either)."""

    __slots__ = ()
    code = property(_at(0))
    language = property(_at(1))
    status = property(_at(2))
    legacy = property(_at(3))
    also = property(_at(4))
    covers = property(_at(5))
    detect = property(_at(6))
    opt_in = property(_at(7))
    replacement = property(_at(8))
    fix = property(_at(9))
    since = property(_at(10))


class _Rows:
    """The rows as _Rule, in the table's order, each parsed from
    anydev._migrate.scan_table.ROWS_TEXT when first asked for (a scan asks for the
    rows of its findings): Note [Scan table]."""

    __slots__ = ("_text", "_made")

    def __init__(self, text: tuple) -> None:
        self._text = text
        self._made: list = [None] * len(text)

    def __len__(self) -> int:
        return len(self._text)

    def __getitem__(self, i: int) -> _Rule:
        r = self._made[i]
        if r is None:
            f = self._text[i].split("\t")
            r = self._made[i] = _Rule((f[0], f[1], f[2], f[3], tuple(f[4].split()),
                                       tuple(f[5].split()), f[6] or None, f[7] == "1", f[8],
                                       f[9], f[10] or None))
        return r

    def __iter__(self) -> Iterator[_Rule]:
        return (self[i] for i in range(len(self._text)))


def _scan_rows() -> _Rows:
    """The rows as _Rule (anydev._migrate.scan_table: Note [Scan table])."""
    rows = _state.get("scan_rows")
    if rows is None:
        from ._migrate.scan_table import ROWS_TEXT

        rows = _state["scan_rows"] = _Rows(ROWS_TEXT)
    return rows


def _keep_rows(keep: Callable[[str], bool]) -> list[bool]:
    """Per rule of the native RuleSet, whether ``keep`` keeps its findings."""
    from ._migrate.scan_table import NATIVE

    return [keep(t[0]) for t in NATIVE]


# Note [Scan table]: `anydev scan` reads ten fields of each row of the compat
# table; importing the whole of anydev._compat.table (notes, signatures,
# templates, proofs: 290 Row calls) was a tenth of its start-up
# (benchmarks/python/bench_startup.py). compat_map/generate.py also writes
# anydev._migrate.scan_table: the rows as the native RuleSet takes them (NATIVE: what
# _native_rule makes of the Rows), the opt-in codes, and those ten fields of
# each row as one line of text, which _Rows parses for the rows of the
# findings only (a line loads as one string; a tuple of ten, as eleven
# objects). tests/python/compat/test_compat_table.py checks that they are the
# table's. The fixer's callers of _rules() still get the table's own Rows.


def _rules(keep: Optional[Callable[[str], bool]] = None):
    """The native RuleSet built from the table, and the table's rows (a rule's
    index in one is its index in the other). With ``keep``, the literal rules
    it drops have no detector in the RuleSet, so they cost nothing."""
    return _native_rules(keep), _table().ROWS


def _scan_rules(keep: Optional[Callable[[str], bool]] = None):
    """As :func:`_rules`, the rows as _Rule (what a scan needs of them)."""
    return _native_rules(keep), _scan_rows()


def _native_rules(keep: Optional[Callable[[str], bool]] = None):
    """The native RuleSet, without the detectors of the literal rules ``keep``
    drops; the rows as _native_rule makes them come precomputed
    (``anydev._migrate.scan_table.NATIVE``)."""
    from ._migrate.scan_table import NATIVE

    off = frozenset() if keep is None else frozenset(
        t[0] for t in NATIVE if t[4] and not keep(t[0]))
    native = _state.get(("rules", off))
    if native is None:
        native = _state[("rules", off)] = _native().RuleSet(
            [t if t[0] not in off else (*t[:4], "") for t in NATIVE] if off else NATIVE)
    return native


def _native_rule(row, covered: set, off: bool = False) -> tuple:
    """A row as the native RuleSet takes it: (code, language, kept, spellings,
    detector). A literal row is found by its detector, or by the spellings of
    the kept rows it ``covers``, which they give up to it (so they are still
    matched, and found as the literal row's when it is on)."""
    if row.status == "literal":
        return (row.code, row.language, False, list(row.covers), "" if off else row.detect or "")
    spellings = [s for s in (row.legacy, *row.also) if s not in covered]
    return (row.code, row.language, row.status == "kept", spellings, "")


def _rule_settings(cfg, select: Optional[Sequence[str]] = None,
                   ignore: Sequence[str] = (), extend_select: Sequence[str] = (),
                   extend_ignore: Sequence[str] = ()) -> tuple:
    """anydev._migrate.check.rule_settings: the rule filter
    (:func:`_rule_selection`) and the per-file ignores
    (:func:`_per_file_ignores`) of a configuration."""
    return (_rule_selection(cfg, select, ignore, extend_select, extend_ignore),
            _per_file_ignores(cfg))


def _rule_selection(cfg, select: Optional[Sequence[str]] = None,
                    ignore: Sequence[str] = (), extend_select: Sequence[str] = (),
                    extend_ignore: Sequence[str] = ()) -> Callable[[str], bool]:
    """The rule filter of a configuration (anydev._common.config.Config) and
    the command line's --select/--ignore/--extend-select/--extend-ignore, for
    `anydev scan`, `anydev fix` and the editor server alike: --select
    replaces the configuration's select and extend-select; the others add."""
    chosen = select if select is not None else cfg.select
    extend = ([] if select is not None else list(cfg.extend_select)) + list(extend_select or [])
    ignored = list(cfg.ignore) + list(cfg.extend_ignore) + list(ignore or []) + \
        list(extend_ignore or [])
    try:
        base = rule_filter(chosen, ignored)
        extra = rule_filter(extend, ignored) if extend else None
    except ValueError as e:
        from_file = cfg.path and (cfg.select or cfg.ignore or cfg.extend_select or
                                  cfg.extend_ignore)
        where = cfg.where() + ": " if from_file and select is None and not ignore else ""
        raise ValueError(f"{where}{e}") from None
    return base if extra is None else (lambda code: base(code) or extra(code))


def _per_file_ignores(cfg) -> list:
    """A configuration's per-file-ignores: [(Glob, predicate: code ->
    dropped)], each glob relative to the folder of the file that gave it
    (one the configuration extends, or its own); ValueError names the entry."""
    from ._common.config import Glob

    out = []
    for glob, codes in cfg.per_file_ignores:
        try:
            pred = rule_filter(["ALL"], codes) if codes else (lambda code: False)
        except ValueError as e:
            raise ValueError(f"{cfg.where()}: `per-file-ignores` {glob!r}: {e}") from None
        out.append((Glob(glob, cfg.base("per-file-ignores")), lambda code, p=pred: not p(code)))
    return out


def _prefixes(entries: Iterable[str], codes: list[str], what: str) -> list[str]:
    if isinstance(entries, str):
        entries = [entries]
    out = []
    seen = set()  # a list of 100,000 codes costs 100,000 lookups, not as many rule walks
    for entry in entries:
        for e in str(entry).split(","):
            e = e.strip().upper()
            if not e or e in seen:
                continue
            seen.add(e)
            if e == "ALL":
                out.append("")
            elif any(c.startswith(e) for c in codes):
                out.append(e)
            else:
                raise ValueError(f"{what}: {e!r} is not a rule code or a prefix of one "
                                 f"(see `anydev rule --all`)")
    return out


def message_for(symbol: str, row) -> str:
    """The message of a finding of `row` that matched `symbol`."""
    if row.status == "literal":
        what = symbol if row.covers else row.legacy
        hint = "portable through" if row.opt_in else "device-generic:"
        return (f"`{what}` is CUDA-specific; {hint} `{row.replacement}` "
                f"(`anydev rule {row.code}`)")
    from ._migrate.scan_table import PYTORCH_DEPRECATED

    if row.code in PYTORCH_DEPRECATED:  # PyTorch warns of these itself
        if row.replacement:
            return f"`{symbol}` is deprecated; use `{row.replacement}`"
        return f"`{symbol}` is deprecated (`anydev rule {row.code}`)"
    if row.replacement:
        since = getattr(row, "since", None)
        when = "" if not since else " (no PyTorch release has it yet)" if since == "main" \
            else f" (torch >= {since})"
        return f"`{symbol}` is device-specific; use `{row.replacement}`{when}"
    return (f"`{symbol}` is device-specific and has no drop-in replacement "
            f"(`anydev rule {row.code}`)")


_messages: dict = {}


def _finding(path: str, t: tuple, row) -> Finding:
    # t: (rule, kind, symbol, line, column, end_line, end_column, start, end, call_end, text)
    symbol = row.legacy if row.detect else t[2]
    key = (row.code, symbol)
    msg = _messages.get(key)
    if msg is None:
        msg = _messages[key] = message_for(symbol, row)
    return _build((path, t[3], t[4], t[5], t[6], symbol, row.replacement, row.code, row.fix, msg,
                   t[1], t[7], t[8], t[9], t[10], row.language))


def _display_path(path: str, cwd: str) -> str:
    if os.path.isabs(path):
        if path == cwd or path.startswith(cwd.rstrip("/") + "/"):
            return os.path.relpath(path, cwd)
        return path
    # Only a leading "./" goes: resolving ".." textually could name another
    # file when a folder on the way is a symbolic link.
    while path.startswith("./"):
        path = path[2:].lstrip("/") or "."
    return path


def quote_path(raw: bytes) -> str:
    """A file name that is not UTF-8, as git shows it (core.quotePath): in
    double quotes, with ``\\``, ``\"``, C escapes for control characters and
    octal escapes for every byte from 0x80 (``"caf\\351.py"``)."""
    out = ['"']
    for b in raw:
        c = chr(b)
        if c in '"\\':
            out.append("\\" + c)
        elif c in _C_ESCAPES:
            out.append(_C_ESCAPES[c])
        elif b < 0x20 or b >= 0x7F:
            out.append(f"\\{b:03o}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v",
              "\f": "\\f", "\r": "\\r"}


_C_UNESCAPES = {v[1]: k for k, v in _C_ESCAPES.items()}


def unquote_path(name: str) -> "bytes | None":
    """The bytes of a name :func:`quote_path` wrote, or None for a name it
    did not write (not in double quotes, or a stray escape)."""
    if len(name) < 2 or name[0] != '"' or name[-1] != '"':
        return None
    out = bytearray()
    i, end = 1, len(name) - 1
    while i < end:
        c = name[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        nxt = name[i + 1:i + 2]
        if nxt in ('"', "\\"):
            out += nxt.encode()
            i += 2
        elif nxt in _C_UNESCAPES:
            out += _C_UNESCAPES[nxt].encode()
            i += 2
        elif len(name[i + 1:i + 4]) == 3 and all(d in "01234567" for d in name[i + 1:i + 4]):
            out.append(int(name[i + 1:i + 4], 8) & 0xFF)
            i += 4
        else:
            return None
    return bytes(out)


def _path_str(raw: bytes) -> str:
    """A path from the native walk as str. Note [File names]: a name that is
    UTF-8 is itself; one that is not (a Latin-1 name from an old archive) is
    scanned all the same and shown as git shows it (:func:`quote_path`), so
    every output format can print it; such a display name is not a path
    ``anydev fix`` can open, and it says so for that file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return quote_path(raw)


def ignore_summary(result: ScanResult) -> str:
    """The line of the text summary about what ignore rules skipped ("" when
    they skipped nothing)."""
    if not result.ignored and not result.tracked:
        return ""
    n, t = result.ignored, result.tracked
    line = f"Ignore rules skipped {n} source file{'s' if n != 1 else ''} or folder{'s' if n != 1 else ''}"
    if t:
        line += f", of which {t} file{'s' if t != 1 else ''} that git tracks {'were' if t != 1 else 'was'} scanned anyway"
    return line + " (--no-gitignore scans everything).\n"


def _maybe_in_work_tree(folder: str) -> bool:
    """False only where git could not find a work tree from ``folder``: no
    GIT_DIR or GIT_WORK_TREE in the environment, and no ``.git`` (a folder or
    a worktree's file) in it or above it, by its path as given or as the
    real one (git looks from the real one). Then ``git ls-files`` would fail,
    and neither it nor the import of subprocess is worth its milliseconds."""
    if "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ:
        return True
    for start in {os.path.abspath(folder), os.path.realpath(folder)}:
        d = start
        while True:
            if os.path.lexists(os.path.join(d, ".git")):
                return True
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
    return False


def _tracked_ignored(paths: Sequence[str], notebooks: bool = False) -> list[str]:
    """The source files under the given folders that git tracks although an
    ignore rule matches them (``git ls-files -ci --exclude-standard``), as
    paths spelled from the folder given. Empty outside a git work tree or
    without git (then the ignore rules alone decide)."""
    out: list[str] = []
    seen: set[str] = set()
    for p in paths:
        if not os.path.isdir(p) or not _maybe_in_work_tree(p):
            continue
        import subprocess  # here: a scan of files alone never loads it

        try:
            proc = subprocess.run(
                ["git", "-C", p, "ls-files", "-z", "--cached", "--ignored", "--exclude-standard",
                 "--", "."], capture_output=True, timeout=120, check=False)
        except (OSError, subprocess.SubprocessError):
            return out
        if proc.returncode != 0:
            continue  # not a work tree (or git failed): the walk's rules decide
        for raw in proc.stdout.split(b"\0"):
            if not raw:
                continue
            rel = os.fsdecode(raw)
            full = os.path.join(p, rel) if p not in (".", "./") else rel
            if (language_of(full) is None and not (
                    notebooks and full.lower().endswith(NOTEBOOK_EXTENSIONS))) or \
                    not os.path.isfile(full):
                continue
            key = os.path.realpath(full)
            if key not in seen:
                seen.add(key)
                out.append(full)
    return out


def _scan_paths(paths: Sequence[str], *, select=None, ignore=None,
                excludes: Sequence[tuple[str, str]] = (), jobs: Optional[int] = None,
                respect_gitignore: bool = True, max_file_size: int = 20 << 20,
                keep: Optional[Callable[[str], bool]] = None,
                notebooks: bool = False) -> ScanResult:
    """scan_paths with excludes as (pattern, base folder) pairs ("" : the
    current directory), for the CLI's pyproject.toml excludes."""
    return _scan_report(paths, select=select, ignore=ignore, excludes=excludes, jobs=jobs,
                        respect_gitignore=respect_gitignore, max_file_size=max_file_size,
                        keep=keep, notebooks=notebooks).result()


def _scan_report(paths: Sequence[str], *, select=None, ignore=None,
                 excludes: Sequence[tuple[str, str]] = (), jobs: Optional[int] = None,
                 respect_gitignore: bool = True, max_file_size: int = 20 << 20,
                 keep: Optional[Callable[[str], bool]] = None,
                 notebooks: bool = False,
                 walked: Optional[Callable[..., list]] = None) -> _Report:
    """_scan_paths, its findings kept native (a _Report): `# noqa` applied,
    Finding objects made only when asked for. ``walked``: as _Stream's."""
    if keep is None:
        keep = rule_filter(select, ignore)
    # The files a stream would scan, in one batch: so that a file two paths
    # reach is scanned, counted and read once here too.
    return _Stream(paths, keep, excludes, jobs, respect_gitignore, max_file_size, None,
                   notebooks, walked).whole()


# Note [File-level noqa]: `# anydev: noqa` alone on a line exempts a Python
# file (ruff's `# ruff: noqa`; anydev/_migrate/noqa.py). The native scanner
# lexes only the lines its searches find, so such a line, which holds no
# legacy name, is seen by no lexer. The scanner asks the bytes of each Python
# file with findings whether they hold `anydev` (`nydev` or `NYDEV`: two
# searches without the copy a case-folded search makes) and sends those to
# Python's reading, as it does the files whose directives tokenize must read
# (core/scan/src/scan_source.cc). Python read every other Python file with
# findings again to ask that itself: 466 reads and a third of `anydev scan`'s
# Python side on Megatron-LM.

# Note [Streamed reports]: the text, JSON and GitHub reports of `anydev scan`
# are written as the tree is scanned, a batch of files at a time, so that the
# run's memory follows one batch's findings and not the tree's (issue 14: it
# grew by about 0.2 KB a finding when the whole tree's Report was held, and
# the report of a large tree was mostly that). The files are scanned in the
# order the whole-tree report has: with one path the walk's, scanned as the
# walk finds them; with several paths or tracked files the tree is walked
# first (walk_files: the files' names, a few bytes each, are all that is held
# of it) and the shown paths sorted, a file that two paths reach kept once, as
# _Report does. A ScanQueue scans them in batches whose size follows the
# findings they hold (about _STREAM_FINDINGS each, within the bounds of
# _STREAM_FILES), one batch ahead of the one being rendered (Note [Scan
# ahead] in python/src/bind_scan.cc). Each batch is a
# _Report, filtered as the whole tree's is (`# noqa`, per-file-ignores); the
# renderers write its findings and let it go before the next is scanned, and
# the _Stream keeps what the end of a report needs: the counts of the summary
# line, the files and bytes scanned, the errors (few: one per file at most,
# and path errors). What needs every finding at once (SARIF, whose run's
# invocation with every error comes before its results; --statistics,
# --show-fixes, baselines) takes the whole tree's _Report: _scan_report, the
# same walk and order scanned in one batch (_Stream.whole).
# A batch costs some instructions of its own (a Report, a Renderer, the read
# buffers, Python's part): with 4,096 findings a batch the 200 MB tree's JSON
# cost 1.2% more instructions than the whole tree's report, with 8,192 0.8%,
# for 0.6 MB more at the peak.
_STREAM_FINDINGS = 8192
_STREAM_FILES = (16, 64, 1024)  # the fewest files in a batch, the first's, the most


def _scan_stream(paths: Sequence[str], *, keep: Callable[[str], bool],
                 excludes: Sequence[tuple[str, str]] = (), jobs: Optional[int] = None,
                 respect_gitignore: bool = True, max_file_size: int = 20 << 20,
                 drop: Optional[Callable[[str, str], bool]] = None,
                 notebooks: bool = False,
                 walked: Optional[Callable[..., list]] = None) -> _Stream:
    """_scan_report in batches (Note [Streamed reports]): the tree is walked
    now, and scanned as _Stream.batches() is iterated. ``drop``: as
    _Report.drop_where's predicate (per-file-ignores); ``walked``: as _Stream's."""
    return _Stream(paths, keep, excludes, jobs, respect_gitignore, max_file_size, drop,
                   notebooks, walked)


class _Stream:
    """A tree's scan as a sequence of _Reports (batches()), in the order and
    with the filters of _scan_report's; once they have all been given, its
    totals: ``files``, ``bytes``, ``errors`` (the same list object all along,
    filled as the batches come, the walk's own errors first), ``ignored``,
    ``len()`` and summary_counts() (what is left after the filters).
    ``tracked`` is known from the start.

    ``walked(names, show, rewalk)``, where given, sees the walk's files (their
    names as the walk gives them, and ``show`` of a name: the path reports
    show) before anything is scanned or the rules are built, and returns those
    to scan (``rewalk(excludes)`` walks again with other excludes): the tree
    is then walked first, whatever the paths (Note [Walked first])."""

    def __init__(self, paths: Sequence[str], keep: Callable[[str], bool],
                 excludes: Sequence[tuple[str, str]], jobs: Optional[int],
                 respect_gitignore: bool, max_file_size: int,
                 drop: Optional[Callable[[str, str], bool]], notebooks: bool = False,
                 walked: Optional[Callable[..., list]] = None) -> None:
        if isinstance(paths, str):
            paths = [paths]
        if jobs is not None and jobs < 0:
            raise ValueError("jobs must be >= 0")
        self._jobs, self._max = _jobs(jobs), _size_limit(max_file_size)
        self._drop = drop
        self._keep = keep
        # the notebooks the walk found (None: not looked for); their findings,
        # once scanned, are ``extra`` (Note [Notebooks in a scan])
        self._notebooks: Optional[list] = [] if notebooks else None
        self.extra: list = []
        self._cwd = cwd = os.getcwd()
        self._show = _shower(cwd)
        tracked = _tracked_ignored([os.fspath(p) for p in paths],
                                   notebooks) if respect_gitignore else []
        self._walk = ([os.fsencode(p) for p in [*paths, *tracked]],
                      [(os.fsencode(p), os.fsencode(b or cwd)) for p, b in excludes],
                      respect_gitignore)
        self.tracked = len(tracked)
        self.files = self.bytes = self.ignored = 0
        self._counts = [0, 0]  # findings left, files they are in
        self._per_row: dict = {}  # id(row) -> [row, findings left of it]
        self.errors: list[ScanError] = []
        # As _scan_report: one path is the walk's order, and batches() scans
        # the files as the walk finds them (Note [Scan ahead] in bind_scan.cc);
        # several are sorted by the path shown (stably), a file two of them
        # reach scanned once, so they are walked first.
        self._sorted = len(paths) + len(tracked) > 1
        # Note [Walked first]: per-file configuration (anydev._cli.scan) needs
        # the files' folders before the scan, for the configuration files
        # there: their rules decide the RuleSet (built below, after the walk)
        # and their excludes which files are scanned. The walk is the one the
        # scan would do, done first (so not overlapped with the scan as one
        # path's walk otherwise is: Note [Scan ahead] in bind_scan.cc).
        self._prewalked = walked is not None
        self._names: Optional[list] = (walked(self._walked(), self._show, self._rewalk)
                                       if walked is not None
                                       else self._walked() if self._sorted else None)
        self._rules, self.rows = _scan_rules(keep)
        self._keep_rows = _keep_rows(keep)
        self._scanned = False

    def _walked(self) -> list:
        """The walk's files (sorted and each once where several paths were
        given); its errors and ignored count go into ``errors`` and ``ignored``."""
        if self._notebooks is None:
            names, path_errors, self.ignored = _native().walk_files(*self._walk)
        else:
            names, path_errors, self.ignored, self._notebooks = _native().walk_files(
                *self._walk, notebooks=True)
        self._path_errors(path_errors)
        return self._ordered(names)

    def _ordered(self, names: list) -> list:
        """The walk's names, sorted by how they are shown and each shown once,
        where several paths were given; else as the walk gave them."""
        if not self._sorted:
            return names
        show = self._show
        seen: set[str] = set()
        named = []
        for name in names:
            shown = show(name)
            if shown not in seen:
                seen.add(shown)
                named.append((shown, name))
        named.sort(key=_at(0))
        return [name for _shown, name in named]

    def _rewalk(self, excludes: Sequence[tuple[str, str]]) -> list:
        """The walk again with other excludes ((pattern, base folder) pairs):
        its files, in the order _walked gives them (its errors and ignored
        count are the first walk's)."""
        walk = (self._walk[0], [(os.fsencode(p), os.fsencode(b or self._cwd))
                                for p, b in excludes], self._walk[2])
        names, _errors, _ignored = _native().walk_files(*walk)
        return self._ordered(names)

    def _path_errors(self, path_errors) -> None:
        show = self._show
        self.errors[:0] = [ScanError(show(path), message, line)
                           for path, _lang, _n, errs, _noqa in path_errors
                           for message, line in errs]

    def __len__(self) -> int:
        return self._counts[0]

    def summary_counts(self, level: Optional[Callable] = None
                       ) -> tuple[int, int, int, int, int]:
        """(findings left, files they are in, of them safe to fix, unsafe,
        newer): the last three by ``level(row)`` (_row_level by default)."""
        n, nfiles = self._counts
        return (n, nfiles, *_levels_counted(((row, k) for row, k in self._per_row.values()),
                                            self.extra, level))

    def _take_names(self) -> Optional[list]:
        """The sorted walk's names, for the one scan of them (whole() or
        batches()); None for one path, whose tree is walked as it is scanned."""
        if self._scanned:
            raise RuntimeError("a _Stream is scanned once")
        self._scanned = True
        names, self._names = self._names, None
        return names

    def _scan(self, names: list, errors: Sequence[ScanError] = ()) -> _Report:
        """The files ``names`` scanned into one _Report, ordered and filtered as
        the whole tree's report is; ``errors`` (the paths' own) come first, as
        the walk gives them."""
        return self._report(*_native().scan_files_report(
            self._rules, names, self._jobs, self._max, self._keep_rows), errors)

    def _report(self, native, nfiles: int, nbytes: int,
                errors: Sequence[ScanError] = ()) -> _Report:
        """A scan_files_report's (report, files, bytes) as a _Report, ordered
        and filtered as the whole tree's report is."""
        report = _Report(native, nfiles, nbytes, self.rows, self._cwd)
        report.errors[:0] = errors
        # The walk yields the files of a folder sorted by name, each file's
        # findings by position: sort only what several paths may have mixed.
        if self._sorted:
            report.sort()
        report.drop_noqa()
        if self._drop:  # None, or a predicate that may say (bool) it drops nothing
            report.drop_where(self._drop)
        return report

    def whole(self) -> _Report:
        """The whole tree in one _Report (what _scan_report returns)."""
        names = self._take_names()
        report = self._scan(self._walked() if names is None else names, self.errors)
        report.ignored, report.tracked = self.ignored, self.tracked
        if self._notebooks:
            self._scan_notebooks()
            report.add_extra(self.extra, self._nb_files, self._nb_bytes, self._nb_errors)
        return report

    def batches(self) -> Iterator[_Report]:
        """The scan's _Reports, a batch of files each (once: the names go as
        they are scanned). A caller holds each only until it asks for the
        next, so that one batch's findings are held at a time, and one more
        is scanned meanwhile (Note [Scan ahead] in bind_scan.cc): of one path,
        as the walk finds its files."""
        names = self._take_names()
        lo, first, hi = _STREAM_FILES
        scan = (self._jobs, self._max, self._keep_rows, lo, first, hi, _STREAM_FINDINGS)
        ScanQueue = _native().ScanQueue
        queue = ScanQueue(self._rules, names, *scan) if names is not None \
            else ScanQueue.walking(self._rules, *self._walk, *scan,
                                   notebooks=self._notebooks is not None)
        names = None
        counts = self._counts
        while True:
            batch = queue.next()
            if batch is None:
                break
            report = self._report(*batch)
            batch = None
            self.files += report.files
            self.bytes += report.bytes
            self.errors += report.errors
            if len(report):
                counts[0] += len(report)
                counts[1] += report.files_with_findings()
                per_row = self._per_row
                for row, k in report.row_counts():
                    got = per_row.get(id(row))
                    if got is None:
                        per_row[id(row)] = [row, k]
                    else:
                        got[1] += k
            yield report
            report = None
        if self._sorted:
            self.errors.sort(key=lambda e: (e.path, e.line or 0))
        elif not self._prewalked:  # the queue walked the one path (no walk before it)
            if self._notebooks is None:
                path_errors, self.ignored = queue.walked()
            else:
                path_errors, self.ignored, self._notebooks = queue.walked()
            self._path_errors(path_errors)
        if self._notebooks:
            self._scan_notebooks()
            self.files += self._nb_files
            self.bytes += self._nb_bytes
            self.errors += self._nb_errors
            counts = self._counts
            counts[0] += len(self.extra)
            counts[1] += len({f.path for f in self.extra})

    def _scan_notebooks(self) -> None:
        """Scans the notebooks the walk found (Note [Notebooks in a scan]):
        their findings go to ``extra``, their counts and errors to ``_nb_*``."""
        show = self._show
        named: dict = {}
        for raw in self._notebooks or ():
            named.setdefault(show(raw), raw)
        self._notebooks = []
        self.extra, errors, files, nbytes = _scan_notebook_files(
            sorted(named.items()), self._keep, self._rules, self.rows, self._max, self._drop)
        self._nb_files, self._nb_bytes, self._nb_errors = files, nbytes, errors


def _shower(cwd: str) -> Callable[[bytes], str]:
    """show(path as the walk gives it) -> the path as reports show it."""
    # _display_path changes only a path under cwd or one that starts with
    # "./": the others (most, when the tree was given by a path from
    # elsewhere) are shown as they are, without its calls.
    under = cwd.rstrip("/") + "/"
    posix = os.path.isabs is _posix_isabs

    def show(path: bytes) -> str:
        shown = path.decode("utf-8", "surrogateescape")
        if not posix or shown[:2] == "./" or (shown[:1] == "/" and (
                shown == cwd or shown.startswith(under))):
            shown = _display_path(shown, cwd)
        if not shown.isascii():
            shown = _path_str(shown.encode("utf-8", "surrogateescape"))
        return shown

    return show


class _Report:
    """A tree's scan with its findings kept native (Note [Native reports] in
    python/src/bind_scan.cc): ``anydev scan`` writes its text, JSON and GitHub
    reports from it without a Finding per finding; ``findings`` makes them
    (what scan_paths returns, and the other outputs read). Filters drop
    findings natively: `# noqa` (drop_noqa), per-file-ignores (drop_where).
    ``len()`` is the number of findings left."""

    def __init__(self, native, nfiles: int, nbytes: int, rows, cwd: str) -> None:
        self.native = native
        self.rows = rows
        self.files = nfiles
        self.bytes = nbytes
        self.ignored = self.tracked = 0
        self.errors: list[ScanError] = []
        self.shown: list[str] = []  # per file, its path as shown
        # the files with findings whose `# noqa` directives Python's tokenize
        # must read (Note [noqa directives] in core/scan: the scanner read the
        # others and dropped what they name): (index, name as the walk gave
        # it, which opens a file whose shown name is quoted)
        self.noqa: list[tuple[int, str]] = []
        self.counts: list[int] = []  # per file, its number of findings
        self._sorted = False
        self._left: Optional[list] = None
        self._findings: Optional[list] = None
        self._keys: Optional[list] = None
        self.extra: list = []  # the notebooks' findings (Note [Notebooks in a scan])
        show = _shower(cwd)
        seen: set[str] = set()
        for i, (path, _lang, n, errs, noqa_comment) in enumerate(native.files()):
            shown = show(path)
            self.shown.append(shown)
            self.counts.append(n)
            if shown in seen:
                # A file two of the paths reach (`scan src src/a.py`): it is
                # reported, and counted, once.
                self.files -= 1
                if n:
                    self.native.drop(i, list(range(n)))
                continue
            seen.add(shown)
            if noqa_comment and n:  # (a file-level `# anydev: noqa` too: Note [File-level noqa])
                self.noqa.append((i, os.fsdecode(path)))
            for message, line in errs:
                self.errors.append(ScanError(shown, message, line))

    def __len__(self) -> int:
        return self.native.left + len(self.extra)

    def add_extra(self, findings: list, files: int, nbytes: int, errors: list) -> None:
        """Adds the notebooks' findings, files, bytes and errors (they come
        after the native findings: Note [Notebooks in a scan])."""
        self.extra = findings
        self.files += files
        self.bytes += nbytes
        self.errors += errors
        self._findings = None

    def sort(self) -> None:
        """Orders the findings by (path, start) and the errors by (path,
        line), as sorting the Findings and ScanErrors would."""
        names = sorted(set(self.shown))
        rank = {p: i for i, p in enumerate(names)}
        self.native.order([rank[p] for p in self.shown])
        self._sorted = True
        self.errors.sort(key=lambda e: (e.path, e.line or 0))

    def drop_noqa(self) -> None:
        """Drops the findings `# noqa` comments suppress: the scanner dropped
        those of the line directives it read (Note [noqa directives] in
        core/scan/src/scan_source.cc); this reads the files it left to Python's
        tokenize, and the Python files with findings that may have a file-level
        `# anydev: noqa` (Note [File-level noqa])."""
        if not self.noqa:
            return
        from ._migrate import noqa as _noqa  # `# noqa` comments (ruff's convention)

        for i, name in self.noqa:
            found = self._file_findings(i)
            kept = _noqa.filter_findings(found, lambda _shown, name=name: _noqa.read_file(name))
            if kept is not found:
                ids = {id(f) for f in kept}
                self._drop(i, [j for j, f in enumerate(found) if id(f) not in ids])

    def drop_where(self, drop: Callable[[str, str], bool]) -> None:
        """Drops the findings for which drop(path, rule code) is true."""
        if self.extra:
            self.extra = [f for f in self.extra if not drop(f.path, f.rule)]
            self._findings = None
        rows = self.rows
        for i, n in enumerate(self.counts):
            if n:
                path = self.shown[i]
                off = [r for r in self.native.rules_of(i) if drop(path, rows[r].code)]
                if off:
                    self.native.drop_rules(i, off)
                    self._left = self._findings = None

    def _drop(self, i: int, which: list) -> None:
        if which:
            self.native.drop(i, which)
            self._left = self._findings = None

    def _file_findings(self, i: int) -> list:
        """The Findings of file i, dropped ones too."""
        made = self._made(i)
        if made is not None:
            return made
        shown, rows = self.shown[i], self.rows
        return [_finding(shown, t, rows[t[0]]) for t in self.native.tuples(i)]

    def _made(self, file: int = -1) -> Optional[list]:
        """The Findings the native side makes (Note [Native Findings] in
        bind_scan.cc): those left, in order, or with ``file`` all of that
        file's; None where Finding is not a class of slots (Python 3.9)."""
        if not _SLOTS or _state.get("native findings") is False:
            return None
        values = []
        for code, symbol, msg, row in self.keys():
            values.append((symbol, row.replacement, code, row.fix, msg, row.language))
        try:
            return self.native.findings(Finding, self.shown, values, list(_native().KINDS), file)
        except TypeError:  # pragma: no cover - a Finding without slots
            _state["native findings"] = False
            return None

    @property
    def findings(self) -> list[Finding]:
        """The findings left, as Findings, in order."""
        if self._findings is None:
            made = self._made()
            if made is not None:
                self._findings = made + self.extra if self.extra else made
                return self._findings
            left = self.left_per_file()
            out: list = []
            for i, n in enumerate(self.counts):
                if not n or not left[i]:
                    continue
                found = self._file_findings(i)
                if left[i] != n:
                    gone = set(self.native.dropped(i))
                    found = [f for j, f in enumerate(found) if j not in gone]
                out += found
            if self._sorted:
                out.sort(key=lambda f: (f.path, f.start))
            self._findings = out + self.extra
        return self._findings

    def result(self) -> ScanResult:
        """The ScanResult of the scan (its Findings made now)."""
        return ScanResult(findings=self.findings, errors=self.errors, files=self.files,
                          bytes=self.bytes, ignored=self.ignored, tracked=self.tracked)

    def left_per_file(self) -> list:
        if self._left is None:
            self._left = self.native.left_per_file()
        return self._left

    def keys(self) -> list:
        """Per key of the native report (a (rule, symbol) of its findings):
        (code, symbol, message, row) as the findings have them."""
        if self._keys is not None:
            return self._keys
        rows = self.rows
        out = []
        for rule, symbol in self.native.keys():
            row = rows[rule]
            symbol = row.legacy if row.detect else symbol
            key = (row.code, symbol)
            msg = _messages.get(key)
            if msg is None:
                msg = _messages[key] = message_for(symbol, row)
            out.append((row.code, symbol, msg, row))
        self._keys = out
        return out

    def files_with_findings(self) -> int:
        """How many files have a finding left (the natively scanned ones)."""
        return sum(1 for n in self.left_per_file() if n)

    def row_counts(self) -> Iterator[tuple]:
        """(row, findings left) per key of the native report."""
        return ((row, n) for (_c, _s, _m, row), n in zip(self.keys(),
                                                       self.native.left_per_key()))

    def summary_counts(self, level: Optional[Callable] = None
                       ) -> tuple[int, int, int, int, int]:
        """(findings left, files they are in, of them safe to fix, unsafe,
        newer): the last three by ``level(row)`` (_row_level by default)."""
        left = self.left_per_file()
        nfiles = len({p for p, n in zip(self.shown, left) if n} | {f.path for f in self.extra})
        return (len(self), nfiles, *_levels_counted(self.row_counts(), self.extra, level))


    def render(self, parts: list, file_text: Callable[[str], str], key_text: list,
               sep: str = "", n: int = 1024) -> Iterator[Union[bytes, str]]:
        """The findings left, each as the template ``parts`` says (str: as
        is; 0: file_text(path); 1: its key's entry in ``key_text``; 2 line,
        3 column, 4 end line, 5 end column), joined by ``sep``: ``n`` to a
        chunk of UTF-8 bytes, ``sep`` (a str) between two chunks. The report
        writers (write_atomic, write_stdout) take both. A chunk of 1,024
        findings (about 300 KB of JSON) costs no more instructions than one of
        4,096 and holds 2 MB less at the peak of a streamed JSON report."""
        files = [file_text(p) if k else None for p, k in zip(self.shown, self.left_per_file())]
        r = _native().Renderer(self.native, parts, files, key_text, sep)
        chunk = r.next(n)
        while chunk is not None:
            yield chunk
            chunk = r.next(n)
            if chunk is not None and sep:
                yield sep


def _row_level(row) -> Optional[str]:
    """A row's own fix level: "safe", "unsafe" or None."""
    return row.fix if row.fix in ("safe", "unsafe") else None


def _levels_counted(rows: Iterable[tuple], extra: Sequence[Finding],
                    level: Optional[Callable]) -> tuple[int, int, int]:
    """(safe, unsafe, newer) over (row, count) pairs and Finding objects, by
    ``level(row)`` ("safe", "unsafe", "newer" or None)."""
    level = level or _row_level
    got = {"safe": 0, "unsafe": 0, "newer": 0}
    for row, n in rows:
        lv = level(row)
        if lv in got:
            got[lv] += n
    if extra:
        of = getattr(level, "of", None)
        for f in extra:
            lv = of(f) if of is not None else f.fix
            if lv in got:
                got[lv] += 1
    return got["safe"], got["unsafe"], got["newer"]

def _result(entries: list, nfiles: int, nbytes: int, rows, cwd: str,
            noqa: Optional[set] = None) -> ScanResult:
    """A ScanResult of the native (path, language, findings, errors, noqa
    fallback) tuples; empties `entries` as it goes. `noqa` gets the paths (as
    shown) of the files with findings whose `# noqa` directives are Python's
    to read."""
    result = ScanResult(files=nfiles, bytes=nbytes)
    append = result.findings.append
    for i, (path, _lang, found, errs, noqa_comment) in enumerate(entries):
        entries[i] = None  # let the raw tuples go as their findings are built
        shown = _display_path(path.decode("utf-8", "surrogateescape"), cwd)
        if not shown.isascii():
            shown = _path_str(shown.encode("utf-8", "surrogateescape"))
        if noqa_comment and found and noqa is not None:
            noqa.add(shown)
        for t in found:
            append(_finding(shown, t, rows[t[0]]))
        for message, line in errs:
            result.errors.append(ScanError(shown, message, line))
    return result


# Note [Notebooks in a scan]: the native walk gives the Jupyter notebooks it
# finds (under the same ignore rules and excludes as the sources) apart from
# the sources, which it scans itself; a notebook is JSON, its code cells are
# read in Python (anydev/_migrate/notebook.py) and scanned as one Python
# source by the native scanner (scan_source). A walk gives its notebooks at
# its end, when the sources' batches have been scanned and, in a streamed
# report, written: so the notebooks' findings (NotebookFinding, a Finding with
# its cell) come after every other file's, ordered by path, in every report
# (``extra`` of a _Report or a _Stream). A notebook that is not valid JSON,
# not nbformat 4 or not Python is an error of the run, which goes on; a cell
# that does not lex is one too, and the other cells are scanned again without
# it, so one broken cell hides no finding of the others.


def _scan_notebook(data: bytes, path: str, keep: Callable[[str], bool], native,
                   rows) -> tuple[list[Finding], list[ScanError]]:
    """scan_source of a notebook's bytes (Note [Notebooks in a scan])."""
    from ._migrate import notebook as _nb

    try:
        nb = _nb.Notebook.parse(data)
    except _nb.NotebookError as e:
        return [], [ScanError(path, f"{e}; skipped", e.line)]
    findings: list[Finding] = []
    errors: list[ScanError] = []
    done: set = set()  # cells whose findings are final
    broken: list = []  # cells that do not lex, left out of the next scans
    current = nb
    while True:
        source = current.source.encode("utf-8")
        raw, errs, noqa = _native().scan_source(native, source, "python")
        found = [_finding(path, t, rows[t[0]]) for t in raw if keep(rows[t[0]].code)]
        if found and noqa:
            from ._migrate import noqa as _noqa

            found = _noqa.filter_findings(found, lambda p: source)
        stop = None  # the cell where the scan stopped
        for message, line in errs:
            cell = current.cell_of(line) if line else None
            if cell is None and line:  # an end line: the cell before it
                cell = current.cell_of(line - 1)
            if cell is None:
                errors.append(ScanError(path, message, None))
                continue
            at = current.locate(line)
            where = f", line {at[1]}" if at else ""
            # the cells after this one are scanned again without it
            message = message.replace("findings after it are", "the cell's findings after it are")
            errors.append(ScanError(path, f"cell {cell.number}{where}: {message}", None))
            if stop is None or cell.first > stop.first:
                stop = cell
        for f in found:
            at = current.locate(f.line)
            if at is None or at[0].number in done or (
                    stop is not None and at[0].first > stop.first):
                continue
            cell, line = at
            end_line = f.end_line - cell.first + 1
            findings.append(NotebookFinding(
                path, line, f.column, end_line, f.end_column, f.symbol, f.replacement,
                f.rule, f.fix, f.message, f.kind, f.start, f.end, f.call_end, f.text,
                f.language, cell=cell.number))
        if stop is None or not any(c.first > stop.first for c in current.cells):
            break
        done.update(c.number for c in current.cells if c.first <= stop.first)
        broken.append(stop.number)
        current = nb.without(broken)
    findings.sort(key=lambda f: (f.cell, f.line, f.column))
    return findings, errors


def _scan_notebook_files(named: list, keep: Callable[[str], bool], native, rows,
                         max_file_size: int, drop: Optional[Callable[[str, str], bool]]
                         ) -> tuple[list, list, int, int]:
    """Reads and scans the notebooks ``named`` ([(path as shown, path as the
    walk gave it)]): (findings, errors, files scanned, bytes read)."""
    findings: list = []
    errors: list = []
    files = nbytes = 0
    for shown, raw in named:
        try:
            with open(raw, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size > max_file_size:
                    errors.append(ScanError(shown, f"file is {size} bytes, over the limit of "
                                                   f"{max_file_size} (a generated file?); "
                                                   "skipped", None))
                    continue
                data = fh.read()
        except OSError as e:
            errors.append(ScanError(shown, f"cannot read: {e.strerror or e}", None))
            continue
        files += 1
        nbytes += len(data)
        found, errs = _scan_notebook(data, shown, keep, native, rows)
        if drop is not None:
            found = [f for f in found if not drop(f.path, f.rule)]
        findings += found
        errors += errs
    return findings, errors, files, nbytes
