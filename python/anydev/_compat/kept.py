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
        "init": init,
    }
    fn = impls.get(name)
    if fn is not None:
        fn.__module__ = shim.module
        fn.__qualname__ = name
    return fn
