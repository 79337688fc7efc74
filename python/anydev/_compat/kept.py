"""anydev's implementations of device-specific entry points that PyTorch keeps
in ``torch.cuda``/``torch.xpu`` (rule 4), where a backend can answer them.

Like the legacy forwarders, they act on the current accelerator, so legacy
code that asks ``torch.cuda.get_device_name(0)`` gets the name of device 0 of
whatever accelerator runs it. They are not deprecated: no warning, no count.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from anydev import _C


# c10::DeviceType values, as anydev::DeviceType (core/include/anydev/device.h).
_DEVICE_TYPE_INT = {"cpu": 0, "cuda": 1, "hip": 6, "xpu": 12, "sim": 20}


def _index(shim: Any, device: Any) -> int:
    if device is None:
        return _C._fast.current_device_index()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    device = shim.retype_device(device)
    return _C._acc_device_index_of(device, True)


def implementation(name: str, shim: Any) -> Optional[Callable[..., Any]]:
    """Returns anydev's implementation of the kept entry point ``name``, or None."""

    def get_device_properties(device: Any = None):
        """Properties of ``device`` (default: current) of the current accelerator."""
        acc = _C._acc_current_accelerator(False)
        if acc is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return _C.get_device_properties(_C.device(acc.type, _index(shim, device)))

    def get_device_name(device: Any = None) -> str:
        """Name of ``device`` (default: current) of the current accelerator."""
        return get_device_properties(device).name

    def get_device_capability(device: Any = None) -> tuple[int, int]:
        """(major, minor) compute capability, as the backend reports it ((0, 0) on sim)."""
        p = get_device_properties(device)
        return (p.major, p.minor)

    def default_stream(device: Any = None) -> "_C.Stream":
        """The default stream (id 0) of ``device`` (default: current)."""
        acc = _C._acc_current_accelerator(False)
        if acc is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        d = _C.device(acc.type, _index(shim, device))
        return _C.Stream(stream_id=0, device_index=d.index, device_type=_DEVICE_TYPE_INT[d.type])

    def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
        """A human-readable table of the caching allocator's statistics of
        ``device`` (default: current) of the current accelerator, in the
        layout of torch.cuda.memory_summary (torch/cuda/memory.py): per
        metric its current, peak, allocated and freed totals, for all blocks
        and (unless ``abbreviated``) the large and small pools."""
        acc = _C._acc_current_accelerator(False)
        if acc is None:
            raise RuntimeError("Cannot access accelerator device when none is available.")
        index = _index(shim, device)
        return _summary(dict(_C._acc_memory_stats(index)), acc.type, index, abbreviated)

    def is_initialized() -> bool:
        """True: anydev initialises backends on first use."""
        return True

    def init() -> None:
        """Initialises the current accelerator (probing it), as torch.cuda.init."""
        _C._acc_device_count()

    impls = {
        "get_device_properties": get_device_properties,
        "get_device_name": get_device_name,
        "get_device_capability": get_device_capability,
        "default_stream": default_stream,
        "is_initialized": is_initialized,
        "memory_summary": memory_summary,
        "init": init,
    }
    fn = impls.get(name)
    if fn is not None:
        fn.__module__ = shim.module
        fn.__qualname__ = name
    return fn


def _size(n: int, scale: int) -> str:
    """Bytes in the unit that ``scale`` (the row's first value) reads best in."""
    units = ("B  ", "KiB", "MiB", "GiB", "TiB", "PiB")
    unit = 0
    while unit + 1 < len(units) and scale >= 768 * 1024:
        n //= 1024
        scale //= 1024
        unit += 1
    return f"{n:6d} {units[unit]}"


def _count(n: int, scale: int) -> str:
    units = (" ", "K", "M")
    unit = 0
    while unit + 1 < len(units) and scale >= 750 * 1000:
        n //= 1000
        scale //= 1000
        unit += 1
    return f"{n:7d} {units[unit]} "


_SUMMARY_METRICS = (
    ("allocated_bytes", "Allocated memory", _size),
    ("active_bytes", "Active memory", _size),
    ("requested_bytes", "Requested memory", _size),
    ("reserved_bytes", "Reserved memory", _size),
    ("inactive_split_bytes", "Non-releasable memory", _size),
    ("allocation", "Allocations", _count),
    ("active", "Active allocs", _count),
    ("segment", "Reserved segments", _count),
    ("inactive_split", "Non-releasable allocs", _count),
)


def _summary(stats: dict, acc_type: str, index: int, abbreviated: bool) -> str:
    """memory_summary's text from a flat memory_stats() dict (a key it lacks counts 0)."""
    rule, thick = "-" * 75, "=" * 75
    lines = [thick,
             f"anydev {acc_type} memory summary, device ID {index}".center(75),
             rule,
             (f"  OOMs: {stats.get('num_ooms', 0):<12d} | "
              f"allocation retries: {stats.get('num_alloc_retries', 0)}").ljust(75),
             thick,
             "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]
    pools = [("all", None)] + ([] if abbreviated else [("large_pool", "      from large pool"),
                                                       ("small_pool", "      from small pool")])
    for key, title, fmt in _SUMMARY_METRICS:
        lines.append(rule)
        first = None
        for pool, name in pools:
            values = [stats.get(f"{key}.{pool}.{k}", 0)
                      for k in ("current", "peak", "allocated", "freed")]
            first = first or values
            cells = " | ".join(fmt(v, s) for v, s in zip(values, first))
            lines.append(f" {name or title:<21} | {cells} ")
    for key, title in (("oversize_allocations", "Oversize allocations"),
                       ("oversize_segments", "Oversize segments")):
        lines.append(rule)
        values = [stats.get(f"{key}.{k}", 0) for k in ("current", "peak", "allocated", "freed")]
        lines.append(f" {title:<21} | " + " | ".join(_count(v, v) for v in values) + " ")
    lines.append(thick)
    return "|" + "|\n|".join(lines) + "|\n"
