"""The current accelerator, as ``torch.accelerator`` (``anydev.acc`` is this
same module).

Every call acts on the current accelerator: the first available of cuda, hip,
xpu and sim, or the type named by ``ANYDEV_ACCELERATOR``. The CPU is never an
accelerator. The current device index, and the current stream of each device,
belong to the calling thread.
"""

from __future__ import annotations

import sys as _sys

from . import _C
from ._runtime import accelerator_memory as memory
from ._C import _fast
from ._runtime.accelerator_memory import *  # noqa: F401,F403
from ._runtime import graph as graphs
from ._runtime.graph import Graph

# `anydev.accelerator.memory` and `.graphs` are importable, as
# torch.accelerator.memory and torch.accelerator.graphs (2.13) are.
_sys.modules[__name__ + ".memory"] = memory
_sys.modules[__name__ + ".graphs"] = graphs

__all__ = [
    "Graph",
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
    "empty_host_cache",
    "get_device_capability",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "set_device_idx",
    "set_device_index",
    "set_stream",
    "synchronize",
]

# The hot calls are CPython-API functions bound directly, without a Python
# frame in between (see python/src/fast_calls.cc).
current_device_index = _fast.current_device_index
set_device_index = _fast.set_device_index
current_stream = _fast.current_stream
device_index = _fast.device_index


def device_count() -> int:
    """Returns the number of devices of the current accelerator, 0 if none."""
    return _C._acc_device_count()


def is_available() -> bool:
    """True when there is a current accelerator with at least one device."""
    return _C._acc_is_available()


def current_accelerator(check_available: bool = False) -> "_C.device | None":
    """Returns the current accelerator as a device without index, or None if
    there is none. With ``check_available=True`` an accelerator that has no
    usable device also gives None, and so does a misconfigured ``ANYDEV_*``
    variable: this never raises (the calls that need the device, and
    ``anydev doctor``, say what is wrong). Unchecked, a type forced by
    ``ANYDEV_ACCELERATOR`` whose backend is built is named even when it has no
    device (torch's compile-time answer)."""
    return _C._acc_current_accelerator(check_available)


# What a buffer of any backend can hold and copy: anydev's memory is bytes,
# so every fixed-size torch dtype (named as torch names it, without the
# "torch." prefix) is supported everywhere; the sub-byte and quantized types
# need kernels to convert and are not listed.
_SUPPORTED_DTYPES = frozenset({
    "bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
})


def get_device_capability(device: "_C.device | str | int | None" = None, /) -> "dict[str, Any]":
    """Returns what ``device`` (default: the current device) supports, as
    ``torch.accelerator.get_device_capability``: ``{"supported_dtypes":
    set}``. anydev does not import torch, so the dtypes are their torch names
    (``"float32"``); ``{getattr(torch, n) for n in caps["supported_dtypes"]}``
    gives torch's. The device is checked as every accelerator call checks it."""
    index = _C._acc_device_index_of(device, True)
    _C._acc_check_index(index)
    return {"supported_dtypes": set(_SUPPORTED_DTYPES)}


def set_stream(stream: "_C.Stream") -> None:
    """Makes ``stream`` the current stream of its device, and that device the
    current device, for the calling thread."""
    _C._acc_set_stream(stream)


def synchronize(device: "_C.device | str | int | None" = None, /) -> None:
    """Waits for all work on every stream of ``device`` (default: current)."""
    _C._acc_synchronize(device)


def __dir__() -> "list[str]":
    # The lazily loaded deprecated aliases are part of the module, as on torch.
    return sorted(set(globals()) | {"current_device_idx", "set_device_idx"})


def __getattr__(name: str):
    # The deprecated aliases are table-generated forwarders (counted, warned
    # once per call site); loaded on first use so `import anydev` stays cheap.
    if name in ("current_device_idx", "set_device_idx"):
        from ._compat import legacy_accelerator as _legacy_accelerator

        return getattr(_legacy_accelerator, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
