"""``torch.accelerator`` for a PyTorch that lacks it, or lacks part of it.

PyTorch added ``torch.accelerator`` in 2.6 (``device_count``, ``is_available``,
``current_accelerator``, ``set_stream``, ``current_stream``, ``synchronize``),
``current_device_index``/``set_device_index`` in 2.7, the ``device_index``
context manager in 2.8, the memory functions in 2.9, ``get_memory_info``
about 2.10 and ``empty_host_cache`` later. Code that ``anydev fix`` migrated calls them; this module gives an
older PyTorch the missing ones, written over the device module of the
accelerator the build has (``torch.cuda``, ``torch.xpu``, ``torch.mps``) with
the answers and errors of PyTorch 2.13's own:

* no accelerator built: ``device_count() == 0``, ``is_available()`` False,
  ``current_accelerator()`` None, and everything that needs a device raises
  ``RuntimeError("Cannot access accelerator device when none is available.")``;
* device arguments go through the same ``_get_device_index`` rules (an int as
  is; a string or ``torch.device`` must be of the accelerator's type; no index
  means the current device where that is optional).

:func:`install` adds only the names ``torch.accelerator`` lacks (creating the
module, and ``sys.modules["torch.accelerator"]``, when there is none), never
replacing one of PyTorch's; :func:`uninstall` removes exactly what it added.
"""

from __future__ import annotations

import sys
import types
from collections import OrderedDict
from typing import Any, Optional

__all__ = ["NAMES", "install", "installed", "uninstall"]

_NO_ACCELERATOR = "Cannot access accelerator device when none is available."

# What the backport can provide, in the order PyTorch documents them.
NAMES = (
    "device_count", "is_available", "current_accelerator", "current_device_index",
    "set_device_index", "device_index", "current_stream", "set_stream", "synchronize",
    "empty_cache", "memory_stats", "memory_allocated", "max_memory_allocated",
    "memory_reserved", "max_memory_reserved", "reset_accumulated_memory_stats",
    "reset_peak_memory_stats", "get_memory_info", "empty_host_cache",
    "get_device_capability", "current_device_idx", "set_device_idx",
)
# The memory functions, which PyTorch also has in torch.accelerator.memory.
MEMORY_NAMES = ("empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated",
                "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
                "reset_accumulated_memory_stats", "reset_peak_memory_stats")


def _torch() -> Any:
    return sys.modules.get("torch") or __import__("torch")


_UNKNOWN = "?"
_built = _UNKNOWN  # _built_type's answer, once asked: what a build has never changes


def _built_type() -> Optional[str]:
    """The device type of the accelerator this PyTorch was built for, as
    PyTorch's own getAccelerator() orders them (CUDA, also for ROCm builds,
    then XPU, then MPS), or None. Asked once: Note [The backport's cost]."""
    global _built
    if _built is _UNKNOWN:
        _built = _probe_built_type()
    return _built


# Note [The backport's cost]
# Forward mode sends torch.cuda.device_count() to torch.accelerator.device_count(),
# which on a PyTorch before 2.6 is this backport's. It probed the build on
# every call (three modules' _is_compiled/is_built, and an `import torch`):
# 44 times torch 1.13's own device_count, an lru_cache'd C call. What a build
# was compiled for cannot change in a process, so it is probed once, and each
# call is one Python frame over the device module's own function (the
# original, where anydev.torch's forwarders stand on the module: their
# dispatch would be paid twice). docs/torch.md, "Performance", has the target
# and benchmarks/python/bench_torch_adapter.py the measure.
def _device_fn(name: str) -> Any:
    """``torch.<accelerator>.<name>``, the original under anydev.torch's forwarder."""
    fn = getattr(_module(), name)
    return getattr(fn, "__anydev_original__", fn)


