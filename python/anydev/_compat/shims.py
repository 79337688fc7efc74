"""Builds the objects of the generated shim modules from the compat table.

A generated module (``anydev/cuda/__init__.py``) holds one line per legacy
entry point, e.g. ``current_device = _M.forwarder("AD103")``; this module
turns a row into the object behind it:

* ``forwarder``: a native forwarder (``anydev._C._compat.Forwarder``) that
  counts, warns once per call site and calls anydev's replacement, or raises
  NoEquivalentError naming PyTorch's replacement when anydev has none;
* ``klass``: a subclass of anydev's replacement class (``anydev.cuda.Stream``
  is an ``anydev.Stream``) whose constructor counts and warns the same way;
* ``kept``: a device-specific entry point PyTorch keeps (rule 4): anydev's
  implementation when it has one (no warning, no count), else a placeholder
  that raises NotImplementedError with the row's note;
* ``lazy_getattr``: module ``__getattr__`` for deprecated attributes and
  submodules, so that an access is counted and warned too.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Optional

import sys

from anydev import _C, compat
from . import kept as _kept, signature as _signature
from .messages import future_text, legacy_message as _legacy_message
from .table import NEWEST_TORCH, ROWS_BY_CODE, Row

_registered: dict[tuple[str, str], int] = {}


def _resolve(dotted: Optional[str]) -> Any:
    """Imports ``anydev.x.y`` and returns it, or None when anydev lacks it."""
    if not dotted:
        return None
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attr in parts[split:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def torch_has(dotted: str) -> Optional[bool]:
    """Whether the user's PyTorch has ``torch.x.y``: None when PyTorch was not
    imported (it is not imported for this; Note [Replacements no release has
    yet] in messages.py)."""
    torch = sys.modules.get("torch")
    if torch is None or not dotted.startswith("torch."):
        return None
    obj: Any = torch
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return True


def legacy_message(row: Row, shim_name: str) -> str:
    """The warning of a shim: messages.legacy_message, for the PyTorch at hand."""
    return _legacy_message(row, shim_name, NEWEST_TORCH,
                           torch_has(row.replacement) if row.replacement else None)


def _is_future(row: Row) -> bool:
    if not row.replacement:
        return False
    has = torch_has(row.replacement)
    return (not has) if has is not None else row.since == "main"


def _pytorch_form(row: Row) -> str:
    """The replacement as a reader would write it: the template with its
    placeholders shown as `...`, else the replacement's name."""
    if row.template:
        import re

        return re.sub(r"\{[^{}]*\}", "...", row.template)
    return row.replacement


def _no_target_message(row: Row, shim_name: str, target_missing: bool) -> str:
    pytorch = _pytorch_form(row)
    if _is_future(row):
        pytorch = f"in PyTorch: {future_text(row, NEWEST_TORCH)}"
    else:
        pytorch = (f"in PyTorch use {pytorch}" if pytorch
                   else "PyTorch has no device-generic replacement")
    if target_missing:
        return (f"{shim_name} ({row.legacy}): anydev does not provide {row.anydev} in this "
                f"version; {pytorch} [{row.code}]")
    return f"{shim_name} ({row.legacy}) has no equivalent in anydev; {pytorch} [{row.code}]"


class Unsupported:
    """A kept device-specific entry point that anydev cannot answer: using it
    raises NotImplementedError with the row's note. (For a deprecated
    attribute anydev has no equivalent for, such as torch.cuda.AcceleratorError,
    it raises NoEquivalentError naming PyTorch's replacement.)"""

    def __init__(self, name: str, row: Row):
        self._name = name
        self._row = row
        self.__doc__ = f"{row.legacy} (device-specific, kept in PyTorch): {row.note}"

    def _raise(self) -> None:
        if self._row.status == "deprecated":
            raise compat.NoEquivalentError(
                _no_target_message(self._row, self._name, bool(self._row.anydev)))
        raise NotImplementedError(
            f"{self._name} ({self._row.legacy}) is a device-specific API that anydev does not "
            f"implement: {self._row.note} [{self._row.code}]")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._raise()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self._raise()

    def __repr__(self) -> str:
        return f"<unsupported device-specific API {self._row.legacy} [{self._row.code}]>"


def _is_torch_device(obj: Any) -> bool:
    """A torch.device, told by its type's name: the compat layer never imports torch."""
    t = type(obj)
    return t.__name__ == "device" and t.__module__ == "torch"


