"""anydev's own rules, about its suppressions rather than a legacy symbol
(no row of the compat table): ``AD001`` (unused-noqa), a ``# noqa: ADxxx``
directive that suppresses nothing, as ruff's RUF100.

AD0xx is the range of these rules (compat_map/SCHEMA.md lists the table's,
AD1xx to AD9xx). A rule here has a row-like record (:data:`ROWS_BY_CODE`)
with the fields the reports read of a table row (``code``, ``legacy``,
``replacement``, ``fix``, ``note``, ...), so the text, JSON, SARIF and
statistics outputs and ``anydev rule`` treat it as any rule.

AD001 is opt-in, as RUF100 is in ruff: ``--extend-select AD001`` or
``extend-select = ["AD001"]`` (or a selection that names it: ``AD0``,
``ALL``). On, it costs a read of every Python file of the run that mentions
noqa (Note [Unused noqa]).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Callable, Optional

__all__ = ["CODES", "OPT_IN", "ROWS_BY_CODE", "MetaRow", "row_of", "unused_noqa"]


class MetaRow:
    """The fields of a compat-table Row that the reports and ``anydev rule``
    read, for a rule of anydev's own."""

    __slots__ = ("code", "legacy", "also", "covers", "kind", "status", "replacement",
                 "anydev", "fix", "signature", "template", "deprecated_in", "since", "note",
                 "source", "language", "opt_in", "example", "name")

    def __init__(self, code: str, name: str, legacy: str, note: str, example: tuple) -> None:
        self.code, self.name, self.legacy, self.note = code, name, legacy, note
        self.also = self.covers = ()
        self.kind = "directive"
        self.status = "meta"
        self.replacement = ""
        self.anydev = None
        self.fix = "none"
        self.signature = self.template = None
        self.deprecated_in = self.since = None
        self.source = "python/anydev/_migrate/meta_rules.py"
        self.language = "python"
        self.opt_in = True
        self.example = example

    def __repr__(self) -> str:
        return f"MetaRow({self.code!r}, {self.name!r})"


UNUSED_NOQA = MetaRow(
    "AD001", "unused-noqa", "unused `# noqa: ADxxx`",
    "A `# noqa` directive names an anydev rule code (or prefix) that suppresses no finding on "
    "its line: the legacy reference it silenced is gone, or was never there, so the directive "
    "would hide a new one on that line. Remove the code (and the directive if it names no "
    "other). As ruff's RUF100 (unused-noqa); codes of other tools (`E501`) and a bare "
    "`# noqa` are left alone, and so is a code whose rules are all off for the file (it "
    "cannot be told whether it is used). Opt-in: `--extend-select AD001`.",
    ("import torch\nx = torch.accelerator.current_device_index()  # noqa: AD103",
     "import torch\nx = torch.accelerator.current_device_index()"))

ROWS_BY_CODE = {UNUSED_NOQA.code: UNUSED_NOQA}
CODES = tuple(ROWS_BY_CODE)
OPT_IN = frozenset(code for code, row in ROWS_BY_CODE.items() if row.opt_in)


# Note [Unused noqa]: the native scanner reports a finding, never the
# directive that dropped it, and flags only the files whose lexed comments
# mention noqa (the lines with a candidate). So AD001 reads every Python file
# of the run again and looks for `# noqa` directives with AD codes where its
# bytes hold `noqa` (anydev/_migrate/noqa.py's tokenize-based reader); a
# code is used when a finding on its line, dropped or not, is of a rule the
# code covers (the scan's findings of that file before `# noqa` and
# per-file-ignores were applied). Where the native scanner reports the
# directives per line (a change in flight), this becomes a lookup.


def unused_noqa(path: str, data: bytes, lines_rules: dict, rule_on: Callable[[str], bool],
                make: Callable[..., object]) -> list:
    """The AD001 findings of one Python file: ``data`` its bytes, shown as
    ``path``; ``lines_rules``: line -> the rule codes of the scan's findings
    that start there (those ``# noqa`` dropped included); ``rule_on(code)``:
    whether the file's selection has the rule on; ``make(path, line, column,
    end_line, end_column, text, message)`` builds a finding."""
    from . import noqa as _noqa

    out = []
    for line, col, end_col, codes in _noqa.spans(data):
        found = lines_rules.get(line, ())
        unused = []
        for code in codes:
            if not code.startswith("AD"):
                continue  # another tool's
            covered = _rules_covered(code)
            if covered is None or not any(rule_on(c) for c in covered):
                continue  # not a code anydev knows, or every rule of it is off here
            if not any(r.startswith(code) for r in found):
                unused.append(code)
        if unused:
            listed = ", ".join(f"`{c}`" for c in unused)
            message = (f"Unused `noqa` directive (unused: {listed}); remove "
                       f"{'it' if len(unused) == len(codes) else 'the code'}")
            text = _line_text(data, line, col, end_col)
            out.append(make(path, line, col, line, end_col, text, message))
    return out


_covered: dict = {}


def _rules_covered(code: str) -> Optional[tuple]:
    """The rule codes a noqa code (or prefix) covers, or None if none."""
    got = _covered.get(code, False)
    if got is not False:
        return got
    from .scan_table import NATIVE

    codes = tuple(c for c in [*(t[0] for t in NATIVE), *CODES] if c.startswith(code))
    got = _covered[code] = codes or None
    return got


def _line_text(data: bytes, line: int, col: int, end_col: int) -> str:
    lines = data.split(b"\n", line)
    if len(lines) < line:
        return ""
    text = lines[line - 1].decode("utf-8", "replace")
    return text[col - 1:end_col - 1]


def row_of(code: str):
    """The table's row of ``code``, or this module's, or None."""
    row = ROWS_BY_CODE.get(code)
    if row is not None:
        return row
    from anydev._compat import table as _table

    return _table.ROWS_BY_CODE.get(code)
