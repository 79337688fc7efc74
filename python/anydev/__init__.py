"""anydev: PyTorch's device-generic runtime API over any accelerator.

The top namespace holds device-generic calls that take an optional device or
device type (rule 2 of PyTorch's device API proposal); ``anydev.accelerator``
(also ``anydev.acc``) acts on the current accelerator (rule 3); the device
modules ``anydev.cuda``, ``anydev.xpu``, ``anydev.sim`` ... keep what is
specific to one device type (rule 4).

    import anydev
    anydev.accelerator.current_accelerator()      # device(type='sim') with ANYDEV_SIM_DEVICES=2
    s = anydev.Stream()                           # a stream of the current device
    with s:
        ...
"""

from __future__ import annotations

import importlib as _importlib
import os as _os
import sys as _sys

from . import _C, accelerator
from ._C import (
    Event,
    OutOfMemoryError,
    Stream,
    device,
    device_count,
    get_device_properties,
    is_available,
    synchronize,
)
from ._memory import (Buffer, HostBuffer, empty_cache, get_memory_info, max_memory_allocated,  # noqa: F401
                      max_memory_reserved, memory_allocated, memory_reserved, memory_stats,
                      reset_accumulated_memory_stats, reset_peak_memory_stats)

__version__ = _C._version()

# `anydev.acc` is the same module object as `anydev.accelerator` (the name
# PyTorch proposed, `torch.acc`); importable either way.
acc = accelerator
_sys.modules["anydev.acc"] = accelerator

if _os.environ.get("ANYDEV_REPORT"):
    # Write the runtime report of legacy calls at exit (see anydev.report).
    from . import report as _report

    _report._enable_from_environment()

__all__ = [
    "BackendInfo",
    "Buffer",
    "Event",
    "HostBuffer",
    "OutOfMemoryError",
    "Stream",
    "acc",
    "accelerator",
    "backends",
    "device",
    "device_count",
    "empty_cache",
    "get_device_module",
    "get_cmake_dir",
    "get_device_properties",
    "get_include",
    "get_memory_info",
    "is_available",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "synchronize",
]


def _backend_info_class():
    # A NamedTuple, defined on first use: `typing` costs `import anydev` a few
    # milliseconds (benchmarks/python/bench_startup.py).
    from typing import NamedTuple

    class BackendInfo(NamedTuple):
        """What anydev knows about one backend (see ``anydev doctor``)."""

        name: str
        built: bool
        available: bool
        device_count: int
        reason: str

    BackendInfo.__module__, BackendInfo.__qualname__ = __name__, "BackendInfo"
    globals()["BackendInfo"] = BackendInfo
    return BackendInfo


def get_include() -> str:
    """Returns the folder of anydev's C++ headers in this installation."""
    import os

    return os.path.join(os.path.dirname(__file__), "include")


def get_cmake_dir() -> str:
    """Returns the folder of anydev's CMake package, for
    ``cmake -Danydev_DIR=$(python -c 'import anydev; print(anydev.get_cmake_dir())')``."""
    import os

    return os.path.join(os.path.dirname(__file__), "lib", "cmake", "anydev")


def backends() -> "list[BackendInfo]":
    """Returns one record per backend (cuda, hip, xpu, sim, cpu): whether it is
    built, whether it is available, its device count, and why not."""
    cls = globals().get("BackendInfo") or _backend_info_class()
    return [cls(*row) for row in _C._backends()]


_DEVICE_MODULES = ("cpu", "cuda", "hip", "xpu", "sim")


def get_device_module(device: "device | str | None" = None):
    """Returns the device module for ``device`` (``anydev.sim`` for "sim:0"),
    or for the current accelerator (else ``anydev.cpu``) when None, as
    ``torch.get_device_module``."""
    if device is None:
        name = _C._default_device_type()
    elif isinstance(device, (_C.device, str)):
        name = _C.device(device).type
    else:
        raise RuntimeError(
            f"Invalid value of device '{device}', expect anydev.device, str, or None"
        )
    if name not in _DEVICE_MODULES:  # pragma: no cover - every parsed type has one
        raise RuntimeError(
            f"Device '{name}' does not have a corresponding module registered as 'anydev.{name}'."
        )
    return _importlib.import_module(f"anydev.{name}")


def __getattr__(name: str):
    # Submodules (and BackendInfo) load on first use so that `import anydev`
    # stays cheap.
    if name == "BackendInfo":
        return _backend_info_class()
    if name in _DEVICE_MODULES or name in ("testing", "compat", "report"):
        return _importlib.import_module(f"anydev.{name}")
    raise AttributeError(f"module 'anydev' has no attribute '{name}'")
