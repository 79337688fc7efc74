"""The current accelerator, as ``torch.accelerator`` (``anydev.acc`` is this
same module).

Every call acts on the current accelerator: the first available of cuda, hip,
xpu and sim, or the type named by ``ANYDEV_ACCELERATOR``. The CPU is never an
accelerator. The current device index, and the current stream of each device,
belong to the calling thread.
"""

from __future__ import annotations

from . import _C
from ._C import _fast
from ._accelerator_memory import *  # noqa: F401,F403

__all__ = [
    "current_accelerator",
    "current_device_idx",
    "current_device_index",
    "current_stream",
    "device_count",
    "device_index",
    "empty_cache",
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
    usable device also gives None."""
    return _C._acc_current_accelerator(check_available)


def set_stream(stream: "_C.Stream") -> None:
    """Makes ``stream`` the current stream of its device, and that device the
    current device, for the calling thread."""
    _C._acc_set_stream(stream)


def synchronize(device: "_C.device | str | int | None" = None, /) -> None:
    """Waits for all work on every stream of ``device`` (default: current)."""
    _C._acc_synchronize(device)


def __getattr__(name: str):
    # The deprecated aliases are table-generated forwarders (counted, warned
    # once per call site); loaded on first use so `import anydev` stays cheap.
    if name in ("current_device_idx", "set_device_idx"):
        from . import _legacy_accelerator

        return getattr(_legacy_accelerator, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
