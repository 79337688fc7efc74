"""Policy, warning classes and helpers for anydev's legacy shims.

Every legacy entry point of ``anydev.cuda``, ``anydev.xpu`` and
``anydev.cuda.amp`` is a forwarder generated from the compat table
(``compat_map/``). A call is always counted (see :mod:`anydev.report`); on the
first call from a call site (file and line) it is then, by policy:

``warn`` (default)
    warned about once, with :class:`LegacyAPIWarning`, through
    ``warnings.warn_explicit`` so that ``-W``, ``warnings.filterwarnings`` and
    pytest's ``filterwarnings`` control it; then forwarded.
``ignore``
    forwarded silently.
``error``
    refused: every call raises :class:`LegacyAPIError`.

The policy comes from, highest first:

1. code: :func:`set_policy` (``set_policy("error", module="myproj.*")``);
2. the environment: ``ANYDEV_LEGACY=error`` or a comma-separated list of
   ``ACTION`` and ``ACTION:PATTERN`` items
   (``ANYDEV_LEGACY="warn,error:myproj.*,ignore:*/vendor/*"``);
3. ``[tool.anydev]`` in the ``pyproject.toml`` nearest to the calling file::

       [tool.anydev]
       legacy = "warn"
       [[tool.anydev.legacy-override]]
       module = "myproj.*"            # a module-name glob ...
       policy = "error"
       [[tool.anydev.legacy-override]]
       path = "tests/*"               # ... or a path glob, relative to the pyproject's folder
       policy = "ignore"

4. the default, ``warn``.

Within one source the last matching rule wins; a pattern containing ``/`` or
ending in ``.py`` is a path glob, any other a module-name glob.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Iterator, Optional

from . import _C
from ._common import config as _config

__all__ = [
    "LegacyAPIError",
    "LegacyAPIWarning",
    "NoEquivalentError",
    "PolicyError",
    "get_policy",
    "policy",
    "reset_policy",
    "set_policy",
    "stream_context",
]

POLICIES = _config.POLICIES


class LegacyAPIWarning(FutureWarning):
    """A legacy device-specific entry point was called; the message names the
    replacement and the rule code.

    A FutureWarning (shown by Python's default filters, as PyTorch's own
    deprecations are), not a DeprecationWarning, which the default filters
    hide outside ``__main__``."""


class LegacyAPIError(RuntimeError):
    """A legacy entry point was called where the policy is ``error``."""


class NoEquivalentError(NotImplementedError):
    """A legacy entry point that anydev has no equivalent for was called; the
    message names PyTorch's replacement."""


class PolicyError(ValueError):
    """A policy setting (code, ``ANYDEV_LEGACY`` or ``pyproject.toml``) is invalid."""


@dataclass(frozen=True)
class _Rule:
    action: str
    module: Optional[str] = None   # module-name glob
    path: Optional[str] = None     # path glob (absolute, or relative to `base`)
    base: Optional[str] = None     # folder a relative path glob is relative to

    def matches(self, module: str, file: str) -> bool:
        g = self._glob()
        if g is None:
            return True
        if self.module is not None:
            return _config.match_module(g, module)
        return g.match(file)

    def _glob(self) -> Optional[_config.Glob]:
        # gitignore-style (anydev._common.config), compiled on first use
        g = self.__dict__.get("_compiled", _UNSET)
        if g is _UNSET:
            if self.module is not None:
                g = _config.module_glob(self.module)
            elif self.path is not None:
                g = _config.runtime_path_glob(self.path, self.base)
            else:
                g = None
            object.__setattr__(self, "_compiled", g)
        return g


_UNSET = object()


def _check_action(action: object, where: str) -> str:
    try:
        return _config.check_policy(action, where)
    except _config.ConfigError as e:
        raise PolicyError(str(e)) from None


def _rule_for(action: str, pattern: Optional[str], where: str, base: Optional[str] = None) -> _Rule:
    action = _check_action(action, where)
    if pattern is None or pattern == "":
        return _Rule(action)
    if "/" in pattern or pattern.endswith(".py"):
        return _Rule(action, path=pattern, base=base)
    return _Rule(action, module=pattern)


_lock = threading.Lock()
_code_rules: list[_Rule] = []
_cache: dict[tuple[str, str], int] = {}
_pyproject_cache: dict[str, Optional[list[_Rule]]] = {}


def _parse_env(value: str) -> list[_Rule]:
    rules = []
    for item in (p.strip() for p in value.split(",")):
        if not item:
            continue
        action, _, pattern = item.partition(":")
        rules.append(_rule_for(action.strip(), pattern.strip() or None,
                               f"ANYDEV_LEGACY={value!r}, item {item!r}"))
    return rules


def _find_pyproject(start: str) -> Optional[str]:
    """The configuration file that applies at ``start`` (see anydev._common.config)."""
    try:
        return _config.find(start)
    except _config.ConfigError as e:
        raise PolicyError(str(e)) from None


def _pyproject_rules(file: str) -> list[_Rule]:
    start = os.path.dirname(file) if os.path.isabs(file) and os.path.exists(file) else os.getcwd()
    if start in _pyproject_cache:
        return _pyproject_cache[start] or []
    path = _find_pyproject(start)
    rules: list[_Rule] = []
    if path is not None:
        rules = _load_pyproject(path)
    _pyproject_cache[start] = rules
    return rules


