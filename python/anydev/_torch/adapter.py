"""anydev on a real PyTorch: legacy forwarders on ``torch.cuda``,
``torch.cuda.amp`` and ``torch.xpu``, scoped to the user's own code.

:func:`install` replaces each legacy entry point of the real modules that the
compat table maps (a deprecated row with a PyTorch replacement, present in this
PyTorch) by a native forwarder of anydev's legacy-call engine
(``python/src/bind_compat.cc``). A call through it:

* from outside the scope (another library, PyTorch itself): reaches the
  original object unchanged and is counted in the runtime report, never
  warned about, never forwarded;
* from inside the scope (the ``__main__`` script, and the packages and path
  globs the user names): is counted, warned about once per call site with
  :class:`anydev.compat.LegacyAPIWarning` (by the policy of
  :mod:`anydev.compat`), then calls the original (mode ``observe``) or the
  table's replacement in ``torch.accelerator``/``torch.amp``/``torch.Stream``/
  ``torch.Event`` (mode ``forward``), or the original where this PyTorch lacks
  the replacement.

The scope and policy of a call site are resolved once, natively cached; then
a call costs one comparison, an increment and a direct call over the
original. Classes (``torch.cuda.Stream``, ``torch.cuda.amp.autocast``, ...)
are replaced by a class whose metaclass ``__call__`` is the forwarder, that
``isinstance``/``issubclass`` treat as the original, whose attributes are the
original's, and whose subclasses are made subclasses of the original.

:func:`uninstall` puts every original object back (identity); a forwarder
that code still holds then passes calls through without counting. See
``docs/torch.md``.
"""

from __future__ import annotations

import abc
import ast
import inspect
import os
import re
import sys
import threading
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence

from anydev import _C, compat
from anydev._common import config as _config
from anydev._compat import signature as _signature
from . import backport
from anydev._compat.table import ROWS, Row

__all__ = ["MODES", "ScopeError", "install", "installed", "status", "uninstall"]

MODES = ("observe", "forward")
LEGACY_MODULES = ("torch.cuda", "torch.cuda.amp", "torch.xpu")
_LEGACY_TYPE = {"torch.cuda": "cuda", "torch.cuda.amp": "cuda", "torch.xpu": "xpu"}

# Legacy entry points PyTorch itself warns about (a FutureWarning whose text
# names the entry point: "`torch.cuda.amp.autocast(args...)` is deprecated...",
# "torch.cuda.memory_cached has been renamed..."; @deprecated ones are also
# recognised by their __deprecated__): while an in-scope call of one of these
# runs the original, anydev's warnings filter hides PyTorch's warning, so the
# user sees one message per site, anydev's.
_TORCH_OWN_WARNINGS = frozenset({
    "torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler", "torch.cuda.amp.custom_fwd",
    "torch.cuda.amp.custom_bwd", "torch.cuda.memory_cached", "torch.cuda.max_memory_cached",
    "torch.cuda.reset_max_memory_allocated", "torch.cuda.reset_max_memory_cached",
})


class ScopeError(ValueError):
    """The scope given to install() or in ``[tool.anydev]`` is invalid."""


# --- the scope -----------------------------------------------------------------------


@dataclass(frozen=True)
class Scope:
    """Who gets warnings and forwarding: the ``__main__`` script (``main``),
    modules named by ``packages`` (a name covers its submodules; globs
    allowed) and files matching ``paths`` (absolute path globs)."""

    packages: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    main: bool = True
    source: str = "default (the __main__ script only)"
    internal: tuple[str, ...] = field(default=(), compare=False)

    def decide(self, module: str, file: str) -> int:
        """0 outside the scope, 1 inside, 2 internal (PyTorch's and anydev's own code)."""
        path = file if file.startswith("<") else os.path.abspath(file)
        for d in self.internal:
            if path.startswith(d):
                return 2
        if self.main and module == "__main__":
            return 1
        packages, paths = self._globs()
        for g in packages:
            if _config.match_module(g, module):
                return 1
        if not path.startswith("<"):
            for g in paths:
                if g.match(path):
                    return 1
        return 0

    def _globs(self) -> tuple[list, list]:
        # gitignore-style globs (anydev._common.config): a package name covers its
        # submodules, a path glob the files below a folder it matches
        g = self.__dict__.get("_compiled")
        if g is None:
            g = ([_config.module_glob(p) for p in self.packages],
                 [_config.Glob(p, "/") for p in self.paths])
            object.__setattr__(self, "_compiled", g)
        return g


