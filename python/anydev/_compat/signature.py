"""The legacy Python signature of a compat_map row (``"(device=None)"``), read
the same way by compat_map/generate.py (validation, stubs), the shims (binding
positional arguments), ``anydev fix`` (binding a call's arguments) and
``anydev.torch`` (forwarders).

Standard library only: the generator loads this file by its path, before
anydev is built.
"""

from __future__ import annotations

import ast
import functools
from typing import NamedTuple, Optional


def parse(signature: str, name: str = "f") -> ast.FunctionDef:
    """A new ``def <name><signature>: pass`` node, which the caller may change.
    ValueError naming the signature if it is not a Python parameter list."""
    try:
        fn = ast.parse(f"def {name}{signature}: pass").body[0]
    except SyntaxError as e:
        raise ValueError(f"signature {signature!r} is not a Python parameter list ({e.msg})") \
            from None
    if not isinstance(fn, ast.FunctionDef):  # pragma: no cover - "def" always makes one
        raise ValueError(f"signature {signature!r} is not a Python parameter list")
    return fn


class Params(NamedTuple):
    """The parameter names of a signature, by kind."""

    positional: tuple[str, ...]  # positional-only, then positional-or-keyword
    keyword_only: tuple[str, ...]
    vararg: Optional[str]  # the name of *args
    kwarg: Optional[str]  # the name of **kwargs

    @property
    def names(self) -> list[str]:
        """Every name, in the order of the signature's kinds."""
        rest = [n for n in (self.vararg, self.kwarg) if n is not None]
        return [*self.positional, *self.keyword_only, *rest]


@functools.lru_cache(maxsize=None)
def params(signature: str) -> Params:
    """The parameter names of ``signature``; ValueError as :func:`parse`."""
    a = parse(signature).args
    return Params(tuple(x.arg for x in a.posonlyargs + a.args),
                  tuple(x.arg for x in a.kwonlyargs),
                  a.vararg.arg if a.vararg else None,
                  a.kwarg.arg if a.kwarg else None)
