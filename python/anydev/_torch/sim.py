"""anydev's simulated accelerator as a real PyTorch device: ``sim``.

:func:`register_sim` makes anydev's ``sim`` backend PyTorch's PrivateUse1
backend, named ``sim``, in the running process. From then on PyTorch has a
non-CUDA accelerator on any machine: ``torch.accelerator`` answers it, tensors
live in anydev's sim memory (``torch.randn(4, device="sim")``), operators run
on PyTorch's CPU kernels over that memory, streams and events are anydev's
asynchronous sim streams, and ``torch.accelerator.memory_*`` report anydev's
caching allocator. ``torch.cuda`` stays what it is (unavailable on a machine
without CUDA), so CUDA-only code fails on sim as it would on an XPU or MPS.

    import torch, anydev.torch
    anydev.torch.register_sim(devices=2)
    model = MyModel().to("sim")

How: the C++ backend (``python/torch_sim/``) is compiled once per PyTorch
version into a cache (:mod:`anydev._torch.sim_build`), loaded with ctypes, and
handed anydev's C ABI (``anydev/c_api.h``); then the PrivateUse1 slot is
renamed and ``torch.sim`` (:mod:`anydev._torch.sim_module`) is registered.
``import anydev`` never imports torch; only register_sim does.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import threading
from pathlib import Path
from typing import Any

__all__ = ["register_sim", "registered_sim_devices"]

NAME = "sim"
MAX_DEVICES = 64

_lock = threading.Lock()
_registered = 0  # the device count once registered
_library: ctypes.CDLL | None = None


def registered_sim_devices() -> int:
    """Returns the number of sim devices registered in PyTorch in this
    process, 0 before :func:`register_sim` succeeds."""
    return _registered


def _device_count(devices: Any) -> int:
    """The device count to register: ``devices``, else ANYDEV_SIM_DEVICES,
    else 1; checked to be in 1..64."""
    if devices is not None:
        if isinstance(devices, bool) or not isinstance(devices, int):
            raise TypeError(f"register_sim: devices must be an int in 1..{MAX_DEVICES}, "
                            f"got {devices!r}")
        if not 1 <= devices <= MAX_DEVICES:
            raise ValueError(f"register_sim: devices must be in 1..{MAX_DEVICES}, got {devices}")
        return devices
    env = os.environ.get("ANYDEV_SIM_DEVICES", "")
    if not env:
        return 1
    try:
        n = int(env)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_DEVICES:
        raise ValueError(f"register_sim: ANYDEV_SIM_DEVICES={env!r} is not a device count in "
                         f"1..{MAX_DEVICES}")
    return n


def _missing_torch_features(torch: Any) -> list[str]:
    """Returns the PyTorch APIs register_sim needs that ``torch`` lacks."""
    checks = [
        ("torch.accelerator (with its memory API)",
         lambda: torch.accelerator.memory_stats and torch._C._accelerator_getDeviceStats),
        ("torch.utils.rename_privateuse1_backend", lambda: torch.utils.rename_privateuse1_backend),
        ("torch.utils.generate_methods_for_privateuse1_backend",
         lambda: torch.utils.generate_methods_for_privateuse1_backend),
        ("torch._register_device_module", lambda: torch._register_device_module),
        ("torch._C._get_privateuse1_backend_name", lambda: torch._C._get_privateuse1_backend_name),
        ("torch.Stream and torch.Event", lambda: torch.Stream and torch.Event),
    ]
    missing = []
    for name, probe in checks:
        try:
            probe()
        except AttributeError:
            missing.append(name)
    return missing


def _check_torch(torch: Any) -> None:
    missing = _missing_torch_features(torch)
    if missing:
        raise RuntimeError(
            f"anydev.torch.register_sim: this PyTorch ({torch.__version__}) cannot take anydev's "
            f"sim as its PrivateUse1 backend: it lacks {', '.join(missing)}. sim needs the "
            "device-generic torch.accelerator API of recent PyTorch releases (it is tested with "
            "PyTorch 2.13).")
    name = torch._C._get_privateuse1_backend_name()
    if name != "privateuseone":
        raise RuntimeError(
            f"anydev.torch.register_sim: PyTorch's PrivateUse1 backend is already taken by "
            f"{name!r} in this process (one PrivateUse1 backend fits in a process), so anydev "
            "cannot register 'sim'")
    if getattr(torch, NAME, None) is not None:
        raise RuntimeError(f"anydev.torch.register_sim: torch.{NAME} already exists in this "
                           "process, so anydev cannot register its device module there")


def _anydev_library() -> Path:
    from anydev import _C

    return Path(_C.__file__).resolve().parent / "libanydev.so"


def _start_anydev_sim(n: int) -> None:
    """Gives anydev's sim backend ``n`` devices (it reads ANYDEV_SIM_DEVICES
    when first used, once per process), or says why it cannot."""
    previous = os.environ.get("ANYDEV_SIM_DEVICES")
    os.environ["ANYDEV_SIM_DEVICES"] = str(n)
    import anydev

    count = anydev.device_count(NAME)
    if count == n:
        return
    if previous is None:
        del os.environ["ANYDEV_SIM_DEVICES"]
    else:
        os.environ["ANYDEV_SIM_DEVICES"] = previous
    if count > 0:
        raise RuntimeError(
            f"anydev.torch.register_sim: anydev's sim backend already has {count} "
            f"device{'s' if count != 1 else ''} in this process (it read ANYDEV_SIM_DEVICES "
            f"when first used), so it cannot register {n}; pass devices={count} or leave "
            "devices out")
    reason = next(b.reason for b in anydev.backends() if b.name == NAME)
    if "opt-in" in reason:
        raise RuntimeError(
            "anydev.torch.register_sim: anydev's sim backend was already started in this process "
            "without ANYDEV_SIM_DEVICES (by an earlier anydev call), so it has no devices; call "
            "register_sim before anything else uses anydev, or set ANYDEV_SIM_DEVICES=N in the "
            "environment")
    raise RuntimeError(f"anydev.torch.register_sim: anydev's sim backend cannot start: {reason}")


def register_sim(devices: int | None = None) -> None:
    """Registers anydev's simulated accelerator in PyTorch as the device ``sim``.

    ``devices`` is the number of sim devices (1..64); without it
    ``ANYDEV_SIM_DEVICES``, else 1. Idempotent: a second call with the same
    count does nothing, one with another count is an error (a process has one
    device count). Also an error: PyTorch's PrivateUse1 slot taken by another
    backend, a PyTorch without the APIs it needs, and (the first time for a
    PyTorch version only) a failed build of the backend, which needs a C++
    compiler and says on stderr that it is building.

    Afterwards ``torch.accelerator.current_accelerator()`` is ``device(type='sim')``,
    tensors can live on ``"sim"``/``"sim:1"``, and ``torch.sim`` (also
    ``torch.get_device_module("sim")``) is sim's device module. Sets
    ``ANYDEV_SIM_DEVICES`` in ``os.environ`` to the count.
    """
    global _registered, _library
    n = _device_count(devices)
    with _lock:
        if _registered:
            if n == _registered:
                return
            raise RuntimeError(
                f"anydev.torch.register_sim: sim is already registered with {_registered} "
                f"device{'s' if _registered != 1 else ''}; a process cannot change that "
                f"(asked for {n})")
        try:
            import torch
        except ImportError as e:
            raise RuntimeError("anydev.torch.register_sim needs PyTorch, which cannot be "
                               f"imported here: {e}") from None
        _check_torch(torch)
        _start_anydev_sim(n)
        from . import sim_build, sim_module

        try:
            path, _ = sim_build.library_path(torch)
        except sim_build.BuildError as e:
            raise RuntimeError(f"anydev.torch.register_sim: {e}") from None
        lib = ctypes.CDLL(str(path))
        lib.anydev_torch_sim_init.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p,
                                              ctypes.c_size_t]
        lib.anydev_torch_sim_init.restype = ctypes.c_int
        lib.anydev_torch_sim_in_bad_fork.restype = ctypes.c_int
        anydev_lib = ctypes.CDLL(str(_anydev_library()))
        anydev_lib.anydev_c_api.restype = ctypes.c_void_p
        error = ctypes.create_string_buffer(2048)
        if lib.anydev_torch_sim_init(anydev_lib.anydev_c_api(), n, error, len(error)) != 0:
            raise RuntimeError(f"anydev.torch.register_sim: {error.value.decode(errors='replace')}")
        torch.utils.rename_privateuse1_backend(NAME)
        torch._register_device_module(
            NAME, sim_module.build(n, lambda: bool(lib.anydev_torch_sim_in_bad_fork())))
        torch.utils.generate_methods_for_privateuse1_backend(
            for_tensor=True, for_module=True, for_packed_sequence=True, for_storage=True)
        _library = lib
        _registered = n
        atexit.register(_drain_autograd_device_threads)


# Note [Autograd device threads at exit]
# A backward pass over sim tensors runs on PyTorch's autograd device threads
# (one per sim device, "pt_autograd_N"), as for any accelerator. Each backward
# captures the caller's thread-local state into its GraphTask, and since
# PyTorch 2.13 that state holds a Python object (_engine_run_backward stashes
# the contextvars context in TLS: torch/autograd/graph.py). The device thread
# holds the GraphTask until the end of its loop iteration, after the caller
# has returned (Engine::thread_main, torch/csrc/autograd/engine.cpp); when it
# is the last holder, it releases that object, which needs the GIL. If the
# interpreter is finalizing by then (a script that ends right after
# loss.backward()), taking the GIL exits the thread (PyThread_exit_thread),
# the unwind reaches a noexcept destructor and the process aborts with
# "terminate called without an active exception" (about 1 run in 30 on a loaded
# machine). So, at exit, each device thread that exists is given one more task
# and waited for: to run it, the thread has finished (and released) the one
# before, while the main thread waits without the GIL. That task's own state
# holds no Python object (the engine is called without the stash) and its
# tensors stay referenced from here, so releasing it needs no GIL.
_drain_keep: list[Any] = []


def _autograd_device_threads() -> set[int]:
    """The sim devices whose autograd device thread is running in this
    process (Linux: the threads' names); empty where that cannot be read."""
    out = set()
    try:
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/comm", encoding="ascii", errors="replace") as f:
                name = f.read().strip()
            if name.startswith("pt_autograd_") and name[12:].isdigit():
                out.add(int(name[12:]))
    except OSError:
        return set()
    return out


def _drain_autograd_device_threads() -> None:
    """Note [Autograd device threads at exit]."""
    if not _registered:
        return
    try:
        import torch

        engine = torch.autograd.Variable._execution_engine
        for index in sorted(i for i in _autograd_device_threads() if i < _registered):
            x = torch.zeros(1, device=torch.device(NAME, index), requires_grad=True)
            y = x * 2
            grad = torch.ones_like(y)
            _drain_keep.extend((x, y, grad))
            engine.run_backward((y,), (grad,), False, False, (), True, True)
    except Exception:  # noqa: BLE001 - at exit: the drain is best effort, never an error
        pass
