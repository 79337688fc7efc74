"""The fixer's driver: ``fix_source`` (one file's bytes: checks, the
language's rewrites, the parse of the result) and ``fix_paths`` (scan, read,
fix, move mock targets, then write each file atomically or diff it), with the
results they return and the safety checks around reading and writing."""

from __future__ import annotations

import ast
import errno
import os
import re
import stat
import sys
from symtable import symtable as _symtable
import _thread
from typing import Callable, Iterable, Optional, Sequence, Union

from anydev._migrate import torch_versions as _versions
from anydev._migrate.record import field, record
from anydev._common.files import (remove_stale_temps, removing_temps_on_signals,
                                   replace_atomically)
from anydev import scan as _scan
from . import literals as _literals
from .mocks import _move_mock_targets, mock_conflicts
from .python_api import _fix_python
from .python_tree import _parse_error
from .rows import _allowed, _row_of
from .text import _FileError, _Text, split_lines
from .versions import _target_refusals
from .ladders import post_pass as _ladders_post_pass, pre_pass as _ladders_pre_pass
from .repeats import drop_repeats as _drop_repeats
from .wrap import wrap_file as _wrap_file


@record  # a dataclass, without importing dataclasses (anydev._migrate.record)
class FileResult:
    path: str
    applied: list[_scan.Finding] = field(default_factory=list)
    skipped: list[tuple[_scan.Finding, str]] = field(default_factory=list)
    error: Optional[str] = None     # the file was left as it was, and why
    io_error: bool = False          # ... because it could not be read or written
    changed: bool = False
    diff: str = ""
    #: how many of ``applied`` the fixes themselves wrote (a template's
    #: ``"cuda"``), fixed in a further round of the same run (Note [Rounds])
    later: int = 0


@record
class FixResult:
    files: list[FileResult] = field(default_factory=list)
    errors: list[_scan.ScanError] = field(default_factory=list)
    #: the targets the files were fixed for, by where each came from
    targets: dict[str, "_versions.Target"] = field(default_factory=dict)
    #: temporary files a stopped run of anydev fix left beside the files
    #: written, removed before writing (Note [Temporary files left behind])
    removed_temps: list[str] = field(default_factory=list)

    @property
    def needs_torch(self) -> Optional[str]:
        """The oldest PyTorch the fixed code runs on: the newest `since` among
        the rewrites applied (None when nothing was rewritten)."""
        best = None
        for fr in self.files:
            if fr.error is not None:
                continue
            for f in fr.applied:
                row = _row_of(f)
                v = _versions.since_of(row) if row is not None else None
                if v is not None and (best is None or v > best):
                    best = v
        return _versions.fmt(best) if best else None

    @property
    def applied(self) -> int:
        return sum(len(f.applied) for f in self.files if f.error is None)

    @property
    def later(self) -> int:
        return sum(f.later for f in self.files if f.error is None)

    @property
    def remaining(self) -> list[tuple[_scan.Finding, str]]:
        out: list[tuple[_scan.Finding, str]] = []
        for f in self.files:
            if f.error is not None:
                out.extend((x, f.error) for x in f.applied)
            out.extend(f.skipped)
        return out

    @property
    def diff(self) -> str:
        return "".join(f.diff for f in self.files)