def _names(value: Any, what: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ScopeError(f"{where}: `{what}` must be a list of strings, not {value!r}")
    out = tuple(value)
    for v in out:
        if not isinstance(v, str) or not v:
            raise ScopeError(f"{where}: `{what}` must be a list of non-empty strings; "
                             f"got {v!r}")
    return out


def _abs_globs(globs: Sequence[str], base: str) -> tuple[str, ...]:
    return tuple(g if os.path.isabs(g) else os.path.join(base, g) for g in globs)


def _project_start() -> str:
    """Where to look for the project's pyproject.toml: the __main__ script's
    folder when it is the user's script, else the working directory. A
    __main__ that an installed tool runs (pytest's console script, `python -m
    pytest`: files of a Python environment) is no project's: `import
    anydev.torch` in a conftest.py found no [tool.anydev] from there and ran
    with the __main__-only scope, so no test's legacy call warned."""
    main = sys.modules.get("__main__")
    file = getattr(main, "__file__", None)
    if isinstance(file, str) and os.path.exists(file) and not _in_environment(file):
        return os.path.dirname(os.path.abspath(file))
    return os.getcwd()


def _in_environment(file: str) -> bool:
    """Whether ``file`` lies in a Python environment's folders (its prefix:
    scripts, libraries), as an installed tool's entry point does."""
    import sysconfig

    real = os.path.realpath(file)
    roots = {sys.prefix, sys.exec_prefix, sys.base_prefix}
    paths = sysconfig.get_paths()
    roots.update(paths.get(k, "") for k in ("scripts", "purelib", "platlib", "stdlib"))
    for r in roots:
        if r and real.startswith(os.path.realpath(r).rstrip(os.sep) + os.sep):
            return True
    return False


def _pyproject_scope(start: str) -> Optional[tuple[tuple[str, ...], tuple[str, ...], str]]:
    """``packages`` and ``paths`` of the configuration that applies at
    ``start``, read by the one reader (anydev._common.config)."""
    try:
        path = _config.find(start)
        if path is None:
            return None
        cfg = _config.load_file(path).check(("packages", "paths"))
    except _config.ConfigError as e:
        raise ScopeError(str(e)) from None
    if not ({"packages", "paths"} & cfg.set):
        return None
    return tuple(cfg.packages), tuple(cfg.paths), path


def _internal_dirs() -> tuple[str, ...]:
    import torch

    dirs = [os.path.dirname(os.path.abspath(torch.__file__)),
            os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]  # anydev/, not _torch/
    return tuple(d + os.sep for d in dirs)


def make_scope(packages: Optional[Iterable[str]] = None, paths: Optional[Iterable[str]] = None,
               main: bool = True, project: Optional[str] = None) -> Scope:
    """The scope install() uses: ``packages``/``paths`` when either is given
    (relative path globs against the working directory), else ``packages`` and
    ``paths`` of ``[tool.anydev]`` in the pyproject.toml nearest to
    ``project`` (a file or folder; default: the __main__ script, else the
    working directory), else the __main__ script only."""
    internal = _internal_dirs()
    if packages is not None or paths is not None:
        where = "anydev.torch.install()"
        return Scope(_names(packages, "packages", where),
                     _abs_globs(_names(paths, "paths", where), os.getcwd()), main,
                     "install() arguments", internal)
    start = project if project is not None else _project_start()
    if os.path.isfile(start):
        start = os.path.dirname(os.path.abspath(start))
    found = _pyproject_scope(start)
    if found is not None:
        return Scope(found[0], found[1], main, found[2], internal)
    if "_pytest" in sys.modules and project is None:
        # under pytest the __main__ script is pytest's: a scope of it alone
        # warns about no test and no module of the project
        warnings.warn(
            f"anydev.torch: no [tool.anydev] packages or paths found from {start}: only the "
            f"__main__ script (pytest's) is in the scope, so no legacy call of the project's "
            f"code or tests warns; set `packages`/`paths` in [tool.anydev], or run "
            f"`pytest -p anydev` (docs/torch.md)", UserWarning, stacklevel=3)
    return Scope(main=main, internal=internal) if main else Scope(
        main=False, source="empty (main=False and nothing named)", internal=internal)


# --- forward mode: the table's replacement, with the row's argument mapping --------

_MISSING = object()


def _lookup(dotted: str) -> Any:
    """``torch.accelerator.device_index`` -> the object, or None when this PyTorch lacks it."""
    import torch

    parts = dotted.split(".")
    if not parts or parts[0] != "torch":
        return None
    obj: Any = torch
    for p in parts[1:]:
        obj = getattr(obj, p, None)
        if obj is None:
            return None
    return obj


class _Devices:
    """Device arguments of the legacy type, re-typed to the current accelerator."""

    def __init__(self, legacy: str):
        import torch

        self.torch = torch
        self.legacy = legacy
        acc = None
        getter = getattr(getattr(torch, "accelerator", None), "current_accelerator", None)
        if getter is not None:
            try:
                acc = getter()
            except RuntimeError:  # PyTorch 2.6 raises when there is none
                acc = None
        # Without an accelerator the legacy type stays (the replacement then
        # answers as PyTorch does for it: disabled autocast, no device...).
        self.acc = acc.type if acc is not None else legacy

    def acc_type(self) -> str:
        return self.acc

    def retype(self, device: Any) -> Any:
        if self.acc == self.legacy:
            return device
        torch = self.torch
        if isinstance(device, str):
            try:
                d = torch.device(device)
            except (RuntimeError, ValueError):
                return device
            if d.type == self.legacy:
                return self.acc if d.index is None else f"{self.acc}:{d.index}"
            return device
        if isinstance(device, torch.device) and device.type == self.legacy:
            return torch.device(self.acc) if device.index is None else torch.device(
                self.acc, device.index)
        return device

    def index(self, device: Any) -> Any:
        """An index for torch.accelerator.device_index, which takes only an int or None."""
        torch = self.torch
        if device is None or isinstance(device, int):
            return device
        if isinstance(device, str):
            try:
                return torch.device(device).index
            except (RuntimeError, ValueError):
                return device
        if isinstance(device, torch.device):
            return device.index
        return getattr(device, "idx", device)  # a torch.cuda.device object


class _Template(ast.NodeTransformer):
    def __init__(self, legacy: str, conv: dict[str, str]):
        self.legacy = legacy
        self.conv = conv
        self.used: set[str] = set()

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id.startswith("__anydev_p_"):
            name = node.id[len("__anydev_p_"):]
            self.used.add(name)
            arg: ast.expr = ast.Name(id=name, ctx=ast.Load())
            if name in self.conv:
                arg = ast.Call(func=ast.Name(id=self.conv[name], ctx=ast.Load()), args=[arg],
                               keywords=[])
            return ast.copy_location(arg, node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if node.value == self.legacy:  # torch.amp.autocast("cuda", ...): the accelerator's type
            return ast.copy_location(
                ast.Call(func=ast.Name(id="__acc", ctx=ast.Load()), args=[], keywords=[]), node)
        return node


def _compile(row: Row, template: str, legacy: str, devices: _Devices) -> Optional[Callable]:
    """Compiles a row's template (compat_map/SCHEMA.md) into a function with
    the legacy signature that calls the replacement: ``{name}`` is the argument
    bound to parameter ``name`` (an item whose placeholders were not supplied
    is dropped), ``{*}`` all the call's arguments; the legacy device type
    becomes the current accelerator's, in literals and device arguments."""
    star = "{*}" in template
    src = re.sub(r"\{(\w+)\}", lambda m: f"__anydev_p_{m.group(1)}",
                 template.replace("{*}", "__anydev_star__"))
    try:
        call = ast.parse(src, mode="eval").body
        fdef = _signature.parse(row.signature or "()", "forward")
    except (SyntaxError, ValueError):
        return None
    if not isinstance(call, ast.Call):
        return None
    target_name = ast.unparse(call.func)
    target = _lookup(target_name)
    if target is None:
        return None
    a = fdef.args
    params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    if not star and not call.args and not call.keywords and not params and \
            a.vararg is None and a.kwarg is None:
        # Note [Forwarding without a frame]: `torch.cuda.device_count()` ->
        # `torch.accelerator.device_count()` takes nothing and passes nothing:
        # the forwarder calls the replacement itself, not a compiled function
        # around it (a Python frame, a list and a dict per call: forward mode
        # cost 2.1x the replacement on 2.13, 3x on 1.13's backport).
        return target
    conv = {p: ("__index" if target_name == "torch.accelerator.device_index" else "__retype")
            for p in params if p in ("device", "device_index")}
    env: dict[str, Any] = {"__target": target, "_MISSING": _MISSING, "__acc": devices.acc_type,
                           "__retype": devices.retype, "__index": devices.index}

    def item(node: ast.expr) -> tuple[str, set[str]]:
        t = _Template(legacy, conv)
        out = t.visit(node)
        return ast.unparse(out), t.used

    lines: list[str] = []
    if star:
        pre: list[str] = []
        post: list[str] = []
        seen_star = False
        for arg in call.args:
            if isinstance(arg, ast.Name) and arg.id == "__anydev_star__":
                seen_star = True
                continue
            (post if seen_star else pre).append(item(arg)[0])
        kws = [f"{k.arg}={item(k.value)[0]}" for k in call.keywords if k.arg]
        args = ", ".join(pre + ["*__sa"] + post + kws + ["**__sk"])
        code = f"def forward(*__sa, **__sk):\n    return __target({args})\n"
    else:
        for d in range(len(a.defaults)):
            a.defaults[d] = ast.Name(id="_MISSING", ctx=ast.Load())
        a.kw_defaults = [None if d is None else ast.Name(id="_MISSING", ctx=ast.Load())
                         for d in a.kw_defaults]
        head = ast.unparse(fdef).split("\n")[0]
        lines.append(head)
        lines.append("    __a = []")
        lines.append("    __k = {}")

        def guard(used: set[str], stmt: str) -> None:
            cond = " and ".join(f"{u} is not _MISSING" for u in sorted(used) if u in params)
            lines.append(f"    if {cond}: {stmt}" if cond else f"    {stmt}")

        for arg in call.args:
            text, used = item(arg)
            guard(used, f"__a.append({text})")
        for k in call.keywords:
            if k.arg is None:
                return None
            text, used = item(k.value)
            guard(used, f"__k[{k.arg!r}] = {text}")
        if a.kwarg is not None:  # legacy **kwargs the template does not name: passed on
            lines.append(f"    __k.update({a.kwarg.arg})")
        lines.append("    return __target(*__a, **__k)")
        code = "\n".join(lines) + "\n"
    filename = f"<anydev.torch forward {row.code}: {row.legacy} -> {template}>"
    try:
        exec(compile(code, filename, "exec"), env)
    except SyntaxError:
        return None
    fn = env["forward"]
    fn.__name__ = row.legacy.rsplit(".", 1)[1]
    fn.__qualname__ = f"forward[{row.legacy}]"
    fn.__doc__ = f"{row.legacy} forwarded: {template} [{row.code}]"
    return fn


def _default_template(row: Row) -> str:
    """A row without a template: the replacement with the same arguments
    (positional parameters positionally, keyword-only ones by keyword)."""
    try:
        p = _signature.params(row.signature or "()")
    except ValueError:
        return f"{row.replacement}({{*}})"
    if p.vararg is not None or p.kwarg is not None:
        return f"{row.replacement}({{*}})"
    items = [f"{{{n}}}" for n in p.positional]
    items += [f"{n}={{{n}}}" for n in p.keyword_only]
    return f"{row.replacement}({', '.join(items)})"


class _StreamContext:
    """``torch.cuda.stream(s)`` in forward mode: ``with s:`` (a torch.Stream is
    its own context manager), and nothing for None, as before."""

    __slots__ = ("stream",)

    def __init__(self, stream: Any):
        self.stream = stream

    def __enter__(self) -> Any:
        if self.stream is not None:
            self.stream.__enter__()
        return self.stream

    def __exit__(self, *exc: Any) -> None:
        if self.stream is not None:
            self.stream.__exit__(*exc)


def _device_present(legacy: str) -> bool:
    """Whether torch.<legacy> (cuda, xpu) has a device on this machine, asked
    through its own, unwrapped is_available."""
    module = sys.modules.get(f"torch.{legacy}")
    is_available = None if module is None else module.__dict__.get("is_available")
    if is_available is None:
        return False
    original = getattr(is_available, "__anydev_original__", is_available)
    try:
        return bool(original())
    except Exception:  # noqa: BLE001 - a broken runtime has no device to forward to
        return False


def _special(attr: str, original: Any) -> Optional[Callable[[_Devices], Optional[Callable]]]:
    """Rows whose forward form is not a template (fix = none or an argument
    the replacement rejects): attribute name -> factory."""

    def set_stream(devices: _Devices) -> Optional[Callable]:
        target = _lookup("torch.accelerator.set_stream")
        if target is None:
            return None

        def forward(stream: Any) -> None:
            if stream is not None:  # torch.cuda.set_stream(None) was a no-op
                target(stream)

        return forward

    def stream(devices: _Devices) -> Optional[Callable]:
        torch_stream = _lookup("torch.Stream")
        if torch_stream is None or not hasattr(torch_stream, "__enter__"):
            return None

        def forward(stream: Any) -> Any:
            if stream is None or hasattr(type(stream), "__enter__"):
                return _StreamContext(stream)
            return original(stream)

        return forward

    return {"set_stream": set_stream, "stream": stream, "StreamContext": stream}.get(attr)


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    """What calling ``fn()`` does here: ("ok", the result's type and repr) or
    ("raise", the exception's type)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn()
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return "raise", type(e).__name__
    return "ok", f"{type(result).__name__}: {result!r}"


def _keeps_behaviour_here(row: Row, original: Any, target: Callable) -> Optional[str]:
    """Note [Forwarding without the device]: on a machine where the legacy
    module's device is missing (torch.cuda on a CPU-only machine), a legacy
    call and its replacement often differ: torch.cuda.empty_cache() is a
    no-op where torch.accelerator.empty_cache() raises, memory_allocated()
    is 0 where the replacement raises, torch.cuda.current_device() raises
    AssertionError where the replacement raises RuntimeError. So there a row
    is forwarded only when the two are seen to do the same here: both called
    once with no arguments, at install, with the same result (type and repr)
    or the same exception type. A row whose call needs arguments, or that
    makes an object or a context (a seed, a device, a class), cannot be
    probed without side effects and keeps its original. Returns None when the
    row keeps its behaviour here, else why not."""
    if row.legacy.rsplit(".", 1)[1].startswith("manual_seed"):
        return "it seeds the generators, so it cannot be compared here without side effects"
    if row.kind != "call":
        return f"a {row.kind.replace('_', ' ')} cannot be compared here without side effects"
    try:
        params = inspect.signature(original).parameters.values()
    except (TypeError, ValueError):
        return "its signature cannot be read"
    if any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
           for p in params):
        return "it takes arguments, so it cannot be compared here without side effects"
    legacy, replacement = _outcome(original), _outcome(target)
    if legacy == replacement:
        return None
    what = {"ok": "returns", "raise": "raises"}
    return (f"here the original {what[legacy[0]]} {legacy[1]} where the replacement "
            f"{what[replacement[0]]} {replacement[1]}")


def _forward_target(row: Row, original: Any, legacy: str, devices: _Devices) -> Optional[Callable]:
    """What an in-scope call reaches in forward mode, or None for the original
    (no mechanical replacement, or this PyTorch lacks it)."""
    attr = row.legacy.rsplit(".", 1)[1]
    special = _special(attr, original)
    if special is not None:
        return special(devices)
    if row.fix == "none" or not row.replacement:
        return None
    return _compile(row, row.template or _default_template(row), legacy, devices)


# --- the forwarders ------------------------------------------------------------------


def _replacement_form(row: Row) -> str:
    if row.template:
        return re.sub(r"\{[^{}]*\}", "...", row.template)
    return row.replacement


def _message(row: Row) -> str:
    """The warning of an in-scope call: the replacement to use, where this
    PyTorch has it; else what this PyTorch lacks, a replacement that only a
    later release brings named as such (Note [Replacements no release has yet]
    in anydev/_compat/messages.py)."""
    if row.replacement and _lookup(row.replacement) is None:
        import torch

        from anydev._compat.messages import future_text
        from anydev._compat.table import NEWEST_TORCH

        if row.since == "main" or not row.since:
            tail = future_text(row, NEWEST_TORCH)
        else:
            tail = (f"{row.replacement} needs PyTorch {row.since} or later (this one is "
                    f"{torch.__version__}), so {row.legacy} is still the call to make here")
        return f"{row.legacy} is a legacy device-specific API; {tail} [{row.code}]"
    return (f"{row.legacy} is a legacy device-specific API; use {_replacement_form(row)} "
            f"[{row.code}]")


def _quiet_text(row: Row, original: Any) -> str:
    """What PyTorch's own deprecation warning for ``original`` contains (the
    legacy name), or "" when PyTorch does not warn about it."""
    for obj in (original, getattr(original, "__init__", None) if isinstance(original, type)
                else None):
        if isinstance(getattr(obj, "__deprecated__", None), str):
            return row.legacy
    return row.legacy if row.legacy in _TORCH_OWN_WARNINGS else ""


# Names a class facade keeps for itself (the rest are the original class's);
# ABCMeta sets _abc_impl and __abstractmethods__ while making it.
_FACADE_OWN = frozenset({"__wrapped__", "__anydev_original__", "__anydev_row__",
                         "__anydev_facade__", "__class__", "_abc_impl",
                         "__abstractmethods__"})


def _facade(row: Row, attr: str, module: str, original: type, fwd: Any) -> Optional[type]:
    """A class standing for the legacy class ``original``: calling it is the
    forwarder (the metaclass's ``__call__``), ``isinstance``/``issubclass``
    answer for ``original``, its attributes are ``original``'s, and a class
    statement that subclasses it makes a subclass of ``original`` itself."""
    base_meta = type(original)
    if base_meta is type:
        metas: tuple[type, ...] = (abc.ABCMeta,)  # mixes with ABCs and Protocols
    elif issubclass(base_meta, abc.ABCMeta):
        metas = (base_meta,)
    else:
        return None  # a metaclass of its own (torch's typed tensors): left alone
    holder: dict[str, Any] = {}

    def __new__(mcls, name, bases, ns, **kw):  # noqa: N807
        if ns.get("__anydev_facade__"):
            return metas[0].__new__(mcls, name, bases, ns, **kw)
        facade = holder["facade"]
        bases = tuple(original if b is facade else b for b in bases)
        meta, _, kwds = types.prepare_class(name, bases, kw)
        return meta(name, bases, ns, **kwds)

    def __getattribute__(cls, name):  # noqa: N807
        if name in _FACADE_OWN:
            return type.__getattribute__(cls, name)
        return getattr(original, name)

    def __setattr__(cls, name, value):  # noqa: N807
        if name in _FACADE_OWN:
            type.__setattr__(cls, name, value)
        else:
            setattr(original, name, value)

    def __instancecheck__(cls, instance):  # noqa: N807
        return isinstance(instance, original)

    def __subclasscheck__(cls, subclass):  # noqa: N807
        return subclass is cls or issubclass(subclass, original)

    def __repr__(cls):  # noqa: N807
        return f"<anydev.torch forwarder for {original!r} ({row.legacy}) [{row.code}]>"

    meta = type(f"{attr}_anydev_forwarder_meta", metas, {
        "__call__": fwd, "__new__": __new__, "__getattribute__": __getattribute__,
        "__setattr__": __setattr__, "__instancecheck__": __instancecheck__,
        "__subclasscheck__": __subclasscheck__, "__repr__": __repr__,
        "__module__": __name__,
    })
    facade = meta(attr, (), {
        "__anydev_facade__": True, "__module__": module, "__qualname__": attr,
        "__doc__": original.__doc__, "__wrapped__": original, "__anydev_original__": original,
        "__anydev_row__": row.code,
    })
    holder["facade"] = facade
    return facade


@dataclass
class _Wrapped:
    row: Row
    module: types.ModuleType
    attr: str
    original: Any
    index: int
    replacement: Any   # the forwarder, or the class facade
    kind: str          # "function" or "class"


_lock = threading.RLock()
_engine_rows: dict[tuple[str, int], int] = {}        # (legacy, id(original)) -> engine row
_objects: dict[tuple[str, int], tuple[Any, str]] = {}  # the same -> (forwarder, kind)


def _wrapper(row: Row, module_name: str, attr: str, original: Any) -> Optional[tuple[int, Any, str]]:
    key = (row.legacy, id(original))
    if key in _objects:
        obj, kind = _objects[key]
        return _engine_rows[key], obj, kind
    if isinstance(original, type):
        kind = "class"
    elif callable(original):
        kind = "function"
    else:
        return None
    index = _C._compat.register_scoped(row.legacy, row.replacement, row.code, _message(row),
                                       original, _quiet_text(row, original))
    name = getattr(original, "__name__", attr)
    fwd = _C._compat.Forwarder(index, name if isinstance(name, str) else attr,
                               str(getattr(original, "__qualname__", attr)),
                               str(getattr(original, "__module__", module_name)),
                               getattr(original, "__doc__", None))
    fwd.__wrapped__ = original
    fwd.__anydev_original__ = original
    obj: Any = fwd
    if kind == "class":
        obj = _facade(row, attr, module_name, original, fwd)
        if obj is None:
            return None
    _engine_rows[key] = index
    _objects[key] = (obj, kind)
    return index, obj, kind


def _candidates() -> Iterable[tuple[Row, str, str]]:
    for row in ROWS:
        if (row.language != "python" or row.status != "deprecated" or not row.replacement
                or row.kind in ("module", "attribute")):
            continue
        module, _, attr = row.legacy.rpartition(".")
        if module in LEGACY_MODULES:
            yield row, module, attr


# --- install / uninstall -----------------------------------------------------------


@dataclass
class _State:
    mode: str
    scope: Scope
    wrapped: list[_Wrapped]
    skipped: dict[str, str]
    backport: list[str]
    quiet_filter: tuple
    targets: dict[str, str] = field(default_factory=dict)
    no_device: dict[str, str] = field(default_factory=dict)
    methods: list = field(default_factory=list)  # _CountedMethod, see _install_methods


_state: Optional[_State] = None
_scope_cache: dict[tuple[str, str], int] = {}


def _resolve_scope(module: str, file: str) -> int:
    key = (module, file)
    hit = _scope_cache.get(key)
    if hit is not None:
        return hit
    state = _state
    value = 2 if state is None else state.scope.decide(module, file)
    _scope_cache[key] = value
    return value


def _quiet_front() -> None:
    """Puts anydev.torch's warnings filter first (see bind_compat.cc's QuietMatcher)."""
    state = _state
    if state is None:
        return
    filters = warnings.filters
    item = state.quiet_filter
    with _lock:
        while item in filters:
            filters.remove(item)
        filters.insert(0, item)


def installed() -> bool:
    """Whether anydev.torch's forwarders are on PyTorch now."""
    return _state is not None


def status() -> dict[str, Any]:
    """What install() did: the mode, the scope, the entry points wrapped (with
    what an in-scope call reaches), those skipped and why, and the names the
    backport added to torch.accelerator."""
    state = _state
    if state is None:
        return {"installed": False}
    return {
        "installed": True,
        "mode": state.mode,
        "scope": {"packages": list(state.scope.packages), "paths": list(state.scope.paths),
                  "main": state.scope.main, "source": state.scope.source},
        "wrapped": {f"{w.module.__name__}.{w.attr}": w.kind for w in state.wrapped},
        "skipped": dict(state.skipped),
        "backport": list(state.backport),
        "targets": dict(state.targets),
        "no_device": dict(state.no_device),
        "counted": {m.legacy: "method" for m in state.methods},
    }


def install(mode: str = "observe", packages: Optional[Iterable[str]] = None,
            paths: Optional[Iterable[str]] = None, *, main: bool = True,
            backport_missing: bool = True, project: Optional[str] = None) -> dict[str, Any]:
    """Puts anydev's forwarders on the legacy entry points of ``torch.cuda``,
    ``torch.cuda.amp`` and ``torch.xpu`` (see the module's docstring).

    ``mode``: ``"observe"`` (in-scope calls warn once per site, are counted and
    call the original) or ``"forward"`` (they call the table's replacement).
    ``packages``/``paths``: the scope (module names, covering their submodules,
    and path globs); when neither is given, ``[tool.anydev] packages``/``paths``
    of the nearest pyproject.toml, else the ``__main__`` script only. ``main``:
    whether the ``__main__`` script is in the scope too. ``backport_missing``:
    add the ``torch.accelerator`` functions this PyTorch lacks.

    Calling it again reinstalls with the new options. Returns :func:`status`."""
    global _state
    if mode not in MODES:
        raise ValueError(f"anydev.torch.install(): mode {mode!r} is not one of "
                         f"{', '.join(MODES)}")
    import torch  # noqa: F401
    import importlib

    scope = make_scope(packages, paths, main, project)
    with _lock:
        if _state is not None:
            uninstall()
        added = backport.install() if backport_missing else []
        wrapped: list[_Wrapped] = []
        skipped: dict[str, str] = {}
        devices: dict[str, _Devices] = {}
        for row, module_name, attr in _candidates():
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                skipped[row.legacy] = f"this PyTorch has no {module_name}"
                continue
            original = module.__dict__.get(attr, _MISSING)
            if original is _MISSING:
                skipped[row.legacy] = "this PyTorch has no such entry point"
                continue
            made = _wrapper(row, module_name, attr, original)
            if made is None:
                skipped[row.legacy] = "not a function or a plain class (left alone)"
                continue
            index, obj, kind = made
            wrapped.append(_Wrapped(row, module, attr, original, index, obj, kind))
        quiet = ("ignore", _C._compat.QuietMatcher(), FutureWarning, None, 0)
        _scope_cache.clear()
        _state = _State(mode, scope, wrapped, skipped, added, quiet)
        _C._compat.set_quiet_filter(quiet, _quiet_front)
        _C._compat.set_scope_resolver(_resolve_scope)
        have_device: dict[str, bool] = {}
        kept_here: dict[str, int] = {}
        for w in wrapped:
            target = None
            why_not = None
            if mode == "forward":
                legacy = _LEGACY_TYPE[w.module.__name__]
                dev = devices.setdefault(legacy, _Devices(legacy))
                target = _forward_target(w.row, w.original, legacy, dev)
                if legacy not in have_device:
                    have_device[legacy] = _device_present(legacy)
                if target is not None and not have_device[legacy]:
                    why_not = _keeps_behaviour_here(w.row, w.original, target)
                    if why_not is not None:
                        target = None
                        kept_here[legacy] = kept_here.get(legacy, 0) + 1
            _state.targets[w.row.legacy] = (
                f"original ({why_not})" if why_not is not None
                else "original" if target is None
                else (w.row.template or w.row.replacement if _special(w.attr, w.original) is None
                      else f"{w.row.replacement} (adapted)"))
            _C._compat.set_scoped(w.index, target, True)
            setattr(w.module, w.attr, w.replacement)
        for legacy, n in sorted(kept_here.items()):
            _state.no_device[legacy] = (
                f"torch.{legacy} has no device on this machine: {n} legacy "
                f"call{'s' if n != 1 else ''} run the original, since forwarding would change "
                f"what {'they do' if n != 1 else 'it does'} here (see targets)")
        _install_methods(_state)
        compat._changed()  # every site resolves its scope and policy again
    return status()


def uninstall() -> None:
    """Puts every original object back (``torch.cuda.current_device is`` the
    original again), removes what the backport added and anydev.torch's
    warnings filter. Forwarders that code still holds pass calls through to
    the originals, uncounted. Safe to call when not installed."""
    global _state
    with _lock:
        state = _state
        if state is None:
            return
        for w in state.wrapped:
            if w.module.__dict__.get(w.attr) is w.replacement:
                setattr(w.module, w.attr, w.original)
            _C._compat.set_scoped(w.index, None, False)
        _uninstall_methods(state)
        _state = None
        _scope_cache.clear()
        _C._compat.set_scope_resolver(None)
        _C._compat.set_quiet_filter(None, None)
        while state.quiet_filter in warnings.filters:
            warnings.filters.remove(state.quiet_filter)
        backport.uninstall()
        compat._changed()


# --- .cuda() calls, counted (AD907) --------------------------------------------------
#
# Tensor.cuda() and Module.cuda() are no table entry points but the most
# common CUDA-specific calls left after a migration (the literal rule AD907).
# anydev.torch counts the calls that run, per call site, so the report shows
# which .cuda() sites are on the hot path. Observation only, in both modes:
# the call always reaches the original method (nothing is redirected), and an
# in-scope site warns once like the other legacy calls. A call is counted
# before the original runs, so on a PyTorch without CUDA (where .cuda()
# raises) it is counted too.

# (class, attribute, the replacement the warning names)
_COUNTED_METHODS = (
    ("torch.Tensor", "cuda", "Tensor.to(torch.accelerator.current_accelerator())"),
    ("torch.nn.Module", "cuda", "Module.to(torch.accelerator.current_accelerator())"),
)


class _CountedMethod:
    """A method of a torch class whose calls anydev's engine counts.

    Reading it from an instance binds the engine's native forwarder to the
    instance (a bound method object), so the call itself runs no Python
    frame of anydev's: the forwarder sees the caller's frame as its call site
    and resolves its scope as for any legacy call. Reading it from the class
    gives the forwarder (``torch.Tensor.cuda(x)`` is counted too)."""

    __slots__ = ("fwd", "original", "cls", "attr", "legacy", "index", "own")

    def __init__(self, fwd: Any, original: Any, cls: type, attr: str, legacy: str, index: int,
                 own: bool):
        self.fwd = fwd
        self.original = original
        self.cls = cls
        self.attr = attr
        self.legacy = legacy
        self.index = index
        self.own = own  # the class defined the attribute itself (else it inherited it)

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self.fwd
        return types.MethodType(self.fwd, obj)


def _install_methods(state: _State) -> None:
    """Puts a _CountedMethod on each of _COUNTED_METHODS that this PyTorch has."""
    import importlib

    row = next((r for r in ROWS if r.detect == "py.cuda_method"), None)
    if row is None:
        return
    for cls_name, attr, replacement in _COUNTED_METHODS:
        module_name, _, name = cls_name.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError):
            state.skipped[f"{cls_name}.{attr}"] = f"this PyTorch has no {cls_name}"
            continue
        original = getattr(cls, attr, None)
        if original is None:
            state.skipped[f"{cls_name}.{attr}"] = "this PyTorch has no such method"
            continue
        legacy = f"{cls_name}.{attr}"
        message = (f"{legacy}() is CUDA-specific; use {replacement} [{row.code}]")
        index = _C._compat.register_scoped(legacy, replacement, row.code, message, original, "")
        fwd = _C._compat.Forwarder(index, attr, f"{name}.{attr}", module_name,
                                   getattr(original, "__doc__", None))
        fwd.__wrapped__ = original
        fwd.__anydev_original__ = original
        method = _CountedMethod(fwd, original, cls, attr, legacy, index, attr in cls.__dict__)
        _C._compat.set_scoped(index, None, True)  # always the original: observation only
        setattr(cls, attr, method)
        state.methods.append(method)


def _uninstall_methods(state: _State) -> None:
    """Puts the original methods back (an inherited one by removing the
    class's own attribute again)."""
    for m in state.methods:
        if m.cls.__dict__.get(m.attr) is m:
            if m.own:
                setattr(m.cls, m.attr, m.original)
            else:
                delattr(m.cls, m.attr)
        _C._compat.set_scoped(m.index, None, False)
    state.methods.clear()
