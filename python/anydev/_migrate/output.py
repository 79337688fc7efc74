"""What every output of the migration tools shares: the error that ends a run
with exit 2, how a report is written (atomically, in chunks), the source line
of a finding, and how a scan error is classed. ``anydev scan``'s text report
(anydev._cli.scan) and its other formats (anydev._migrate.formats) both use it."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - `typing` costs the command's start-up
    from collections import Counter
    from typing import Callable, Iterable, Iterator, Optional, Sequence

    from anydev import scan as _scan

BASELINE_VERSION = 1
INFORMATION_URI = "https://github.com/anydev/anydev"
#: The rules' reference page (docs/rules.md, `anydev rule --all --format markdown`):
#: one heading per rule, so `#ad107` is the rule's anchor.
RULES_URI = INFORMATION_URI + "/blob/main/docs/rules.md"


def rule_url(code: str) -> str:
    """The web page of a rule (SARIF's helpUri, the JSON report's ``url``, an
    editor's link to the rule): its heading in docs/rules.md."""
    return f"{RULES_URI}#{code.lower()}"


#: What a finding is, for the reports (``kind`` in the JSON report): a call of
#: or reference to a legacy API, a device literal or an idiom (the AD9xx
#: rows), a test's patch target, an import of a legacy name, or (AD001) a
#: `# noqa` directive.
FINDING_KINDS = ("api", "literal", "idiom", "mock", "import", "directive")


def finding_kind(f, row) -> str:
    """The finding's kind (one of FINDING_KINDS) from the scanner's own
    (``call``, ``reference``, ``import``, ``mock``, ``literal``, ``idiom``,
    ``directive``) and its rule's row."""
    k = f.kind
    if k in ("mock", "import", "directive"):
        return k
    if row is not None and row.status == "literal" and row.kind in ("literal", "idiom"):
        return row.kind
    return "api"


class UsageError(Exception):
    """Exit 2 with this message."""


class _Lines:
    """The source line of each finding, its file read once for the findings
    that come together (the findings are by path): only the last file is
    kept, so a report of a whole tree does not hold the tree's text."""

    def __init__(self) -> None:
        self._path: Optional[str] = None
        self._data: Optional[bytes] = None

    def text(self, f: _scan.Finding) -> str:
        if f.path != self._path:
            try:
                with open(f.path, "rb") as fh:
                    data: Optional[bytes] = fh.read()
            except OSError:
                data = None
            if data and getattr(f, "cell", None) is not None:
                # a notebook's offsets are in its code cells' source (Note
                # [Notebook source] in anydev/_migrate/notebook.py)
                from .notebook import Notebook, NotebookError

                try:
                    data = Notebook.parse(data).source.encode("utf-8")
                except NotebookError:
                    data = None
            self._path, self._data = f.path, data
        data = self._data
        if not data:
            return f.text
        b = data.rfind(b"\n", 0, f.start) + 1
        e = data.find(b"\n", f.start)
        return data[b:e if e >= 0 else len(data)].decode("utf-8", "replace").strip()


def write_atomic(path: str, text: "str | Iterable[str | bytes]", *,
                 durable: bool = True) -> None:
    """Writes `text` (a string or chunks of one: str, or bytes of UTF-8 from
    the native renderer) to `path` through a temporary file and a rename,
    keeping the mode of a file it replaces (a device such as /dev/null or a
    pipe is written directly). ``durable=False``: not flushed to the disk
    before the rename (a report; Note [Replacing a file] in _files.py)."""
    from anydev._common.files import replace_atomically

    chunks = [text] if isinstance(text, str) else text
    if os.path.exists(path) and not os.path.isfile(path):
        with open(path, "wb") as f:
            f.writelines(_utf8(chunks))
        return
    if os.path.exists(path):
        mode = os.stat(path).st_mode & 0o7777
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    replace_atomically(path, _utf8(chunks), mode=mode, durable=durable)


def _then(chunks: Iterable, last: Callable[[], str]) -> Iterator:
    """``chunks``, then ``last()``, asked once they have all been given (a
    stream's counts are known by then: Note [Streamed reports])."""
    yield from chunks
    yield last()


def _utf8(chunks: Iterable) -> Iterator[bytes]:
    """The chunks of a report as UTF-8 bytes."""
    for c in chunks:
        yield c if c.__class__ is bytes else c.encode("utf-8")


def _fix_counts(findings: Sequence[_scan.Finding]) -> Counter:
    from collections import Counter

    return Counter(f.fix for f in findings)


def _is_io_error(e: _scan.ScanError) -> bool:
    return e.message.startswith("cannot read")


def error_kind(e: _scan.ScanError) -> str:
    """``"io"`` (the file could not be read: exit 2), ``"notice"`` (nothing of
    a source went unscanned: a file named that is not a source, a C++ file
    scanned as bytes) or ``"unscanned"`` (all or part of a source was not
    scanned: findings may be hidden there)."""
    m = e.message
    if m.startswith("cannot read"):
        return "io"
    if m.startswith("not a Python or C/C++") or m.endswith("scanned as bytes"):
        return "notice"
    return "unscanned"


def error_level(e: _scan.ScanError) -> str:
    return "warning" if error_kind(e) == "notice" else "error"
