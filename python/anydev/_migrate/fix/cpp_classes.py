"""C++ classes: a legacy class renamed where its replacement can be
built from the same arguments (what each replacement's constructors take, an
argument's kind told by its form or declaration) and has every member its uses
call; tests/python/fix/test_fix_cpp_compile.py compiles every form."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from anydev._compat.table import Row
from .cpp_lex import (
    _cpp_block_end, _cpp_close, _cpp_items, _cpp_strip_parens, _cpp_top_level_operator)
from .edits import _Edit, _Edits


# C++ classes a row's replacement may be: what their constructors take (an
# argument kind, see _cpp_arg_kind; "index" is accepted where "device" is, as
# c10::Device(<current accelerator>, index)), how many arguments, the members
# a legacy object's uses may call, and the header that declares them. Facts
# from PyTorch's c10/core/DeviceGuard.h, c10/core/StreamGuard.h,
# c10/core/Stream.h and ATen/accelerator/Graph.h (torch 2.13); each template
# and form is compiled against them by tests/python/fix/test_fix_cpp_compile.py.
@dataclass(frozen=True)
class _CppClass:
    header: str
    arities: tuple[int, ...]            # constructor argument counts it has
    kinds: Optional[frozenset[str]]     # argument kinds it takes; None: any
    members: frozenset[str]


_CPP_CLASSES = {
    "c10::DeviceGuard": _CppClass(
        "c10/core/DeviceGuard.h", (1,), frozenset({"device"}),
        frozenset({"reset_device", "set_index", "original_device", "current_device"})),
    "c10::OptionalDeviceGuard": _CppClass(
        "c10/core/DeviceGuard.h", (0, 1), frozenset({"device", "optional_device", "nullopt"}),
        frozenset({"reset_device", "original_device", "current_device"})),
    # original_stream()/current_stream() give c10::Stream where the CUDA
    # guards give CUDAStream: a use of them may need the CUDA type.
    "c10::StreamGuard": _CppClass(
        "c10/core/StreamGuard.h", (1,), None,
        frozenset({"reset_stream", "original_device", "current_device"})),
    "c10::OptionalStreamGuard": _CppClass(
        "c10/core/StreamGuard.h", (0, 1), None, frozenset({"reset_stream", "reset"})),
    "c10::Stream": _CppClass(
        "c10/core/Stream.h", (1,), None,
        frozenset({"device", "device_type", "device_index", "id", "native_handle", "wait",
                   "query", "synchronize", "is_capturing", "hash", "pack3", "unpack3"})),
    "at::accelerator::Graph": _CppClass(
        "ATen/accelerator/Graph.h", (0, 1), None,
        frozenset({"capture_begin", "capture_end", "instantiate", "replay", "reset", "pool",
                   "enable_debug_mode", "debug_dump"})),
}

_CPP_ACCELERATOR_DEVICE = "c10::Device(at::accelerator::getAccelerator(true).value(), {})"

_CPP_INT = (r"(?:(?:c10|at)::DeviceIndex|DeviceIndex|(?:std::)?u?int(?:8|16|32|64)_t|"
            r"(?:signed\s+|unsigned\s+)?(?:char|short|int|long(?:\s+long)?)|unsigned|size_t)")
_CPP_DEVICE = r"(?:(?:c10|at|torch)::)?Device"
_CPP_OPTIONAL = r"(?:(?:std|c10)::)?optional\s*<\s*{}\s*>"
# Declared types of a name, by kind.
_CPP_DECL_TYPES = (
    ("optional_device", _CPP_OPTIONAL.format(_CPP_DEVICE)),
    ("optional_index", _CPP_OPTIONAL.format(r"(?:(?:c10|at)::)?DeviceIndex")),
    ("device", _CPP_DEVICE),
    ("index", _CPP_INT),
)
_CPP_INDEX_CALLS = re.compile(
    r"(?:(?:c10|at)::(?:cuda|xpu)::current_device|at::accelerator::getDeviceIndex)\s*\(\s*\)")


def _cpp_arg_kind(expr: str, mask: str, at: int) -> Optional[str]:
    """The kind of a constructor argument: "device" (a c10::Device),
    "index" (an integer), "optional_device", "optional_index", "nullopt",
    or None when the fixer cannot tell. A plain name takes the type of its
    declarations in the file (every one of them must agree)."""
    e = _cpp_strip_parens(expr)
    if re.fullmatch(r"-?\s*\d+[uUlL]*", e):
        return "index"
    m = re.fullmatch(r"\(\s*" + _CPP_INT + r"\s*\)\s*(.+)", e, re.S) or \
        re.fullmatch(r"static_cast\s*<\s*" + _CPP_INT + r"\s*>\s*\((.*)\)", e, re.S)
    if m:
        return "index"
    if re.fullmatch(r"(?:std|c10)::nullopt", e):
        return "nullopt"
    if _cpp_top_level_operator(e):
        return None
    if _CPP_INDEX_CALLS.fullmatch(e) or re.search(
            r"(?:\.|->)\s*(?:get_device|index|device_index)\s*\(\s*\)$", e):
        return "index"
    if re.fullmatch(_CPP_DEVICE + r"\s*[({].*[)}]", e, re.S) or \
            re.search(r"(?:\.|->)\s*device\s*\(\s*\)$", e):
        return "device"
    if re.fullmatch(r"(?:(?:at|c10)::)?device_of\s*\(.*\)", e, re.S):
        return "optional_device"
    if re.fullmatch(r"[A-Za-z_]\w*", e):
        region = _cpp_function_start(mask, at)
        if region < 0:
            return None
        kinds = set()
        for kind, ty in _CPP_DECL_TYPES:
            pat = re.compile(r"(?<![\w:.>])" + ty + r"\s*(?:const\s*)?&?\s*\b" + re.escape(e)
                             + r"\s*(?=[,;=)({\[])")
            if pat.search(mask, region, at):
                kinds.add(kind)
        if len(kinds) == 1:
            return kinds.pop()
    return None


def _cpp_function_start(mask: str, at: int) -> int:
    """The start of the parameter list of the function whose body holds
    mask[at] (the innermost brace block that follows a `)`), or -1 (at file
    or namespace scope, in a macro's body)."""
    line = mask.rfind("\n", 0, at) + 1
    if re.match(r"[ \t]*#", mask[line:at]) or mask[max(0, line - 2):line].startswith("\\"):
        return -1  # a macro's body: its parameters have no type
    depth = 0
    for k in range(at - 1, -1, -1):
        ch = mask[k]
        if ch == "}":
            depth += 1
        elif ch == "{":
            if depth:
                depth -= 1
                continue
            m = re.search(r"\)\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?"
                          r"(?:->\s*[\w:<>]+\s*)?$", mask[max(0, k - 200):k])
            if m:
                close = max(0, k - 200) + m.start()
                d2 = 0
                for j in range(close, -1, -1):
                    d2 += mask[j] == ")"
                    d2 -= mask[j] == "("
                    if d2 == 0:
                        return j
                return -1
    return -1


def _cpp_construction(text: str, mask: str, start: int, end: int
                      ) -> Optional[tuple[Optional[str], int, int]]:
    """For a class name at text[start:end] that constructs an object, the
    variable's name (None for a temporary) and the span of the constructor's
    parentheses or braces (open, close); (name, -1, -1) for a declaration
    without arguments; (name, -2, -2) for a variable whose object is not
    constructed here (a parameter, a reference or pointer, `= expr`, a
    range-for variable). None when the name is used some other way."""
    v = re.compile(r"\s*(?:(?:[&*]\s*)+)?([A-Za-z_]\w*)\s*(?:[,)=\[]|:(?!:))").match(mask, end)
    if v and v.group(1) not in ("const", "final", "override", "noexcept"):
        return (v.group(1), -2, -2)
    if re.match(r"\s*[&*]", mask[end:end + 16]):
        m = re.compile(r"\s*(?:[&*]\s*)+([A-Za-z_]\w*)\s*[;({]").match(mask, end)
        return (m.group(1), -2, -2) if m else None
    m = re.compile(r"\s*([A-Za-z_]\w*)?\s*([({;])").match(mask, end)
    if m is None:
        m2 = re.compile(r"\s*>\s*\(").match(mask, end)
        before = mask[max(0, start - 64):start]
        if m2 and re.search(r"\bstd\s*::\s*make_(?:unique|shared)\s*<\s*$", before):
            open_idx = m2.end() - 1
            close = _cpp_close(mask, open_idx)
            return None if close < 0 else (None, open_idx, close)
        return None
    name, bracket = m.group(1), m.group(2)
    if name in ("const", "final", "override", "noexcept"):
        return None
    if bracket == ";":
        return (name, -1, -1) if name else None
    open_idx = m.end() - 1
    close = _cpp_close(mask, open_idx)
    if close < 0:
        return None
    if bracket == "(" and (not name or re.match(r"\s*(?:\{|const\b|noexcept\b|override\b|->)",
                                                mask[close + 1:close + 64])):
        if not name or not mask[open_idx + 1:close].strip():
            return None if name else (None, open_idx, close)
        return None  # a function's definition: the name is its return type
    return (name, open_idx, close)


def _cpp_class_edits(text: str, mask: str, edits: _Edits, start: int, end: int, row: Row
                     ) -> tuple[Optional[str], list[_Edit]]:
    """The rewrite of a reference to a legacy class whose replacement is one of
    _CPP_CLASSES: the name, and an index argument wrapped in a c10::Device
    where the replacement takes only a Device. Refuses (with the reason) a
    form whose rewrite would not compile: arguments of a kind the replacement
    does not take or that the fixer cannot tell, and members of the object
    that the replacement lacks."""
    spec = _CPP_CLASSES[row.replacement]
    new = row.replacement
    cons = _cpp_construction(text, mask, start, end)
    if cons is None:
        if spec.kinds is not None and 0 not in spec.arities:
            return (f"{row.code}: the arguments that construct this {row.legacy} are not "
                    f"visible here, so the fixer cannot tell whether {new} can take them "
                    "(Device or index?); rewrite by hand"), []
        return None, [_Edit(start, end, new)]
    name, open_idx, close = cons
    if not name:
        # a temporary takes the type the code around it says: `return CUDAGuard(i);`
        # in a function declared to return CUDAGuard, an argument of a CUDAGuard&
        # parameter; only a variable declared with the class is rewritten whole
        # (flash-attention's hopper/flash_api.cpp no longer compiled)
        before = mask[max(0, start - 200):start].rstrip()
        if not re.search(r"\bauto\s*&{0,2}\s*\w+\s*=\s*$", before) and re.search(r"(?:\breturn|[(,=]|\{)\s*(?:::\s*)?(?:[A-Za-z_]\w*\s*::\s*)*$", before) \
                or "make_unique" in before[-40:] or "make_shared" in before[-40:]:
            if not re.search(r"std\s*::\s*make_(?:unique|shared)\s*<\s*(?:::\s*)?"
                             r"(?:[A-Za-z_]\w*\s*::\s*)*$", before):
                return (f"{row.code}: a temporary {row.legacy} whose type the code around it "
                        "fixes (a return type, a parameter or a variable declared with the "
                        f"legacy class): {new} would not convert; rewrite by hand"), []
    out = [_Edit(start, end, new)]
    items = _cpp_items(text, open_idx, close)[0] if open_idx >= 0 else []
    if open_idx == -2:
        if spec.kinds is not None and 0 not in spec.arities:
            return (f"{row.code}: the arguments that construct `{name}` are not visible here, "
                    f"so the fixer cannot tell whether {new} can take them (Device or "
                    "index?); rewrite by hand"), []
    elif len(items) not in spec.arities:
        return (f"{row.code}: {new} has no constructor of {len(items)} argument(s); "
                "rewrite by hand"), []
    if spec.kinds is not None and items:
        s, e = items[0]
        kind = _cpp_arg_kind(text[s:e], mask, start)
        arg = text[s:e].strip()
        if kind is None:
            return (f"{row.code}: cannot tell the type of `{arg}` (a c10::Device or a device "
                    f"index?), and {new} takes only a c10::Device; rewrite by hand"), []
        if kind == "index" and "device" in spec.kinds:
            out.append(_Edit(s, e, _CPP_ACCELERATOR_DEVICE.format(edits.render(s, e))))
        elif kind not in spec.kinds:
            return (f"{row.code}: {new} takes no {kind.replace('_', ' ')} argument "
                    f"(`{arg}`); rewrite by hand"), []
    if name:
        scope = mask[end:_cpp_block_end(mask, start)]
        lacking = sorted(set(_cpp_member_uses(scope, name)) - spec.members)
        if lacking:
            return (f"{row.code}: `{name}` is used with {', '.join(lacking)}, which {new} "
                    "does not have; rewrite by hand"), []
        if row.replacement == "at::accelerator::Graph":
            for m in re.finditer(rf"\b{re.escape(name)}\s*(?:\.|->)\s*capture_begin\s*\(", scope):
                c = _cpp_close(mask, end + m.end() - 1)
                if c < 0 or len(_cpp_items(text, end + m.end() - 1, c)[0]) > 1:
                    return (f"{row.code}: `{name}.capture_begin` is given a capture mode, and "
                            f"{new} takes an at::GraphCaptureMode, not a "
                            "cudaStreamCaptureMode; rewrite by hand"), []
    return None, out


def _cpp_member_uses(mask: str, name: str) -> list[str]:
    """The members called or read through a variable in the text."""
    return [m.group(1) for m in re.finditer(
        rf"(?<![\w.>:]){re.escape(name)}\s*(?:\.|->)\s*([A-Za-z_]\w*)", mask)]
