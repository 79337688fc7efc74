"""Device memory in the top namespace (rule 2): the allocator statistics and
calls with an optional ``device`` whose default is the current device of the
current accelerator, else the CPU, and :class:`Buffer`.

    anydev.memory_allocated()             # the current accelerator device
    anydev.memory_allocated("sim:1")      # a given device
    anydev.empty_cache("sim")             # every sim device
    buf = anydev.Buffer(1 << 20)          # 1 MiB on the current device
    host = anydev.HostBuffer(1 << 20)     # 1 MiB of pinned host memory

A ``device`` may be an ``anydev.device``, a string (``"sim:1"``, ``"sim"`` for
the current sim device), or an int (an index of the current accelerator).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` and `collections` cost `import anydev` start-up time
    from collections import OrderedDict
    from typing import Any

from anydev import _C
from anydev._C import Buffer, HostBuffer

__all__ = [
    "Buffer",
    "HostBuffer",
    "empty_cache",
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


def memory_stats(device: _Device = None) -> "OrderedDict[str, Any]":
    """Returns the caching allocator's statistics of ``device`` as the flat,
    key-sorted OrderedDict of ``torch.accelerator.memory_stats``."""
    from collections import OrderedDict

    return OrderedDict(_C._memory_stats(device))


def memory_allocated(device: _Device = None) -> int:
    """Returns ``allocated_bytes.all.current`` of ``device``."""
    return _C._memory_stat(device, 0)


def max_memory_allocated(device: _Device = None) -> int:
    """Returns ``allocated_bytes.all.peak`` of ``device``."""
    return _C._memory_stat(device, 1)


def memory_reserved(device: _Device = None) -> int:
    """Returns ``reserved_bytes.all.current`` of ``device``."""
    return _C._memory_stat(device, 2)


def max_memory_reserved(device: _Device = None) -> int:
    """Returns ``reserved_bytes.all.peak`` of ``device``."""
    return _C._memory_stat(device, 3)


def reset_peak_memory_stats(device: _Device = None) -> None:
    """Sets every ``.peak`` statistic of ``device`` to its current value."""
    _C._reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device: _Device = None) -> None:
    """Zeroes the accumulated statistics of ``device``."""
    _C._reset_accumulated_memory_stats(device)


def empty_cache(device: _Device = None) -> None:
    """Returns cached, unused memory to the device: of ``device`` when it has
    an index, of every device of its type when it has none (``"sim"``), of
    every device of the current accelerator (else the CPU) when None."""
    _C._empty_cache(device)


def get_memory_info(device: _Device = None) -> "tuple[int, int]":
    """Returns ``(free, total)`` bytes of ``device`` as the device reports them."""
    return _C._get_memory_info(device)