def _probe_built_type() -> Optional[str]:
    torch = _torch()
    cuda = getattr(torch, "cuda", None)
    if cuda is not None:
        compiled = getattr(cuda, "_is_compiled", None)
        if compiled is not None and compiled():
            return "cuda"
    xpu = getattr(torch, "xpu", None)
    if xpu is not None:
        compiled = getattr(xpu, "_is_compiled", None)
        if compiled is not None and compiled():
            return "xpu"
    mps = getattr(getattr(torch, "backends", None), "mps", None)
    if mps is not None and getattr(mps, "is_built", lambda: False)():
        return "mps"
    return None


def _module() -> Any:
    """The device module of the accelerator; RuntimeError when there is none."""
    t = _built_type()
    if t is None:
        raise RuntimeError(_NO_ACCELERATOR)
    return getattr(_torch(), t)


def _initialized(mod: Any) -> bool:
    check = getattr(mod, "is_initialized", None)
    return True if check is None else bool(check())


def _get_device_index(device: Any, optional: bool = False) -> int:
    # torch/accelerator/_utils.py, as of PyTorch 2.13.
    torch = _torch()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    index = None
    if isinstance(device, torch.device):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        index = device.index
    if index is None:
        if not optional:
            raise ValueError("Expected a torch.device with a specified index or an integer, "
                             f"but got:{device}")
        return current_device_index()
    return index


def device_count() -> int:
    """Number of devices of the current accelerator; 0 if there is none."""
    if (_built if _built is not _UNKNOWN else _built_type()) is None:
        return 0
    return int(_device_fn("device_count")())


def is_available() -> bool:
    """Whether the current accelerator has a device at run time."""
    if (_built if _built is not _UNKNOWN else _built_type()) is None:
        return False
    return bool(_device_fn("is_available")())


def current_accelerator(check_available: bool = False) -> Any:
    """The accelerator this PyTorch was built for, as a ``torch.device`` without
    an index, or None; with ``check_available``, None also when it has no device."""
    t = _built_type()
    if t is None or (check_available and not is_available()):
        return None
    return _torch().device(t)


def current_device_index() -> int:
    """Index of the calling thread's current device."""
    return int(_module().current_device())


def set_device_index(device: Any, /) -> None:
    """Makes ``device`` current; a negative index is a no-op (even without an
    accelerator, as PyTorch 2.13's, whose _accelerator_setDeviceIndex returns
    before it asks for one)."""
    index = _get_device_index(device, optional=False)
    if index < 0:
        return
    _module().set_device(index)


