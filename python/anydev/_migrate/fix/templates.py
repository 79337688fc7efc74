"""The compat table's templates (compat_map/SCHEMA.md): ``{name}``
placeholders bound to a call's arguments, call-form templates taken apart into
callee and items, and the torch package spelled as the file spells it."""

from __future__ import annotations

import functools
import re
from typing import Iterator, Optional, Sequence

from anydev._compat.table import Row


PLACEHOLDER = re.compile(r"\{([^{}]*)\}")




def _nesting(text: str) -> Iterator[tuple[int, str, int]]:
    """(index, character, bracket depth after it) of each character of ``text``
    that is not inside a quoted string."""
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        yield i, ch, depth


def _split_template_args(inner: str) -> list[str]:
    items, start = [], 0
    for i, ch, depth in _nesting(inner):
        if ch == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    if inner[start:].strip():
        items.append(inner[start:])
    return [i.strip() for i in items]


@functools.lru_cache(maxsize=1024)
def _call_form(template: str) -> Optional[tuple[str, tuple[str, ...]]]:
    """(callee, argument items) of a template of the form ``name(items)``
    whose last parenthesis closes the first; None for any other template
    (once per template: the table has a few hundred)."""
    m = re.match(r"\s*([A-Za-z_][\w.]*(?:\s*::\s*[A-Za-z_]\w*)*|::[A-Za-z_][\w:]*)\s*\(", template)
    if not m or not template.rstrip().endswith(")"):
        return None
    body = template.rstrip()
    open_paren = m.end() - 1
    depth = 0
    for i, ch, depth in _nesting(body[open_paren:]):
        if ch in ")]}" and depth == 0 and open_paren + i != len(body) - 1:
            return None
    if depth != 0:
        return None
    return m.group(1).replace(" ", ""), tuple(_split_template_args(body[open_paren + 1:-1]))


def _render_items(items: Sequence[str], bound: dict[str, str], all_items: list[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item == "{*}":
            out.extend(all_items)
            continue
        names = PLACEHOLDER.findall(item)
        if any(n != "*" and n not in bound for n in names):
            continue
        if "*" in names and not all_items:
            continue
        out.append(PLACEHOLDER.sub(lambda m: ", ".join(all_items) if m.group(1) == "*"
                                   else bound[m.group(1)], item))
    return out


def unplaced_arguments(template: str, bound) -> Optional[str]:
    """Why the call cannot be rewritten when ``template`` has no place for
    some argument in ``bound`` (names of the call's arguments), else None. A
    ``{*}`` placeholder takes every argument."""
    used = set(PLACEHOLDER.findall(template))
    if "*" in used:
        return None
    lost = [n for n in bound if n not in used]
    if lost:
        return f"the template has no place for argument(s) {', '.join(lost)}; rewrite by hand"
    return None


def render_template(template: str, bound: dict[str, str], all_args: str) -> str:
    """Renders a row's template (compat_map/SCHEMA.md): ``{name}`` is the text
    of the argument bound to ``name``, ``{*}`` all the arguments; an argument
    item whose placeholders are unbound is dropped with its comma."""
    form = _call_form(template)
    if form is None:
        return PLACEHOLDER.sub(lambda m: all_args if m.group(1) == "*" else bound.get(m.group(1), ""),
                               template)
    head, items = form
    all_items = [all_args.strip()] if all_args.strip() else []
    return f"{head}({', '.join(_render_items(items, bound, all_items))})"


def _bare_call(row: Row) -> Optional[str]:
    """The row's template called without arguments, or None without a call-form template."""
    if row.template is None:
        return None
    form = _call_form(row.template)
    if form is None:
        return None
    head, items = form
    return f"{head}({', '.join(_render_items(items, {}, []))})"


def _spell_template(template: str, root: Optional[str]) -> Optional[str]:
    """The template with the torch package spelled ``root`` (None when it
    needs torch and there is no name for it)."""
    pattern = re.compile(r"(?<![\w.])torch(?=\s*\.)")
    if not pattern.search(template) or root == "torch":
        return template
    return None if root is None else pattern.sub(root, template)


def _with_quote(template: str, quote: str) -> str:
    return template.replace('"', "'") if quote == "'" else template