def _parses(source: str, path: str) -> Optional[SyntaxError]:
    """None when ``source`` parses (as ast.parse reads it), else the error."""
    try:
        # the parser without the syntax tree's Python objects (Note [Checking the rewrite])
        _symtable(source, path, "exec")
        return None
    except Exception:  # noqa: BLE001 (a symbol table's error too: the parse decides)
        pass
    try:
        compile(source, path, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as e:
        return e
    except ValueError as e:
        return SyntaxError(str(e))
    return None


def _why_not(f: _scan.Finding, unsafe: bool) -> Optional[str]:
    """Why the table forbids rewriting ``f`` whatever the code around it: the
    first check of the Python driver's loop, or for a device literal the
    first checks of its unit's plan (literals.row_refusal); None if it does
    not."""
    row = _row_of(f)
    if row is None:
        return f"{f.symbol} is not in the compat table"
    if f.kind != "mock" and _literals.is_literal_row(row):
        return _literals.row_refusal(row, unsafe)
    return _allowed(row, unsafe)


def _none_fixable(findings: Sequence[_scan.Finding], unsafe: bool) -> bool:
    """Whether no finding of a Python file may be rewritten, by the table alone:
    no import (its removal depends on the others), and every other one's row
    (a device literal's too) forbids it (and no two start at one place, whose
    order in the report the driver's loop would decide)."""
    if len({f.start for f in findings}) != len(findings):
        return False
    for f in findings:
        if f.kind == "import" or _why_not(f, unsafe) is None:
            return False
    return True


def _cpp_why_not(f: _scan.Finding, unsafe: bool) -> Optional[str]:
    """Why the table forbids rewriting ``f`` in a C++ file (the C++ driver's
    first check), or None."""
    row = _row_of(f)
    return f"{f.symbol} is not in the compat table" if row is None else _allowed(row, unsafe)


def _none_fixable_cpp(findings: Sequence[_scan.Finding], unsafe: bool) -> bool:
    """Whether the table forbids rewriting every finding of a C++ file (and
    no two start at one place): the file is then not lexed (Note [Nothing to fix])."""
    if len({f.start for f in findings}) != len(findings):
        return False
    return all(_cpp_why_not(f, unsafe) is not None for f in findings)


# Note [Nothing to fix]
# A Python file whose findings the table alone forbids rewriting (rows without a
# mechanical fix, unsafe fixes not asked for: a device literal's row too) is not
# parsed: its findings are reported with the reason the driver gives first, and
# the file is left as it was. Only a file with something to rewrite pays for a
# parse. The driver could give no other reason there: its loop asks the table
# first; a literal whose row forbids it blocks its unit, so the unit's checks
# could only be left for it, and they are the table's already; the target's
# refusals of literals and checks (which block units) only block more. Where
# unsafe fixes are not asked for, that is most files of a real tree (every
# literal row is unsafe): 150 of Megatron-LM's 323 parsed files at its target.
# A C++ file whose findings the table forbids rewriting (its literals are
# hints, unsafe rows without --unsafe-fixes) is not lexed either: the C++
# driver's code mask (a Python loop over every byte) was most of a safe fix of
# detectron2, whose six C++ files with findings have nothing a safe fix writes.


def _check_findings(text: _Text, findings: Sequence[_scan.Finding]) -> None:
    for f in findings:
        raw = text.data[f.start:f.end]
        if raw.decode("utf-8", errors="replace") == f.text:
            continue
        if text.text[text.index_of_byte(f.start):text.index_of_byte(f.end)] == f.text:
            continue
        raise _FileError(f"changed since it was scanned (line {f.line} is not `{f.text}`); "
                         "nothing was changed")


def fix_source(data: bytes, path: str, findings: Sequence[_scan.Finding], *, unsafe: bool = False,
               target_torch: "Optional[str | _versions.Target]" = None, keep: Sequence[str] = (),
               select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None,
               rules: Optional[Callable[[list], list]] = None,
               frozen: Optional[dict[str, str]] = None
               ) -> tuple[bytes, list[_scan.Finding], list[tuple[_scan.Finding, str]]]:
    """Returns the fixed bytes of one file, with the findings applied and the
    ones skipped (and why). ``findings`` are the scanner's for exactly these
    bytes. ``target_torch`` is the oldest PyTorch the fixed code must run on
    ("2.1"; default: the newest release the table knows): a rewrite whose
    replacement is newer is not applied. ``keep``: gitignore-style globs of
    files that are a device's own implementation (never rewritten). Raises
    ValueError when the file cannot be fixed soundly (it does not parse, is
    not valid in its encoding, the fixed Python would not parse, the findings
    are not this file's) or ``target_torch`` is not a version.

    The fixed text is scanned again and fixed again while that changes it
    (at most ``_ROUNDS`` rounds), so one run is final: the ``"cuda"`` that a
    template writes is rewritten in the same run (Note [Rounds]). The
    rescans keep the rules ``select``/``ignore`` say, as for
    :func:`anydev.scan.scan_source`: give the ones ``findings`` were scanned
    with; ``rules`` (a filter of a list of findings), where given, replaces them."""
    if rules is None:
        rules = _selected(select, ignore)
    try:
        new, applied, skipped, _later = _fix_rounds(data, path, findings, unsafe=unsafe,
                                                    target_torch=target_torch, keep=keep,
                                                    rules=rules, frozen=frozen)
    except (RecursionError, MemoryError) as e:
        what = "nested too deeply" if isinstance(e, RecursionError) else "too large"
        raise ValueError(f"is {what} for the fixer ({type(e).__name__}); nothing was "
                         "changed") from None
    return new, applied, skipped


def _selected(select: Optional[Iterable[str]], ignore: Optional[Iterable[str]]
              ) -> Callable[[list], list]:
    """The filter of a further round's findings by the rules ``select`` and
    ``ignore`` keep (as :func:`anydev.scan.scan_source` selects them)."""
    keep_rule = _scan.rule_filter(select, ignore)
    return lambda fs: [f for f in fs if keep_rule(f.rule)]


#: The most rounds one file is fixed in (Note [Rounds]).
_ROUNDS = 5


def _left_key(f: _scan.Finding) -> tuple:
    return (f.rule, f.kind, f.text)


def _fix_rounds(data: bytes, path: str, findings: Sequence[_scan.Finding], *, unsafe: bool,
                target_torch, keep: Sequence[str], rules: Optional[Callable[[list], list]],
                frozen: Optional[dict[str, str]] = None
                ) -> tuple[bytes, list[_scan.Finding], list[tuple[_scan.Finding, str]], int]:
    """fix_source's rounds: the bytes, the findings applied in every round,
    the ones left (reconciled with each rescan) and how many were applied
    after the first round."""
    if isinstance(target_torch, str):
        target_torch = _versions.resolve_target(target_torch)
    language = _scan.language_of(path) or (findings[0].language if findings else None)
    asked: list[tuple[bytes, bool]] = []  # what more() answered, for the loop to reuse
    original = data

    def more(old: bytes, new: bytes, done: list) -> bool:
        got = _again(old, new, done, language, unsafe)
        asked.append((new, got))
        return got

    if not (frozen and _literals.CHECKS_PATCHED in frozen):
        # a test of this file patches a check (Note [No fallback under a check])
        frozen = _with_patched_checks(frozen, path, findings)
    # the file's parses: a step that reads a text parsed before takes its tree
    # (Note [One parse a text] in ladders.py)
    parsed: list = []
    # dispatch ladders first (Note [Collapsing a dispatch ladder])
    data, findings, restore = _ladders_pre_pass(data, path, findings, target_torch, keep, frozen,
                                                language, parsed)
    new, applied, skipped, tree = _fix_once(data, path, findings, unsafe=unsafe,
                                            target_torch=target_torch, keep=keep,
                                            tree=parsed[-1] if parsed else None,
                                            more=more if _ROUNDS > 1 else None, frozen=frozen,
                                            parsed=parsed)
    applied, skipped = restore(applied, skipped)
    later = 0
    current = new
    done = applied
    left = skipped
    for n in range(_ROUNDS - 1):
        # the round's own answer where it asked (its check came after); else ask now
        go = asked[-1][1] if asked and asked[-1][0] is current else \
            _again(data, current, done, language, unsafe)
        go = go or (current != data and _waited_on(left, done))
        del asked[:]
        if not go:
            break
        data = current
        again, _errs = _scan.scan_source(data, path, language=language)
        # mock targets move after every file is fixed (fix_paths), from the first round's
        again = [f for f in again if f.kind != "mock"]
        if rules is not None:
            again = list(rules(again))
        last = n == _ROUNDS - 2
        try:
            current, done, left, tree = _fix_once(
                data, path, again, unsafe=unsafe, target_torch=target_torch, keep=keep,
                tree=tree, more=None if last else more, frozen=frozen)
        except ValueError as e:  # this round is dropped: the last good text stays
            current, done, left, tree = data, [], [(f, str(e)) for f in again], None
        applied += done
        later += len(done)
        skipped = _reconcile(skipped, left, done)
    if tree is not None:
        parsed.append(tree)
    current, done, left = _ladders_post_pass(original, current, path, target_torch, keep, frozen,
                                             language, rules, parsed)
    if done:  # ladders the rewrites made collapsible (Note [Collapsing a dispatch ladder])
        applied, later, skipped = applied + done, later + len(done), _reconcile(skipped, left, done)
    if language == "python":
        current = _drop_repeats(original, current, parsed)  # Note [A block that repeats]
        # lines it took over the limit (Note [Wrapping rewritten lines])
        current = _wrap_file(original, current, path, parsed)
    return current, applied, skipped, later


def _with_patched_checks(frozen: Optional[dict[str, str]], path: str,
                         findings: Iterable[_scan.Finding]) -> Optional[dict[str, str]]:
    """``frozen`` with CHECKS_PATCHED where a finding is a test's patch of an
    availability check (Note [No fallback under a check])."""
    for f in findings:
        if f.kind == "mock" and f.symbol in _literals.PATCHED_CHECKS:
            return {**(frozen or {}), _literals.CHECKS_PATCHED: f"{path}:{f.line}"}
    return frozen


#: The refusal of an object passed to a legacy call (anydev._migrate.fix.analysis:
#: "the object is passed to `torch.cuda.set_stream` (line N), a torch.cuda API ...").
_PASSED_TO = re.compile(r"is passed to `(\w+)\.((?:cuda|xpu)\.\w+)` \(line \d+\), a ")


def _waited_on(left: Sequence[tuple[_scan.Finding, str]], done: Sequence[_scan.Finding]) -> bool:
    """Whether a finding was left because its object is passed to a legacy
    call that the same round rewrote (Note [Rounds]): `torch.cuda.current_stream()`
    passed to `torch.cuda.set_stream`, which became torch.accelerator.set_stream;
    a further round can then rewrite it, where a second run would have."""
    if not left or not done:
        return False
    waits = set()
    for _f, why in left:
        m = _PASSED_TO.search(why) if "is passed to `" in why else None
        if m:
            waits.add("torch." + m.group(2))
    return bool(waits) and any(f.symbol in waits for f in done)


def _again(data: bytes, current: bytes, done: Sequence[_scan.Finding], language: Optional[str],
           unsafe: bool) -> bool:
    """Whether a further round can have work after a round that turned ``data``
    into ``current`` applying ``done`` (Note [Rounds]): a template wrote a device
    literal (rewritten under --unsafe-fixes only: every literal row is unsafe),
    or an `import torch` was added to a module that did not bind `torch`, whose
    `torch.cuda.*` the scanner did not resolve before. Both are Python's. Any
    other file is fixed in one round, with no rescan."""
    return current != data and language == "python" and (
        unsafe and any(_writes_literal(f) for f in done) or
        _imports_of_torch(current) > _imports_of_torch(data))


def _imports_of_torch(data: bytes) -> int:
    """How many lines of ``data`` are `import torch` alone (_IMPORT_TORCH's
    matches): the regular expression is tried at the start of the lines that
    hold the words only, not at every byte."""
    n, seen, find = 0, -1, data.find
    i = find(b"import torch")
    while i >= 0:
        start = data.rfind(b"\n", 0, i) + 1  # where `^` (re.M) can match for it
        if start != seen:
            seen = start
            if _IMPORT_TORCH.match(data, start):
                n += 1
        i = find(b"import torch", i + 1)
    return n


_IMPORT_TORCH = re.compile(rb"^[ \t]*import torch[ \t]*(?:#[^\n]*)?\r?$", re.M)
_LITERAL_IN_TEMPLATE = re.compile(r"""["']cuda(?::\d+)?["']""")
_writes: dict = {}  # row -> bool (by the row itself: a test may patch a row's template)


def _writes_literal(f: _scan.Finding) -> bool:
    """Whether the rewrite of ``f`` writes a "cuda" literal (AD313's
    ``torch.amp.autocast("cuda", ...)``), which a literal rule reports."""
    row = _row_of(f)
    if row is None:
        return False
    got = _writes.get(row)
    if got is None:
        # a literal row's own "cuda" (getattr's default) is in no device position
        got = _writes[row] = bool(row.template and not _literals.is_literal_row(row) and
                                  _LITERAL_IN_TEMPLATE.search(row.template))
    return got


def _reconcile(skipped: list, left: list, done: list) -> list:
    """The findings left after a further round: the first round's (their
    positions are the original file's), less those a later round fixed: a
    key (rule, kind, text) applied there whose findings left became fewer.
    What the fixes wrote and a later round left (without --unsafe-fixes, a
    template's "cuda") is not added: a scan of the fixed file reports it, as
    before; nor does a finding left drop because a rewrite around it made it
    no finding (Note [Rounds])."""
    if not done:
        return skipped
    n_left: dict[tuple, int] = {}
    for f, _ in left:
        n_left[_left_key(f)] = n_left.get(_left_key(f), 0) + 1
    n_done: dict[tuple, int] = {}
    for f in done:
        n_done[_left_key(f)] = n_done.get(_left_key(f), 0) + 1
    n_was: dict[tuple, int] = {}
    for f, _ in skipped:
        if f.kind != "mock":
            n_was[_left_key(f)] = n_was.get(_left_key(f), 0) + 1
    drop = {k: min(n, max(0, n_was.get(k, 0) - n_left.get(k, 0))) for k, n in n_done.items()}
    out = []
    for f, why in skipped:
        k = _left_key(f)
        if f.kind != "mock" and drop.get(k):
            drop[k] -= 1
            continue
        out.append((f, why))
    return out


#: The text a round's fix wrote and its syntax tree, for the next round (Note [Rounds]).
_Parsed = Optional[tuple[str, ast.Module]]


def _fix_once(data: bytes, path: str, findings: Sequence[_scan.Finding], *, unsafe: bool,
              target_torch, keep: Sequence[str], tree: _Parsed = None,
              frozen: Optional[dict[str, str]] = None,
              more: Optional[Callable[[bytes, bytes, list], bool]] = None,
              parsed: Optional[list] = None
              ) -> tuple[bytes, list[_scan.Finding], list[tuple[_scan.Finding, str]], _Parsed]:
    """One round of fix_source: the findings of ``data`` applied, once.
    ``tree``: the previous round's parse of this text (used when it is the
    text's); ``more(data, new, applied)``: whether a further round follows,
    which then gets the parse of the fixed text (the fourth value, else None);
    ``parsed``: where the round's parse of ``data`` is added (the wrap reads
    the file's tree: Note [Parsing what the rewrite changed] in wrap.py)."""
    if not findings:
        return data, [], [], None
    language = _scan.language_of(path) or findings[0].language
    try:
        text = _Text(data, language, strict=language == "python")
        _check_findings(text, findings)
        todo, refused = _target_refusals(findings, target_torch, path, keep, frozen, data)
        if not todo:
            applied, skipped = [], refused
            skipped.sort(key=lambda s: s[0].start)
            return data, applied, skipped, None
        pieces: Optional[list[str]] = None
        unit_refused = _literals.unit_refusals(refused) if language == "python" else []
        if language == "python" and _none_fixable(todo, unsafe):
            # no rewrite to try: the file is never parsed (Note [Nothing to fix])
            skipped = [(f, _why_not(f, unsafe)) for f in todo] + refused
            skipped.sort(key=lambda s: s[0].start)
            return data, [], skipped, None
        if language != "python" and _none_fixable_cpp(todo, unsafe):
            # nothing to rewrite: the file is never lexed (Note [Nothing to fix])
            skipped = [(f, _cpp_why_not(f, unsafe)) for f in todo] + refused
            skipped.sort(key=lambda s: s[0].start)
            return data, [], skipped, None
        if language == "python":
            # the unit rule needs the literals and checks the target ruled out
            given = tree[1] if tree is not None and tree[0] == text.text else None
            patched = bool(frozen) and _literals.CHECKS_PATCHED in frozen
            new, applied, skipped, pieces = _fix_python(text, todo, unsafe, path, unit_refused,
                                                        tree=given, checks_patched=patched,
                                                        parsed=parsed)
        else:
            from .cpp import _fix_cpp  # noqa: PLC0415 (a C++ file's: not at start-up)

            new, applied, skipped = _fix_cpp(text, todo, unsafe, path)
        skipped += refused
        applied.sort(key=lambda f: f.start)
        skipped.sort(key=lambda s: s[0].start)
        if new == text.text:
            return data, applied, skipped, None
        out, parsed = text.encode(new), None
        if language == "python":
            # the original parsed (_fix_python); the rewrite must too: the statements
            # it changed, or the whole file (Note [Checking the rewrite]); the whole
            # file where a further round follows, which takes the tree (Note [Rounds])
            err = None
            if more is not None and more(data, out, applied):
                try:
                    parsed = (new, ast.parse(new, filename=path))
                except SyntaxError as e:
                    err = e
                except ValueError as e:
                    err = SyntaxError(str(e))
            elif pieces is None or any(_parses(p, path) is not None for p in pieces):
                err = _parses(new, path)
            if err is not None:
                raise _FileError(f"the fixed file would not parse ({_parse_error(err)}); "
                                 "it was left as it was")
        return out, applied, skipped, parsed
    except _FileError as e:
        raise ValueError(str(e)) from None


def unified_diff(path: str, old: str, new: str) -> str:
    """A unified diff of two texts of ``path`` (``a/path``, ``b/path``), with
    git's marker for a last line without a line break."""
    name_a, name_b = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
    if any(c < " " or c in '"\\\x7f' for c in path):
        # A line break in a name split the header (`--- a/n` then `l.py`), which no
        # patch tool reads: in git's quotes (`--- "a/n\\nl.py"`), as git writes it.
        name_a, name_b = (_scan.quote_path(n.encode("utf-8", "surrogateescape"))
                          for n in (name_a, name_b))
    a, b = split_lines(old), split_lines(new)
    import difflib  # noqa: PLC0415 (--diff only: not at every start-up)

    lines = difflib.unified_diff(a, b, fromfile=name_a, tofile=name_b)
    if not (a and not a[-1].endswith(("\n", "\r")) or b and not b[-1].endswith(("\n", "\r"))):
        # every line of both ends with its break, so every line of the diff does
        return "".join(lines)
    out = []
    for i, line in enumerate(lines):
        if i >= 2 and not line.startswith("@@") and not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def _link_on_path(path: str, roots: Sequence[str],
                  seen: Optional[dict[tuple[str, str], Optional[str]]] = None,
                  cwd: Optional[str] = None) -> Optional[str]:
    """The first symbolic link on ``path`` below the tree it was found in
    (the current directory, or the PATH argument that holds it), if any.
    ``seen``: what earlier calls found for the folders (one lstat per folder
    of a run, not per file); ``cwd``: the current directory, if known."""
    p = os.path.abspath(path)
    cwd = cwd or os.getcwd()
    if p.startswith(cwd.rstrip(os.sep) + os.sep):
        stop = cwd
    else:
        stop = os.path.dirname(p)
        for r in sorted((os.path.abspath(r) for r in roots), key=len, reverse=True):
            if p == r or p.startswith(r.rstrip(os.sep) + os.sep):
                stop = os.path.dirname(r)
                break
    cur = p
    walked: list[str] = []
    found: Optional[str] = None
    while cur != stop and len(cur) > len(stop):
        if cur is not p and seen is not None and (cur, stop) in seen:
            found = seen[(cur, stop)]
            break
        if os.path.islink(cur):
            found = cur
            break
        if cur is not p:
            walked.append(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    if seen is not None:
        for d in walked:  # each folder walked: the first link at or above it
            seen[(d, stop)] = found
    return found


def _write_atomic(path: str, data: bytes, st: os.stat_result) -> None:
    """Replaces ``path`` with ``data``, keeping its mode and owner (``st``); a
    file with several hard links keeps its inode, so every name sees the fix
    (Note [Replacing a file] in anydev/_common/files.py)."""
    replace_atomically(path, [data], mode=stat.S_IMODE(st.st_mode), owner=(st.st_uid, st.st_gid),
                       prefix=_TEMP_PREFIX)


_TEMP_PREFIX = ".anydev-fix-"


def fix_paths(paths: Sequence[str], *, unsafe: bool = False, diff: bool = False,
              select: Optional[Iterable[str]] = None, ignore: Optional[Iterable[str]] = None,
              exclude: Sequence[str] = (), jobs: Optional[int] = None,
              respect_gitignore: bool = True,
              scanned: Optional[_scan.ScanResult] = None,
              target_torch: Optional[str] = None, keep: Sequence[str] = (),
              rules: Optional[Callable[[list], list]] = None, check: bool = False,
              target_for: Optional[Callable[[str], Optional[_versions.Target]]] = None
              ) -> FixResult:
    """Scans ``paths`` (or takes the findings of ``scanned``) and applies the
    fixes; with ``diff=True`` writes nothing and returns a unified diff
    instead. Rule selection, excludes and .gitignore apply as for
    :func:`anydev.scan.scan_paths`. ``jobs``: the scan's threads and the
    fix's processes (default: all cores; Note [Fixing in processes]).

    ``target_torch``: the oldest PyTorch the fixed code must keep running on
    ("2.1"); by default each file's project says it (the lower bound of
    ``torch`` in its pyproject.toml, setup.cfg, setup.py or requirements*.txt,
    or ``[tool.anydev] target-torch``), else the newest release the table
    knows. ``keep``: gitignore-style globs (relative to the current
    directory) of files never rewritten. Mock targets of the rewritten calls
    (``mock.patch("torch.cuda.set_device")``) move with them when every call
    of that symbol in the fixed tree was rewritten (Note [Mock targets]).
    ``rules``: the filter of the findings of each fixed file's rescans (see
    :func:`fix_source`); by default ``select``/``ignore``. ``check=True``: a
    dry run that writes nothing and makes no diff (the results say what would
    be applied: `anydev scan`'s `[*]` marks). ``target_for(path)``: a file's
    own target where ``target_torch`` is not given (the command line's
    per-file configuration), None to fall back to its project's."""
    if isinstance(paths, str):
        paths = [paths]
    explicit = _versions.resolve_target(target_torch) if target_torch is not None else None
    if scanned is None:
        scanned = _scan.scan_paths(paths, select=select, ignore=ignore, exclude=exclude,
                                   jobs=jobs, respect_gitignore=respect_gitignore)
    if rules is None:
        rules = _selected(select, ignore)
    result = FixResult(errors=list(scanned.errors))
    by_file: dict[str, list[_scan.Finding]] = {}
    for f in scanned.findings:
        by_file.setdefault(f.path, []).append(f)
    projects = _versions.ProjectTargets()
    seen: dict[tuple[int, int], str] = {}
    pending: list[tuple[FileResult, bytes, bytes, os.stat_result, list[_scan.Finding],
                        Optional[_versions.Target]]] = []
    links: dict[tuple[str, str], Optional[str]] = {}
    cwd = os.getcwd()
    work: list[tuple[FileResult, bytes, os.stat_result, list[_scan.Finding],
                     _versions.Target]] = []
    for path, findings in by_file.items():
        fr = FileResult(path)
        result.files.append(fr)

        def refuse(why: str, io_error: bool = False) -> None:
            fr.error, fr.io_error = why, io_error
            fr.applied, fr.skipped = [], [(f, why) for f in findings]

        link = _link_on_path(path, paths, links, cwd)
        if link is not None:
            what = "is a symbolic link" if os.path.abspath(link) == os.path.abspath(path) else \
                f"is reached through the symbolic link {os.path.relpath(link)}"
            refuse(f"{what}; not written through")
            continue
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                data = fh.read()
        except OSError as e:
            raw = _scan.unquote_path(path) if e.errno == errno.ENOENT else None
            if raw is not None and os.path.lexists(raw):  # Note [File names] in scan.py
                refuse("its name is not UTF-8 (shown as git shows it), and anydev fix does not "
                       "rewrite such a file: rename it, or migrate it by hand", io_error=True)
            else:
                refuse(f"cannot read: {e.strerror or e}", io_error=True)
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen and _same_file_now(seen[key], path, key):
            # Another name (a hard link) of a file fixed under its first name:
            # its findings are that file's, counted there once, fixed or not.
            fr.applied, fr.skipped = [], []
            continue
        seen[key] = path
        target = explicit or (target_for(path) if target_for is not None else None) or \
            projects.for_file(path) or _versions.DEFAULT
        result.targets.setdefault(target.source, target)
        work.append((fr, data, st, findings, target))

    # a test's patch of a check anywhere (Note [No fallback under a check])
    patched: Optional[dict[str, str]] = None
    for fr, _data, _st, findings, _target in work:
        patched = patched or _with_patched_checks(None, fr.path, findings)
    for (fr, data, st, findings, target), out in zip(
            work, _fix_all(work, unsafe, keep, jobs, rules, patched)):
        if isinstance(out, str):
            fr.error, fr.io_error = out, False
            fr.applied, fr.skipped = [], [(f, out) for f in findings]
            continue
        new, fr.applied, fr.skipped, fr.later = out
        pending.append((fr, data, new, st, findings, target))

    _settle_mocks(pending, unsafe, keep, rules, jobs, patched)
    try:
        _move_mock_targets(pending)
    except Exception as e:  # a bug here must not stop the run: the mocks stay as they are
        for fr, *_ in pending:
            fr.skipped = [(f, why if f.kind != "mock" else
                           f"internal error of the fixer ({type(e).__name__}: {e}); the mock "
                           "target was left as it was; please report it")
                          for f, why in fr.skipped]

    writes: list[tuple[FileResult, bytes, os.stat_result, list[_scan.Finding]]] = []
    for fr, data, new, st, findings, _target in pending:
        path = fr.path
        if fr.error is not None or new == data:
            continue
        fr.changed = True
        if check:
            continue  # a dry run: what would be applied, no diff (`anydev scan`'s marks)
        if diff:
            lang = _scan.language_of(path) or findings[0].language
            fr.diff = unified_diff(path, _Text(data, lang).text, _Text(new, lang).text)
            continue
        writes.append((fr, new, st, findings))
    for folder in sorted({os.path.dirname(w[0].path) for w in writes}):
        result.removed_temps += remove_stale_temps(folder, _TEMP_PREFIX)
    with removing_temps_on_signals():  # Note [Temporary files left behind]
        if len(writes) > 1:
            # fsync waits for the disk, without the GIL: the writes overlap (Note [Writes])
            from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 (only when writing)
            with ThreadPoolExecutor(max_workers=min(_WRITERS, len(writes))) as pool:
                for _ in pool.map(lambda w: _write_checked(*w), writes):
                    pass
        elif writes:
            _write_checked(*writes[0])
    return result


def _settle_mocks(pending: list, unsafe: bool, keep: Sequence[str],
                  rules: Optional[Callable[[list], list]], jobs: Optional[int] = None,
                  patched: Optional[dict[str, str]] = None) -> None:
    """Fixes again, with the symbol left, the files where a symbol was
    rewritten whose test patch cannot move with it (Note [Mock targets]),
    until no such symbol is left: a patched call and its patch move together
    in one run or neither moves. The files of a round are fixed again as the
    first fix was, in ``jobs`` processes where there are many (Note [Fixing
    in processes]). ``patched``: the first run's CHECKS_PATCHED, kept."""
    frozen: dict[str, str] = dict(patched or {})
    for _ in range(16):  # each round freezes at least one more symbol
        try:
            more = mock_conflicts(pending, frozen)
        except Exception:  # noqa: BLE001 (the mocks then stay: _move_mock_targets says so)
            return
        if not more:
            return
        frozen.update(more)
        redo = [k for k, (fr, *_) in enumerate(pending)
                if fr.error is None and any(f.symbol in more for f in fr.applied)]
        work = [(pending[k][0], pending[k][1], pending[k][3], pending[k][4], pending[k][5])
                for k in redo]  # as _fix_all takes them: (fr, data, st, findings, target)
        befores = [{id(f): why for f, why in pending[k][0].skipped} for k in redo]
        outs = _fix_all(work, unsafe, keep, jobs, rules, dict(frozen))
        for k, before, out in zip(redo, befores, outs):
            fr, data, _new, st, findings, target = pending[k]
            if isinstance(out, str):
                fr.error, fr.io_error = out, False
                fr.applied, fr.skipped = [], [(f, out) for f in findings]
                pending[k] = (fr, data, data, st, findings, target)
                continue
            new, fr.applied, skipped, fr.later = out
            # a reason of its own stays
            fr.skipped = [(f, before.get(id(f), why)) for f, why in skipped]
            pending[k] = (fr, data, new, st, findings, target)


#: How many files are written at once.
_WRITERS = 8

#: The fewest files a process of the fix gets (Note [Fixing in processes]).
_FILES_PER_PROCESS = 64

#: What fixing one file gives: why it is left as it was, or fix_source's answer.
_Outcome = Union[str, tuple[bytes, list[_scan.Finding], list[tuple[_scan.Finding, str]], int]]


def _fix_one(data: bytes, path: str, findings: list[_scan.Finding], unsafe: bool,
             target: _versions.Target, keep: Sequence[str],
             rules: Optional[Callable[[list], list]],
             frozen: Optional[dict[str, str]] = None) -> _Outcome:
    """_fix_rounds' answer for one file, or why the file is left as it was."""
    try:
        return _fix_rounds(data, path, findings, unsafe=unsafe, target_torch=target, keep=keep,
                           rules=rules, frozen=frozen)
    except ValueError as e:
        return str(e)
    except (RecursionError, MemoryError) as e:
        what = "nested too deeply" if isinstance(e, RecursionError) else "too large"
        return (f"is {what} for the fixer (Python's parser or the fixer's walk gave up: "
                f"{type(e).__name__}); it was left as it was")
    except Exception as e:  # a bug of the fixer must not stop the run nor touch the file
        return (f"internal error of the fixer ({type(e).__name__}: {e}); the file was left "
                "as it was; please report it")


#: What the processes of one _fix_all fix: (work, unsafe, keep, rules), set before they fork.
_SHARED: Optional[tuple] = None
_SHARED_LOCK = _thread.allocate_lock()


#: A Finding's fields, in the order its constructor takes them.
_FINDING_FIELDS = ("path", "line", "column", "end_line", "end_column", "symbol", "replacement",
                   "rule", "fix", "message", "kind", "start", "end", "call_end", "text",
                   "language")


def _finding_tuple(f: _scan.Finding) -> tuple:
    """A finding of a further round (a rescan's, not the parent's) as plain values."""
    return tuple(getattr(f, name) for name in _FINDING_FIELDS)


def _fix_range(lo: int, hi: int) -> list:
    """In a process of the fix: the outcomes of work[lo:hi], findings as their
    indices in their file's list (the parent has the findings themselves)."""
    assert _SHARED is not None
    work, unsafe, keep, rules, frozen = _SHARED
    out: list = []
    for fr, data, _st, findings, target in work[lo:hi]:
        got = _fix_one(data, fr.path, findings, unsafe, target, keep, rules, frozen)
        if isinstance(got, str):
            out.append(got)
            continue
        new, applied, skipped, later = got
        index = {id(f): i for i, f in enumerate(findings)}
        if any(id(f) not in index for f in applied) or \
                any(id(f) not in index for f, _ in skipped):
            # a further round's findings are new: the finding itself is sent
            out.append((new, [index.get(id(f), _finding_tuple(f)) for f in applied],
                        [(index.get(id(f), _finding_tuple(f)), why) for f, why in skipped],
                        later))
            continue
        out.append((None if new == data else new, [index[id(f)] for f in applied],
                    [(index[id(f)], why) for f, why in skipped], later))
    return out


def _processes(jobs: Optional[int], files: int) -> int:
    """How many processes fix ``files`` files (1: this one alone)."""
    if not sys.platform.startswith("linux") or jobs == 1:
        return 1
    if not jobs:
        try:
            jobs = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):  # pragma: no cover
            jobs = os.cpu_count() or 1
    return max(1, min(jobs, files // _FILES_PER_PROCESS))


def _fix_all(work: list, unsafe: bool, keep: Sequence[str], jobs: Optional[int],
             rules: Optional[Callable[[list], list]],
             frozen: Optional[dict[str, str]] = None) -> list[_Outcome]:
    """The outcome of each file of ``work``, in its order, fixed in this
    process or, for many files, in ``jobs`` forked ones (Note [Fixing in processes]).
    ``frozen``: the symbols left for their mocks (_settle_mocks)."""
    n = _processes(jobs, len(work))
    if n > 1:
        got = _fix_in_processes(work, unsafe, keep, rules, frozen, n)
        if got is not None:
            return got
    return [_fix_one(data, fr.path, findings, unsafe, target, keep, rules, frozen)
            for fr, data, _st, findings, target in work]


def _fix_in_processes(work: list, unsafe: bool, keep: Sequence[str],
                      rules: Optional[Callable[[list], list]],
                      frozen: Optional[dict[str, str]], n: int
                      ) -> Optional[list[_Outcome]]:
    """_fix_all in ``n`` forked processes, each a contiguous range of the files
    (about as many bytes each), its outcomes sent back through a pipe; None
    when one cannot be started or does not answer (the caller then fixes every
    file here)."""
    global _SHARED
    import marshal  # noqa: PLC0415 (built in: str, bytes, lists and tuples only)

    total = sum(len(w[1]) for w in work) or 1
    bounds, lo, acc = [], 0, 0
    for i, w in enumerate(work):
        acc += len(w[1])
        if acc * n >= total * (len(bounds) + 1) and len(bounds) < n - 1:
            bounds.append((lo, i + 1))
            lo = i + 1
    bounds.append((lo, len(work)))
    if not _SHARED_LOCK.acquire(blocking=False):
        return None  # another thread's fix_paths is forking: this one fixes here
    _SHARED = (work, unsafe, keep, rules, frozen)
    children: list[tuple[int, int]] = []
    parts: Optional[list] = []
    try:
        for a, b in bounds:
            r, w = os.pipe()
            try:
                pid = os.fork()
            except OSError:
                os.close(r)
                os.close(w)
                parts = None
                break
            if pid == 0:  # the child: its outcomes down the pipe, then out without clean-up
                code = 1
                try:
                    os.close(r)
                    with os.fdopen(w, "wb") as fh:
                        fh.write(marshal.dumps(_fix_range(a, b)))
                    code = 0
                finally:
                    os._exit(code)
            os.close(w)
            children.append((pid, r))
        for pid, r in children:
            try:
                with os.fdopen(r, "rb") as fh:
                    blob = fh.read()
            except OSError:
                blob = b""
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:
                status = 1
            if parts is not None:
                try:
                    parts.append(marshal.loads(blob) if status == 0 else None)
                except (EOFError, ValueError, TypeError):
                    parts.append(None)
    finally:
        _SHARED = None
        _SHARED_LOCK.release()
    if parts is None or len(parts) != len(bounds) or any(p is None for p in parts):
        return None
    out: list[_Outcome] = []
    for (fr, data, _st, findings, _target), got in zip(work, (o for p in parts for o in p)):
        if isinstance(got, str):
            out.append(got)
            continue
        new, applied, skipped, later = got

        def finding(x, findings=findings):
            return findings[x] if type(x) is int else _scan.Finding(*x)

        out.append((data if new is None else new, [finding(i) for i in applied],
                    [(finding(i), why) for i, why in skipped], later))
    return out


# Note [Fixing in processes]
# Fixing a Python file is Python (a parse, a walk of its tree, the rewrites), so
# threads would take turns on the GIL. A tree of many files is fixed by `jobs`
# processes (all cores by default, like the scan's threads), forked from this
# one so that they share what it read and decided without copying it; each
# fixes one contiguous range of the files (about as many bytes each) and sends
# back through a pipe, marshalled, the fixed bytes and its findings' indices,
# and the results are taken in the files' order: the output is the same, byte
# for byte, as one process's. Mock targets, diffs and writes stay here. A
# process that cannot be started or does not answer leaves the whole fix to
# this process. Fewer than _FILES_PER_PROCESS files a process are not worth
# one: a fork and its answer cost about what fixing a few dozen files does.
# The processes cut the wall time where cores are free; the instructions and
# the CPU time stay those of one process (bench_fix.py counts both).


def _write_checked(fr: FileResult, new: bytes, st: os.stat_result,
                   findings: list[_scan.Finding]) -> None:
    """Writes one fixed file unless it changed since it was read (``st``);
    records a failure in ``fr``, never raises OSError."""
    path = fr.path
    try:
        now = os.stat(path, follow_symlinks=False)
        if (now.st_ino, now.st_size, now.st_mtime_ns) != (st.st_ino, st.st_size, st.st_mtime_ns):
            fr.changed = False
            fr.error = "changed while it was being fixed; not written"
            fr.applied, fr.skipped = [], [(f, fr.error) for f in findings]
            return
        _write_atomic(path, new, st)
    except OSError as e:
        fr.changed = False
        fr.error = f"could not write: {e.strerror or e}; it was left as it was"
        fr.io_error = True


# Note [Rounds]
# A fix can write what another rule rewrites: AD313's template turns
# `torch.cuda.amp.autocast(...)` into `torch.amp.autocast("cuda", ...)`, whose
# "cuda" is AD904's. As ruff does, the fixed text is scanned again and fixed
# again, until a round changes nothing or after _ROUNDS rounds, all in memory:
# the file is written once, at the end. A further round runs only where it can
# have work, in a Python file: under --unsafe-fixes (the literal rows are all
# unsafe) where a rewrite whose template holds a "cuda" literal was applied
# (_writes_literal), and where the fixer added `import torch` to a module that
# did not bind the name (its `torch.cuda.*` references were nobody's to the
# scanner before; fuzz/fix_fuzz.py found that a second run fixed them), and
# where a finding was left because its object is passed to a legacy call that
# the same round rewrote (_waited_on: apex's `s = torch.cuda.current_stream()`
# then `torch.cuda.set_stream(...)` with it; a second run fixed the first). Every
# other file is fixed in one round, with no rescan, so the rounds cost nothing
# on a tree without such calls. The literal
# rows' own rewrites hold no finding (their "cuda" fallback is getattr's
# default, in no device position), so the rounds end after the second. Each round is a whole fix of its text,
# so the unit rule (a function's guard, literals and .cuda() calls together)
# holds in each; a round whose result would not parse is dropped. A round that
# a further one follows (_again, asked before the check) is checked by parsing
# the whole fixed text, and the next round takes that tree (_fix_once's
# ``tree``, used only when its text is the round's) instead of parsing the
# same text again; the passes of one round (a unit that fell) share one tree. A finding is
# counted once: the ones a template wrote are new findings, applied in a later
# round (FileResult.later says how many), and the ones left are the first
# round's, less those a later round fixed (by rule and text); what the fixes
# wrote and a later round left (without --unsafe-fixes, the template's "cuda")
# is what a scan of the fixed file reports, as before, not a finding of this
# run. Mock targets are
# the first round's: they move after every file is fixed (Note [Mock targets]).


# Note [Writes]
# Each fixed file is flushed to the disk (fsync) before it is renamed over the
# original, so a crash leaves the old file or the new one. One fsync at a time
# made writing the fixed files a fifth of `anydev fix` on a tree of 400 files;
# fsync releases the GIL, so a few threads let the disk take them together.
# Each file is still checked, written and renamed on its own: a failure of one
# leaves it as it was and the others go on.


def _same_file_now(first: str, path: str, key: tuple[int, int]) -> bool:
    """Whether ``path`` and ``first`` (read earlier with the same device and
    inode) are still one file: another process replacing ``first`` frees its
    inode, which a file read later may get (concurrent ``anydev fix`` runs)."""
    try:
        a, b = os.stat(first), os.stat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == key == (b.st_dev, b.st_ino)