def _deprecated_alias(fn: Any, old: str) -> Any:
    """``torch.accelerator.<old>``: PyTorch's deprecated alias of ``fn``
    (typing_extensions.deprecated, a FutureWarning "Use `<name>` instead.")."""
    import functools
    import warnings

    message = f"Use `{fn.__name__}` instead."

    @functools.wraps(fn)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(message, FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__deprecated__ = message  # type: ignore[attr-defined]
    return alias


current_device_idx = _deprecated_alias(current_device_index, "current_device_idx")
set_device_idx = _deprecated_alias(set_device_index, "set_device_idx")


def get_device_capability(device: Any = None, /) -> "dict[str, Any]":
    """The device's capabilities: ``{"supported_dtypes": set of dtypes}``, the
    dtypes a tensor can be allocated in there (every dtype of this PyTorch,
    less float64 and complex128 on MPS, which has neither)."""
    _get_device_index(device, optional=True)  # its errors; one answer for every device
    t = _built_type()
    if t is None:
        raise RuntimeError(_NO_ACCELERATOR)
    torch = _torch()
    dtypes = {v for v in vars(torch).values() if isinstance(v, torch.dtype)}
    if t == "mps":
        dtypes -= {torch.float64, torch.complex128}
    return {"supported_dtypes": dtypes}


class device_index:  # noqa: N801 - PyTorch's name
    """Context manager: makes device ``device`` (an int, or None for no
    switch) current for the block and restores the previous one after it."""

    def __init__(self, device: Optional[int], /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            mod = _module()
            self.prev_idx = int(mod.current_device())
            if self.idx != self.prev_idx and self.idx >= 0:
                mod.set_device(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            mod = _module()
            if int(mod.current_device()) != self.prev_idx:
                mod.set_device(self.prev_idx)


def current_stream(device: Any = None, /) -> Any:
    """The current stream of ``device`` (default: the current device)."""
    index = _get_device_index(device, optional=True)  # PyTorch's order: the argument first
    return _module().current_stream(index)


def _is_stream(obj: Any) -> bool:
    torch = _torch()
    kinds = tuple(k for k in (getattr(torch, "Stream", None),
                              getattr(getattr(torch, "cuda", None), "Stream", None),
                              getattr(getattr(torch, "xpu", None), "Stream", None))
                  if isinstance(k, type))
    return isinstance(obj, kinds) if kinds else hasattr(obj, "device_index")


def set_stream(stream: Any) -> None:
    """Makes ``stream`` current, and its device the current device. Anything
    but a stream is a TypeError, as PyTorch's binding answers (None included,
    which torch.cuda.set_stream ignores)."""
    if not _is_stream(stream):
        raise TypeError("_accelerator_setStream(): incompatible function arguments. The "
                        "following argument types are supported:\n    1. (arg0: torch.Stream) "
                        f"-> None\n\nInvoked with: {stream!r}")  # PyTorch 2.13's words
    mod = _module()
    index = getattr(stream, "device_index", None)
    if index is None:
        index = getattr(getattr(stream, "device", None), "index", None)
    if index is not None and index >= 0 and int(mod.current_device()) != index:
        mod.set_device(index)
    mod.set_stream(stream)


def synchronize(device: Any = None, /) -> None:
    """Waits for every stream of ``device``; a no-op before the accelerator is initialized."""
    index = _get_device_index(device, optional=True)  # PyTorch's order: the argument first
    mod = _module()
    if _initialized(mod):
        mod.synchronize(index)


def empty_cache() -> None:
    """Frees the allocator's unused cached memory; a no-op before it is initialized."""
    mod = _module()
    if _initialized(mod):
        mod.empty_cache()


def empty_host_cache() -> None:
    """Frees the cached pinned host memory (PyTorch's CachingHostAllocator,
    through ``torch._C._host_emptyCache`` where this PyTorch has it); a no-op
    before the accelerator is initialized."""
    mod = _module()
    host_empty = getattr(_torch()._C, "_host_emptyCache", None)
    if host_empty is not None and _initialized(mod):
        host_empty()


def memory_stats(device_index: Any = None, /) -> "OrderedDict[str, Any]":
    """The allocator's statistics, flattened and sorted (empty before it is initialized)."""
    mod = _module()
    if not _initialized(mod):
        return OrderedDict()
    stats = mod.memory_stats(_get_device_index(device_index, optional=True))
    return OrderedDict(sorted(stats.items()))


def memory_allocated(device_index: Any = None, /) -> int:
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index: Any = None, /) -> int:
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index: Any = None, /) -> int:
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index: Any = None, /) -> int:
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_accumulated_memory_stats(device_index: Any = None, /) -> None:
    mod = _module()
    index = _get_device_index(device_index, optional=True)
    if _initialized(mod):
        mod.reset_accumulated_memory_stats(index)


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    mod = _module()
    index = _get_device_index(device_index, optional=True)
    if _initialized(mod):
        mod.reset_peak_memory_stats(index)


def get_memory_info(device_index: Any = None, /) -> "tuple[int, int]":
    """(free, total) device memory in bytes."""
    index = _get_device_index(device_index, optional=True)  # PyTorch's order: the argument first
    free, total = _module().mem_get_info(index)
    return int(free), int(total)


for _name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
              "max_memory_reserved"):
    globals()[_name].__doc__ = (f"``torch.accelerator.{_name}`` for PyTorch versions before it: "
                                "the matching key of memory_stats(), 0 if absent.")
