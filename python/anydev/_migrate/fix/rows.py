"""What the compat table says about a finding: its row, whether the row's
rewrite may be applied (``fix = safe|unsafe|none``, ``--unsafe-fixes``), and
whether a reference that is not a call may be renamed."""

from __future__ import annotations

from typing import Optional

from anydev._compat import signature as _signature
from anydev import scan as _scan
from anydev._compat.table import ROWS_BY_CODE, ROWS_BY_LEGACY, Row
from .templates import _bare_call


def _renamable(row: Row, unsafe: bool = False) -> bool:
    """Whether a reference that is not a call may become the replacement.

    A row with ``rename = false`` whose template only passes the legacy
    parameters on, in order (``torch.accelerator.synchronize({device})`` for
    ``(device=None)``), is renamed under ``unsafe``: the rename is exact for
    positional calls, but the replacement's parameters are positional-only, so
    a caller that passes ``device=`` by keyword would break."""
    if not row.replacement:
        return False
    if not row.rename:
        if not unsafe or row.template is None or row.language != "python":
            return False
        params = _python_params(row.signature)
        if params is None or params.keyword_only or params.vararg or params.kwarg:
            return False
        passthrough = f"{row.replacement}({', '.join('{' + p + '}' for p in params.positional)})"
        return row.template == passthrough
    if row.template is None or row.kind == "class":
        return True
    return _bare_call(row) == f"{row.replacement}()"


def _python_params(signature: Optional[str]) -> Optional[_signature.Params]:
    """The parameter names of a row's legacy signature, or None without one."""
    if not signature:
        return None
    try:
        return _signature.params(signature)
    except ValueError:
        return None


def _row_of(f: _scan.Finding) -> Optional[Row]:
    return ROWS_BY_CODE.get(f.rule) or ROWS_BY_LEGACY.get(f.symbol)


def _allowed(row: Row, unsafe: bool) -> Optional[str]:
    """None when the row's rewrite may be applied, else why not."""
    if row.status == "literal":  # C++ only: Python literals go by unit (anydev._migrate.fix.literals)
        return (f"{row.code}: C++ literals are hints; the fixer does not rewrite them "
                f"(`anydev rule {row.code}` shows the generic spelling)")
    if row.status != "deprecated" or row.fix == "none":
        return f"{row.code} has no mechanical fix; migrate by hand (`anydev rule {row.code}`)"
    if row.fix == "unsafe" and not unsafe:
        return (f"{row.code}'s fix changes behaviour; apply it with --unsafe-fixes "
                f"(`anydev rule {row.code}`)")
    return None
