"""The C++ text the fixer reads without a compiler: code with comments
and literals blanked (so a search finds code only), a call's argument items,
matching brackets, a signature's parameter names."""

from __future__ import annotations

import re
from typing import Optional



def _cpp_items(text: str, open_idx: int, close_idx: int) -> tuple[list[tuple[int, int]], bool]:
    """Spans of the top-level comma-separated items between the parentheses
    (without the comments around them), and whether there is a comment
    among them."""
    items: list[tuple[int, int]] = []
    comments: list[tuple[int, int]] = []
    depth, i, item_start = 0, open_idx + 1, open_idx + 1

    def push(s: int, e: int) -> None:
        seg = list(text[s:e])
        for cs, ce in comments:
            for k in range(max(cs, s), min(ce, e)):
                seg[k - s] = " "
        code = "".join(seg)
        ls = len(code) - len(code.lstrip())
        rs = len(code.rstrip())
        if rs > ls:
            items.append((s + ls, s + rs))

    while i < close_idx:
        ch = text[i]
        if ch in "\"'":
            m = re.match(r'R"([^()\\ ]{0,16})\(', text[i - 1:i + 20]) if ch == '"' and i > 0 and \
                text[i - 1] == "R" else None
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                i = close_idx if end < 0 else end + len(m.group(1)) + 2
                continue
            j = i + 1
            while j < close_idx and text[j] != ch:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if text.startswith("//", i):
            j = i
            while j < close_idx and text[j] not in "\r\n":
                j += 1
            comments.append((i, j))
            i = j
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            j = close_idx if end < 0 else end + 2
            comments.append((i, j))
            i = j
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            push(item_start, i)
            item_start = i + 1
        i += 1
    push(item_start, close_idx)
    return items, bool(comments)


def _cpp_param_names(signature: Optional[str]) -> Optional[list[str]]:
    """Parameter names of a C++ signature; None when it lists overloads."""
    if not signature:
        return []
    sig = signature.strip()
    if re.search(r"\)\s*/\s*\(", sig):
        return None
    inner = sig[1:-1] if sig.startswith("(") and sig.endswith(")") else sig
    names = []
    for s, e in _cpp_items("(" + inner + ")", 0, len(inner) + 1)[0]:
        p = ("(" + inner + ")")[s:e].split("=")[0].strip()
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", p)
        if m:
            names.append(m.group(1))
    return names


_MASK_START = re.compile(r"[/\"']")  # where a comment or a literal can start
_NOT_BREAK = re.compile(r"[^\r\n]")


def _cpp_code_mask(text: str) -> str:
    """The text with comments and string and character literals blanked
    (line breaks kept), so that a search finds code only. Plain code is
    passed over to the next ``/``, ``"`` or ``'`` (a regular expression's
    search, not a step per character: that loop was most of a safe fix of a
    tree of C++), and each blanked span is replaced at once."""
    pieces: list[str] = []
    last = 0  # text[last:] is not in pieces yet
    i, n = 0, len(text)
    search = _MASK_START.search

    def blank(s: int, e: int) -> None:
        nonlocal last
        e = min(e, n)
        pieces.append(text[last:s])
        pieces.append(_NOT_BREAK.sub(" ", text[s:e]))
        last = e

    while i < n:
        m = search(text, i)
        if m is None:
            break
        i = m.start()
        ch = text[i]
        if text.startswith("//", i):
            j = i
            while j < n and text[j] not in "\r\n":
                j += 2 if text[j] == "\\" and j + 1 < n else 1
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif ch == '"' and i > 0 and text[i - 1] == "R" and re.match(r'"[^()\\ ]{0,16}\(', text[i:i + 20]):
            delim = re.match(r'"([^()\\ ]{0,16})\(', text[i:]).group(1)  # type: ignore[union-attr]
            j = text.find(")" + delim + '"', i)
            j = n if j < 0 else j + len(delim) + 2
            blank(i, j)
            i = j
        elif ch in "\"'" and not (ch == "'" and i > 0 and text[i - 1].isalnum()):
            j = i + 1
            while j < n and text[j] != ch and text[j] not in "\r\n":
                j += 2 if text[j] == "\\" else 1
            blank(i, j + 1)
            i = j + 1
        else:
            i += 1
    pieces.append(text[last:])
    return "".join(pieces)


def _cpp_strip_parens(expr: str) -> str:
    expr = expr.strip()
    while expr.startswith("(") and expr.endswith(")"):
        depth = 0
        for k, ch in enumerate(expr):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and k < len(expr) - 1:
                return expr
        expr = expr[1:-1].strip()
    return expr


def _cpp_top_level_operator(expr: str) -> bool:
    """Whether the expression has an operator outside brackets (other than
    scope, member access and a template's angle brackets)."""
    depth = 0
    s = re.sub(r"::|->|\.|<[\w:\s,*&]*>", " ", expr)
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and ch in "+-*/%?:<>=&|^!~,":
            return True
    return False


def _cpp_close(mask: str, open_idx: int) -> int:
    """The index of the bracket that closes mask[open_idx], or -1."""
    depth = 0
    for k in range(open_idx, len(mask)):
        ch = mask[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return k
        elif ch == ";" and depth <= 1 and mask[open_idx] == "(":
            return -1
    return -1


def _cpp_block_end(mask: str, at: int) -> int:
    """The end of the innermost brace block around mask[at] (the class body
    for a member), or of the file."""
    depth = 0
    for k in range(at - 1, -1, -1):
        ch = mask[k]
        if ch == "}":
            depth += 1
        elif ch == "{":
            if depth == 0:
                close = _cpp_close(mask, k)
                return len(mask) if close < 0 else close
            depth -= 1
    return len(mask)
