"""The memory calls of ``anydev.accelerator``, as ``torch.accelerator``'s
(``torch/accelerator/memory.py``): they act on the current accelerator, and a
``device_index`` of None is its current device.

The statistics come from anydev's caching allocator (docs/memory.md), with the
keys and meanings of PyTorch's CUDACachingAllocator. Unlike PyTorch, whose
allocator may not be initialised yet, ``memory_stats`` always returns every
key (all zero before the first allocation).
"""

from __future__ import annotations

from anydev import _C

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` and `collections` cost `import anydev` start-up time
    from collections import OrderedDict
    from typing import Any

__all__ = [
    "empty_cache",
    "empty_host_cache",
    "get_memory_info",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
]

_Device = "_C.device | str | int | None"


def empty_cache() -> None:
    """Returns the unused memory the caching allocator holds on every device
    of the current accelerator to the device (it stays usable by anydev;
    other processes and libraries can then use it). Memory in use is not
    touched. Waits for the device when there is something to release."""
    _C._acc_empty_cache()


def empty_host_cache() -> None:
    """Returns the pinned host memory the host caching allocator holds unused
    to the system (page-locked memory of the current accelerator, ordinary
    host memory where it has none), as ``torch.accelerator.empty_host_cache``.
    Memory in use is not touched."""
    _C._acc_empty_host_cache()


def memory_stats(device_index: _Device = None, /) -> "OrderedDict[str, Any]":
    """Returns the caching allocator's statistics of ``device_index``
    (default: the current device) as a flat, key-sorted OrderedDict, as
    ``torch.accelerator.memory_stats``: ``num_alloc_retries``, ``num_ooms``,
    ``max_split_size``, ``num_sync_all_streams``, ``num_device_alloc``,
    ``num_device_free``, then ``{allocated_bytes, reserved_bytes,
    active_bytes, requested_bytes, allocation, segment, active,
    inactive_split, inactive_split_bytes}.{all, small_pool,
    large_pool}.{current, peak, allocated, freed}`` and
    ``oversize_{allocations,segments}.{current, peak, allocated, freed}``."""
    from collections import OrderedDict

    return OrderedDict(_C._acc_memory_stats(device_index))


def memory_allocated(device_index: _Device = None, /) -> int:
    """Returns the bytes of device memory held by live allocations
    (``allocated_bytes.all.current``), rounded as the allocator rounds."""
    return _C._acc_memory_stat(device_index, 0)


def max_memory_allocated(device_index: _Device = None, /) -> int:
    """Returns the peak of :func:`memory_allocated` since the start or the
    last :func:`reset_peak_memory_stats` (``allocated_bytes.all.peak``)."""
    return _C._acc_memory_stat(device_index, 1)


def memory_reserved(device_index: _Device = None, /) -> int:
    """Returns the bytes of device memory the caching allocator holds,
    allocated or cached (``reserved_bytes.all.current``)."""
    return _C._acc_memory_stat(device_index, 2)


def max_memory_reserved(device_index: _Device = None, /) -> int:
    """Returns the peak of :func:`memory_reserved` (``reserved_bytes.all.peak``)."""
    return _C._acc_memory_stat(device_index, 3)


def reset_accumulated_memory_stats(device_index: _Device = None, /) -> None:
    """Zeroes the accumulated statistics (every ``.allocated`` and ``.freed``
    and the ``num_*`` counts) of ``device_index``."""
    _C._acc_reset_accumulated_memory_stats(device_index)


def reset_peak_memory_stats(device_index: _Device = None, /) -> None:
    """Sets every ``.peak`` statistic of ``device_index`` to its current value."""
    _C._acc_reset_peak_memory_stats(device_index)


def get_memory_info(device_index: _Device = None, /) -> "tuple[int, int]":
    """Returns ``(free, total)`` bytes of ``device_index`` as the device
    reports them; memory cached by the allocator counts as used."""
    return _C._acc_get_memory_info(device_index)
