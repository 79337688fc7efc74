"""JSON from elsewhere, read in bounded time and memory: the nesting depth of a
text before the recursive parser sees it, and a parse that refuses what a
report or a baseline never holds (a 100,000-deep array, a 5,000-digit
integer, ``Infinity``). Used by the runtime report (``anydev report``) and the
scan baseline (``anydev scan --baseline``). Standard library only.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

# Note [Linear depth check]
# The depth check once was one regular expression over the text,
# '"(?:[^"\\]|\\.)*"?|[\[\]{}]': Python's engine keeps a backtracking entry for
# each repetition of the group, so a 25 MB string field took 3.2 GB (about 125
# bytes per byte) and a 1 GB report was killed for memory. Now a regular
# expression only finds the next quote or bracket (no repetition, no state),
# and a string's end is found with str.find: the closing quote is the first
# one after an even run of backslashes. Each run of backslashes is looked at
# by the one quote that ends it, so the whole pass is linear in the text, and
# it holds nothing but two counters.
_NEXT = re.compile(r'["\[\]{}]')


def max_depth(text: str) -> int:
    """The deepest nesting of [ and { in JSON text, strings skipped (an
    unclosed one runs to the end: the parser cannot get past it); linear time,
    constant memory (Note [Linear depth check])."""
    depth = best = 0
    pos = 0
    search = _NEXT.search
    find = text.find
    while True:
        m = search(text, pos)
        if m is None:
            return best
        c = m.group()
        i = m.start()
        if c == '"':
            j = i + 1
            while True:
                j = find('"', j)
                if j < 0:
                    return best
                k = j - 1
                while text[k] == "\\":
                    k -= 1
                if (j - 1 - k) % 2 == 0:  # an even run of backslashes: not escaped
                    break
                j += 1
            pos = j + 1
        else:
            if c == "[" or c == "{":
                depth += 1
                if depth > best:
                    best = depth
            else:
                depth -= 1
            pos = i + 1


class JSONLimitError(ValueError):
    """The text is JSON, but holds what the reader bounds (see :func:`loads`)."""


def loads(text: str, *, max_nesting: int = 64, max_digits: int = 40) -> Any:
    """``json.loads`` for data from elsewhere: JSONLimitError for nesting
    deeper than ``max_nesting``, an integer of more than ``max_digits``
    digits, a number that is not finite (``1e400``) or ``NaN``/``Infinity``;
    json.JSONDecodeError for text that is not JSON. Never RecursionError,
    OverflowError or a parse that grows with the text's nesting."""
    import json

    depth = max_depth(text)
    if depth > max_nesting:
        raise JSONLimitError(f"nested {depth} levels deep (at most {max_nesting} are read)")

    def parse_int(s: str) -> int:
        digits = len(s) - (s[0] == "-")
        if digits > max_digits:
            raise JSONLimitError(f"an integer of {digits} digits (at most {max_digits} are "
                                 f"read)")
        return int(s)

    def parse_float(s: str) -> float:
        value = float(s)
        if value in (float("inf"), float("-inf")):
            raise JSONLimitError(f"the number {s[:40]} is too large")
        return value

    def parse_constant(name: str) -> Any:
        raise JSONLimitError(f"{name} is not JSON (no report or baseline holds such a number)")

    return json.loads(text, parse_int=parse_int, parse_float=parse_float,
                      parse_constant=parse_constant)
