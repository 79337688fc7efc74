"""Builds the per-type device modules (``anydev.sim``, ``anydev.cpu``, ...).

Each module acts on one device type, whatever the current accelerator is, with
the names a PyTorch device module has (``device_count``, ``current_device``,
``set_device``, ``synchronize``, ``current_stream``, ``set_stream``,
``Stream``, ``Event``, ``device``, ``get_device_properties``, ...).
"""

from __future__ import annotations

from typing import Any

from anydev import _C


def populate(namespace: dict[str, Any], type_name: str) -> None:
    """Fills a module namespace with the device API of ``type_name``."""

    def _device(d: Any) -> "_C.device":
        # -1 means the current device, as in torch.cuda's calls.
        if d is None or (isinstance(d, int) and not isinstance(d, bool) and d == -1):
            return _C.device(type_name, _C._current_device_index(type_name))
        if isinstance(d, int) and not isinstance(d, bool):
            return _C.device(type_name, d)
        dev = _C.device(d)
        if dev.type != type_name:
            raise ValueError(f"{dev} is not a {type_name} device")
        return dev

    def device_count() -> int:
        """Returns the number of devices of this type (0 when unavailable)."""
        return _C.device_count(type_name)

    def is_available() -> bool:
        """True when this type has at least one device."""
        return _C.is_available(type_name)

    def current_device() -> int:
        """Returns the calling thread's current device index of this type."""
        return _C._current_device_index(type_name)

    def set_device(device: Any) -> None:
        """Makes ``device`` the calling thread's current device of this type."""
        _C._set_device_index(type_name, device)

    def synchronize(device: Any = None) -> None:
        """Waits for all work on ``device`` (default: current) of this type."""
        _C.synchronize(_device(device))

    def current_stream(device: Any = None) -> "_C.Stream":
        """Returns the calling thread's current stream of ``device``."""
        return _C._current_stream(_device(device))

    def set_stream(stream: "_C.Stream") -> None:
        """Makes ``stream`` current on its device and that device current, as
        ``torch.cuda.set_stream`` does; None does nothing."""
        if stream is None:
            return
        if not isinstance(stream, _C.Stream):
            raise TypeError(f"set_stream() expects an anydev.Stream, got {stream!r}")
        if stream.device.type != type_name:
            raise ValueError(f"{stream!r} is not a {type_name} stream")
        _C._set_current_stream(stream)
        _C._set_device_index(type_name, stream.device_index)

    def get_device_properties(device: Any = None):
        """Returns the properties of ``device`` (default: current)."""
        return _C.get_device_properties(_device(device))

    def get_device_name(device: Any = None) -> str:
        """Returns the name of ``device`` (default: current)."""
        return get_device_properties(device).name

    class device:  # noqa: N801 - PyTorch's name
        """Context manager that makes ``device`` current for the block."""

        def __init__(self, device: Any):
            # None and a negative index are no-ops, as torch.cuda.device.
            no_op = device is None or (
                isinstance(device, int) and not isinstance(device, bool) and device < 0)
            self.idx = -1 if no_op else _device(device).index
            self.prev_idx = -1

        def __enter__(self) -> None:
            if self.idx is not None and self.idx >= 0:
                self.prev_idx = current_device()
                set_device(self.idx)

        def __exit__(self, *exc: object) -> bool:
            if self.prev_idx >= 0:
                set_device(self.prev_idx)
            return False

    def Stream(device: Any = None, priority: int = 0, **kwargs: Any) -> "_C.Stream":  # noqa: N802
        """A new stream of ``device`` (default: current) of this type."""
        if kwargs:
            return _C.Stream(priority=priority, **kwargs)
        return _C.Stream(_device(device), priority=priority)

    def Event(enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):  # noqa: N802
        """A new event of this type."""
        return _C.Event(type_name, enable_timing=enable_timing, blocking=blocking,
                        interprocess=interprocess)

    namespace.update(
        device_count=device_count,
        is_available=is_available,
        current_device=current_device,
        set_device=set_device,
        synchronize=synchronize,
        current_stream=current_stream,
        set_stream=set_stream,
        get_device_properties=get_device_properties,
        get_device_name=get_device_name,
        device=device,
        Stream=Stream,
        Event=Event,
    )
    for name in ("device", "Stream", "Event"):
        namespace[name].__module__ = namespace["__name__"]
        namespace[name].__qualname__ = name
    namespace["__all__"] = sorted(k for k in namespace if not k.startswith("_") and k != "annotations")