def _set_stream(target: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def set_stream(stream: Any) -> None:
        """torch.cuda.set_stream(stream): makes ``stream`` current; None does
        nothing, as in torch (torch/cuda/__init__.py: "This function is a
        no-op if this argument is None")."""
        if stream is None:
            return None
        return target(stream)

    return set_stream


# Constructor adapters for class rows: legacy arguments -> anydev's.
def _stream_args(retype: Callable[[Any], Any], device: Any = None, priority: int = 0,
                 **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if kwargs:  # Stream(stream_id=, device_index=, device_type=)
        return (), dict(kwargs, priority=priority)
    return (retype(device),), {"priority": priority}


def _event_args(retype: Callable[[Any], Any], enable_timing: bool = False, blocking: bool = False,
                interprocess: bool = False, external: bool = False
                ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    if external:
        raise NotImplementedError("external events are CUDA-specific; anydev.Event has none")
    return (), {"enable_timing": enable_timing, "blocking": blocking, "interprocess": interprocess}


# replacement class -> (adapter, how many leading positional arguments the
# replacement takes as the legacy class does: a call with no more than these,
# and no keyword arguments, skips the adapter; see ShimInit in bind_compat.cc).
_CLASS_ADAPTERS = {"anydev.Stream": (_stream_args, 1), "anydev.Event": (_event_args, 0)}


def _device_of(device_index: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def device_of(obj: Any) -> Any:
        """torch.cuda.device_of(obj): switches to the device of ``obj`` (a
        stream, an event, a tensor...) for the block; a CPU object (or one on
        no device) switches nothing."""
        d = obj.device
        index = None if getattr(d, "type", "cpu") == "cpu" else getattr(d, "index", None)
        return device_index(index)

    return device_of


def _device_context(device_index: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def device(device: Any) -> Any:
        """torch.cuda.device(device): an int, a device or a device string (its
        index; none: the current one); None or a negative int switches
        nothing. device_index itself takes an int or None only, as torch's."""
        if device is None or (isinstance(device, int) and device < 0):
            return device_index(None)
        if isinstance(device, int):
            return device_index(device)
        return device_index(_C._acc_device_index_of(device, True))

    return device


class _GraphCapture:
    """What ``torch.cuda.graph(g, pool, stream, capture_error_mode)`` (and
    ``torch.xpu.graph``) makes, over ``anydev.accelerator.Graph``: entering
    synchronizes the device, empties the caching allocator, makes the capture
    stream current and begins capturing on it into ``g`` (with ``pool`` and
    the capture error mode given here, as the legacy form passes them to
    ``capture_begin``); leaving ends the capture and restores the stream. As
    in torch (torch/cuda/graphs.py), ``__enter__`` returns None and the
    default capture stream is one side stream per device, made on first use:
    capture never happens on the default stream."""

    __slots__ = ("graph", "pool", "stream", "capture_error_mode")
    _side_streams: dict = {}

    def __init__(self, graph: Any, pool: Any, stream: Any, capture_error_mode: str):
        self.graph, self.pool, self.stream = graph, pool, stream
        self.capture_error_mode = capture_error_mode

    def __enter__(self) -> None:
        # What anydev.accelerator.synchronize() and empty_cache() do, and the
        # current accelerator and device: the compat layer reaches the runtime
        # through _C only (docs/architecture.md, "The map").
        _C._acc_synchronize(None)
        _C._acc_empty_cache()
        stream = self.stream
        if stream is None:
            key = (_C._acc_current_accelerator(False), _C._fast.current_device_index())
            stream = self._side_streams.get(key)
            if stream is None:
                stream = self._side_streams[key] = _C.Stream()
            self.stream = stream
        stream.__enter__()
        try:
            _C._Graph.capture_begin(self.graph, pool=self.pool,
                                    capture_error_mode=self.capture_error_mode)
        except BaseException:
            stream.__exit__(None, None, None)
            raise

    def __exit__(self, *exc_info: Any) -> None:
        try:
            self.graph.capture_end()
        finally:
            self.stream.__exit__(*exc_info)


def _graph_context(graph_type: Any, row: Row) -> Callable[..., Any]:
    params = _positional_params(row.signature)
    legacy = row.legacy
    graph_param = params[0] if params else "graph"
    with_mode = "capture_error_mode" in params  # torch.cuda.graph's; torch.xpu.graph has none

    def check(graph: Any, pool: Any, stream: Any) -> None:
        if not isinstance(graph, graph_type):
            raise TypeError(f"{legacy}: {graph_param} must be a graph (anydev.accelerator.Graph "
                            f"or its legacy subclass), not {type(graph).__name__}")
        if stream is not None and not isinstance(stream, _C.Stream):
            raise TypeError(f"{legacy}: stream must be an anydev.Stream or None, not "
                            f"{type(stream).__name__}")
        if pool is not None and not (isinstance(pool, tuple) and len(pool) == 2):
            raise TypeError(f"{legacy}: pool must be None or a graph's pool() (a tuple of two "
                            f"ints), not {pool!r}")

    if with_mode:
        def graph(cuda_graph: Any, pool: Any = None, stream: Any = None,
                  capture_error_mode: str = "global") -> _GraphCapture:
            """torch.cuda.graph(cuda_graph, pool=None, stream=None,
            capture_error_mode="global"): captures the block into
            ``cuda_graph`` on ``stream`` (default: a side stream); nothing
            captured runs until ``cuda_graph.replay()``."""
            check(cuda_graph, pool, stream)
            if not isinstance(capture_error_mode, str):
                raise TypeError(f"{legacy}: capture_error_mode must be a str, not "
                                f"{type(capture_error_mode).__name__}")
            return _GraphCapture(cuda_graph, pool, stream, capture_error_mode)
    else:
        def graph(xpu_graph: Any, pool: Any = None, stream: Any = None) -> _GraphCapture:
            """torch.xpu.graph(xpu_graph, pool=None, stream=None): captures the
            block into ``xpu_graph`` on ``stream`` (default: a side stream);
            nothing captured runs until ``xpu_graph.replay()``."""
            check(xpu_graph, pool, stream)
            return _GraphCapture(xpu_graph, pool, stream, "default")

    return graph


# Call adapters for forwarders whose legacy arguments differ from the
# target's: attribute name -> ((target, row) -> callable).
_CALL_ADAPTERS = {"device_of": lambda target, row: _device_of(target),
                  "device": lambda target, row: _device_context(target),
                  "graph": _graph_context,
                  "set_stream": lambda target, row: _set_stream(target)}


def _positional_params(signature: Optional[str]) -> list[str]:
    """The positional-or-keyword parameter names of a legacy signature."""
    if not signature:
        return []
    try:
        return list(_signature.params(signature).positional)
    except ValueError:
        return []


class _Source:
    """A default value shown as its source text (``torch.float16``, ``2.0**16``):
    the compat layer does not evaluate what it cannot without torch."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def legacy_signature(row: Row) -> Any:
    """The row's legacy signature as an inspect.Signature, or None when it has
    none (or it is not a parameter list)."""
    if not row.signature:
        return None
    import ast
    import inspect

    try:
        a = _signature.parse(row.signature).args
    except ValueError:
        return None

    def value(node: Any) -> Any:
        if node is None:
            return inspect.Parameter.empty
        try:
            return ast.literal_eval(node)
        except ValueError:
            return _Source(ast.unparse(node))

    P = inspect.Parameter
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = [P(x.arg, P.POSITIONAL_ONLY if i < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD,
                default=value(d)) for i, (x, d) in enumerate(zip(positional, defaults))]
    if a.vararg is not None:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
    params += [P(x.arg, P.KEYWORD_ONLY, default=value(d))
               for x, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg is not None:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
    try:
        return inspect.Signature(params)
    except ValueError:
        return None


# The public module of the generated anydev._compat.legacy_accelerator: warnings and
# __module__ name the spelling users write, anydev.accelerator.current_device_idx.
_PUBLIC_MODULE = {"anydev._compat.legacy_accelerator": "anydev.accelerator"}


class ShimModule:
    """The factory a generated shim module uses for its entry points."""

    def __init__(self, module: str, legacy_module: str, retype: str):
        self.module = _PUBLIC_MODULE.get(module, module)
        self.legacy_module = legacy_module
        self.retype = retype

    def _row(self, code: str) -> Row:
        return ROWS_BY_CODE[code]

    def _attr(self, row: Row) -> str:
        return row.legacy.rsplit(".", 1)[1]

    def _register(self, row: Row, target: Any) -> int:
        key = (row.code, self.module)
        if key not in _registered:
            name = f"{self.module}.{self._attr(row)}"
            _registered[key] = _C._compat.register(
                row.legacy, row.replacement, row.code, legacy_message(row, name), target,
                _no_target_message(row, name, target is None and bool(row.anydev)), self.retype,
                _positional_params(row.signature) if target is not None else [])
        return _registered[key]

    def retype_device(self, device: Any) -> Any:
        """Maps a device string, anydev.device or torch.device of the legacy
        type ("cuda:1", torch.device("cuda", 1)) onto the current accelerator
        ("sim:1"), as the native forwarders do (RetypeArg in bind_compat.cc);
        anything else is returned as is."""
        if self.retype and _is_torch_device(device):
            device = str(device)
        if self.retype and isinstance(device, (str, _C.device)):
            try:
                d = _C.device(device)
            except RuntimeError:
                return device
            if d.type == self.retype:
                acc = _C._acc_current_accelerator(False)
                if acc is not None:
                    return _C.device(acc.type, d.index)
        return device

    def forwarder(self, code: str) -> Any:
        row = self._row(code)
        target = _resolve(row.anydev)
        adapter = _CALL_ADAPTERS.get(self._attr(row))
        if target is not None and adapter is not None:
            target = adapter(target, row)
        index = self._register(row, target)
        name = self._attr(row)
        f = _C._compat.Forwarder(index, name, name, self.module,
                                 f"Legacy {row.legacy}: {row.note}\n\n"
                                 f"Forwards to {row.anydev or '(nothing in anydev)'}; in PyTorch use "
                                 f"{row.replacement or '(none)'}. Rule {row.code} ({row.source}).")
        f.__deprecated__ = legacy_message(row, f"{self.module}.{name}")
        if target is not None:
            f.__wrapped__ = target
        sig = legacy_signature(row)
        if sig is not None:
            # inspect.signature stops at __signature__ before it follows
            # __wrapped__: the legacy parameters, not the replacement's
            # (torch.cuda.current_device() takes none where
            # anydev.accelerator.current_device_index's target may take some).
            f.__signature__ = sig
        return f

    def klass(self, code: str) -> Any:
        row = self._row(code)
        base = _resolve(row.anydev)
        if base is None or not isinstance(base, type):
            return self.forwarder(code)
        index = self._register(row, base)
        adapter, positional = _CLASS_ADAPTERS.get(row.anydev or "", (None, 0))
        retype = self.retype_device
        name = self._attr(row)
        message = legacy_message(row, f"{self.module}.{name}")
        base_init = base.__init__
        slow_init = None
        if adapter is not None:
            def slow_init(self: Any, *args: Any, **kwargs: Any) -> None:
                args, kwargs = adapter(retype, *args, **kwargs)
                base_init(self, *args, **kwargs)

        # Counted and warned natively for the constructing frame, then the
        # base's __init__ (through the adapter when the arguments need it).
        init = _C._compat.ShimInit(index, base_init, slow_init, positional, f"{name}.__init__")
        cls = type(name, (base,), {
            "__init__": init,
            "__module__": self.module,
            "__doc__": f"Legacy {row.legacy}, a subclass of {row.anydev}: {row.note} [{row.code}]",
            "__deprecated__": message,
        })
        return cls

    def kept(self, code: str) -> Any:
        row = self._row(code)
        impl = _kept.implementation(self._attr(row), self)
        if impl is None:
            return Unsupported(f"{self.module}.{self._attr(row)}", row)
        return impl

    def lazy_getattr(self, namespace: dict[str, Any], lazy: dict[str, str],
                     submodules: tuple[str, ...] = ()) -> Callable[[str], Any]:
        """The module's ``__getattr__``: deprecated attributes (``lazy``: name
        -> code), counted and warned at each access, and ``submodules``
        (anydev.cuda.memory, as torch.cuda.memory), imported on first use."""
        module = self.module

        def __getattr__(name: str) -> Any:
            if name in submodules:
                return importlib.import_module(f"{module}.{name}")
            code = lazy.get(name)
            if code is None:
                raise AttributeError(f"module {module!r} has no attribute {name!r}")
            row = self._row(code)
            if row.kind == "module" and row.status == "deprecated" and name == "amp":
                _C._compat.hit(self._register(row, None), 1)
                return importlib.import_module(f"{module}.{name}")
            target = _resolve(row.anydev)
            _C._compat.hit(self._register(row, target), 1)
            if target is None:
                return Unsupported(f"{module}.{name}", row)
            return target

        return __getattr__


__all__ = ["ShimModule", "Unsupported", "compat"]
