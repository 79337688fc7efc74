"""Whether the code around a Python finding forbids its rewrite: version
guards, device homes, other bindings of the name, CUDA-only objects, ints for
``device_index``, and availability checks that guard CUDA-specific code
(Note [Half-migrated guards]). The syntax-tree analysis is anydev._migrate.fix.analysis."""

from __future__ import annotations

import ast
from typing import Optional

from anydev import scan as _scan
from anydev._compat.table import Row
from . import analysis
from .evidence import platform_branch
from .python_tree import _Located


#: Replacements of availability and count checks: they are rewritten only when the
#: code they guard is generic too (Note [Half-migrated guards]).
_GUARD_REPLACEMENTS = ("torch.accelerator.is_available", "torch.accelerator.device_count")
#: Legacy context managers whose replacement, torch.accelerator.device_index, takes an int.
_INDEX_ONLY = ("torch.accelerator.device_index",)


def _legacy_device(row: Row) -> str:
    """"cuda" or "xpu": the device a legacy row belongs to."""
    return "xpu" if ".xpu" in row.legacy or "::xpu" in row.legacy else "cuda"


def _refusal(an: analysis.PyAnalysis, f: _scan.Finding, row: Row,
             where: "_Located", node: Optional[ast.Call]) -> Optional[str]:
    """Why the code around a finding forbids its rewrite, or None (see
    anydev._migrate.fix.analysis)."""
    why = an.old_torch_only(where.chain) or an.device_home(where.chain) or \
        platform_branch(an, where.chain)
    if why:
        return why
    head = "".join(f.text.split()).split(".")[0]  # without blanks (`torch . cuda`)
    why = an.other_binding(head, f.symbol)
    if why:
        return why
    if node is not None and row.kind == "class" and row.replacement in \
            analysis.CUDA_ONLY_MEMBERS:
        why = an.cuda_only_use(node, row.replacement, row.legacy.rsplit(".", 1)[0])
        if why:
            return why
    if node is not None and row.replacement in analysis.RETURNS:
        # the object the call returns is followed as a constructed one is
        # (`.cuda_stream` of torch.cuda.current_stream(): flash-attention, apex)
        why = an.cuda_only_use(node, analysis.RETURNS[row.replacement],
                               row.legacy.rsplit(".", 1)[0])
        if why:
            return why
    if node is not None and row.replacement in _INDEX_ONLY and \
            (row.template or "").startswith("torch.accelerator.device_index({"):
        arg = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "device"), None)
        if arg is not None:
            assigned, annotated = an.facts(an.scope_of(node))
            if not analysis.int_like(arg, assigned, annotated, returns_int=an.returns_int):
                return (f"cannot tell that `{ast.unparse(arg)}` is an int: "
                        f"{row.replacement} takes only an int or None (a torch.device or "
                        "'cuda:1' must become its index by hand)")
    return None


# Note [Half-migrated guards]
# `torch.device("cuda" if torch.cuda.is_available() else "cpu")` rewritten to
# torch.accelerator.is_available() sends an XPU or MPS machine down the "cuda"
# branch, where it fails. So an availability or count check is rewritten last,
# after every other finding of the file was decided, and only where what it
# decides is shown generic (Note [Safe on every accelerator] in evidence.py):
# device-specific code that stays under it refuses it in every mode; code the
# fixer cannot see into leaves it to --unsafe-fixes.
