"""``torch.sim``: the device module of anydev's simulated accelerator inside
PyTorch, registered by :func:`anydev.torch.register_sim` with
``torch._register_device_module("sim", ...)``.

It has the names PyTorch looks up on a device module (``device_count``,
``is_available``, ``current_device``, ``_is_in_bad_fork``, ``manual_seed_all``,
``get_amp_supported_dtype``, ``get_rng_state`` ...: see
``torch.utils.backend_registration.rename_privateuse1_backend``) and the rest of
the torch.cuda-style API that works on any accelerator. While sim is
registered it is PyTorch's current accelerator (PrivateUse1 comes first in
``at::getAccelerator``), so the calls go through ``torch.accelerator``.
"""

from __future__ import annotations

import types
from typing import Any, Callable

import torch

DEVICE_TYPE = "sim"
_PRIVATEUSE1 = 20  # c10::DeviceType::PrivateUse1, as torch.Stream.device_type gives it


def build(device_count: int, in_bad_fork: Callable[[], bool]) -> types.ModuleType:
    """Returns the ``torch.sim`` module for ``device_count`` devices;
    ``in_bad_fork`` answers torch.sim._is_in_bad_fork()."""
    mod = types.ModuleType("torch.sim", __doc__)
    made: list[torch.Generator] = []

    def generators() -> list[torch.Generator]:
        # Made on first use: resolving torch.ops.anydev_sim costs register_sim
        # ~10 ms otherwise.
        if not made:
            made.extend(torch.ops.anydev_sim.default_generator(i) for i in range(device_count))
        return made

    def _index(device: Any = None) -> int:
        if device is None:
            return torch.accelerator.current_device_index()
        if isinstance(device, int) and not isinstance(device, bool):
            return torch.accelerator.current_device_index() if device == -1 else device
        d = torch.device(device)
        if d.type != DEVICE_TYPE:
            raise ValueError(f"Expected a sim device, but got: {d}")
        return torch.accelerator.current_device_index() if d.index is None else d.index

    def is_available() -> bool:
        """True: sim is registered (it has at least one device)."""
        return device_count > 0

    def _device_count() -> int:
        """Returns the number of sim devices."""
        return device_count

    def is_initialized() -> bool:
        """True: sim needs no lazy initialisation."""
        return True

    def _lazy_init() -> None:
        """Does nothing: sim is initialised when it is registered."""

    def _is_in_bad_fork() -> bool:
        """True in a process forked after its parent used sim (sim cannot be
        used there; torch.manual_seed skips it)."""
        return in_bad_fork()

    def current_device() -> int:
        """Returns the calling thread's current sim device index."""
        return torch.accelerator.current_device_index()

    def set_device(device: Any) -> None:
        """Makes ``device`` the calling thread's current sim device."""
        torch.accelerator.set_device_index(_index(device))

    def synchronize(device: Any = None) -> None:
        """Waits for all work queued on every stream of ``device``."""
        torch.accelerator.synchronize(_index(device))

    def current_stream(device: Any = None) -> torch.Stream:
        """Returns the calling thread's current stream of ``device``."""
        return torch.accelerator.current_stream(_index(device))

    def default_stream(device: Any = None) -> torch.Stream:
        """Returns the default stream of ``device``."""
        return torch.Stream(stream_id=0, device_index=_index(device), device_type=_PRIVATEUSE1)

    def set_stream(stream: torch.Stream) -> None:
        """Makes ``stream`` (and its device) current for the calling thread."""
        if stream is not None:
            torch.accelerator.set_stream(stream)

    class device:  # noqa: N801 (torch.cuda.device's name)
        """Context manager that makes a sim device current, as torch.cuda.device."""

        def __init__(self, device: Any) -> None:
            self.idx = -1 if device is None else _index(device)
            self.prev_idx = -1

        def __enter__(self) -> None:
            self.prev_idx = torch.accelerator.current_device_index()
            if self.idx >= 0:
                torch.accelerator.set_device_index(self.idx)

        def __exit__(self, *exc: object) -> None:
            if self.idx >= 0:
                torch.accelerator.set_device_index(self.prev_idx)

    def stream(s: torch.Stream | None) -> Any:
        """Context manager that makes ``s`` current (None: does nothing)."""
        import contextlib

        return contextlib.nullcontext() if s is None else s

    # --- random numbers: one generator per device (Note [Sim generators]) --------

    def manual_seed(seed: int) -> None:
        """Seeds the current sim device's generator."""
        generators()[current_device()].manual_seed(int(seed))

    def manual_seed_all(seed: int) -> None:
        """Seeds every sim device's generator."""
        for g in generators():
            g.manual_seed(int(seed))

    def seed() -> None:
        """Seeds the current sim device's generator with a random number."""
        generators()[current_device()].seed()

    def seed_all() -> None:
        """Seeds every sim device's generator with one random number."""
        s = generators()[0].seed()
        for g in generators()[1:]:
            g.manual_seed(s)

    def initial_seed() -> int:
        """Returns the current sim device's generator's seed."""
        return generators()[current_device()].initial_seed()

    def get_rng_state(device: Any = DEVICE_TYPE) -> torch.Tensor:
        """Returns the random state of ``device`` as a ByteTensor."""
        return generators()[_index(device)].get_state()

    def set_rng_state(new_state: torch.Tensor, device: Any = DEVICE_TYPE) -> None:
        """Sets the random state of ``device``."""
        state = new_state.clone(memory_format=torch.contiguous_format)
        generators()[_index(device)].set_state(state)

    def get_rng_state_all() -> list[torch.Tensor]:
        """Returns the random state of every sim device."""
        return [g.get_state() for g in generators()]

    def set_rng_state_all(new_states: Any) -> None:
        """Sets the random state of every sim device."""
        for i, state in enumerate(new_states):
            set_rng_state(state, i)

    # --- memory: anydev's caching allocator --------------------------------------

    def memory_allocated(device: Any = None) -> int:
        """Returns the bytes of sim memory tensors occupy on ``device``."""
        return torch.accelerator.memory_allocated(_index(device))

    def max_memory_allocated(device: Any = None) -> int:
        """Returns the peak of memory_allocated since the last reset."""
        return torch.accelerator.max_memory_allocated(_index(device))

    def memory_reserved(device: Any = None) -> int:
        """Returns the bytes anydev's caching allocator holds on ``device``."""
        return torch.accelerator.memory_reserved(_index(device))

    def max_memory_reserved(device: Any = None) -> int:
        """Returns the peak of memory_reserved since the last reset."""
        return torch.accelerator.max_memory_reserved(_index(device))

    def memory_stats(device: Any = None) -> dict[str, Any]:
        """Returns the caching allocator's statistics of ``device``."""
        return torch.accelerator.memory_stats(_index(device))

    def reset_peak_memory_stats(device: Any = None) -> None:
        """Sets the peaks of ``device``'s statistics to their current values."""
        torch.accelerator.reset_peak_memory_stats(_index(device))

    def reset_accumulated_memory_stats(device: Any = None) -> None:
        """Zeroes the accumulated statistics of ``device``."""
        torch.accelerator.reset_accumulated_memory_stats(_index(device))

    def empty_cache() -> None:
        """Returns the cached, unused memory of every sim device."""
        torch.accelerator.empty_cache()

    def mem_get_info(device: Any = None) -> tuple[int, int]:
        """Returns (free, total) bytes of ``device``."""
        return torch.accelerator.get_memory_info(_index(device))

    def get_device_name(device: Any = None) -> str:
        """Returns the name of a sim device."""
        return get_device_properties(device).name

    def get_device_properties(device: Any = None) -> Any:
        """Returns anydev's properties of a sim device (name, total_memory, ...)."""
        import anydev

        return anydev.get_device_properties(f"{DEVICE_TYPE}:{_index(device)}")

    def get_device_capability(device: Any = None) -> dict[str, Any]:
        """Returns what the device supports (every dtype: the CPU kernels run)."""
        return torch.accelerator.get_device_capability(_index(device))

    def get_amp_supported_dtype() -> list[torch.dtype]:
        """Returns the dtypes torch.autocast("sim") accepts."""
        return [torch.float16, torch.bfloat16]

    def is_bf16_supported(including_emulation: bool = True) -> bool:
        """True: the CPU kernels support bfloat16."""
        return True

    def _sleep(seconds: float, stream: torch.Stream | None = None) -> None:
        """Queues ``seconds`` of busy time on ``stream`` (default: the current
        one) and returns at once, as torch.cuda._sleep: a testing aid."""
        import anydev.testing

        anydev.testing.sleep(seconds, stream if stream is not None else current_stream())

    names = {
        "is_available": is_available, "device_count": _device_count,
        "is_initialized": is_initialized, "_lazy_init": _lazy_init, "init": _lazy_init,
        "_is_in_bad_fork": _is_in_bad_fork, "current_device": current_device,
        "set_device": set_device, "synchronize": synchronize,
        "current_stream": current_stream, "default_stream": default_stream,
        "set_stream": set_stream, "device": device, "stream": stream,
        "Stream": torch.Stream, "Event": torch.Event,
        "manual_seed": manual_seed,
        "manual_seed_all": manual_seed_all, "seed": seed, "seed_all": seed_all,
        "initial_seed": initial_seed, "get_rng_state": get_rng_state,
        "set_rng_state": set_rng_state, "get_rng_state_all": get_rng_state_all,
        "set_rng_state_all": set_rng_state_all, "memory_allocated": memory_allocated,
        "max_memory_allocated": max_memory_allocated, "memory_reserved": memory_reserved,
        "max_memory_reserved": max_memory_reserved, "memory_stats": memory_stats,
        "reset_peak_memory_stats": reset_peak_memory_stats,
        "reset_accumulated_memory_stats": reset_accumulated_memory_stats,
        "empty_cache": empty_cache, "mem_get_info": mem_get_info,
        "get_device_name": get_device_name, "get_device_properties": get_device_properties,
        "get_device_capability": get_device_capability,
        "get_amp_supported_dtype": get_amp_supported_dtype,
        "is_bf16_supported": is_bf16_supported, "_sleep": _sleep,
    }
    for name, value in names.items():
        if callable(value) and not isinstance(value, type) and hasattr(value, "__qualname__"):
            value.__qualname__ = name
            value.__module__ = "torch.sim"
        setattr(mod, name, value)
    mod.__all__ = sorted([*(n for n in names if not n.startswith("_")), "default_generators"])

    def __getattr__(name: str) -> Any:
        if name == "default_generators":  # as torch.cuda.default_generators
            return tuple(generators())
        raise AttributeError(f"module 'torch.sim' has no attribute {name!r}")

    mod.__getattr__ = __getattr__  # type: ignore[attr-defined]
    return mod