def _load_pyproject(path: str) -> list[_Rule]:
    """The rules of ``legacy`` and ``legacy-override`` in one configuration
    file, read by the one reader (anydev._common.config); unknown keys warn once."""
    try:
        cfg = _config.load_file(path).check(("legacy", "legacy-override"))
    except _config.ConfigError as e:
        raise PolicyError(str(e)) from None
    for w in cfg.warnings:
        if w not in _warned:
            _warned.add(w)
            warnings.warn(w, _config.ConfigWarning, stacklevel=2)
    rules = []
    if cfg.legacy is not None:
        rules.append(_Rule(cfg.legacy))
    for o in cfg.legacy_override:
        if "module" in o:
            rules.append(_Rule(o["policy"], module=o["module"]))
        else:
            rules.append(_Rule(o["policy"], path=o["path"], base=cfg.root))
    return rules


_warned: set[str] = set()


def _decide(module: str, file: str) -> str:
    # Sources in precedence order, each read only when the ones before it have
    # no matching rule (a bad ANYDEV_LEGACY does not matter where code decides).
    sources = (lambda: _code_rules,
               lambda: _parse_env(os.environ.get("ANYDEV_LEGACY", "")),
               lambda: _pyproject_rules(file))
    for rules in sources:
        chosen = None
        for r in rules():
            if r.matches(module, file):
                chosen = r.action
        if chosen is not None:
            return chosen
    return "warn"


def _resolve(module: str, file: str) -> int:
    """Called by the engine on a call site's first call: 0 ignore, 1 warn, 2 error."""
    key = (module, file)
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            return hit
    value = POLICIES.index(_decide(module, file))
    with _lock:
        _cache[key] = value
    return value


def _changed() -> None:
    with _lock:
        _cache.clear()
        _pyproject_cache.clear()
    _C._compat.policy_changed()


def set_policy(action: str, *, module: Optional[str] = None, path: Optional[str] = None) -> None:
    """Sets the policy for legacy calls from code: globally, or for callers
    whose module name matches the glob ``module`` or whose file matches the
    glob ``path``. Rules set here win over the environment and pyproject.toml;
    among them the last matching one wins."""
    _check_action(action, "set_policy()")
    if module is not None and path is not None:
        raise PolicyError("set_policy(): give `module` or `path`, not both")
    # A relative path glob is relative to the current directory; one that
    # starts with a wildcard ("*/vendor/*") matches anywhere, as in ANYDEV_LEGACY.
    if path and not (os.path.isabs(path) or path.startswith(("*", "?", "["))):
        path = os.path.abspath(path)
    rule = _Rule(action, module=module, path=path or None)
    with _lock:
        _code_rules.append(rule)
    _changed()


def reset_policy() -> None:
    """Drops every rule set with :func:`set_policy`."""
    with _lock:
        _code_rules.clear()
    _changed()


def get_policy(module: str = "__main__", file: str = "") -> str:
    """Returns the policy that applies to a caller in ``module`` at ``file``."""
    return _decide(module, file or os.path.join(os.getcwd(), "<unknown>"))


@contextlib.contextmanager
def policy(action: str, *, module: Optional[str] = None, path: Optional[str] = None) -> Iterator[None]:
    """Applies :func:`set_policy` for the duration of a ``with`` block."""
    set_policy(action, module=module, path=path)
    with _lock:
        rule = _code_rules[-1]
    try:
        yield
    finally:
        with _lock:
            # The rule this block added: the last one that is this object.
            for i in range(len(_code_rules) - 1, -1, -1):
                if _code_rules[i] is rule:
                    del _code_rules[i]
                    break
        _changed()


class stream_context:  # noqa: N801 - PyTorch's torch.cuda.stream / StreamContext
    """Context manager that makes ``stream`` current for the block (``None``
    does nothing), as ``torch.cuda.stream(s)``; ``with s:`` is the generic form."""

    def __init__(self, stream: "_C.Stream | None"):
        if stream is not None and not isinstance(stream, _C.Stream):
            raise TypeError(f"expected an anydev.Stream or None, got {stream!r}")
        self.stream = stream

    def __enter__(self) -> "_C.Stream | None":
        if self.stream is not None:
            self.stream.__enter__()
        return self.stream

    def __exit__(self, *exc: object) -> bool:
        if self.stream is not None:
            self.stream.__exit__(*exc)
        return False


def _apply_warning_options() -> None:
    """Applies the ``-W`` / ``PYTHONWARNINGS`` options that name
    ``anydev.compat.LegacyAPIWarning``.

    Python reads those options at start-up, before site-packages is on
    ``sys.path``, so it cannot import a third-party category: it prints
    "Invalid -W option ignored" and drops the option. They are applied here
    instead, as Python would have (a later option wins over an earlier one),
    so that ``-W error::anydev.compat.LegacyAPIWarning`` works."""
    actions = ("default", "always", "ignore", "module", "once", "error")
    for option in sys.warnoptions:
        parts = [p.strip() for p in option.split(":")]
        if len(parts) > 5 or len(parts) < 3:
            continue
        parts += [""] * (5 - len(parts))
        action, message, category, module, lineno = parts
        if category != f"{__name__}.LegacyAPIWarning":
            continue
        action = next((a for a in actions if a.startswith(action)), None) if action else "default"
        if action is None or not (lineno == "" or (lineno.isdigit())):
            continue
        warnings.filterwarnings(action, re.escape(message), LegacyAPIWarning,
                                re.escape(module) + r"\Z" if module else "",
                                int(lineno or 0))


_apply_warning_options()
_C._compat.set_categories(LegacyAPIWarning, LegacyAPIError, NoEquivalentError)
_C._compat.set_policy_resolver(_resolve)