for _name in ("reset_accumulated_memory_stats", "reset_peak_memory_stats"):
    globals()[_name].__doc__ = f"``torch.accelerator.{_name}`` for PyTorch versions before it."
del _name

# --- install / uninstall ----------------------------------------------------------

_added: list[str] = []
_created_module: Optional[types.ModuleType] = None


def installed() -> list[str]:
    """The names the backport has added to ``torch.accelerator`` (all of
    :data:`NAMES` on a PyTorch without the module; none on 2.10 and later)."""
    return list(_added)


def install() -> list[str]:
    """Adds to ``torch.accelerator`` the functions of :data:`NAMES` it lacks
    (creating the module when PyTorch has none); returns the names added.
    Idempotent; never replaces anything PyTorch has."""
    global _created_module
    torch = _torch()
    acc = torch.__dict__.get("accelerator")
    if acc is None:
        try:  # a submodule that exists but was not imported yet
            import importlib

            acc = importlib.import_module("torch.accelerator")
        except ImportError:
            acc = None
    if acc is None:
        acc = types.ModuleType(
            "torch.accelerator",
            "torch.accelerator, backported by anydev for a PyTorch without it "
            "(see anydev._torch.backport).")
        acc.__anydev_backport__ = True  # type: ignore[attr-defined]
        acc.__all__ = []  # type: ignore[attr-defined]
        _created_module = acc
        torch.accelerator = acc
        sys.modules["torch.accelerator"] = acc
    me = sys.modules[__name__]
    for name in NAMES:
        if name in acc.__dict__:
            continue
        setattr(acc, name, getattr(me, name))
        _added.append(name)
        if _created_module is not None:
            acc.__all__.append(name)  # type: ignore[attr-defined]
    _install_memory_module(acc)
    return list(_added)


_created_memory: Optional[types.ModuleType] = None


def _install_memory_module(acc: Any) -> None:
    """``import torch.accelerator.memory`` works, as on 2.9 and later: a module
    of the memory functions where this PyTorch has none."""
    global _created_memory
    if _created_memory is not None or "torch.accelerator.memory" in sys.modules:
        return
    if _created_module is None:  # PyTorch's own package: it may have the submodule
        import importlib.util

        try:
            if importlib.util.find_spec("torch.accelerator.memory") is not None:
                return
        except (ImportError, ValueError):
            pass
    mem = types.ModuleType("torch.accelerator.memory",
                           "torch.accelerator.memory, backported by anydev.")
    for name in MEMORY_NAMES:
        setattr(mem, name, getattr(acc, name))
    mem.__all__ = list(MEMORY_NAMES)  # type: ignore[attr-defined]
    _created_memory = mem
    sys.modules["torch.accelerator.memory"] = mem
    if "memory" not in acc.__dict__:
        acc.memory = mem


def _uninstall_memory_module() -> None:
    global _created_memory
    if _created_memory is None:
        return
    if sys.modules.get("torch.accelerator.memory") is _created_memory:
        del sys.modules["torch.accelerator.memory"]
    acc = sys.modules.get("torch.accelerator")
    if acc is not None and acc.__dict__.get("memory") is _created_memory:
        del acc.memory
    _created_memory = None


def uninstall() -> None:
    """Removes exactly what :func:`install` added."""
    global _created_module
    _uninstall_memory_module()
    torch = sys.modules.get("torch")
    if torch is None:
        _added.clear()
        return
    if _created_module is not None:
        if torch.__dict__.get("accelerator") is _created_module:
            del torch.accelerator
        if sys.modules.get("torch.accelerator") is _created_module:
            del sys.modules["torch.accelerator"]
        _created_module = None
    else:
        acc = torch.__dict__.get("accelerator")
        me = sys.modules[__name__]
        for name in _added:
            if acc is not None and acc.__dict__.get(name) is getattr(me, name):
                delattr(acc, name)
    _added.clear()
