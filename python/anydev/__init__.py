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


import os as _os
import sys as _sys

# Note [Lazy top namespace]: `import anydev` loads nothing native. The runtime
# (anydev._C, with libanydev and its Abseil libraries: most of the start-up
# cost, benchmarks/python/bench_startup.py) loads on the first use of a name
# that needs it (`anydev.Stream`, `anydev.accelerator`),
# through the module __getattr__ below (PEP 562); `from anydev import Stream`
# and `import anydev.acc` work as before. So `anydev scan` and the other
# commands that need no device never pay for the runtime.

# name -> the module that defines it.
_LAZY = {
    "Event": "_C", "OutOfMemoryError": "_C", "Stream": "_C", "device": "_C",
    "device_count": "_C", "get_device_properties": "_C", "is_available": "_C",
    "synchronize": "_C",
    **dict.fromkeys(("Buffer", "HostBuffer", "empty_cache", "get_memory_info",
                     "max_memory_allocated", "max_memory_reserved", "memory_allocated",
                     "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
                     "reset_peak_memory_stats"), "_runtime.memory"),
}

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
    return [cls(*row) for row in _load("_C")._backends()]


_DEVICE_MODULES = ("cpu", "cuda", "hip", "xpu", "sim")


def get_device_module(device: "device | str | None" = None):
    """Returns the device module for ``device`` (``anydev.sim`` for "sim:0"),
    or for the current accelerator (else ``anydev.cpu``) when None, as
    ``torch.get_device_module``."""
    _C = _load("_C")
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
    return _load(name)


def _load(name: str):
    import importlib

    return importlib.import_module(f"anydev.{name}")


def __getattr__(name: str):
    # Submodules, the runtime's names and BackendInfo load on first use so
    # that `import anydev` stays cheap (Note [Lazy top namespace]).
    where = _LAZY.get(name)
    if where is not None:
        value = getattr(_load(where), name)
    elif name == "__version__":
        value = _load("_version").__version__
    elif name in ("accelerator", "acc"):
        value = _load("accelerator")
    elif name == "BackendInfo":
        return _backend_info_class()
    elif name == "_C" or name in _DEVICE_MODULES or name in ("testing", "compat", "report"):
        return _load(name)
    else:
        raise AttributeError(f"module 'anydev' has no attribute '{name}'")
    globals()[name] = value
    return value


def __dir__() -> "list[str]":
    return sorted(set(globals()) | set(_LAZY) | {"__version__", "accelerator", "acc",
                                                 "BackendInfo", *_DEVICE_MODULES})
