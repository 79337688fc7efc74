"""C++ includes and using-declarations: the headers the inserted
replacements need, included once after the file's last ``#include``; a
``using`` declaration removed from a source file once every use after it was
rewritten (kept in a header)."""

from __future__ import annotations

import re

from anydev import scan as _scan
from .cpp_lex import _cpp_code_mask
from .edits import _Edit, _Edits
from .text import _Text


_HEADERS = (".h", ".hpp", ".hh", ".cuh")


def _fix_cpp_usings(text: _Text, edits: _Edits, usings: list[_scan.Finding],
                    applied: list[_scan.Finding], skipped: list[tuple[_scan.Finding, str]],
                    path: str) -> None:
    mask = _cpp_code_mask(text.text)
    applied_at = [(text.index_of_byte(f.start), f.text.strip()) for f in applied if f.kind != "import"]
    for f in usings:
        start, end = text.index_of_byte(f.start), text.index_of_byte(f.end)
        line_start = text.line_starts()[text.line_of(start)]
        m1 = re.search(r"\busing\s+(?:::\s*)?$", text.text[line_start:start])
        m2 = re.match(r"\s*;", text.text[end:])
        if not m1 or not m2:
            skipped.append((f, "could not locate the using-declaration"))
            continue
        if path.lower().endswith(_HEADERS):
            skipped.append((f, "kept: a using-declaration in a header may serve the files that "
                               "include it; remove it by hand once they are migrated"))
            continue
        s, e = line_start + m1.start(), end + m2.end()
        name = re.split(r"\s*::\s*", f.text.strip())[-1]
        uses = 0
        for m in re.compile(rf"\b{re.escape(name)}\b").finditer(mask, e):
            if mask[max(e, m.start() - 64):m.start()].rstrip().endswith(("::", ".", "->")):
                continue  # a member, or qualified: not the using-declaration's name
            uses += 1
        fixed = sum(1 for at, t in applied_at if at >= e and t == name)
        if fixed < uses:
            skipped.append((f, f"kept: {uses - fixed} use(s) of `{name}` after it were not rewritten"))
            continue
        if edits.conflicts([_Edit(s, e, "")]):
            skipped.append((f, "overlaps another rewrite; run the fixer again"))
            continue
        _remove_cpp_statement(text, edits, s, e)
        applied.append(f)


def _remove_cpp_statement(text: _Text, edits: _Edits, s: int, e: int) -> None:
    first, last = text.line_of(s), text.line_of(max(s, e - 1))
    line_start = text.line_starts()[first]
    after = text.text[e:text.line_end(last, with_break=False)]
    # a line comment that ends in a backslash goes on over the next line (a line
    # splice): removing its line would make that next line code, so only the
    # statement goes (found by fuzz/fix_fuzz.py)
    spliced = after.rstrip(" \t").endswith("\\") and "//" in after
    if text.text[line_start:s].strip() == "" and not spliced and \
            (after.strip() == "" or after.strip().startswith("//")):
        edits.add([_Edit(line_start, text.line_end(last, with_break=True), "")])
    else:
        m = re.match(r"[ \t]*", after)
        edits.add([_Edit(s, e + (m.end() if m else 0), "")])

# Headers that declare what a rewrite may insert, by the name's prefix
# (the longest that matches wins).
_CPP_HEADERS = (
    ("at::accelerator::Graph", "ATen/accelerator/Graph.h"),
    ("at::accelerator::", "ATen/DeviceAccelerator.h"),
    ("c10::OptionalDeviceGuard", "c10/core/DeviceGuard.h"),
    ("c10::DeviceGuard", "c10/core/DeviceGuard.h"),
    ("c10::OptionalStreamGuard", "c10/core/StreamGuard.h"),
    ("c10::MultiStreamGuard", "c10/core/StreamGuard.h"),
    ("c10::StreamGuard", "c10/core/StreamGuard.h"),
    ("c10::Stream", "c10/core/Stream.h"),
    ("c10::Event", "c10/core/Event.h"),
    ("c10::getDeviceAllocator", "c10/core/CachingDeviceAllocator.h"),
)
_CPP_HEADER_NAMES = re.compile("|".join(re.escape(p) + (r"\b" if not p.endswith("::") else "")
                                        for p, _ in _CPP_HEADERS))


def _cpp_include_edits(text: _Text, edits: _Edits, mask: str) -> list[_Edit]:
    """#include lines for the headers that the inserted replacements need and
    the file does not include yet, after its last #include at file scope (the
    last one outside a conditional block other than a header guard, and never
    one inside a `namespace { ... }` or other braces), once each, in name
    order. A file without any #include at file scope gets none: it relies on
    the files included before it."""
    need: list[str] = []
    for e in edits.items:
        for m in _CPP_HEADER_NAMES.finditer(e.text):
            header = next(h for p, h in _CPP_HEADERS if m.group(0) == p)
            if header not in need:
                need.append(header)
    if not need:
        return []
    have = set(re.findall(r"(?m)^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]", mask))
    need = sorted(h for h in need if h not in have)
    if not need:
        return []
    depth, best = 0, None   # (depth, index after the line)
    braces, at = 0, 0       # the brace depth at each directive: file scope is 0
    for m in re.finditer(r"(?m)^[ \t]*#[ \t]*(if|ifdef|ifndef|endif|include)\b.*$", mask):
        chunk = mask[at:m.start()]
        braces += chunk.count("{") - chunk.count("}")
        at = m.start()
        d = m.group(1)
        if d.startswith("if"):
            depth += 1
        elif d == "endif":
            depth -= 1
        elif braces != 0:
            continue  # inside `namespace { ... }` (an X-macro .inc file): never there
        elif best is None or depth <= best[0]:
            best = (depth, text.line_end(text.line_of(m.start()), with_break=True))
    lines = "".join(f"#include <{h}>{text.newline}" for h in need)
    if best is None:
        return []  # it includes nothing: it relies on what is included before it
    at = best[1]
    if at == len(text.text) and not text.text.endswith(("\n", "\r")):
        lines = text.newline + lines.rstrip("\r\n")
    return [_Edit(at, at, lines)]
